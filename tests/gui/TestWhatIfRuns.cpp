// Critical paths, what-if experiments and run comparisons for the views (app/gui/WhatIfRuns.hpp).
#include "RunBuilder.hpp"
#include "ScenarioLoader.hpp"
#include "WhatIfRuns.hpp"

#include "common/Error.hpp"
#include "analysis/Fitting.hpp"
#include "model/Fit.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

using namespace paralens;
using namespace paralens::app;

namespace {

Experiment GPipe()
{
    Experiment e;
    e.kind = ExperimentKind::Pipeline;
    e.pipeline.schedule = core::ScheduleKind::GPipe;
    e.pipeline.stages = 4;
    e.pipeline.microBatches = 8;
    return e;
}

struct TempDir {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("paralens-whatif-" + std::to_string(::getpid()));
    TempDir() { std::filesystem::create_directories(path); }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string File(const std::string& name) const { return (path / name).string(); }
};

// A trace file of a simulated GPipe step, and the experiments that open it and replay it.
std::vector<Experiment> FileAndWhatIf(const std::string& file, const WhatIfParams& w)
{
    auto run = BuildRun(GPipe());
    core::WriteTraceFile(*run->trace, file);
    Experiment opened;
    opened.kind = ExperimentKind::File;
    opened.files = {file};
    Experiment replay = opened;
    replay.kind = ExperimentKind::WhatIf;
    replay.whatIf = w;
    return {opened, replay};
}

} // namespace

TEST_CASE("every finished run carries its critical path: GPipe's is (D - 1 + N)(F + B)", "[gui][whatif]")
{
    auto run = BuildRun(GPipe());
    REQUIRE(run->critical);
    REQUIRE(run->critical->steps.size() == 1);
    CHECK(run->critical->steps[0].DurationNs() == 11 * 3'000'000);
    CHECK(run->critical->steps[0].byCategory[static_cast<size_t>(core::PathCategory::Compute)] == 11 * 3'000'000);
    CHECK_FALSE(run->critical->stepsFromProfiler);
    // The timeline's list: every op segment of every step, by start.
    CHECK(run->critical->segments.size() == run->critical->steps[0].segments.size());
    CHECK(std::is_sorted(run->critical->segments.begin(), run->critical->segments.end(),
                         [](const core::PathSegment& a, const core::PathSegment& b) { return a.startNs < b.startNs; }));
}

TEST_CASE("a what-if experiment replays its file's trace, lies beside it and is compared with it", "[gui][whatif]")
{
    TempDir dir;
    WhatIfParams w;
    w.scale = "backward=0.5";
    const auto snap = BuildSnapshot(FileAndWhatIf(dir.File("gpipe.json"), w), nullptr);
    REQUIRE(snap->runs.size() == 2);
    const RunResult& replay = *snap->runs[1];
    REQUIRE(replay.whatIf);
    CHECK(replay.whatIf->measured[0].DurationNs() == 33'000'000);
    CHECK(replay.whatIf->replayed[0].DurationNs() == 22'000'000); // 11 x (1 + 1) ms
    CHECK(replay.trace->EndNs() - replay.trace->BeginNs() == 22'000'000);
    REQUIRE(replay.critical);
    CHECK(replay.critical->steps[0].DurationNs() == 22'000'000);
    CHECK(replay.whatIfChanges.find("backward=0.5") != std::string::npos);
    CHECK(replay.title.find("what-if") != std::string::npos);
    // The Stats view's comparison: the what-if against its file, the backwards 16 ms shorter in all.
    REQUIRE(snap->comparisons.size() == 1);
    CHECK(snap->comparisons[0].first == 0);
    CHECK(snap->comparisons[0].second == 1);
    const core::TraceDiffResult& d = *snap->comparisons[0].diff;
    REQUIRE(!d.ops.empty());
    CHECK(d.ops.back().name == "B");
    CHECK(d.ops.back().DeltaNs() == -32 * 1'000'000);

    // A new what-if factor replays again; the file's run and the comparison of unchanged runs are reused.
    std::vector<Experiment> edited = FileAndWhatIf(dir.File("gpipe.json"), w);
    edited[1].whatIf.scale = "backward=0.25";
    const auto again = BuildSnapshot(edited, snap.get());
    CHECK(again->runs[0] == snap->runs[0]);
    CHECK(again->runs[1]->whatIf->replayed[0].DurationNs() == 11 * 1'500'000);
}

TEST_CASE("what-if parameters become core's changes, or an error naming the parameter", "[gui][whatif]")
{
    auto run = BuildRun(GPipe());
    WhatIfParams w;
    w.computeX = 0.5;
    w.scale = "*gemm*=0.8, nccl*=2";
    w.noStragglers = {2};
    w.skewUs = {{1, 250}};
    const core::WhatIfChanges c = ChangesOf(w, *run->trace);
    REQUIRE(c.scale.size() == 3);
    CHECK(c.scale[0].pattern == "compute");
    CHECK(c.scale[2].pattern == "nccl*");
    CHECK(c.removeStragglers == std::vector<int32_t>{2});
    CHECK(c.skewNs[0] == std::pair<int32_t, int64_t>{1, 250'000});
    CHECK_FALSE(c.networkAfter);
    CHECK(DescribeWhatIf(w).find("compute x0.5") != std::string::npos);
    CHECK(DescribeWhatIf(WhatIfParams{}) == "no change");

    // A simulated collective's trace carries its cluster's model: a network change is priced against it.
    Experiment ring;
    ring.kind = ExperimentKind::Collective;
    auto ringRun = BuildRun(ring);
    WhatIfParams net;
    net.bandwidthX = 2;
    std::string text;
    const core::WhatIfChanges n = ChangesOf(net, *ringRun->trace, {}, &text);
    REQUIRE(n.networkAfter);
    CHECK(n.networkAfter->betaSecPerByte == Approx(n.networkBefore->betaSecPerByte / 2));
    CHECK(text.find("the trace's own model") != std::string::npos);

    WhatIfParams bad;
    bad.scale = "compute";
    CHECK_THROWS_WITH(ChangesOf(bad, *run->trace), Catch::Contains("scale rules"));
    bad = WhatIfParams{};
    bad.computeX = 0;
    CHECK_THROWS_WITH(ChangesOf(bad, *run->trace), Catch::Contains("factors must be > 0"));
}

TEST_CASE("a network change on a trace without a model takes it from a fit file, or says to give one", "[gui][whatif]")
{
    TempDir dir;
    // A trace that says nothing about its network (a profiler's, say): no model section.
    core::TraceBuilder b;
    const uint32_t d = b.AddDevice("GPU 0", core::DeviceKind::Gpu, 0, {}, 0);
    core::Span s;
    s.endNs = 1000;
    s.name = b.Intern("kernel");
    b.AddSpan(b.AddTrack(d, "stream 7"), s);
    b.Meta().source = core::TraceSource::Kineto;
    const core::Trace t = std::move(b).Finish();
    WhatIfParams w;
    w.bandwidthX = 2;
    CHECK_THROWS_WITH(ChangesOf(w, t), Catch::Contains("the network fit file"));
    core::FitFile fit;
    core::FitResult r;
    r.collective = core::Collective::AllReduce;
    r.ranks = 8;
    r.params = {5e-6, 1e-10, 0};
    fit.fits.push_back(r);
    core::SaveFitFile(fit, dir.File("fit.json"));
    w.model = dir.File("fit.json");
    const core::WhatIfChanges c = ChangesOf(w, t);
    REQUIRE(c.networkBefore);
    CHECK(c.networkBefore->betaSecPerByte == Approx(1e-10));
    CHECK(c.networkAfter->betaSecPerByte == Approx(0.5e-10));
}

TEST_CASE("a scenario's what-if experiment and its critical-path view setting", "[gui][whatif]")
{
    const Scenario s = ParseScenario(R"({"title": "t", "experiments": [
        {"kind": "file", "file": "a.json"},
        {"kind": "whatif", "file": "a.json", "commX": 0.5, "scale": "*gemm*=0.8", "noStraggler": 3, "skew": {"rank": 1, "us": 200}}],
        "view": {"showCriticalPath": true}})",
                                     "s.json");
    REQUIRE(s.experiments.size() == 2);
    const Experiment& w = s.experiments[1];
    CHECK(w.kind == ExperimentKind::WhatIf);
    CHECK(w.files == std::vector<std::string>{"a.json"});
    CHECK(w.whatIf.commX == 0.5);
    CHECK(w.whatIf.noStragglers == std::vector<int>{3});
    CHECK(w.whatIf.skewUs[0].second == 200);
    CHECK(s.view.showCriticalPath);
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "whatif", "file": "a.json", "computeX": 0}]})", "s.json"),
                      Catch::Contains("computeX") && Catch::Contains("> 0"));
}
