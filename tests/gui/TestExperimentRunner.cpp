// The runner of experiments on real backends (app/gui/ExperimentRunner): what each backend is
// offered or refused, and the GPU backend's requests (host logic, checked without a GPU).
#include "ExperimentRunner.hpp"
#include "ScenarioLoader.hpp"

#include "common/Error.hpp"
#include "gpu/GpuBackend.hpp"
#include "model/CostModel.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace paralens;
using namespace paralens::app;

namespace {

// The JSON report a step of scripts/gpu-validate.sh printed (its log: a command line, then JSON).
nlohmann::json StepReport(const std::string& dir, const std::string& step)
{
    const std::string log = core::ReadFileDecompressed(dir + "logs/" + step + ".log");
    const size_t brace = log.find("\n{");
    REQUIRE(brace != std::string::npos);
    return nlohmann::json::parse(log.substr(brace + 1));
}

} // namespace

TEST_CASE("the GPU backend is asked for the Plan executor and the pipeline runner, valid requests", "[gui][gpu]")
{
    Experiment e;
    e.backend = Backend::Gpu;
    e.collective.collective = core::Collective::AllReduce;
    e.collective.algorithm = core::Algorithm::Tree;
    e.collective.ranks = 8;
    e.collective.bytes = 1 << 20;
    e.live.iterations = 7;
    e.live.warmup = 2;
    gpu::RunRequest r = GpuRunRequest(e, 1);
    CHECK(r.workload == gpu::Workload::Plan);
    CHECK(r.plan.algorithm == core::Algorithm::Tree);
    CHECK(r.plan.ranks == 8);
    CHECK(r.plan.virtualRanks); // 8 ranks on 1 GPU
    CHECK(r.sizes == std::vector<uint64_t>{1 << 20});
    CHECK(r.iters == 7);
    CHECK(r.warmupIters == 2);
    CHECK_NOTHROW(gpu::ValidateRunRequest(r));
    CHECK_FALSE(GpuRunRequest(e, 8).plan.virtualRanks);
    e.kind = ExperimentKind::Pipeline;
    e.pipeline.schedule = core::ScheduleKind::Interleaved;
    e.pipeline.stages = 4;
    e.pipeline.microBatches = 8;
    e.pipeline.chunks = 2;
    r = GpuRunRequest(e, 2);
    CHECK(r.workload == gpu::Workload::Pipeline);
    CHECK(r.pipeline.chunks == 2);
    CHECK(r.pipeline.virtualStages);
    CHECK_NOTHROW(gpu::ValidateRunRequest(r));
}

TEST_CASE("each backend says what it cannot run, and why", "[gui]")
{
    Experiment e;
    CHECK(BackendRefusal(e).empty()); // the simulator runs everything
    e.backend = Backend::Gpu;
    if (!gpu::BackendBuilt() || gpu::DiscoverDevices().devices.empty()) {
        CHECK_FALSE(BackendRefusal(e).empty());
        CHECK_THROWS_AS(StartExperiment(e), Unavailable);
    }
    e.backend = Backend::Processes;
    e.kind = ExperimentKind::Training;
    if (BackendAvailability(Backend::Processes).empty()) {
        CHECK_THAT(BackendRefusal(e), Catch::Contains("untick overlap")); // dp, overlapped by default
        CHECK_THROWS_AS(StartExperiment(e), Error);
        e.training.overlap = false;
        CHECK(BackendRefusal(e).empty());
        e.training.workload = "ps";
        e.training.consistency = "ssp";
        CHECK_THAT(BackendRefusal(e), Catch::Contains("only BSP runs on processes"));
        e.training.consistency = "bsp";
        e.training.devices = 64; // + 1 server
        CHECK_THAT(BackendRefusal(e), Catch::Contains("at most 64 processes"));
        e.training.devices = 4;
        CHECK(BackendRefusal(e).empty());
        e.training.workload = "tp";
        CHECK_THAT(BackendRefusal(e), Catch::Contains("tp runs on the simulator"));
        e.kind = ExperimentKind::Collective;
        e.collective.ranks = 65;
        CHECK_THAT(BackendRefusal(e), Catch::Contains("at most 64 processes"));
        e.collective.ranks = 4;
        CHECK(BackendRefusal(e).empty());
        e.live.iterations = 0;
        CHECK_THAT(BackendRefusal(e), Catch::Contains("iterations"));
    }
}

TEST_CASE("the GPU validation's window scenario asks the GPU backend for what it runs", "[gui]")
{
    // scripts/gpu-validate.sh draws it with `render` on the GPU machine: a scenario that stopped
    // parsing, or asked the GPU for something it refuses, would be found there only.
    const Scenario s = ResolveScenario(std::string(PARALENS_SOURCE_DIR) + "/scripts/gpu-window-scenario.json");
    REQUIRE(s.experiments.size() == 3);
    for (const Experiment& e : s.experiments) {
        INFO(e.label);
        CHECK(e.backend == Backend::Gpu);
        CHECK(BackendRefusal(e) == BackendAvailability(Backend::Gpu)); // nothing but the machine in the way
        const gpu::RunRequest r = GpuRunRequest(e, 1);
        CHECK_NOTHROW(gpu::ValidateRunRequest(r));
        if (e.kind == ExperimentKind::Pipeline) CHECK(r.pipeline.virtualStages);
        else CHECK(r.plan.virtualRanks);
    }
    CHECK(s.experiments[0].kind == ExperimentKind::Pipeline);
    CHECK(s.experiments[1].kind == ExperimentKind::Collective);
    CHECK(s.experiments[2].kind == ExperimentKind::Pipeline); // zb-h1: the window's model beside its bubble
    CHECK(s.experiments[2].pipeline.schedule == core::ScheduleKind::ZeroBubbleH1);
}

TEST_CASE("a collective measured on the GPU shows the time its run reported, not zero", "[gui]")
{
    // The Plan executor's Trace holds each transfer and reduction, not one span per collective;
    // the window showed "0 ns measured" for it (found drawing on an H200). Its report times it.
    const std::string dir = std::string(PARALENS_SOURCE_DIR) + "/traces/h200/";
    auto trace = std::make_shared<const core::Trace>(core::ReadTraceFile(dir + "plan-allreduce-ring-8vranks-64MiB.json.gz"));
    const nlohmann::json run = StepReport(dir, "plan-allreduce-ring-8vranks-64MiB");
    const double timeUs = run.at("rows").at(0).at("timeUs").get<double>();
    Experiment e;
    e.kind = ExperimentKind::Collective;
    e.backend = Backend::Gpu;
    e.collective.collective = core::Collective::AllReduce;
    e.collective.algorithm = core::Algorithm::Ring;
    e.collective.ranks = 8;
    e.collective.bytes = uint64_t{64} << 20;
    core::RunReport report;
    core::MetaSection row;
    row.Set("bytes", static_cast<int64_t>(e.collective.bytes));
    row.Set("timeUs", timeUs);
    report.rows.push_back(row);
    const auto r = MeasuredRun(e, trace, &report);
    CHECK(r->simulatedSeconds == Approx(timeUs * 1e-6));
    CHECK(std::string(r->measuredAs) == "measured (mean, CUDA events)"); // the executor's mean over iterations
    CHECK(r->algbwGBps == Approx(core::AlgBwGBps(e.collective.bytes, timeUs * 1e-6)));
    CHECK(r->busbwGBps == Approx(r->algbwGBps * core::BusBwFactor(core::Collective::AllReduce, 8)));
    CHECK(r->predictedSeconds > 0);
}

TEST_CASE("a pipeline measured on the GPU shows the bubble and MFU its run reported", "[gui]")
{
    // The window on an H200 (traces/h200/window) showed 1F1B's bubble as 0.30 and MFU as 0.458
    // where `paralens run` reported 0.248-0.250 and 0.498: it took the whole capture, set-up,
    // warm-up and the host's gaps between iterations included. Now each iteration's window.
    const std::string dir = std::string(PARALENS_SOURCE_DIR) + "/traces/h200/window/";
    auto trace = std::make_shared<const core::Trace>(core::ReadTraceFile(dir + "pipeline-1f1b-4x8-virtual.json.gz"));
    const nlohmann::json run = StepReport(dir, "pipeline-1f1b-4x8-virtual");
    double bubble = 0;
    for (const auto& row : run.at("rows")) bubble += row.at("bubble").get<double>() / static_cast<double>(run.at("rows").size());
    Experiment e;
    e.kind = ExperimentKind::Pipeline;
    e.backend = Backend::Gpu;
    e.pipeline.schedule = core::ScheduleKind::OneFOneB;
    e.pipeline.stages = 4;
    e.pipeline.microBatches = 8;
    const auto r = MeasuredRun(e, trace);
    CHECK(r->bubbleFraction == Approx(bubble).margin(1e-9));
    REQUIRE(r->mfu.available);
    CHECK(r->mfu.iterations == 3);
    // CUDA events time the iterations from the host's first launch; the spans' extent is a little
    // shorter, so the window's MFU is a little higher than the run's.
    CHECK(r->mfu.report.mfu == Approx(run.at("summary").at("mfu").get<double>()).epsilon(0.05));
    CHECK(r->mfu.seriesSeconds > r->mfu.report.seconds * 1.3); // the series still cover the whole run
}
