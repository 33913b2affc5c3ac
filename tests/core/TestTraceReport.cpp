// The analysis report: per device busy/idle/overlap, per collective busbw and skew, MFU.
#include "analysis/TraceReport.hpp"
#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "sim/Simulator.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace paralens::core;

namespace {

// Two ranks: compute on stream 7, allreduces of 1 MB on stream 20; rank 1 arrives late at the
// second allreduce. Times in us.
Trace TwoRanks()
{
    TraceBuilder b;
    b.Meta().source = TraceSource::Kineto;
    b.Meta().title = "two ranks";
    for (int r = 0; r < 2; ++r) {
        uint32_t d = b.AddDevice("rank " + std::to_string(r) + " GPU " + std::to_string(r) + " (NVIDIA H100 80GB HBM3)",
                                 DeviceKind::Gpu, r, "node", r);
        uint32_t compute = b.AddTrack(d, "stream 7");
        uint32_t comm = b.AddTrack(d, "stream 20");
        auto add = [&](uint32_t track, int64_t s, int64_t e, SpanCategory c, const std::string& detail, double flops) {
            Span x;
            x.startNs = s * 1000;
            x.endNs = e * 1000;
            x.category = c;
            x.flops = flops;
            x.name = b.Intern(c == SpanCategory::Collective ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "gemm");
            if (!detail.empty()) {
                x.detail = b.Intern(detail);
                x.bytes = 1'000'000;
            }
            b.AddSpan(track, x);
        };
        add(compute, 0, 40, SpanCategory::Compute, "", 4e10);
        add(compute, 10, 30, SpanCategory::Compute, "", 0); // nested: counted once
        add(compute, 60, 70, SpanCategory::Compute, "", 0);
        CollectiveTag tag;
        tag.collective = "allreduce";
        tag.ranks = 2;
        tag.group = "0";
        tag.seq = 0;
        add(comm, 30, 50, SpanCategory::Collective, FormatCollectiveTag(tag), 0);
        tag.seq = 1;
        add(comm, r == 0 ? 70 : 80, 90, SpanCategory::Collective, FormatCollectiveTag(tag), 0);
        Span note;
        note.startNs = 0;
        note.endNs = 100'000;
        note.category = SpanCategory::Annotation; // never busy
        b.AddSpan(comm, note);
    }
    return std::move(b).Finish();
}

} // namespace

TEST_CASE("report: busy, idle, overlap and exposed communication by interval unions", "[analysis]")
{
    Trace t = TwoRanks();
    TraceReport r = AnalyzeTrace(t);
    CHECK(r.startNs == 0);
    CHECK(r.endNs == 90'000);
    REQUIRE(r.devices.size() == 2);
    const DeviceReport& d0 = r.devices[0];
    CHECK(d0.kernelCount == 5);
    CHECK(d0.spanCount == 6);
    CHECK(d0.collectiveCount == 2);
    CHECK(d0.usage.busyNs == 80'000);    // [0, 50) and [60, 90)
    CHECK(d0.usage.idleNs == 10'000);
    CHECK(d0.usage.computeNs == 50'000); // [0, 40) and [60, 70): the nested gemm counts once
    CHECK(d0.usage.commNs == 40'000);
    CHECK(d0.usage.overlapNs == 10'000);
    CHECK(d0.usage.exposedCommNs == 30'000);
    CHECK(d0.bubbleCount == 1);
    CHECK(d0.largestBubbleNs == 10'000);
    CHECK(r.devices[1].usage.busyNs == 70'000);
    CHECK(r.idleFraction == Approx(30.0 / 180));
}

TEST_CASE("report: collectives with busbw, matched across ranks with skew and the slowest rank", "[analysis]")
{
    TraceReport r = AnalyzeTrace(TwoRanks());
    REQUIRE(r.collectives.size() == 1);
    const CollectiveSummary& c = r.collectives[0];
    CHECK(c.collective == "allreduce");
    CHECK(c.ranks == 2);
    CHECK(c.count == 4);
    CHECK(c.instances == 2);
    CHECK(c.bytes == 4'000'000);
    CHECK(c.timeNs == 20'000 + 20'000 + 20'000 + 10'000);
    CHECK(c.algbwGBps == Approx(4e6 / 70e3));
    CHECK(c.busbwFactor == Approx(BusBwFactor(Collective::AllReduce, 2)));
    CHECK(c.busbwGBps == Approx(c.algbwGBps * 1.0));
    CHECK(c.maxSkewNs == 10'000);
    CHECK(c.meanSkewNs == Approx(5'000));
    CHECK(c.slowestRank == 1);
    REQUIRE(r.instances.size() == 2);
    CHECK(r.instances[1].SkewNs() == 10'000);
    CHECK(r.instances[1].TransferNs() == 10'000);
    CHECK(r.instances[1].slowestDevice == 1);
}

TEST_CASE("report: MFU where spans carry FLOPs, from the GPU table or a given peak", "[analysis]")
{
    Trace t = TwoRanks();
    TraceReport table = AnalyzeTrace(t); // H100 SXM bf16 peak from the spec table
    REQUIRE(table.devices[0].mfu);
    CHECK(table.devices[0].peakFlops > 9e14);
    CHECK(*table.devices[0].mfu == Approx(4e10 / 90e-6 / table.devices[0].peakFlops));
    AnalysisOptions o;
    o.peakTflops = 1000;
    o.window = UsageWindow{0, 100'000};
    TraceReport given = AnalyzeTrace(t, o);
    CHECK(*given.devices[0].mfu == Approx(4e10 / 100e-6 / 1e15));
    CHECK(given.devices[0].usage.idleNs == 20'000);
}

TEST_CASE("report: a simulated collective reports its busbw from the metadata", "[analysis][sim]")
{
    CollectiveSpec spec{Collective::AllReduce, Algorithm::Ring, 8, 64 << 20, 0, 4};
    SimResult sim = Simulate(BuildPlan(spec), ClusterModel::FromUnits(5, 100, 0));
    TraceReport r = AnalyzeTrace(*sim.trace);
    REQUIRE(r.collectives.size() == 1);
    CHECK(r.collectives[0].source == "simulation");
    CHECK(r.collectives[0].ranks == 8);
    CHECK(r.collectives[0].busbwGBps == Approx(AlgBwGBps(64 << 20, sim.seconds) * 1.75).epsilon(1e-6));
    CHECK(r.devices.size() == 8);
}

TEST_CASE("report of the reference nccl-tests log: busbw as the log prints it", "[analysis][reference]")
{
    std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/nccl-tests/h100x8_nvlink_allreduce_ring.log";
    if (!std::filesystem::exists(path)) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    TraceReport r = AnalyzeTrace(ReadTraceFile(path));
    REQUIRE(r.collectives.size() == 1);
    const CollectiveSummary& c = r.collectives[0];
    CHECK(c.ranks == 8);
    CHECK(c.count == 31u * 2 * 8);
    CHECK(c.instances == 62);
    CHECK(c.maxSkewNs == 0);
    CHECK(c.busbwFactor == 1.75);
    // Time-weighted: dominated by the 8 GiB rows, whose busbw is 368 GB/s.
    CHECK(c.busbwGBps == Approx(360).margin(10));
    CHECK(r.devices.size() == 8);
    CHECK(r.idleFraction < 1e-9); // the rows lie end to end
}
