// The dependency graph of a trace, its critical path, what-if replay and run comparison
// (core/analysis/TraceGraph, CriticalPath, TraceReplay, TraceDiff).
#include "analysis/CriticalPath.hpp"
#include "analysis/TraceDiff.hpp"
#include "analysis/TraceGraph.hpp"
#include "sim/TraceReplay.hpp"
#include "sim/WhatIf.hpp"
#include "common/Error.hpp"
#include "plan/Plan.hpp"
#include "schedule/DataParallel.hpp"
#include "schedule/Schedule.hpp"
#include "sim/PipelineSimulator.hpp"
#include "sim/Simulator.hpp"
#include "sim/WorkloadSimulator.hpp"
#include "trace/ExecutionTrace.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"
#include "trace/TraceMerge.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <unistd.h>

using namespace paralens;
using namespace paralens::core;

namespace {

Trace SimulatedAllReduce(Algorithm a, int p, uint64_t bytes, const ClusterModel& m)
{
    CollectiveSpec spec{Collective::AllReduce, a, p, bytes, 0, 1};
    return std::move(*Simulate(BuildPlan(spec), m).trace);
}

Trace SimulatedPipeline(ScheduleKind k, int D, int N, uint64_t activationBytes, const ClusterModel& link)
{
    PipelineSpec s;
    s.kind = k;
    s.stages = D;
    s.microBatches = N;
    s.forwardSec = 1e-3;
    s.activationBytes = activationBytes;
    return std::move(*SimulatePipeline(BuildSchedule(s), link).trace);
}

Trace SimulatedDataParallel(int workers, const ClusterModel& m)
{
    DataParallelSpec s;
    s.workers = workers;
    s.layers = 4;
    s.iterations = 2;
    s.gradBytesPerLayer = 8ull << 20;
    return std::move(*SimulateWorkload(BuildDataParallel(s).workload, m).trace);
}

// Every span of `a` at the same place in `b`, within `tolNs`.
void RequireSameTimes(const Trace& a, const Trace& b, int64_t tolNs)
{
    REQUIRE(a.Tracks().size() == b.Tracks().size());
    for (size_t t = 0; t < a.Tracks().size(); ++t) {
        const auto& x = a.Tracks()[t].spans;
        const auto& y = b.Tracks()[t].spans;
        REQUIRE(x.size() == y.size());
        for (size_t i = 0; i < x.size(); ++i) {
            INFO("track " << t << " span " << i << " " << a.Str(x[i].name));
            CHECK(std::llabs(x[i].startNs - y[i].startNs) <= tolNs);
            CHECK(std::llabs(x[i].endNs - y[i].endNs) <= tolNs);
        }
    }
    // Messages and dependency arrows move with the ops at their ends.
    auto ends = [](const Trace& t) {
        std::vector<std::pair<int64_t, int64_t>> v;
        for (const Flow& f : t.Flows()) v.push_back({f.srcNs, f.dstNs});
        std::sort(v.begin(), v.end());
        return v;
    };
    const auto fa = ends(a), fb = ends(b);
    REQUIRE(fa.size() == fb.size());
    for (size_t i = 0; i < fa.size(); ++i) {
        INFO("flow " << i);
        CHECK(std::llabs(fa[i].first - fb[i].first) <= tolNs);
        CHECK(std::llabs(fa[i].second - fb[i].second) <= tolNs);
    }
    CHECK(std::llabs(a.BeginNs() - b.BeginNs()) <= tolNs);
}

std::filesystem::path ReferenceData() { return std::filesystem::path(PARALENS_SOURCE_DIR) / ".." / "shared" / "reference-data"; }

} // namespace

TEST_CASE("the simulators record their data dependencies, and the graph resolves every one", "[core][whatif]")
{
    const ClusterModel m = ClusterModel::FromUnits(5, 100, 50);
    const Trace traces[] = {SimulatedAllReduce(Algorithm::Ring, 8, 64ull << 20, m),
                            SimulatedAllReduce(Algorithm::Tree, 8, 1ull << 20, m),
                            SimulatedPipeline(ScheduleKind::OneFOneB, 4, 8, 16ull << 20, m), SimulatedDataParallel(4, m)};
    for (const Trace& t : traces) {
        INFO(t.Meta().title);
        CHECK(!t.Dependencies().empty());
        const TraceGraph g(t);
        CHECK(g.UnresolvedDependencies() == 0);
        CHECK(g.CountOf(EdgeKind::Recorded) == t.Dependencies().size());
        CHECK(g.Nodes().size() > 0);
    }
}

TEST_CASE("a replay with no change reproduces every op's times exactly", "[core][whatif]")
{
    const ClusterModel m = ClusterModel::FromUnits(5, 100, 50);
    const Trace traces[] = {SimulatedAllReduce(Algorithm::Ring, 8, 64ull << 20, m),
                            SimulatedAllReduce(Algorithm::HalvingDoubling, 6, 1ull << 20, m),
                            SimulatedPipeline(ScheduleKind::GPipe, 4, 8, 16ull << 20, m), SimulatedDataParallel(4, m)};
    for (const Trace& t : traces) {
        INFO(t.Meta().title);
        const TraceGraph g(t);
        const ReplayResult r = Replay(g, {});
        CHECK(r.changedNodes == 0);
        CHECK(r.cyclesBroken == 0);
        for (size_t n = 0; n < g.Nodes().size(); ++n) {
            CHECK(r.startNs[n] == g.Nodes()[n].startNs);
            CHECK(r.endNs[n] == g.Nodes()[n].endNs);
        }
        RequireSameTimes(t, RetimedTrace(g, r, "same"), 0);
    }
}

TEST_CASE("a what-if of bandwidth x2 equals simulating with bandwidth x2", "[core][whatif]")
{
    const ClusterModel slow = ClusterModel::FromUnits(5, 50, 0), fast = ClusterModel::FromUnits(5, 100, 0);
    const CostParams before{slow.alphaSec, slow.betaSecPerByte, 0}, after{fast.alphaSec, fast.betaSecPerByte, 0};
    WhatIfChanges c;
    c.networkBefore = before;
    c.networkAfter = after;
    struct Case {
        Trace measured, expected;
    };
    Case cases[] = {
        {SimulatedAllReduce(Algorithm::Ring, 8, 64ull << 20, slow), SimulatedAllReduce(Algorithm::Ring, 8, 64ull << 20, fast)},
        {SimulatedAllReduce(Algorithm::Tree, 8, 4ull << 20, slow), SimulatedAllReduce(Algorithm::Tree, 8, 4ull << 20, fast)},
        {SimulatedAllReduce(Algorithm::HalvingDoubling, 8, 8ull << 20, slow),
         SimulatedAllReduce(Algorithm::HalvingDoubling, 8, 8ull << 20, fast)},
        {SimulatedPipeline(ScheduleKind::OneFOneB, 4, 8, 32ull << 20, slow),
         SimulatedPipeline(ScheduleKind::OneFOneB, 4, 8, 32ull << 20, fast)},
        {SimulatedDataParallel(4, slow), SimulatedDataParallel(4, fast)},
    };
    for (const Case& k : cases) {
        INFO(k.measured.Meta().title);
        const TraceGraph g(k.measured);
        const ReplayResult r = Replay(g, c);
        CHECK(r.changedNodes > 0);
        CHECK(r.cyclesBroken == 0);
        const Trace replayed = RetimedTrace(g, r, "what-if");
        // Each op's time to the nanosecond rounding of the traces (a few ns along a chain).
        RequireSameTimes(replayed, k.expected, 8);
        CHECK(std::llabs((replayed.EndNs() - replayed.BeginNs()) - (k.expected.EndNs() - k.expected.BeginNs())) <= 8);
    }
}

TEST_CASE("the critical path of a GPipe step is the lectures' chain: F down the stages, B back up", "[core][whatif]")
{
    for (int D : {2, 4}) {
        for (int N : {1, 4, 8}) {
            INFO("D=" << D << " N=" << N);
            const Trace t = SimulatedPipeline(ScheduleKind::GPipe, D, N, 0, FreeLinks());
            const TraceGraph g(t);
            const TraceSteps steps = FindSteps(g);
            REQUIRE(steps.steps.size() == 1);
            const std::vector<StepPath> paths = CriticalPaths(g, steps, MeasuredTimes(g));
            REQUIRE(paths.size() == 1);
            const StepPath& p = paths[0];
            // (D - 1 + N) forwards of 1 ms and as many backwards of 2 ms, all compute, no gap.
            const int64_t expected = static_cast<int64_t>(D - 1 + N) * 3'000'000;
            CHECK(p.DurationNs() == expected);
            CHECK(p.byCategory[static_cast<size_t>(PathCategory::Compute)] == expected);
            CHECK(p.byCategory[static_cast<size_t>(PathCategory::Idle)] == 0);
            int64_t sum = 0;
            for (const PathSegment& s : p.segments) sum += s.endNs - s.startNs;
            CHECK(sum == expected);
            // It starts with micro-batch 0's forward on stage 0, visits the last stage, and ends
            // with micro-batch 0's backward on stage 0.
            const Span& first = t.Tracks()[p.segments.front().track].spans[p.segments.front().span];
            const Span& last = t.Tracks()[p.segments.back().track].spans[p.segments.back().span];
            CHECK(first.category == SpanCategory::Forward);
            CHECK(first.microBatch == 0);
            CHECK(p.segments.front().device == 0);
            CHECK(last.category == SpanCategory::Backward);
            CHECK(last.microBatch == N - 1); // this GPipe runs the backwards in the forwards' order
            CHECK(p.segments.back().device == 0);
            bool lastStage = false;
            for (const PathSegment& s : p.segments) lastStage |= s.device == static_cast<uint32_t>(D - 1);
            CHECK(lastStage);
            CHECK(p.rankCrossings >= static_cast<size_t>(2 * (D - 1)));
        }
    }
}

TEST_CASE("scaling ops by category or name pattern changes only what matches", "[core][whatif]")
{
    const Trace t = SimulatedPipeline(ScheduleKind::GPipe, 4, 4, 0, FreeLinks());
    const TraceGraph g(t);
    WhatIfChanges c;
    c.scale.push_back(ParseScaleRule("backward=0.5", "--scale"));
    const ReplayResult r = Replay(g, c);
    const TraceSteps steps = FindSteps(g);
    // Backward 2 ms -> 1 ms: the step is (D - 1 + N) x (1 + 1) ms.
    CHECK(CriticalPaths(g, steps, r)[0].DurationNs() == 7 * 2'000'000);
    const Trace out = RetimedTrace(g, r, "what-if");
    CHECK(out.BeginNs() == t.BeginNs()); // every arrow moved with its ops, none before the start
    CHECK(out.EndNs() - out.BeginNs() == 7 * 2'000'000);
    size_t changed = 0;
    for (size_t n = 0; n < g.Nodes().size(); ++n) changed += g.SpanOf(static_cast<uint32_t>(n)).category == SpanCategory::Backward;
    CHECK(r.changedNodes == changed);

    WhatIfChanges none;
    none.scale.push_back(ParseScaleRule("*allgather*=0.1", "--scale"));
    CHECK(Replay(g, none).changedNodes == 0);
}

TEST_CASE("removing a straggler gives its ops the others' median time", "[core][whatif]")
{
    ClusterModel m = ClusterModel::FromUnits(5, 100, 0);
    m.stragglers.push_back({2, 3.0});
    const Trace slow = SimulatedDataParallel(4, m);
    const Trace even = SimulatedDataParallel(4, ClusterModel::FromUnits(5, 100, 0));
    const TraceGraph g(slow);
    WhatIfChanges c;
    c.removeStragglers = {2};
    const WhatIfAnalysis before = AnalyzeWhatIf(slow, {}, false);
    const WhatIfAnalysis after = AnalyzeWhatIf(slow, c, true);
    REQUIRE(after.replayed.size() == 1);
    const int64_t fixed = after.replayed[0].DurationNs();
    CHECK(fixed < before.measured[0].DurationNs());
    // The straggler also slowed its share of the collectives, which the replay keeps: the step
    // lands between the even cluster's and the measured one.
    CHECK(fixed >= even.EndNs() - even.BeginNs());
}

TEST_CASE("skew on one rank delays the collectives every rank waits for", "[core][whatif]")
{
    const Trace t = SimulatedDataParallel(4, ClusterModel::FromUnits(5, 100, 0));
    WhatIfChanges c;
    c.skewNs.push_back(ParseSkew("1:500", "--skew"));
    const WhatIfAnalysis a = AnalyzeWhatIf(t, c, false);
    CHECK(a.replayed[0].DurationNs() - a.measured[0].DurationNs() == 500'000);
}

TEST_CASE("what-if options are parsed or refused with the option named", "[core][whatif]")
{
    CHECK(ParseScaleRule("NCCL*=0.5", "--scale").pattern == "nccl*");
    CHECK(ParseScaleRule("compute=2", "--scale").factor == 2.0);
    CHECK_THROWS_WITH(ParseScaleRule("compute", "--scale"), Catch::Contains("--scale") && Catch::Contains("PATTERN=FACTOR"));
    CHECK_THROWS_WITH(ParseScaleRule("compute=0", "--scale"), Catch::Contains("> 0"));
    CHECK_THROWS_WITH(ParseScaleRule("compute=x", "--scale"), Catch::Contains("'x'"));
    CHECK(ParseSkew("3:500", "--skew") == std::pair<int32_t, int64_t>{3, 500'000});
    CHECK_THROWS_WITH(ParseSkew("3", "--skew"), Catch::Contains("RANK:MICROSECONDS"));
    CHECK_THROWS_WITH(ParseSkew("-1:5", "--skew"), Catch::Contains("--skew"));
    CHECK(GlobMatch("*gemm*", "ampere_sgemm_128x64"));
    CHECK(GlobMatch("nccl*", "ncclKernel_AllReduce"));
    CHECK(GlobMatch("a?c", "ABC"));
    CHECK_FALSE(GlobMatch("nccl*", "void at::gemm"));
    CHECK_FALSE(GlobMatch("*gemm", "gemm_kernel"));
}

TEST_CASE("dependencies survive a trace file round trip and a clock shift", "[core][whatif][io]")
{
    const Trace t = SimulatedPipeline(ScheduleKind::OneFOneB, 3, 4, 1 << 20, ClusterModel::FromUnits(5, 100, 0));
    const Trace back = ReadTraceText(TraceToJsonText(t), "round-trip.json");
    REQUIRE(back.Dependencies().size() == t.Dependencies().size());
    for (size_t i = 0; i < t.Dependencies().size(); ++i) {
        CHECK(back.Dependencies()[i].from.track == t.Dependencies()[i].from.track);
        CHECK(back.Dependencies()[i].from.startNs == t.Dependencies()[i].from.startNs);
        CHECK(back.Dependencies()[i].to.endNs == t.Dependencies()[i].to.endNs);
    }
    const Trace shifted = ShiftDeviceClocks(t, std::vector<int64_t>(t.Devices().size(), 1000));
    REQUIRE(shifted.Dependencies().size() == t.Dependencies().size());
    CHECK(TraceGraph(shifted).UnresolvedDependencies() == 0);
}

TEST_CASE("a bad recorded dependency is refused with its row named", "[core][whatif][io]")
{
    std::string text = TraceToJsonText(SimulatedAllReduce(Algorithm::Ring, 2, 1024, ClusterModel::FromUnits(1, 1, 0)));
    const size_t at = text.find("\"paralensDependencies\":[");
    REQUIRE(at != std::string::npos);
    std::string bad = text;
    bad.insert(at + 24, "[1,2,3],");
    CHECK_THROWS_WITH(ReadTraceText(bad, "deps.json"), Catch::Contains("deps.json") && Catch::Contains("paralensDependencies[0]"));
    bad = text;
    bad.insert(at + 24, "[99,0,1,0,0,1],");
    CHECK_THROWS_WITH(ReadTraceText(bad, "deps.json"), Catch::Contains("track outside"));
}

TEST_CASE("the diff of a run with itself is empty, and of a shifted copy moves every op by the shift", "[core][whatif]")
{
    const Trace t = SimulatedDataParallel(4, ClusterModel::FromUnits(5, 100, 0));
    const TraceDiffResult same = DiffTraces(t, t);
    CHECK(same.Empty());
    CHECK(same.matched > 0);
    CHECK(same.onlyA == 0);
    CHECK(same.onlyB == 0);

    const Trace later = ShiftDeviceClocks(t, std::vector<int64_t>(t.Devices().size(), 1'234'567));
    const TraceDiffResult moved = DiffTraces(t, later);
    CHECK_FALSE(moved.Empty());
    CHECK(moved.matched == same.matched);
    CHECK(moved.durationChanged == 0);
    CHECK(moved.minShiftNs == 1'234'567);
    CHECK(moved.maxShiftNs == 1'234'567);
    CHECK(moved.ops.empty());
    CHECK(moved.medianRelativeShiftNs == 0); // the same run, on another clock

    ClusterModel slowNet = ClusterModel::FromUnits(5, 50, 0);
    const TraceDiffResult slower = DiffTraces(t, SimulatedDataParallel(4, slowNet));
    REQUIRE(!slower.ops.empty());
    CHECK(slower.ops.front().category == PathCategory::Communication); // the regression listed first
    CHECK(slower.ops.front().DeltaNs() > 0);
    CHECK(slower.categoryNsB[static_cast<size_t>(PathCategory::Compute)] == slower.categoryNsA[static_cast<size_t>(PathCategory::Compute)]);

    // Regressions first, then improvements, each the largest first.
    const Trace gpipe = SimulatedPipeline(ScheduleKind::GPipe, 2, 4, 0, FreeLinks());
    WhatIfChanges c;
    c.scale = {ParseScaleRule("forward=1.5", "--scale"), ParseScaleRule("backward=0.25", "--scale")};
    const TraceGraph g(gpipe);
    const TraceDiffResult mixed = DiffTraces(gpipe, RetimedTrace(g, Replay(g, c), "mixed"));
    REQUIRE(mixed.ops.size() == 2);
    CHECK(mixed.ops[0].name == "F");
    CHECK(mixed.ops[0].DeltaNs() == 8 * 500'000);
    CHECK(mixed.ops[1].name == "B");
    CHECK(mixed.ops[1].DeltaNs() == -8 * 1'500'000);
}

TEST_CASE("real profiler traces: the replay reproduces each step, and each path adds up to its step", "[core][whatif][io]")
{
    const std::filesystem::path dir = ReferenceData() / "kineto";
    if (!std::filesystem::exists(dir)) {
        WARN("../shared/reference-data is absent: skipped");
        return;
    }
    const std::vector<std::vector<std::string>> jobs = {
        {(dir / "alexnet_1gpu.json.gz").string()},
        {(dir / "sampled_rank-0.json.gz").string(), (dir / "sampled_rank-1.json.gz").string()},
    };
    for (const auto& files : jobs) {
        INFO(files.front());
        const Trace t = ReadTraceFiles(files);
        const WhatIfAnalysis a = AnalyzeWhatIf(t, {}, true);
        REQUIRE(!a.measured.empty());
        CHECK(a.edgesByKind[static_cast<size_t>(EdgeKind::Launch)] > 0);
        CHECK(a.edgesByKind[static_cast<size_t>(EdgeKind::Sync)] > 0);
        CHECK(a.cyclesBroken == 0);
        for (size_t s = 0; s < a.measured.size(); ++s) {
            const StepPath& m = a.measured[s];
            const StepPath& r = a.replayed[s];
            const double error = std::fabs(static_cast<double>(r.DurationNs() - m.DurationNs())) / static_cast<double>(m.DurationNs());
            INFO(m.label << ": measured " << m.DurationNs() << " ns, replayed " << r.DurationNs() << " ns, error " << error);
            CHECK(error <= 0.02);
            int64_t sum = 0;
            for (const PathSegment& seg : m.segments) sum += seg.endNs - seg.startNs;
            CHECK(sum == m.DurationNs());
        }
        CHECK(DiffTraces(t, *a.replayedTrace).durationChanged == 0);
    }
}

namespace {

// A profiler trace of one process: the forward's ops on the main thread, the backward's on
// autograd's thread, which the profiler trace does not connect.
constexpr const char* kTwoThreads = R"({"schemaVersion": 1, "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 100, "tid": 1, "ts": 0, "dur": 500, "args": {"External id": 1}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 1, "ts": 0, "dur": 100, "args": {"External id": 2, "Record function id": 10}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::sum", "pid": 100, "tid": 1, "ts": 150, "dur": 50, "args": {"External id": 3, "Record function id": 11}},
 {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 100, "tid": 2, "ts": 300, "dur": 100, "args": {"External id": 4, "Record function id": 20}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 2, "ts": 310, "dur": 80, "args": {"External id": 5, "Record function id": 21}}
]})";

// Its execution trace, in the first schema (fields on the node) and in the Chakra one (attrs).
std::string ExecutionTraceText(bool chakra)
{
    struct Node {
        int id, rf, parent, tid;
        const char* name;
        const char *inputs, *outputs;
    };
    const Node nodes[] = {
        {1, 0, 1, 0, "[pytorch|profiler|execution_trace|process]", "[]", "[]"},
        {2, 10, 1, 1, "aten::mm", R"([[1,1,0,4,4,"cuda:0"],[2,2,0,4,4,"cuda:0"]])", R"([[5,5,0,4,4,"cuda:0"]])"},
        {3, 11, 1, 1, "aten::sum", R"([[5,5,0,4,4,"cuda:0"], 0])", R"([[6,6,0,1,4,"cuda:0"]])"},
        {4, 20, 1, 2, "autograd::engine::evaluate_function: MmBackward0", R"([[6,6,0,1,4,"cuda:0"]])", "[]"},
        {5, 21, 4, 2, "aten::mm", R"([[[6,6,0,1,4,"cuda:0"],[5,5,0,4,4,"cuda:0"]]])", R"([[7,7,0,4,4,"cuda:0"]])"},
    };
    std::string out = std::string(R"({"schema": ")") + (chakra ? "1.1.1-chakra.0.0.4" : "1.0.1") + R"(", "pid": 100, "nodes": [)";
    for (const Node& n : nodes) {
        if (n.id > 1) out += ",";
        if (chakra)
            out += "{\"id\": " + std::to_string(n.id) + ", \"name\": \"" + n.name + "\", \"ctrl_deps\": " + std::to_string(n.parent) +
                   ", \"inputs\": {\"values\": " + n.inputs + ", \"shapes\": [], \"types\": []}, \"outputs\": {\"values\": " + n.outputs +
                   ", \"shapes\": [], \"types\": []}, \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": " +
                   std::to_string(n.rf) + "}, {\"name\": \"tid\", \"type\": \"uint64\", \"value\": " + std::to_string(n.tid) + "}]}";
        else
            out += "{\"id\": " + std::to_string(n.id) + ", \"name\": \"" + n.name + "\", \"rf_id\": " + std::to_string(n.rf) +
                   ", \"parent\": " + std::to_string(n.parent) + ", \"tid\": " + std::to_string(n.tid) + ", \"inputs\": " + n.inputs +
                   ", \"outputs\": " + n.outputs + "}";
    }
    return out + "]}";
}

struct TempFiles {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("paralens-et-" + std::to_string(::getpid()));
    TempFiles() { std::filesystem::create_directories(dir); }
    ~TempFiles() { std::filesystem::remove_all(dir); }
    std::string Write(const std::string& name, const std::string& text) const
    {
        const std::string path = (dir / name).string();
        WriteFileAtomic(path, text);
        return path;
    }
};

} // namespace

TEST_CASE("an execution trace's data dependencies join the threads of a profiler trace", "[core][whatif][io]")
{
    for (bool chakra : {false, true}) {
        INFO((chakra ? "chakra schema" : "schema 1.0.1"));
        const ExecutionTrace et = ParseExecutionTrace(ExecutionTraceText(chakra), "et.json");
        CHECK(et.pid == 100);
        REQUIRE(et.ops.size() == 5);
        CHECK(et.ops[4].inputs == std::vector<int64_t>{6, 5});
        // sum -> the backward (its parent, then its mm), mm -> the backward's mm; not mm -> sum (one thread).
        const std::vector<std::pair<int64_t, int64_t>> expected{{10, 21}, {11, 20}, {11, 21}};
        CHECK(CrossThreadDataDependencies(et) == expected);

        TempFiles tmp;
        const std::string trace = tmp.Write("rank0.pt.trace.json", kTwoThreads);
        const std::string etFile = tmp.Write("rank0_et.json", ExecutionTraceText(chakra));
        const Trace alone = ReadTraceFiles({trace});
        const Trace joined = ReadTraceFiles({trace, etFile});
        CHECK(alone.Dependencies().empty());
        CHECK(joined.Dependencies().size() == 3);
        CHECK(joined.Meta().extra.GetString("executionTrace") == "rank0_et.json");

        // Without it the backward thread's first op has no cause: the path starts with 310 us idle.
        const WhatIfAnalysis before = AnalyzeWhatIf(alone, {}, false);
        CHECK(before.measured[0].byCategory[static_cast<size_t>(PathCategory::Idle)] == 310'000);
        const WhatIfAnalysis after = AnalyzeWhatIf(joined, {}, false);
        CHECK(after.edgesByKind[static_cast<size_t>(EdgeKind::Recorded)] >= 1);
        CHECK(after.measured[0].byCategory[static_cast<size_t>(PathCategory::Idle)] == 0);
        CHECK(after.measured[0].byCategory[static_cast<size_t>(PathCategory::Cpu)] == 390'000);
        // And a slower producer on the main thread now delays the backward.
        WhatIfChanges c;
        c.scale.push_back(ParseScaleRule("aten::sum=2", "--scale"));
        CHECK(AnalyzeWhatIf(joined, c, false).replayed[0].DurationNs() == 390'000 + 50'000);
        CHECK(AnalyzeWhatIf(alone, c, false).replayed[0].DurationNs() == 390'000);
    }
}

TEST_CASE("execution traces that cannot be used are refused with the file named", "[core][whatif][io]")
{
    TempFiles tmp;
    const std::string et = tmp.Write("et.json", ExecutionTraceText(false));
    CHECK_THROWS_WITH(ReadTraceFiles({et}), Catch::Contains("et.json") && Catch::Contains("no timeline"));
    std::string otherPid = kTwoThreads;
    for (size_t at; (at = otherPid.find("\"pid\": 100")) != std::string::npos;) otherPid.replace(at, 10, "\"pid\": 200");
    const std::string trace = tmp.Write("other.json", otherPid);
    CHECK_THROWS_WITH(ReadTraceFiles({trace, et}), Catch::Contains("et.json") && Catch::Contains("pid 100"));
    CHECK_THROWS_WITH(ParseExecutionTrace(R"({"schema": "1.0.1", "nodes": [{"id": 1, "name": "a"},]})", "bad.json"),
                      Catch::Contains("bad.json") && Catch::Contains("126703"));
    CHECK_THROWS_WITH(ParseExecutionTrace(R"({"schema": "1.0.1", "nodes": [{"name": "a"}]})", "bad.json"),
                      Catch::Contains("nodes[0]"));
}

TEST_CASE("a data-parallel training trace is split into its iterations", "[core][whatif]")
{
    DataParallelSpec s;
    s.workers = 4;
    s.layers = 4;
    s.iterations = 3;
    WorkloadOptions o;
    o.meta.workload.Set("kind", "dp");
    const Trace t = std::move(*SimulateWorkload(BuildDataParallel(s).workload, ClusterModel::FromUnits(5, 100, 0), o).trace);
    const TraceGraph g(t);
    const TraceSteps steps = FindSteps(g);
    REQUIRE(steps.steps.size() == 3);
    CHECK(steps.steps[2].label == "iteration 2");
    const std::vector<StepPath> paths = CriticalPaths(g, steps, MeasuredTimes(g));
    int64_t sum = 0;
    for (const StepPath& p : paths) {
        int64_t segments = 0;
        for (const PathSegment& seg : p.segments) segments += seg.endNs - seg.startNs;
        CHECK(segments == p.DurationNs());
        sum += p.DurationNs();
    }
    CHECK(sum <= t.EndNs() - t.BeginNs()); // iterations follow one another
    CHECK(sum > (t.EndNs() - t.BeginNs()) * 9 / 10);
}
