// Training-step workloads on the simulator: data, tensor, inter-/intra-op and expert parallelism.
#include "analysis/DeviceUsage.hpp"
#include "common/Error.hpp"
#include "model/CostModel.hpp"
#include "schedule/DataParallel.hpp"
#include "schedule/ExpertParallel.hpp"
#include "schedule/ModelParallel.hpp"
#include "sim/DataParallelReport.hpp"
#include "sim/WorkloadSimulator.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::core;

namespace {

struct Usage {
    int64_t idleNs = 0, exposedCommNs = 0, commNs = 0;
};

Usage Sum(const Trace& t)
{
    Usage u;
    for (const DeviceUsage& d : ComputeDeviceUsage(t, WholeTrace(t))) {
        u.idleNs += d.idleNs;
        u.exposedCommNs += d.exposedCommNs;
        u.commNs += d.commNs;
    }
    return u;
}

uint64_t WireBytes(const Trace& t)
{
    uint64_t b = 0;
    for (const Flow& f : t.Flows()) b += f.bytes;
    return b;
}

} // namespace

TEST_CASE("a workload's collective matches the collective simulator and its formula", "[sim][workload]")
{
    Workload w(4);
    CollectiveSpec spec{Collective::AllReduce, Algorithm::Ring, 4, 1 << 24, 0, 1};
    w.Add(CollectiveTask{spec, {0, 1, 2, 3}, TaskTags{w.Name("allreduce")}});
    ClusterModel m = ClusterModel::FromUnits(5, 100, 0);
    WorkloadResult r = SimulateWorkload(w, m);
    CHECK(r.seconds == Approx(PredictSeconds(spec, {m.alphaSec, m.betaSecPerByte, 0}).seconds).epsilon(1e-12));
    CHECK(r.trace->Devices().size() == 4);
    ComputeTask bad;
    bad.device = 7;
    CHECK_THROWS_AS(w.Add(bad), Error);
    bad.device = 0;
    CHECK_THROWS_AS(w.Add(bad, {99}), Error);
}

TEST_CASE("allreduce overlapped with backward hides communication", "[sim][workload]")
{
    DataParallelSpec s;
    s.workers = 4;
    s.layers = 8;
    s.iterations = 2;
    s.gradBytesPerLayer = 64ull << 20;
    ClusterModel m = ClusterModel::FromUnits(5, 100, 0);
    s.overlap = false;
    DataParallelWorkload serial = BuildDataParallel(s);
    WorkloadResult a = SimulateWorkload(serial.workload, m);
    s.overlap = true;
    DataParallelWorkload overlapped = BuildDataParallel(s);
    WorkloadResult b = SimulateWorkload(overlapped.workload, m);
    CHECK(b.seconds < a.seconds);
    CHECK(Sum(*b.trace).exposedCommNs < Sum(*a.trace).exposedCommNs);
    // Without overlap an iteration is compute + one allreduce of all gradients per bucket, in sequence.
    const double compute = 8 * 3e-3;
    CHECK(SummarizeDataParallel(serial, a).secondsPerIteration > compute);
    s.bucketBytes = 256ull << 20; // 4 layers per bucket: fewer, larger allreduces
    DataParallelWorkload bucketed = BuildDataParallel(s);
    size_t collectives = 0;
    for (TaskId t = 0; t < bucketed.workload.TaskCount(); ++t) collectives += bucketed.workload.KindOf(t) == TaskKind::Collective;
    CHECK(collectives == 2 * 2);
}

TEST_CASE("parameter servers under a straggler: BSP waits, SSP bounds staleness, async does not", "[sim][workload]")
{
    DataParallelSpec s;
    s.sync = GradientSync::ParameterServer;
    s.workers = 4;
    s.layers = 4;
    s.iterations = 8;
    s.gradBytesPerLayer = 1 << 20;
    ClusterModel m = ClusterModel::FromUnits(5, 100, 0);
    m.stragglers.push_back({3, 3.0}); // worker 3 is three times slower
    auto run = [&](Consistency c, int staleness) {
        s.consistency = c;
        s.staleness = staleness;
        DataParallelWorkload dp = BuildDataParallel(s);
        return SummarizeDataParallel(dp, SimulateWorkload(dp.workload, m, TimesOnly()));
    };
    DataParallelReport bsp = run(Consistency::Bsp, 0), ssp = run(Consistency::Ssp, 2), async = run(Consistency::Async, 0);
    CHECK(bsp.maxStaleness == 0);
    CHECK(ssp.maxStaleness <= 2);
    CHECK(ssp.maxStaleness >= 1);
    CHECK(async.maxStaleness > 2);
    // The fast workers finish sooner the less they wait for the straggler.
    CHECK(async.workerSecondsPerIteration[0] < ssp.workerSecondsPerIteration[0]);
    CHECK(ssp.workerSecondsPerIteration[0] < bsp.workerSecondsPerIteration[0]);
    CHECK_THROWS_WITH(BuildDataParallel([] { DataParallelSpec x; x.consistency = Consistency::Async; return x; }()),
                      Catch::Contains("--sync ps"));
}

TEST_CASE("sharded parameter servers relieve the server bottleneck", "[sim][workload]")
{
    DataParallelSpec s;
    s.sync = GradientSync::ParameterServer;
    s.workers = 8;
    s.layers = 4;
    s.iterations = 2;
    s.gradBytesPerLayer = 32ull << 20;
    ClusterModel m = ClusterModel::FromUnits(5, 100, 50);
    s.servers = 1;
    const double single = SimulateWorkload(BuildDataParallel(s).workload, m, TimesOnly()).seconds;
    s.servers = 4;
    const double sharded = SimulateWorkload(BuildDataParallel(s).workload, m, TimesOnly()).seconds;
    CHECK(sharded < single);
}

TEST_CASE("inter-op: less communication, more idle, intra-op: more communication, less idle", "[sim][workload]")
{
    TwoMatmulSpec s;
    ClusterModel m = ClusterModel::FromUnits(5, 100, 0);
    WorkloadResult inter = SimulateWorkload(BuildInterOp(s), m);
    WorkloadResult intra = SimulateWorkload(BuildIntraOp(s), m);
    const uint64_t activation = 8192ull * 8192 * 2;
    CHECK(WireBytes(*inter.trace) == activation);
    CHECK(inter.wireBytes == activation);
    CHECK(intra.wireBytes == 2 * activation); // ring allreduce over 2 devices: 2(p-1)/p n per rank
    CHECK(Sum(*inter.trace).idleNs > Sum(*intra.trace).idleNs);
    CHECK_THROWS_WITH(BuildInterOp([] { TwoMatmulSpec x; x.devices = 3; return x; }()), Catch::Contains("--devices must be 2"));
}

TEST_CASE("Megatron MLP: two allreduces per layer, FLOPs split over the devices", "[sim][workload]")
{
    MegatronMlpSpec s;
    s.devices = 4;
    s.layers = 2;
    WorkloadResult r = SimulateWorkload(BuildMegatronMlp(s), ClusterModel::FromUnits(5, 400, 0));
    size_t comm = 0;
    double flops = 0;
    for (const Track& t : r.trace->Tracks())
        for (const Span& sp : t.spans) {
            comm += sp.category == SpanCategory::Collective;
            flops += sp.flops;
        }
    CHECK(comm == 4 * 2 * 2); // per device: g and f per layer
    const double mlpForward = 2 * (2.0 * 8192 * 8192 * 4 * 8192); // two GEMMs of the whole MLP
    CHECK(flops == Approx(2 * 3 * mlpForward));                    // 2 layers, forward + 2x backward
}

TEST_CASE("MoE: imbalanced routing loads one device and slows the step", "[sim][workload]")
{
    MoeSpec s;
    ClusterModel m = ClusterModel::FromUnits(5, 100, 0);
    s.imbalance = 0.0;
    MoeWorkload even = BuildMoe(s);
    for (double t : even.tokensPerExpertDevice) CHECK(t == Approx(4096.0 * 2));
    s.imbalance = 1.0;
    MoeWorkload skewed = BuildMoe(s);
    CHECK(skewed.tokensPerExpertDevice[0] > 2 * skewed.tokensPerExpertDevice[3]);
    CHECK(SimulateWorkload(skewed.workload, m, TimesOnly()).seconds > SimulateWorkload(even.workload, m, TimesOnly()).seconds);
    double sum = 0;
    for (double x : ExpertShares(8, 1.0)) sum += x;
    CHECK(sum == Approx(1.0));
}
