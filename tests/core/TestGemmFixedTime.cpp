// The planner's GEMM efficiency by size: each GEMM takes kGemmFixedSec beyond its FLOPs at the
// matmul ceiling's rate (core/planner/Planner.hpp). The constant is the fit of a public measured
// table, tests/data/gemm-h100-bf16-xla.csv (OpenXLA's H100 GEMM table; tests/data/README.md):
// refitting the table must give it back.
#include "model/Hardware.hpp"
#include "planner/Planner.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace paralens::core;

namespace {

struct Measured {
    double flops = 0, rate = 0; // FLOPs of one GEMM (2 m n k), FLOP/s reached
};

std::vector<Measured> ReadTable(const std::string& path)
{
    std::ifstream in(path);
    REQUIRE(in.good());
    std::string line;
    std::getline(in, line);
    REQUIRE(line == "m,n,k,bf16_flops_per_s");
    std::vector<Measured> out;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        double m = 0, n = 0, k = 0, rate = 0;
        char comma = 0;
        fields >> m >> comma >> n >> comma >> k >> comma >> rate;
        REQUIRE(!fields.fail());
        out.push_back({2 * m * n * k, rate});
    }
    return out;
}

// Mean |log(predicted / measured)| of rate = plateau x F / (F + F0).
double MeanLogError(const std::vector<Measured>& table, double plateau, double f0)
{
    double sum = 0;
    for (const Measured& g : table) sum += std::fabs(std::log(plateau * g.flops / (g.flops + f0) / g.rate));
    return sum / static_cast<double>(table.size());
}

} // namespace

TEST_CASE("planner: each GEMM's fixed time is what OpenXLA's measured H100 table gives", "[core][planner]")
{
    const std::vector<Measured> table = ReadTable(PARALENS_SOURCE_DIR "/tests/data/gemm-h100-bf16-xla.csv");
    REQUIRE(table.size() == 125); // m, n, k each 256, 512, 1024, 2048, 4096
    // The least mean |log error| over a grid: plateau 700-900 TFLOP/s, F0 1e8-1e11 FLOPs.
    double bestError = 1e9, bestPlateau = 0, bestF0 = 0;
    for (double plateau = 700e12; plateau <= 900e12; plateau += 1e12)
        for (double lf0 = 8; lf0 <= 11; lf0 += 0.005) {
            const double e = MeanLogError(table, plateau, std::pow(10.0, lf0));
            if (e < bestError) bestError = e, bestPlateau = plateau, bestF0 = std::pow(10.0, lf0);
        }
    INFO("plateau " << bestPlateau * 1e-12 << " TFLOP/s, F0 " << bestF0 << " FLOPs, mean |log error| " << bestError);
    CHECK(bestError < 0.09);
    CHECK(bestF0 / bestPlateau == Approx(kGemmFixedSec).epsilon(0.03));
    // Its plateau is the H100's measured matmul ceiling (stas00/ml-engineering's mamf-finder), within 5%.
    CHECK(bestPlateau == Approx(FindGpu("h100-sxm")->MatmulCeiling("bf16") * FindGpu("h100-sxm")->PeakFlops("bf16")).epsilon(0.05));
    // The small ones are far from it: 1024 cubed (2.1 GFLOP) reached under a third of the plateau.
    CHECK(table[62].flops == 2.0 * 1024 * 1024 * 1024);
    CHECK(table[62].rate < bestPlateau / 3);
}

TEST_CASE("planner: a GEMM's fixed time is the same share on every GPU and dtype with a measured ceiling", "[core][planner]")
{
    // F0 / rate = kGemmFixedSec x ceiling / training rate: at the default efficiency every measured
    // GPU and dtype loses kGemmFixedSec x (the H100's BF16 ceiling / efficiency) a GEMM.
    PlanCluster k;
    const double perGemm = kGemmFixedSec * (794.5 / 989.0) / 0.55;
    for (const char* gpu : {"h100-sxm", "a100-sxm", "b200", "gb200"}) {
        k.gpu = *FindGpu(gpu);
        INFO(gpu);
        CHECK(k.GemmHalfFlops("bf16") / k.GemmFlops() == Approx(perGemm).epsilon(1e-3));
    }
    k.fp8 = true;
    k.gpu = *FindGpu("h100-sxm");
    CHECK(k.GemmHalfFlops("fp8") / k.LinearFlops() == Approx(perGemm).epsilon(1e-3));
    // Where no ceiling is measured (GB300), the H100's BF16 share of peak stands in for it.
    k.gpu = *FindGpu("gb300");
    CHECK(k.GemmHalfFlops("bf16") == Approx(kGemmFixedSec * k.gpu.PeakFlops("bf16") * 794.5 / 989.0).epsilon(1e-3));
}
