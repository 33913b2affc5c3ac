// Alpha-beta(-gamma) fits: exact recovery from the model's own times, robustness, gamma, files.
#include "analysis/Fitting.hpp"
#include "common/Error.hpp"
#include "model/CostModel.hpp"
#include "model/Fit.hpp"
#include "trace/NcclTestsLog.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

using namespace paralens;
using namespace paralens::core;

namespace {

FitGroup ModelGroup(Collective c, Algorithm a, int p, const CostParams& k, double noise = 0)
{
    FitGroup g;
    g.collective = c;
    g.algorithm = a;
    g.ranks = p;
    g.source = "model";
    int i = 0;
    for (uint64_t n = 8; n <= (uint64_t{1} << 33); n *= 2, ++i) {
        double t = LectureSeconds(c, a, p, static_cast<double>(n), k);
        if (noise != 0) t *= 1 + noise * ((i * 7919) % 13 - 6) / 6.0; // deterministic +-noise
        g.samples.push_back({n, t, 0});
    }
    return g;
}

std::string RefFile(const std::string& rel)
{
    std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/" + rel;
    return std::filesystem::exists(path) ? path : "";
}

} // namespace

TEST_CASE("a fit recovers alpha and beta exactly from the formula's own times", "[model][fit]")
{
    const CostParams k{5e-6, 1.0 / 100e9, 0};
    for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::HalvingDoubling}) {
        INFO(Name(a));
        FitResult r = FitAlphaBeta(ModelGroup(Collective::AllReduce, a, 8, k));
        CHECK(r.params.alphaSec == Approx(5e-6).epsilon(1e-9));
        CHECK(r.params.betaSecPerByte == Approx(1e-11).epsilon(1e-9));
        CHECK(r.mapePct < 1e-6);
        CHECK(r.note.empty());
    }
    FitResult ring = FitAlphaBeta(ModelGroup(Collective::AllReduce, Algorithm::Ring, 8, k));
    CHECK(ring.alphaCoefficient == 14);                   // 2(p-1) messages
    CHECK(ring.betaCoefficient == Approx(1.75));          // 2(p-1)/p n bytes
    CHECK(ring.latencySec == Approx(14 * 5e-6).epsilon(1e-9));
    CHECK(ring.busBwGBps == Approx(100).epsilon(1e-9));   // ring allreduce: busbw = link bandwidth
    CHECK(ring.rows.size() == 31);
    CHECK(ring.PredictSeconds(1 << 20) == Approx(LectureSeconds(Collective::AllReduce, Algorithm::Ring, 8, 1 << 20, k)));
    FitResult bcast = FitAlphaBeta(ModelGroup(Collective::Broadcast, Algorithm::Tree, 16, k));
    CHECK(bcast.alphaCoefficient == 4); // log p
    CHECK(bcast.params.alphaSec == Approx(5e-6).epsilon(1e-9));
    CHECK(bcast.busBwGBps == Approx(100.0 / 4).epsilon(1e-9)); // factor 1 over 4 n bytes
}

TEST_CASE("a fit is robust to one outlier row and to noise", "[model][fit]")
{
    const CostParams k{2.5e-6, 1.0 / 360e9, 0};
    FitGroup g = ModelGroup(Collective::AllReduce, Algorithm::Ring, 8, k);
    g.samples[16].seconds *= 1.8; // one noisy row, as nccl-tests' 512 KiB one
    FitResult r = FitAlphaBeta(g);
    CHECK(r.params.alphaSec == Approx(2.5e-6).epsilon(1e-3));
    CHECK(1.0 / r.params.betaSecPerByte / 1e9 == Approx(360).epsilon(1e-3));
    CHECK(r.rows[16].errorPct == Approx(100.0 * (1 / 1.8 - 1)).margin(0.5)); // predicted below the noisy row
    CHECK_THAT(r.note, Catch::Contains("outlier"));
    FitResult noisy = FitAlphaBeta(ModelGroup(Collective::AllGather, Algorithm::Ring, 4, k, 0.03));
    CHECK(noisy.params.alphaSec == Approx(2.5e-6).epsilon(0.05));
    CHECK(noisy.mapePct < 3.0);
}

TEST_CASE("rows of 0 bytes are shown with the line but stay out of the fit and its errors", "[model][fit]")
{
    // An old alltoall log starts with rows of 0 bytes: NCCL launches and returns (~1.3 us). Fitted,
    // they pulled the line 58% off on a real log; left out, the line is the one the sizes give.
    const CostParams k{20e-6, 1.0 / 50e9, 0};
    const FitGroup plain = ModelGroup(Collective::AllToAll, Algorithm::Pairwise, 8, k);
    FitGroup withZeros = plain;
    for (int i = 0; i < 3; ++i) withZeros.samples.insert(withZeros.samples.begin(), {0, 1.3e-6, 0});
    const FitResult a = FitAlphaBeta(plain), b = FitAlphaBeta(withZeros);
    CHECK(b.latencySec == a.latencySec);
    CHECK(b.secPerByte == a.secPerByte);
    CHECK(b.mapePct == Approx(a.mapePct).margin(1e-12));
    CHECK(b.maxErrorPct == Approx(a.maxErrorPct).margin(1e-12));
    REQUIRE(b.rows.size() == plain.samples.size() + 3); // shown
    CHECK(b.rows[0].bytes == 0);
    CHECK(b.rows[0].predictedSec == Approx(b.latencySec));
    CHECK_THAT(b.note, Catch::Contains("3 rows of 0 bytes shown, not fitted"));
    // Only rows of 0 bytes: their latency is all there is to fit.
    FitGroup zeros = plain;
    zeros.samples.assign(4, {0, 1.3e-6, 0});
    const FitResult z = FitAlphaBeta(zeros);
    CHECK(z.latencySec == Approx(1.3e-6));
    CHECK(z.mapePct == Approx(0).margin(1e-9));
}

TEST_CASE("fits of odd data say what they could not fit", "[model][fit]")
{
    FitGroup one;
    one.collective = Collective::AllReduce;
    one.ranks = 4;
    one.samples = {{1024, 1e-5, 0}, {1024, 1.2e-5, 0}};
    FitResult r = FitAlphaBeta(one);
    CHECK_THAT(r.note, Catch::Contains("same size"));
    FitGroup flat = one;
    flat.samples = {{8, 3e-5, 0}, {1 << 20, 2e-5, 0}};
    CHECK_THAT(FitAlphaBeta(flat).note, Catch::Contains("does not grow"));
    FitGroup none = one;
    none.samples = {{8, 0.0, 0}};
    CHECK_THROWS_AS(FitAlphaBeta(none), Error);
}

TEST_CASE("a joint fit separates gamma when a reducing and a plain collective are measured", "[model][fit]")
{
    const CostParams k{4e-6, 1.0 / 50e9, 1.0 / 200e9};
    std::vector<FitGroup> groups{ModelGroup(Collective::AllReduce, Algorithm::Ring, 8, k),
                                 ModelGroup(Collective::AllGather, Algorithm::Ring, 8, k)};
    auto joint = FitJoint(groups);
    REQUIRE(joint);
    CHECK(joint->gammaSeparated);
    CHECK(joint->params.alphaSec == Approx(4e-6).epsilon(1e-6));
    CHECK(joint->params.betaSecPerByte == Approx(1 / 50e9).epsilon(1e-6));
    CHECK(joint->params.gammaSecPerByte == Approx(1 / 200e9).epsilon(1e-6));
    CHECK(joint->mapePct < 1e-6);
    // Two allreduces: gamma always rides with beta in the same proportion, so it stays inside beta.
    auto folded = FitJoint({ModelGroup(Collective::AllReduce, Algorithm::Ring, 8, k),
                            ModelGroup(Collective::AllReduce, Algorithm::Ring, 4, k)});
    REQUIRE(folded);
    CHECK_FALSE(folded->gammaSeparated);
    CHECK(folded->params.betaSecPerByte == Approx(1 / 50e9 + 0.5 / 200e9).epsilon(1e-6));
    CHECK_FALSE(FitJoint({groups[0]}));
}

TEST_CASE("fit files round-trip and pick the fit for a collective", "[model][fit][io]")
{
    const CostParams k{5e-6, 1e-11, 0};
    FitFile file;
    file.sources = {"a.log"};
    file.fits.push_back(FitAlphaBeta(ModelGroup(Collective::AllReduce, Algorithm::Ring, 8, k)));
    file.fits.push_back(FitAlphaBeta(ModelGroup(Collective::AllGather, Algorithm::Ring, 4, {7e-6, 2e-11, 0})));
    FitFile back = ParseFitFile(FitFileToJson(file), "fit.json");
    REQUIRE(back.fits.size() == 2);
    CHECK(back.fits[0].params.alphaSec == Approx(5e-6).epsilon(1e-12));
    CHECK(back.fits[0].params.betaSecPerByte == Approx(1e-11).epsilon(1e-12));
    CHECK(back.fits[0].rows.size() == 31);
    CHECK(back.fits[1].collective == Collective::AllGather);
    std::string why;
    auto p = ModelFromFit(back, Collective::AllGather, 16, &why);
    REQUIRE(p);
    CHECK(p->alphaSec == Approx(7e-6).epsilon(1e-12));
    CHECK_THAT(why, Catch::Contains("nearest rank count"));
    p = ModelFromFit(back, Collective::Broadcast, 8, &why);
    CHECK(p->alphaSec == Approx(5e-6).epsilon(1e-12)); // no broadcast fit, no joint fit: the first
    CHECK_THAT(why, Catch::Contains("no fit of broadcast"));
    CHECK_THROWS_WITH(ParseFitFile("{\"format\":\"other\"}", "x.json"), Catch::Contains("not a paralens fit file"));
    CHECK_THROWS_WITH(ParseFitFile("{\"format\":\"paralens-fit\",\"fits\":[{\"collective\":\"allreduce\"}]}", "x.json"),
                      Catch::Contains("fits[0]") && Catch::Contains("ranks"));
    CHECK_THROWS_WITH(ParseFitFile("{oops", "x.json"), Catch::Contains("x.json") && Catch::Contains("invalid JSON"));
}

TEST_CASE("fits of the reference nccl-tests logs: alpha, bandwidth and errors an engineer accepts", "[fit][reference]")
{
    std::string h100 = RefFile("nccl-tests/h100x8_nvlink_allreduce_ring.log");
    std::string a100 = RefFile("nccl-tests/a100x8_nvlink_broadcast_legacyfmt.log");
    if (h100.empty() || a100.empty()) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    auto groups = FitGroupsFromLog(ReadNcclTestsLogFile(h100), LogHalf::OutOfPlace);
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].samples.size() == 31);
    FitResult ar = FitAlphaBeta(groups[0]);
    CHECK(ar.algorithm == Algorithm::Ring);
    CHECK(ar.latencySec * 1e6 == Approx(35).margin(2));   // the small sizes' plateau
    CHECK(ar.busBwGBps == Approx(365).margin(10));         // the large sizes' busbw (368 at 8 GiB)
    CHECK(ar.params.alphaSec * 1e6 == Approx(2.5).margin(0.2)); // per ring step: 14 of them
    CHECK(ar.mapePct < 6);
    CHECK(FitGroupsFromLog(ReadNcclTestsLogFile(h100), LogHalf::Both)[0].samples.size() == 62);

    FitResult bc = FitAlphaBeta(FitGroupsFromLog(ReadNcclTestsLogFile(a100), LogHalf::OutOfPlace).at(0));
    CHECK(bc.collective == Collective::Broadcast);
    CHECK(bc.latencySec * 1e6 == Approx(35).margin(2));
    CHECK(bc.busBwGBps == Approx(228).margin(10)); // 233 at 8 GiB
    CHECK(bc.mapePct < 12);
    CHECK_THAT(bc.note, Catch::Contains("bends"));
}

TEST_CASE("fit groups from a trace's collective spans", "[fit]")
{
    std::string log = "# Collective test starting: all_reduce_perf\n"
                      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x00] GPU\n#  Rank  1 Group  0 Pid 1 on h device  1 [0x00] GPU\n"
                      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
    const CostParams k{3e-6, 1.0 / 20e9, 0};
    for (uint64_t n = 1024; n <= (1 << 24); n *= 4) {
        double us = LectureSeconds(Collective::AllReduce, Algorithm::Ring, 2, static_cast<double>(n), k) * 1e6;
        log += "  " + std::to_string(n) + " " + std::to_string(n / 4) + " float sum -1 " + std::to_string(us) +
               " 1 1 0 " + std::to_string(us) + " 1 1 0\n";
    }
    Trace t = NcclTestsTrace(ReadNcclTestsLog(log, "ar.log"));
    auto groups = FitGroupsFromTrace(t, "ar.log");
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].samples.size() == 16); // 8 rows x 2 halves, each matched across the 2 ranks once
    FitResult r = FitAlphaBeta(groups[0]);
    CHECK(r.params.alphaSec == Approx(3e-6).epsilon(1e-3));
    CHECK(1.0 / r.params.betaSecPerByte == Approx(20e9).epsilon(1e-3));
}
