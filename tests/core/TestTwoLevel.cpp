// Two-level clusters: nodes of GPUs on a network. The hierarchical allreduce's Plan, its formula,
// the network's links in the simulator, and the step-by-step price of any Plan with its two shares.
#include "analysis/Extrapolation.hpp"
#include "common/Error.hpp"
#include "model/Fit.hpp"
#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "plan/Reference.hpp"
#include "sim/Simulator.hpp"
#include "sim/TwoLevelCost.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace paralens;
using namespace paralens::core;

namespace {

double Rel(double x, double y) { return std::fabs(x - y) / std::max(std::fabs(y), 1e-300); }

CollectiveSpec AllReduce(Algorithm a, int p, int perNode, uint64_t n)
{
    CollectiveSpec s{Collective::AllReduce, a, p, n, 0, 1};
    s.ranksPerNode = perNode;
    return s;
}

// NVLink-like within a node, a slower network between nodes.
ClusterModel TwoLevels(double gammaGBps = 0)
{
    ClusterModel m = ClusterModel::FromUnits(2, 300, gammaGBps);
    m.netAlphaSec = 10e-6;
    m.netBetaSecPerByte = 1.0 / 25e9;
    return m;
}

} // namespace

TEST_CASE("the hierarchical allreduce computes the sum on the CPU for every placement", "[core][plan][twolevel]")
{
    int checked = 0;
    for (int p = 1; p <= 16; ++p)
        for (int perNode = 0; perNode <= p; ++perNode) {
            if (perNode > 0 && p % perNode != 0) continue;
            for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{64}, uint64_t{1000}, uint64_t{4099}})
                for (Algorithm a : TwoLevelAlgorithmsFor(Collective::AllReduce)) {
                    const CollectiveSpec s = AllReduce(a, p, perNode, n);
                    INFO(Name(a) << " p=" << p << " per node " << perNode << " n=" << n);
                    REQUIRE(CheckPlanOnCpu(BuildPlan(s), 99 + static_cast<uint64_t>(p)).ok);
                    ++checked;
                }
        }
    CHECK(checked > 500);
    for (Algorithm a : TwoLevelAlgorithmsFor(Collective::AllReduce)) {
        CollectiveSpec aligned = AllReduce(a, 12, 4, 4 * 1001);
        aligned.alignBytes = 4;
        CHECK(CheckPlanOnCpu(BuildPlan(aligned), 5).ok);
    }
}

TEST_CASE("the hierarchical allreduce's steps: 2(q-1) within nodes, 2(N-1) between, only those cross", "[core][plan][twolevel]")
{
    const Plan plan = BuildPlan(AllReduce(Algorithm::Hierarchical, 16, 4, 16 * 1024));
    CHECK(plan.steps.size() == 2 * 3 + 2 * 3);
    size_t crossing = 0, within = 0;
    for (const PlanStep& step : plan.steps) {
        const std::string& phase = plan.phases[step.phase];
        for (const Transfer& t : plan.TransfersOf(step)) {
            const bool crosses = plan.spec.NodeOf(t.src) != plan.spec.NodeOf(t.dst);
            CHECK(crosses == (phase.find("between nodes") != std::string::npos));
            (crosses ? crossing : within) += t.bytes;
        }
    }
    // Within nodes: 2 (q-1) shards of n/q per rank; between: 2 (N-1) blocks of n/p per rank.
    CHECK(within == 16 * 2 * 3 * 4096);
    CHECK(crossing == 16 * 2 * 3 * 1024);
    // One node: the ring's Plan exactly.
    const Plan one = BuildPlan(AllReduce(Algorithm::Hierarchical, 8, 0, 8000));
    const Plan ring = BuildPlan(AllReduce(Algorithm::Ring, 8, 0, 8000));
    CHECK(one.steps.size() == ring.steps.size());
    CHECK(one.WireBytes() == ring.WireBytes());
    CHECK_THROWS_WITH(BuildPlan(AllReduce(Algorithm::Hierarchical, 10, 4, 1000)),
                      Catch::Contains("10 ranks") && Catch::Contains("4 per node"));
    CHECK(Supports(Collective::AllReduce, Algorithm::Hierarchical));
    CHECK_FALSE(Supports(Collective::AllGather, Algorithm::Hierarchical));
    CHECK(ParseAlgorithm("hierarchical") == Algorithm::Hierarchical);
    CHECK_THAT(AlgorithmNamesList(Collective::AllReduce), Catch::Contains("hierarchical"));
}

TEST_CASE("hierarchical (rings or trees between nodes): formula, step-by-step price and simulation agree, on one level and on two", "[sim][twolevel]")
{
    for (Algorithm a : TwoLevelAlgorithmsFor(Collective::AllReduce))
    for (double gamma : {0.0, 40.0})
        for (int perNode : {2, 4, 8})
            for (int nodes : {1, 2, 3, 4, 5}) {
                const int p = perNode * nodes;
                const CollectiveSpec s = AllReduce(a, p, perNode, static_cast<uint64_t>(p) * 65536);
                INFO(Name(a) << " q=" << perNode << " N=" << nodes << " gamma " << gamma);
                const ClusterModel flat = ClusterModel::FromUnits(5, 100, gamma);
                const CostParams k{flat.alphaSec, flat.betaSecPerByte, flat.gammaSecPerByte};
                const Prediction one = PredictSeconds(s, k);
                CHECK(one.exact);
                CHECK(Rel(Simulate(BuildPlan(s), flat, {false}).seconds, one.seconds) < 1e-9);

                const ClusterModel two = TwoLevels(gamma);
                const CostParams net{two.netAlphaSec, two.netBetaSecPerByte, 0};
                const CostParams intra{two.alphaSec, two.betaSecPerByte, two.gammaSecPerByte};
                const TwoLevelPrediction f = PredictTwoLevel(s, intra, net);
                const PlanPrice price = PricePlan(BuildPlan(s), two);
                CHECK(f.exact);
                CHECK(Rel(Simulate(BuildPlan(s), two, {false}).seconds, f.seconds) < 1e-9);
                CHECK(Rel(price.seconds, f.seconds) < 1e-9);
                CHECK(Rel(price.intraSeconds, f.intraSeconds) < 1e-9);
                CHECK(price.netSeconds == Approx(f.netSeconds).epsilon(1e-9));
                const int levels = nodes > 1 ? static_cast<int>(std::ceil(std::log2(nodes))) : 0;
                CHECK(price.netSteps == static_cast<size_t>(a == Algorithm::Hierarchical ? 2 * (nodes - 1) : 2 * levels));
            }
}

TEST_CASE("a ring over nodes is paced by the network, and the hierarchical allreduce sends it 1/q of the bytes", "[sim][twolevel]")
{
    const ClusterModel two = TwoLevels();
    const CostParams intra{two.alphaSec, two.betaSecPerByte, 0}, net{two.netAlphaSec, two.netBetaSecPerByte, 0};
    const uint64_t n = uint64_t{16} << 26; // 1 GiB over 16 GPUs
    const CollectiveSpec ring = AllReduce(Algorithm::Ring, 16, 8, n), hier = AllReduce(Algorithm::Hierarchical, 16, 8, n);
    const TwoLevelPrediction r = PredictTwoLevel(ring, intra, net), h = PredictTwoLevel(hier, intra, net);
    CHECK(r.intraSeconds == 0);
    CHECK(r.netSeconds == Approx(30 * (10e-6 + (n / 16.0) / 25e9)));
    const PlanPrice ringPrice = PricePlan(BuildPlan(ring), two);
    CHECK(Rel(ringPrice.seconds, r.seconds) < 1e-9);
    CHECK(ringPrice.netSteps == 30);
    CHECK(r.exact);
    for (int perNode : {2, 4, 8})
        for (int nodes : {2, 3, 4})
            for (double gamma : {0.0, 40.0}) {
                const int p = perNode * nodes;
                const CollectiveSpec s = AllReduce(Algorithm::Ring, p, perNode, static_cast<uint64_t>(p) * 65536);
                const ClusterModel m = TwoLevels(gamma);
                INFO("q=" << perNode << " N=" << nodes << " gamma " << gamma);
                CHECK(Rel(Simulate(BuildPlan(s), m, {false}).seconds,
                          PredictTwoLevel(s, {m.alphaSec, m.betaSecPerByte, m.gammaSecPerByte}, net).seconds) < 1e-9);
            }
    // The network carries 2 (N-1)/p n per GPU in the hierarchical allreduce against 2 (p-1)/p n
    // in the ring: at 1 GiB it is several times faster.
    CHECK(h.seconds < r.seconds / 4);
    CHECK(h.netSeconds == Approx(2 * (10e-6 + (n / 16.0) / 25e9)));

    // One node: the ring's own formula, every share within.
    const TwoLevelPrediction oneNode = PredictTwoLevel(AllReduce(Algorithm::Ring, 8, 8, 8 << 20), intra, net);
    CHECK(oneNode.netSeconds == 0);
    CHECK(oneNode.exact);
    CHECK(Rel(oneNode.seconds, PredictSeconds(AllReduce(Algorithm::Ring, 8, 0, 8 << 20), intra).seconds) < 1e-12);
}

TEST_CASE("the network's links: between nodes only, link overrides win, one level without a placement", "[sim][twolevel]")
{
    ClusterModel two = TwoLevels();
    // A send/recv ring of 4 ranks, 2 per node: ranks 1 -> 2 and 3 -> 0 cross.
    CollectiveSpec s{Collective::SendRecv, Algorithm::Direct, 4, 1 << 20, 0, 1};
    s.ranksPerNode = 2;
    SimResult r = Simulate(BuildPlan(s), two, {false});
    const double net = 10e-6 + (1 << 20) / 25e9, intra = 2e-6 + (1 << 20) / 300e9;
    CHECK(r.seconds == Approx(net).epsilon(1e-12));
    CHECK(PricePlan(BuildPlan(s), two).netSteps == 1);
    s.ranksPerNode = 0; // no placement: one node
    CHECK(Simulate(BuildPlan(s), two, {false}).seconds == Approx(intra).epsilon(1e-12));
    s.ranksPerNode = 2;
    two.links.push_back({1, 2, 1e-6, 1.0 / 400e9});
    two.links.push_back({3, 0, 1e-6, 1.0 / 400e9});
    CHECK(Simulate(BuildPlan(s), two, {false}).seconds == Approx(intra).epsilon(1e-12));
    ClusterModel flat = ClusterModel::FromUnits(2, 300, 0); // no network given: one level whatever the placement
    CHECK(Simulate(BuildPlan(s), flat, {false}).seconds == Approx(intra).epsilon(1e-12));
}

TEST_CASE("extrapolation: NCCL's ring and tree on the node's regimes and the network's, per NIC", "[fit][twolevel]")
{
    // Within a node (8 GPUs): LL-like below 1 MB, Simple above; between nodes one line per NIC.
    auto node = [](double n) { return std::min(15e-6 + n / 20e9, 60e-6 + n / 200e9); };
    const double aNet = 10e-6, bNet = 1 / 25e9;
    auto net = [&](double m) { return aNet + m * bNet; };
    // The node's links through the ring's formula on 8: alpha from the smallest sizes, beta from
    // the regime of the size, the large regime's 45 us above the small one's paid once.
    const double aIntra = 15e-6 / 14;
    auto bIntra = [](double n) { return (n < 1e6 ? 1 / 20e9 : 1 / 200e9) * 8 / 14; }; // the regimes cross at 1 MB
    auto extraIntra = [](double n) { return n < 1e6 ? 0.0 : 45e-6; };
    // NCCL's tree at the share of its bandwidth NCCL's tuner gives it (src/graph/tuning.cc).
    CHECK(NcclTreeEfficiency(1024) == Approx(0.92 * 0.9));             // log2(1024 / 64) = 4
    CHECK(NcclTreeEfficiency(uint64_t{1} << 20) == Approx(0.92 * 0.5)); // 14: the medium sizes' dip
    CHECK(NcclTreeEfficiency(uint64_t{1} << 30) == Approx(0.92));       // beyond the table
    CHECK(NcclTreeEfficiency(32) == Approx(0.92));
    auto tree = [&](double n, int nodes, int q) {
        const double perNic = (nodes == 2 ? 1.0 : 2.0) * n / q, depth = std::ceil(std::log2(nodes));
        const double eff = NcclTreeEfficiency(static_cast<uint64_t>(n));
        return 2 * (depth * aNet + (q - 1) * aIntra) + std::max(perNic * bNet / eff, n * bIntra(n) + extraIntra(n));
    };
    auto ring = [&](double n, int nodes, int q) {
        const double p = nodes * q, share = 2 * (p - 1) / p;
        return share * (nodes * aNet + (p - nodes) * aIntra) + std::max(share * n / q * bNet, share * n * bIntra(n) + extraIntra(n));
    };
    FitGroup ng, pg;
    ng.collective = Collective::AllReduce;
    ng.ranks = 8;
    pg.collective = Collective::SendRecv;
    pg.algorithm = Algorithm::Direct;
    pg.ranks = 2;
    std::vector<uint64_t> sizes;
    std::vector<FitSample> measured;
    for (uint64_t n = 1024; n <= (uint64_t{1} << 30); n *= 2) {
        const double x = static_cast<double>(n);
        ng.samples.push_back({n, node(x), 0});
        pg.samples.push_back({n, net(x), 0});
        sizes.push_back(n);
        measured.push_back({n, 1.05 * std::min(tree(x, 2, 8), ring(x, 2, 8)), 0});
    }
    const FitResult nodeFit = FitAlphaBeta(ng), netFit = FitAlphaBeta(pg);
    REQUIRE(nodeFit.segments.size() == 2);
    const Extrapolation e = ExtrapolateAllReduce(nodeFit, netFit, 2, sizes, measured);
    CHECK(e.measuredRows == sizes.size());
    CHECK(e.netNodes == 2);
    CHECK(e.bestMapePct == Approx(100.0 / 105 * 5).epsilon(0.05)); // the measurements are 5 % slower than the model
    CHECK(e.worstErrorPct < 0);
    for (const ExtrapolationRow& r : e.rows) {
        INFO(r.bytes);
        const double n = static_cast<double>(r.bytes);
        CHECK(r.treeSec == Approx(tree(n, 2, 8)).epsilon(0.01));
        CHECK(r.ringSec == Approx(ring(n, 2, 8)).epsilon(0.01));
        CHECK(r.bestSec == Approx(std::min(r.ringSec, r.treeSec)));
        CHECK(r.treeIntraSec + r.treeNetSec == Approx(r.treeSec));
    }
    const ExtrapolationRow& big = e.rows.back();
    CHECK(big.treeSec < big.ringSec); // on two nodes each NIC carries n/q in the tree, 2(p-1)/p n/q in the ring
    CHECK(big.treeNetSec == Approx(2 * aNet + (1 << 30) / 8.0 * bNet / 0.92).epsilon(1e-3)); // the NICs set the pace
    CHECK(big.hierarchicalSec > big.bestSec); // the textbook algorithm, not pipelined, is shown but not chosen
    // On 8 nodes a small allreduce is latency-bound: the tree's 2 log2(8) network hops beat the ring's.
    const ExtrapolationRow small8 = ExtrapolateAllReduce(nodeFit, netFit, 8, {1024}, {}).rows.front();
    CHECK(small8.bestSec == small8.treeSec);
    CHECK(small8.treeSec == Approx(tree(1024, 8, 8)).epsilon(0.01));
    CHECK(small8.ringSec == Approx(ring(1024, 8, 8)).epsilon(0.01));
    CHECK(ExtrapolateAllReduce(nodeFit, netFit, 4, {1 << 20}, {}).rows.front().measuredSec == 0);
    CHECK_THROWS_WITH(ExtrapolateAllReduce(netFit, netFit, 2, sizes, {}), Catch::Contains("allreduce"));
    CHECK_THROWS_WITH(ExtrapolateAllReduce(nodeFit, nodeFit, 2, sizes, {}), Catch::Contains("host names")); // 8 ranks, no hosts
    CHECK_THROWS_WITH(ExtrapolateAllReduce(nodeFit, nodeFit, 2, sizes, {}, 0, 3), Catch::Contains("same GPU count"));
    CHECK_THROWS_WITH(ExtrapolateAllReduce(nodeFit, netFit, 1, sizes, {}), Catch::Contains("nodes"));

    // The other logs a network is measured with price it the same way, each through what NCCL runs:
    // an allreduce on 1 + 1 GPUs (2 alpha + n beta), on two nodes of 4 (the tree: 2 (alpha + 3
    // alphaIntra) + n/4 beta at the tree's efficiency), on 10 nodes of 1 (tree latency, ring
    // bandwidth), an allgather on 1 + 1.
    auto logOf = [&](Collective c, int ranks, auto time) {
        FitGroup g;
        g.collective = c;
        g.ranks = ranks;
        for (uint64_t n = 1024; n <= (uint64_t{1} << 33); n *= 2) g.samples.push_back({n, time(static_cast<double>(n)), 0});
        return FitAlphaBeta(g);
    };
    struct Case {
        FitResult fit;
        int nodes;
    };
    const std::vector<Case> others = {
        {logOf(Collective::AllReduce, 2, [&](double n) { return 2 * aNet + n * bNet; }), 0},
        {logOf(Collective::AllReduce, 8,
               [&](double n) { return 2 * (aNet + 3 * aIntra) + n / 4 * bNet / NcclTreeEfficiency(static_cast<uint64_t>(n)); }),
         2},
        {logOf(Collective::AllReduce, 10, [&](double n) { return 2 * 4 * aNet + 2 * 0.9 * n * bNet; }), 10},
        {logOf(Collective::AllGather, 2, [&](double n) { return aNet + n / 2 * bNet; }), 2},
    };
    for (const Case& c : others) {
        INFO(Name(c.fit.collective) << " on " << c.fit.ranks << " ranks, " << c.nodes << " nodes");
        const Extrapolation o = ExtrapolateAllReduce(nodeFit, c.fit, 4, sizes, {}, 0, c.nodes);
        const bool steps = c.fit.ranks == 8; // the tree's efficiency steps: exact where it is constant (512 MiB of the log up)
        for (size_t i = 0; i < o.rows.size(); ++i) {
            const double n = static_cast<double>(o.rows[i].bytes);
            if (steps && n < (uint64_t{1} << 30)) continue;
            CHECK(o.rows[i].treeSec == Approx(tree(n, 4, 8)).epsilon(0.01));
            CHECK(o.rows[i].ringSec == Approx(ring(n, 4, 8)).epsilon(0.01));
        }
    }
    FitResult allGather22 = others.back().fit;
    allGather22.ranks = 4;
    CHECK_THROWS_WITH(ExtrapolateAllReduce(nodeFit, allGather22, 2, sizes, {}, 0, 2), Catch::Contains("one GPU per node"));
    // Logs that start at 32 MiB measured no latency-bound size: no hop's latency is read from them
    // (alpha 0), and their lines at no bytes are paid once.
    FitGroup bigNode = ng, bigNet = pg;
    bigNode.samples.clear();
    bigNet.samples.clear();
    for (uint64_t n = uint64_t{32} << 20; n <= (uint64_t{1} << 34); n *= 2) {
        bigNode.samples.push_back({n, 60e-6 + static_cast<double>(n) / 200e9, 0});
        bigNet.samples.push_back({n, aNet + static_cast<double>(n) * bNet, 0});
    }
    const ExtrapolationRow large = ExtrapolateAllReduce(FitAlphaBeta(bigNode), FitAlphaBeta(bigNet), 2, {uint64_t{1} << 30}, {}).rows.front();
    CHECK(large.treeSec == Approx((1 << 30) / 8.0 * bNet / 0.92 + aNet).epsilon(1e-3)); // no 2 (alpha + 7 alphaIntra)
    CHECK(large.treeIntraSec == Approx(0).margin(1e-12));
    // Another GPU count per node than the node's log: its links, NCCL's tree with a chain of 4.
    const ExtrapolationRow four = ExtrapolateAllReduce(nodeFit, netFit, 2, {uint64_t{1} << 30}, {}, 4).rows.front();
    CHECK(four.treeSec == Approx(tree(1 << 30, 2, 4)).epsilon(1e-3));
    CHECK(four.treeIntraSec == Approx(2 * 3 * aIntra).epsilon(1e-3));
}
