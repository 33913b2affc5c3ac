// Auto-parallelization: operator graphs, layouts and their collectives, the solvers against each
// other (ILP = brute force, chain DP = ILP, inter-op DP = enumeration), and a chosen strategy on
// the simulator costing what the solver predicted.
#include "autopar/InterOp.hpp"
#include "autopar/IntraOpSolvers.hpp"
#include "autopar/OpGraphJson.hpp"
#include "autopar/StrategySim.hpp"
#include "common/Error.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <random>

using namespace paralens;
using namespace paralens::core;

namespace {

// A small transformer: fast to solve, with every loop divisible by the meshes the tests use.
TransformerDims SmallDims(int64_t batch, int64_t seq = 256, int64_t hidden = 512, int64_t heads = 8)
{
    TransformerDims d;
    d.batch = batch;
    d.seq = seq;
    d.hidden = hidden;
    d.heads = heads;
    d.ffn = 4 * hidden;
    return d;
}

DeviceMesh Mesh(int rows, int cols)
{
    DeviceMesh m;
    m.rows = rows;
    m.cols = cols;
    return m;
}

// A random graph of 2-D tensors: matmuls with fresh weights, gelus, layernorms and adds of two
// earlier activations of one shape. `chain`: every op reads the op just before it (and weights).
OpGraph RandomGraph(std::mt19937& rng, int ops, bool chain)
{
    const int64_t sizes[] = {8, 16, 64, 512, 2048};
    auto size = [&] { return sizes[rng() % 5]; };
    struct Act {
        int id;
        int64_t rows, cols;
    };
    GraphBuilder gb("random");
    const int64_t r0 = size(), c0 = size();
    std::vector<Act> acts{{rng() % 2 ? gb.Input("x", {r0, c0}) : gb.LayerInput("x", {r0, c0}), r0, c0}};
    for (int i = 0; i < ops; ++i) {
        const std::string n = "op" + std::to_string(i);
        const Act in = chain ? acts.back() : acts[rng() % acts.size()];
        const int kind = i == 0 ? 0 : static_cast<int>(rng() % 4);
        if (kind == 0) {
            const int64_t c = size();
            const int w = gb.Weight(n + ".w", {in.cols, c});
            acts.push_back({gb.Op({n, "matmul", "ik,kj->ij", {in.id, w}, 2.0, "", "j", "i"}), in.rows, c});
        } else if (kind == 1) {
            acts.push_back({gb.Op({n, "gelu", "ij->ij", {in.id}, 8.0, "", "j", "i"}), in.rows, in.cols});
        } else if (kind == 2) {
            acts.push_back({gb.Op({n, "layernorm", "ij->ij", {in.id}, 8.0, "j", "", "i"}), in.rows, in.cols});
        } else {
            int other = -1;
            for (const Act& a : acts)
                if (a.id != in.id && a.rows == in.rows && a.cols == in.cols && (!chain || true)) other = a.id;
            if (other < 0) {
                acts.push_back({gb.Op({n, "relu", "ij->ij", {in.id}, 1.0, "", "", "i"}), in.rows, in.cols});
            } else {
                acts.push_back({gb.Op({n, "add", "ij,ij->ij", {in.id, other}, 1.0, "", "", "i"}), in.rows, in.cols});
            }
        }
    }
    return gb.Finish({acts.back().id});
}

bool Close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1e-12, std::abs(a), std::abs(b)}); }

} // namespace

TEST_CASE("autopar: layouts convert through the lectures' collectives, priced by the cost model", "[core][autopar]")
{
    const DeviceMesh m = Mesh(1, 4);
    const uint64_t n = 1 << 20;
    const Layout r{}, s0{{kReplicated, 0}}, s1{{kReplicated, 1}}, p{{kReplicated, kPartial}};
    auto one = [&](const Layout& a, const Layout& b, Collective c, uint64_t bytes) {
        std::vector<CommItem> items;
        const double t = ConvertSeconds(a, b, n, m, &items);
        REQUIRE(items.size() == 1);
        CHECK(items[0].collective == c);
        CHECK(items[0].bytes == bytes);
        CHECK(t == PredictSeconds(CollectiveSpec{c, items[0].algorithm, 4, bytes, 0, 1}, m.fast).seconds);
        CHECK(t == CollectiveSeconds(c, 4, bytes, m.fast));
    };
    CHECK(ConvertSeconds(r, s0, n, m) == 0.0); // a slice is free
    CHECK(ConvertSeconds(s1, s1, n, m) == 0.0);
    one(s0, r, Collective::AllGather, n);
    one(p, r, Collective::AllReduce, n);
    one(p, s1, Collective::ReduceScatter, n);
    one(s0, s1, Collective::AllToAll, n / 4); // pairwise all-to-all: each rank's own n/p
    // On a 2 x 2 mesh a tensor sharded on the other axis moves half as many bytes.
    const DeviceMesh m2 = Mesh(2, 2);
    std::vector<CommItem> items;
    ConvertSeconds(Layout{{0, kPartial}}, Layout{{0, kReplicated}}, n, m2, &items);
    REQUIRE(items.size() == 1);
    CHECK(items[0].axis == 1);
    CHECK(items[0].bytes == n / 2);
}

TEST_CASE("autopar: the lectures' MLP splits column then row, one allreduce per direction", "[core][autopar]")
{
    TransformerDims d;
    d.batch = 2;
    d.seq = 1024;
    for (int p : {2, 4}) {
        const OpGraph g = BuildMlpGraph(d);
        const IntraOpProblem prob = BuildIntraOpProblem(g, Mesh(1, p));
        const IntraOpSolution ilp = SolveIlp(prob);
        REQUIRE(ilp.optimal);
        INFO("devices " << p);
        for (size_t i = 0; i < g.ops.size(); ++i)
            CHECK(StrategyText(g.ops[i], prob.strategies[i][static_cast<size_t>(ilp.choice[i])], prob.mesh) == "split f");
        const std::vector<CommItem> comms = prob.Comms(ilp.choice);
        REQUIRE(comms.size() == 2);
        CHECK(comms[0].collective == Collective::AllReduce);
        CHECK(comms[0].phase == CommPhase::Forward);
        CHECK(g.tensors[static_cast<size_t>(comms[0].tensor)].name == "fc2");
        CHECK(comms[1].collective == Collective::AllReduce);
        CHECK(comms[1].phase == CommPhase::Backward);
        CHECK(g.tensors[static_cast<size_t>(comms[1].tensor)].name == "x");
        CHECK(Close(ilp.costSeconds, MegatronBaseline(prob).costSeconds));
        CHECK(ilp.costSeconds < DataParallelBaseline(prob).costSeconds);
        CHECK(Close(ilp.costSeconds, SolveDp(prob).costSeconds));
    }
}

TEST_CASE("autopar: the ILP's optimum equals brute force on random small graphs", "[core][autopar]")
{
    std::mt19937 rng(7);
    const std::pair<int, int> meshes[] = {{1, 2}, {1, 4}, {2, 2}, {2, 1}};
    for (int trial = 0; trial < 60; ++trial) {
        const auto [rows, cols] = meshes[trial % 4];
        const int ops = rows > 1 && cols > 1 ? 3 : 5;
        const OpGraph g = RandomGraph(rng, ops, false);
        const IntraOpProblem p = BuildIntraOpProblem(g, Mesh(rows, cols));
        const IntraOpSolution ilp = SolveIlp(p);
        const IntraOpSolution brute = SolveBruteForce(p);
        INFO("trial " << trial << ", mesh " << rows << "x" << cols);
        CHECK(ilp.optimal);
        CHECK(Close(ilp.costSeconds, brute.costSeconds));
        CHECK(Close(SolveDp(p).costSeconds, brute.costSeconds));
        for (const IntraOpSolution& other : {SolveGreedy(p), SolveRandom(p, 200), DataParallelBaseline(p), MegatronBaseline(p)})
            CHECK(ilp.costSeconds <= other.costSeconds * (1 + 1e-9));
    }
}

TEST_CASE("autopar: the ILP folds leaves and series ops exactly and leaves GLPK the rest", "[core][autopar]")
{
    // A problem by hand: four ops all joined to each other (nothing there can be folded), a chain
    // of three hanging off one of them, a leaf on another, and two parallel edges; random costs.
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> cost(0.0, 1e-3);
    OpGraph g;
    g.name = "k4-and-chain";
    IntraOpProblem p;
    p.graph = &g;
    const int ops = 8;
    for (int v = 0; v < ops; ++v) {
        p.strategies.emplace_back(3);
        p.nodeCost.emplace_back();
        for (int i = 0; i < 3; ++i) p.nodeCost.back().push_back(cost(rng));
    }
    const std::pair<int, int> edges[] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {1, 7}, {4, 5}, {2, 1}};
    for (const auto& [a, b] : edges) {
        EdgeCosts e{a, b, 0, {}};
        for (int k = 0; k < 9; ++k) e.cost.push_back(cost(rng));
        p.edges.push_back(e);
    }
    for (int trial = 0; trial < 20; ++trial) {
        INFO("trial " << trial);
        for (auto& n : p.nodeCost)
            for (double& c : n) c = cost(rng);
        for (EdgeCosts& e : p.edges)
            for (double& c : e.cost) c = cost(rng);
        const IntraOpSolution ilp = SolveIlp(p);
        const IntraOpSolution brute = SolveBruteForce(p);
        CHECK(ilp.optimal);
        CHECK(Close(ilp.costSeconds, brute.costSeconds));
        CHECK(ilp.note.find("4 of 8 ops folded exactly, 4 left to GLPK") == 0);
    }
}

namespace {

bool IsChain(const IntraOpProblem& p)
{
    std::vector<int> incoming(p.Ops(), 0);
    for (const EdgeCosts& e : p.edges)
        if (e.producer + 1 != e.consumer || ++incoming[static_cast<size_t>(e.consumer)] > 1) return false;
    return true;
}

} // namespace

TEST_CASE("autopar: dynamic programming equals the ILP on chains and on transformer layers", "[core][autopar]")
{
    std::mt19937 rng(11);
    int chains = 0;
    for (int trial = 0; trial < 40; ++trial) {
        const OpGraph g = RandomGraph(rng, 8, true);
        const IntraOpProblem p = BuildIntraOpProblem(g, Mesh(trial % 2 ? 2 : 1, 4));
        if (!IsChain(p)) continue; // an add of two earlier ops breaks the chain
        ++chains;
        INFO("trial " << trial);
        CHECK(Close(SolveDp(p).costSeconds, SolveIlp(p).costSeconds));
    }
    CHECK(chains >= 8);
    const TransformerDims d = SmallDims(4);
    for (const auto& [rows, cols, layers] : {std::tuple{1, 4, 1}, std::tuple{2, 2, 1}, std::tuple{1, 8, 3}}) {
        const OpGraph g = BuildTransformerGraph(d, layers);
        const IntraOpProblem p = BuildIntraOpProblem(g, Mesh(rows, cols));
        INFO(rows << "x" << cols << ", " << layers << " layers");
        CHECK_FALSE(IsChain(p));
        const IntraOpSolution dp = SolveDp(p);
        CHECK(Close(dp.costSeconds, SolveIlp(p).costSeconds));
        // Fixing one op to each strategy in turn: the best of those is the optimum.
        const std::vector<IntraOpSolution> each = SolveDpForEachStrategy(p, 5);
        double best = each[0].costSeconds;
        for (size_t s = 0; s < each.size(); ++s) {
            CHECK(each[s].choice[5] == static_cast<int>(s));
            best = std::min(best, each[s].costSeconds);
        }
        CHECK(Close(best, dp.costSeconds));
    }
}

TEST_CASE("autopar: a chosen strategy simulated costs what the solver predicted", "[core][autopar][sim]")
{
    const TransformerDims d = SmallDims(4, 512, 1024, 16);
    const OpGraph g = BuildTransformerGraph(d, 2);
    for (const auto& [rows, cols] : {std::pair{1, 4}, std::pair{2, 2}}) {
        const IntraOpProblem p = BuildIntraOpProblem(g, Mesh(rows, cols));
        for (const IntraOpSolution& s : {SolveIlp(p), MegatronBaseline(p), DataParallelBaseline(p)}) {
            INFO(s.name << " on " << rows << "x" << cols);
            double sum = 0.0;
            for (const ExecStep& st : p.Steps(s.choice)) sum += st.seconds;
            CHECK(Close(sum, s.costSeconds));
            const WorkloadResult r = SimulateStrategy(p, s.choice, s.name, true);
            CHECK(std::abs(r.seconds - s.costSeconds) <= 1e-6 * s.costSeconds);
            REQUIRE(r.trace);
            CHECK(r.trace->Devices().size() == static_cast<size_t>(rows * cols));
        }
    }
}

TEST_CASE("autopar: one transformer layer on 8 devices: the ILP beats or ties every baseline", "[core][autopar]")
{
    const OpGraph g = BuildTransformerGraph(TransformerDims{}, 1);
    REQUIRE(g.ops.size() == 14);
    CHECK(g.ForwardFlops() > 0);
    const IntraOpProblem p = BuildIntraOpProblem(g, Mesh(1, 8));
    const IntraOpSolution ilp = SolveIlp(p);
    CHECK(ilp.optimal);
    for (const char* name : {"greedy", "random", "data-parallel", "megatron"}) {
        INFO(name);
        CHECK(ilp.costSeconds <= SolveByName(p, name).costSeconds * (1 + 1e-9));
    }
    const CostBreakdown b = Breakdown(p, ilp.choice);
    CHECK(Close(b.Total(), ilp.costSeconds));
}

TEST_CASE("autopar: the inter-op dynamic program equals exhaustive stage enumeration", "[core][autopar]")
{
    const TransformerDims d = SmallDims(2);
    for (const auto& [rows, cols, layers] : {std::tuple{1, 4, 4}, std::tuple{2, 2, 4}, std::tuple{2, 4, 3}}) {
        const OpGraph g = BuildTransformerGraph(d, layers);
        DeviceMesh m = Mesh(rows, cols);
        const StageCosts costs(g, m);
        // The layer tables chained: the whole stack on the whole mesh costs what solving it at once does.
        double whole = std::numeric_limits<double>::infinity();
        const int x = g.TensorIndex("x");
        for (const OpStrategy& s : EnumerateStrategies(g.ops[0], g, m))
            whole = std::min(whole, SolveDp(BuildIntraOpProblem(g, m, Boundary{{{x, s.inputs[0]}}, {}, {}})).costSeconds);
        CHECK(Close(costs.Seconds(costs.Shapes().size() - 1, 0, layers), whole));
        for (int n : {1, 4, 16}) {
            INFO(rows << "x" << cols << ", " << layers << " layers, " << n << " micro-batches");
            const InterOpResult dp = SolveInterOp(costs, m.Devices(), n);
            const InterOpResult all = EnumerateInterOp(costs, m.Devices(), n);
            CHECK(Close(dp.stepSeconds, all.stepSeconds));
            int devices = 0, covered = 0;
            for (const PipelineStagePlan& s : dp.stages) {
                CHECK(s.firstLayer == covered);
                covered += s.layers;
                devices += s.shape.Devices();
            }
            CHECK(covered == layers);
            CHECK(devices == m.Devices());
        }
    }
}

TEST_CASE("autopar: a pipeline of equal stages simulates to the formula's step time", "[core][autopar][sim]")
{
    const TransformerDims d = SmallDims(2);
    const OpGraph g = BuildTransformerGraph(d, 4);
    const DeviceMesh m = Mesh(1, 4);
    const StageCosts costs(g, m);
    InterOpResult r;
    r.microBatches = 8;
    for (int s = 0; s < 4; ++s) r.stages.push_back({s, 1, SubMesh{1, 1}, costs.Seconds(0, s, 1)});
    r.maxStageSeconds = r.stages[0].seconds;
    r.stepSeconds = 4 * r.maxStageSeconds + 7 * r.maxStageSeconds;
    DeviceMesh free = m; // the formula leaves out the sends between stages; so does this link
    free.fast = CostParams{0.0, 0.0, 0.0};
    const PipelineSimResult sim = SimulateInterOp(r, free, 0, 0.0, false);
    CHECK(std::abs(sim.pipelineSeconds - r.stepSeconds) <= 1e-6 * r.stepSeconds);
}

TEST_CASE("autopar: 24 layers on a 2 x 4 mesh keep intra-op inside the fast rows", "[core][autopar]")
{
    TransformerDims d;
    d.batch = 1;
    d.seq = 2048;
    const OpGraph g = BuildTransformerGraph(d, 24);
    const DeviceMesh m = Mesh(2, 4);
    const StageCosts costs(g, m);
    const InterOpResult r = SolveInterOp(costs, m.Devices(), 16);
    REQUIRE(r.stages.size() >= 2);
    for (const PipelineStagePlan& s : r.stages) CHECK(s.shape.rows == 1); // no stage spans the slow links
}

TEST_CASE("autopar: graph files load, and bad ones give one clear error naming the op", "[core][autopar][io]")
{
    const std::string good = R"({"name": "two", "tensors": [
        {"name": "x", "shape": [64, 32], "kind": "layer-input"},
        {"name": "w", "shape": [32, 16], "kind": "weight"}],
      "ops": [{"name": "mm", "kind": "matmul", "einsum": "ik,kj->ij", "inputs": ["x", "w"], "megatron": "j", "batch": "i"},
              {"name": "act", "kind": "gelu", "einsum": "ij->ij", "inputs": ["mm"]}],
      "outputs": ["act"]})";
    const OpGraph g = ParseOpGraphJson(good, "two.json");
    CHECK(g.ops.size() == 2);
    CHECK(g.ops[0].ForwardFlops() == 2.0 * 64 * 32 * 16);
    CHECK(g.tensors[static_cast<size_t>(g.outputs[0])].shape == std::vector<int64_t>{64, 16});

    auto bad = [&](std::string from, std::string to, const char* expect) {
        std::string text = good;
        const size_t at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
        CHECK_THROWS_WITH(ParseOpGraphJson(text, "two.json"), Catch::Contains("two.json") && Catch::Contains(expect));
    };
    bad(R"("kind": "gelu")", R"("kind": "frobnicate")", R"(op 'act': unknown kind "frobnicate")");
    bad(R"("inputs": ["mm"])", R"("inputs": ["nope"])", "op 'act': no tensor or earlier op named 'nope'");
    bad(R"([32, 16])", R"([31, 16])", "op 'mm': loop 'k' is 32 in one operand but 31 in 'w'");
    bad(R"("einsum": "ij->ij")", R"("einsum": "ij->ik")", "op 'act': output letter 'k'");
    bad(R"("megatron": "j")", R"("megatron": "q")", "op 'mm': no loop 'q'");
    bad(R"("outputs": ["act"])", R"("outputs": [])", R"(missing the "outputs" array)");
    bad(R"("kind": "weight")", R"("kind": "bias")", R"(tensor 'w': "kind" must be)");
    bad(R"({"name": "two")", R"({"name": "two",)", "not valid JSON");
}
