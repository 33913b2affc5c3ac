// The runner of experiments on real backends (app/gui/ExperimentRunner): what each backend is
// offered or refused, and the GPU backend's requests (host logic, checked without a GPU).
#include "ExperimentRunner.hpp"

#include "common/Error.hpp"
#include "gpu/GpuBackend.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::app;

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
