// The model against the lectures' tables (FORMULAS.md), typed here independently of the code.
#include "analysis/SpanPrediction.hpp"
#include "model/CostModel.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace paralens::core;

namespace {

const CostParams kParams{5e-6, 1e-11, 2.5e-11}; // 5 us, 100 GB/s, reductions at 40 GB/s

double Rel(double x, double y) { return std::fabs(x - y) / std::max(std::fabs(y), 1e-300); }

} // namespace

TEST_CASE("lecture formulas match FORMULAS.md's tables", "[core][model]")
{
    const int p = 8;
    const double n = 64.0 * (1 << 20);
    const double a = kParams.alphaSec, b = kParams.betaSecPerByte, g = kParams.gammaSecPerByte;
    const double lg = 3.0, f = 7.0 / 8.0 * n;
    struct Row {
        Collective c;
        Algorithm al;
        double expected;
    };
    const Row rows[] = {
        {Collective::Broadcast, Algorithm::Tree, lg * (a + n * b)},
        {Collective::Reduce, Algorithm::Tree, lg * (a + n * b + n * g)},
        {Collective::Scatter, Algorithm::Tree, lg * a + f * b},
        {Collective::Gather, Algorithm::Tree, lg * a + f * b},
        {Collective::AllGather, Algorithm::Tree, 2 * lg * a + lg * n * b + f * b},
        {Collective::ReduceScatter, Algorithm::Tree, 2 * lg * a + lg * n * (b + g) + f * b},
        {Collective::AllReduce, Algorithm::Tree, 2 * lg * a + lg * n * (2 * b + g)},
        {Collective::ReduceScatter, Algorithm::Ring, 7 * a + f * (b + g)},
        {Collective::AllGather, Algorithm::Ring, 7 * a + f * b},
        {Collective::AllReduce, Algorithm::Ring, 14 * a + f * (2 * b + g)},
        {Collective::Broadcast, Algorithm::Ring, (lg + 7) * a + 2 * f * b},
        {Collective::Reduce, Algorithm::Ring, (7 + lg) * a + f * (2 * b + g)},
        {Collective::Scatter, Algorithm::Ring, lg * a + f * b},
        {Collective::ReduceScatter, Algorithm::HalvingDoubling, lg * a + f * (b + g)},
        {Collective::AllGather, Algorithm::HalvingDoubling, lg * a + f * b},
        {Collective::AllReduce, Algorithm::HalvingDoubling, 2 * lg * a + f * (2 * b + g)},
        {Collective::AllReduce, Algorithm::RecursiveDoubling, lg * (a + n * b + n * g)},
        {Collective::AllReduce, Algorithm::Naive, 2 * 7 * (a + n * b) + 7 * n * g},
        {Collective::AllToAll, Algorithm::Pairwise, 7 * (a + n / 8 * b)},
        {Collective::SendRecv, Algorithm::Direct, a + n * b},
    };
    for (const Row& r : rows) {
        INFO(std::string(Name(r.c)) + "/" + std::string(Name(r.al)));
        CHECK(Rel(LectureSeconds(r.c, r.al, p, n, kParams), r.expected) < 1e-12);
        CHECK_FALSE(FormulaText(r.c, r.al).empty());
    }
}

TEST_CASE("the generalised prediction equals the lecture formula for powers of two", "[core][model]")
{
    for (int p : {2, 4, 8, 16, 64}) {
        for (Collective c : AllCollectives()) {
            for (Algorithm al : AlgorithmsFor(c)) {
                for (int root : {0, p - 1}) {
                    if (!HasRoot(c) && root) continue;
                    const uint64_t n = static_cast<uint64_t>(p) * 4096;
                    Prediction pr = PredictSeconds({c, al, p, n, root, 1}, kParams);
                    INFO(std::string(Name(c)) + "/" + std::string(Name(al)) + " p=" + std::to_string(p));
                    CHECK(pr.exact);
                    CHECK(Rel(pr.seconds, LectureSeconds(c, al, p, static_cast<double>(n), kParams)) < 1e-9);
                }
            }
        }
    }
}

TEST_CASE("predictions say when they are not exact", "[core][model]")
{
    // Empty blocks: fewer elements than ranks.
    CHECK_FALSE(PredictSeconds({Collective::AllGather, Algorithm::Naive, 8, 7, 0, 1}, kParams).exact);
    // Rooted scatter off rank 0 with uneven blocks.
    CHECK_FALSE(PredictSeconds({Collective::Scatter, Algorithm::Tree, 6, 1001, 3, 1}, kParams).exact);
    CHECK(PredictSeconds({Collective::Scatter, Algorithm::Tree, 6, 1001, 0, 1}, kParams).exact);
    CHECK(PredictSeconds({Collective::AllReduce, Algorithm::Ring, 7, 1001, 0, 1}, kParams).exact);
    // One rank: nothing moves.
    CHECK(PredictSeconds({Collective::AllReduce, Algorithm::Ring, 1, 1001, 0, 1}, kParams).seconds == 0.0);
}

TEST_CASE("busbw factors follow nccl-tests", "[core][model]")
{
    CHECK(BusBwFactor(Collective::AllReduce, 8) == Approx(2.0 * 7 / 8));
    CHECK(BusBwFactor(Collective::AllGather, 8) == Approx(7.0 / 8));
    CHECK(BusBwFactor(Collective::ReduceScatter, 8) == Approx(7.0 / 8));
    CHECK(BusBwFactor(Collective::AllToAll, 8) == Approx(7.0 / 8));
    CHECK(BusBwFactor(Collective::Broadcast, 8) == 1.0);
    CHECK(BusBwFactor(Collective::Reduce, 8) == 1.0);
    CHECK(BusBwFactor(Collective::SendRecv, 8) == 1.0);
    CHECK(AlgBwGBps(1000000000, 0.5) == Approx(2.0));
    CHECK(AlgBwGBps(1000, 0.0) == 0.0);
}

TEST_CASE("collective and algorithm names round-trip", "[core][model]")
{
    for (Collective c : AllCollectives()) {
        CHECK(ParseCollective(Name(c)) == c);
        for (Algorithm a : AlgorithmsFor(c)) CHECK(ParseAlgorithm(Name(a)) == a);
    }
    CHECK(ParseCollective("all_reduce") == Collective::AllReduce);
    CHECK_FALSE(ParseCollective("allreduse").has_value());
    CHECK(Supports(Collective::AllReduce, Algorithm::RecursiveDoubling));
    CHECK_FALSE(Supports(Collective::Scatter, Algorithm::HalvingDoubling));
}

TEST_CASE("a measured span's prediction: a message alpha + n beta, a collective its closed form, a GEMM its FLOPs at the peak", "[core]")
{
    using namespace paralens::core;
    const CostParams k{5e-6, 1e-9, 0};
    Metadata meta;
    meta.workload.Set("collective", std::string("allreduce"));
    meta.workload.Set("algorithm", std::string("ring"));
    meta.workload.Set("ranks", int64_t{4});
    Span s;
    s.category = SpanCategory::Send;
    s.bytes = 1000;
    CHECK(PredictSpanSeconds(s, meta, k) == Approx(5e-6 + 1000e-9));
    s.category = SpanCategory::Collective;
    s.bytes = 1 << 20;
    CHECK(PredictSpanSeconds(s, meta, k) == Approx(PredictSeconds({Collective::AllReduce, Algorithm::Ring, 4, 1 << 20, 0, 1}, k).seconds));
    s.category = SpanCategory::Forward;
    s.bytes = 0;
    s.flops = 2e9;
    CHECK(PredictSpanSeconds(s, meta, k) < 0); // no peak known
    meta.hardware.Set("cpuPeakFlops", 1e11);
    CHECK(PredictSpanSeconds(s, meta, k) == Approx(0.02));
    s.category = SpanCategory::Idle;
    s.flops = 0;
    CHECK(PredictSpanSeconds(s, meta, k) < 0);
}
