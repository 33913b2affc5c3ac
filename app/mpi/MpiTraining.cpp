#include "mpi/MpiTraining.hpp"

#include "common/Error.hpp"
#include "live/LiveProtocol.hpp"
#include "mpi/ClockSync.hpp"
#include "mpi/CpuGemm.hpp"
#include "mpi/MpiContext.hpp"
#include "mpi/MpiRun.hpp"
#include "mpi/MpiSync.hpp"
#include "mpi/MpiWorkloadExecutor.hpp"
#include "mpi/RankTraces.hpp"
#include "schedule/DataParallel.hpp"
#include "sim/WorkloadSimulator.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace paralens::app::mpi {

namespace {

core::DataParallelSpec Spec(const MpiTrainingOptions& o, int processes, int iterations, double peak)
{
    Require(o.workload == "dp" || o.workload == "ps", "--training: dp or ps (got '" + o.workload + "')");
    const bool ps = o.workload == "ps";
    core::DataParallelSpec s;
    s.workers = ps ? processes - o.servers : processes;
    Require(s.workers >= 1, "--servers " + std::to_string(o.servers) + " leaves no worker among " + std::to_string(processes) + " processes");
    s.layers = o.layers;
    s.iterations = iterations;
    s.forwardSecPerLayer = o.forwardMs * 1e-3;
    s.forwardFlopsPerLayer = s.forwardSecPerLayer * peak;
    s.gradBytesPerLayer = o.gradBytes;
    s.overlap = false; // a process runs one task at a time: the allreduce follows the backward
    s.algorithm = o.algorithm;
    if (ps) {
        s.sync = core::GradientSync::ParameterServer;
        s.servers = o.servers;
        s.consistency = core::Consistency::Bsp;
    }
    return s;
}

// The model's makespan of the traced iterations: the same workload simulated with this run's
// alpha and bandwidth, compute at the tasks' own seconds, the straggler as slow as it is here.
double ModelSeconds(const MpiTrainingOptions& o, int processes)
{
    const core::Workload w = core::BuildDataParallel(Spec(o, processes, o.iterations, 1.0)).workload;
    core::ClusterModel cluster = core::ClusterModel::FromUnits(o.alphaUs, o.bandwidthGBps, 0.0);
    if (o.stragglerRank >= 0) cluster.stragglers.push_back({o.stragglerRank, o.slowdown});
    return core::SimulateWorkload(w, cluster, core::TimesOnly()).seconds;
}

core::Metadata TrainingMeta(const MpiTrainingOptions& o, const core::DataParallelSpec& s, double peak, double modelSeconds)
{
    core::Metadata m;
    const bool ps = o.workload == "ps";
    m.title = std::string(ps ? "parameter server" : "data-parallel allreduce") + " training on " +
              std::to_string(s.workers + (ps ? s.servers : 0)) + " processes";
    m.workload.Set("kind", std::string("training"));
    m.workload.Set("training", o.workload);
    m.workload.Set("workers", int64_t{s.workers});
    if (ps) m.workload.Set("servers", int64_t{s.servers});
    m.workload.Set("layers", int64_t{s.layers});
    m.workload.Set("iterations", int64_t{o.iterations});
    m.workload.Set("forwardMsTarget", o.forwardMs);
    m.workload.Set("gradBytesPerLayer", static_cast<int64_t>(o.gradBytes));
    if (!ps) {
        m.workload.Set("collective", std::string("allreduce"));
        m.workload.Set("algorithm", std::string(core::Name(o.algorithm)));
    }
    if (o.stragglerRank >= 0) m.workload.Set("straggler", std::to_string(o.stragglerRank) + " x" + std::to_string(o.slowdown));
    m.model.Set("alphaUs", o.alphaUs);
    m.model.Set("bandwidthGBps", o.bandwidthGBps);
    m.hardware.Set("cpuPeakFlops", peak);
    m.hardware.Set("peakSource", std::string("single-thread OpenBLAS sgemm 256^3, probed on each rank in turn (the fastest)"));
    m.results.Set("predictedSeconds", modelSeconds);
    return m;
}

std::vector<core::MetaSection> TrainingRows(const MpiTrainingOptions& o, const std::vector<double>& steps, double modelSeconds,
                                            const std::string& mismatch)
{
    std::vector<core::MetaSection> rows;
    for (size_t i = 0; i < steps.size(); ++i) {
        core::MetaSection row;
        row.Set("training", o.workload);
        row.Set("iteration", static_cast<int64_t>(i));
        row.Set("seconds", steps[i]);
        row.Set("modelSeconds", modelSeconds / std::max(o.iterations, 1));
        row.Set("correct", mismatch.empty());
        if (!mismatch.empty()) row.Set("mismatch", mismatch);
        rows.push_back(std::move(row));
    }
    return rows;
}

void PrintTraining(const MpiTrainingOptions& o, const core::Metadata& meta, const std::vector<core::MetaSection>& rows)
{
    if (o.json) {
        nlohmann::json j{{"backend", "mpi"}, {"workload", "training"}, {"training", o.workload},
                         {"workers", meta.workload.GetNumber("workers")}, {"cpuPeakGflops", meta.hardware.GetNumber("cpuPeakFlops") * 1e-9},
                         {"modelSeconds", meta.results.GetNumber("predictedSeconds")}, {"rows", nlohmann::json::array()}};
        bool correct = true;
        for (const core::MetaSection& r : rows) {
            j["rows"].push_back({{"iteration", r.GetNumber("iteration")}, {"seconds", r.GetNumber("seconds")},
                                 {"modelSeconds", r.GetNumber("modelSeconds")}});
            correct = correct && r.GetString("mismatch").empty();
        }
        j["correct"] = correct;
        if (!o.out.empty()) j["out"] = o.out;
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        std::printf("# paralens run --backend mpi --workload training: %s, CPU sgemm peak %.1f GFLOP/s\n", meta.title.c_str(),
                    meta.hardware.GetNumber("cpuPeakFlops") * 1e-9);
        std::printf("%10s %14s %14s\n", "iteration", "measured (ms)", "model (ms)");
        for (const core::MetaSection& r : rows)
            std::printf("%10.0f %14.3f %14.3f\n", r.GetNumber("iteration"), r.GetNumber("seconds") * 1e3, r.GetNumber("modelSeconds") * 1e3);
    }
    std::fflush(stdout);
}

} // namespace

int RunMpiTraining(const MpiTrainingOptions& o)
{
    Require(o.layers >= 1 && o.layers <= 1024, "--layers must be from 1 to 1024");
    Require(o.iterations >= 1 && o.warmup >= 0, "--iters must be at least 1 and --warmup at least 0");
    Require(o.forwardMs > 0 && o.forwardMs <= 10000, "--forward-ms must be in (0, 10000]");
    Require(o.gradBytes >= 1 && o.gradBytes <= (uint64_t{1} << 30), "--grad-bytes must be from 1 byte to 1 GiB");
    Context ctx(nullptr, nullptr);
    // Options are checked on every rank before any MPI exchange, so a mistake is one message.
    const core::DataParallelSpec check = Spec(o, ctx.Size(), o.warmup + o.iterations, 1.0);
    CheckRunnable(core::BuildDataParallel(check).workload, ctx.Size());
    core::TraceBuilder b;
    const uint32_t device = b.AddDevice("rank " + std::to_string(ctx.Rank()), core::DeviceKind::Process, ctx.Rank(), ctx.Host());
    const WorkloadTracks tracks{b.AddTrack(device, "compute"), b.AddTrack(device, "collective"), b.AddTrack(device, "send"),
                                b.AddTrack(device, "recv"), b.AddTrack(device, "reduce")};
    live::LiveStream stream(ctx.Rank(), ctx.Size(), ctx.Host(), core::DeviceKind::Process);
    ClockModel clock;
    std::vector<core::MetaSection> rows;
    std::string mismatch;
    core::Metadata meta;
    try {
        BeginRankTrace(ctx, stream, clock, o.timeoutSec);
        if (ctx.Rank() == 0) stream.Send(live::EncodeProgress("probing the CPU's GEMM peak", 0.0));
        const double peak = ProbeInTurn(ctx, o.timeoutSec);
        const core::DataParallelSpec spec = Spec(o, ctx.Size(), o.warmup + o.iterations, peak);
        const core::DataParallelWorkload dp = core::BuildDataParallel(spec);
        const double modelSeconds = ModelSeconds(o, ctx.Size());
        meta = TrainingMeta(o, spec, peak, modelSeconds);
        if (ctx.Rank() == 0) stream.Send(live::EncodeMeta(meta));
        WorkloadRunOptions run;
        run.peakFlops = peak;
        run.slowdown = ctx.Rank() == o.stragglerRank ? o.slowdown : 1.0;
        run.firstTracedStep = o.warmup;
        run.timeoutSec = o.timeoutSec;
        run.seed = o.seed;
        WorkloadExecutor exec(ctx, dp.workload, run, b, tracks);
        Barrier(ctx, o.timeoutSec, "the barrier before the first iteration");
        int done = 0;
        exec.Run([&] {
            stream.FlushSpans(b, 20'000'000);
            if (ctx.Rank() == 0 && ++done % 8 == 0)
                stream.Send(live::EncodeProgress("training", std::min(1.0, static_cast<double>(done) / static_cast<double>(dp.workload.TaskCount()))));
        });
        stream.FlushSpans(b);
        std::vector<double> steps = exec.StepSeconds();
        for (double& s : steps) s = MaxOverRanks(ctx, s, o.timeoutSec);
        mismatch = GatherMismatch(ctx, exec.Mismatch(), o.timeoutSec);
        rows = TrainingRows(o, steps, modelSeconds, mismatch);
        EndRankTrace(ctx, stream, std::move(b), meta, clock, o.out, o.timeoutSec);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "paralens: rank %d: %s\n", ctx.Rank(), e.what());
        stream.Send(live::EncodeError(e.what()));
        AbortRank(ctx, std::string(), [] {});
    }
    if (ctx.Rank() == 0) {
        PrintTraining(o, meta, rows);
        stream.Send(live::EncodeResult(mismatch.empty(), rows));
    }
    stream.Send(live::EncodeDone());
    return mismatch.empty() ? 0 : 4;
}

} // namespace paralens::app::mpi
