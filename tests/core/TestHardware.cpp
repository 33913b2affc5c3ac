#include "model/Hardware.hpp"

#include <catch2/catch.hpp>

using namespace paralens::core;

TEST_CASE("the hardware table lists the GPUs the lectures use, with sources", "[core][model]")
{
    for (const char* id : {"h100-sxm", "h200", "a100-sxm", "v100-sxm", "l40s", "b200"}) {
        const GpuSpec* g = FindGpu(id);
        INFO(id);
        REQUIRE(g);
        CHECK(g->PeakFlops("fp32") > 0);
        CHECK(g->hbmGBps > 0);
        CHECK(!g->source.empty());
    }
    const GpuSpec* h100 = FindGpu("h100-sxm");
    CHECK(h100->PeakFlops("bf16") == Approx(989e12)); // FORMULAS.md
    CHECK(h100->PeakFlops("fp16") == Approx(989e12));
    CHECK(h100->PeakFlops("fp32") == Approx(67e12));
    CHECK(h100->nvlinkGBps == 900);
    CHECK(FindGpu("v100-sxm")->PeakFlops("bf16") == 0.0); // not supported there
}

TEST_CASE("CUDA device names find their spec", "[core][model]")
{
    CHECK(FindGpu("NVIDIA H100 80GB HBM3")->id == "h100-sxm");
    CHECK(FindGpu("NVIDIA H200")->id == "h200");
    CHECK(FindGpu("NVIDIA GH200 120GB")->id == "gh200"); // not the H200 its name contains (CSCS Alps' nodes)
    CHECK(FindGpu("NVIDIA GH200 480GB")->PeakFlops("bf16") == Approx(989e12));
    CHECK(FindGpu("NVIDIA A100-SXM4-40GB")->id == "a100-sxm");
    const GpuSpec* h800 = FindGpu("NVIDIA H800");
    REQUIRE(h800);
    CHECK(h800->id == "h800"); // H100's compute, NVLink cut to 200 GB/s a direction
    CHECK(h800->PeakFlops("bf16") == Approx(989e12));
    CHECK(h800->nvlinkUniGBps == 200);
    CHECK(FindGpu("NVIDIA H100 80GB HBM3")->nvlinkUniGBps == 450);
    CHECK(FindGpu("NVIDIA GeForce GTX 1080") == nullptr);
    CHECK_THAT(GpuIdsList(), Catch::Contains("b200"));
}
