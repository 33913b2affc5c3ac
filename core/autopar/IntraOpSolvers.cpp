#include "autopar/IntraOpSolvers.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>

namespace paralens::core {

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

IntraOpSolution Finish(const IntraOpProblem& p, std::string name, std::vector<int> choice, Clock::time_point t0, bool optimal)
{
    IntraOpSolution s;
    s.name = std::move(name);
    s.costSeconds = p.Cost(choice);
    s.choice = std::move(choice);
    s.solveSeconds = Since(t0);
    s.optimal = optimal;
    return s;
}

double EdgeCost(const IntraOpProblem& p, const EdgeCosts& e, int sp, int sc)
{
    const size_t nc = p.strategies[static_cast<size_t>(e.consumer)].size();
    return e.cost[static_cast<size_t>(sp) * nc + static_cast<size_t>(sc)];
}

// The strategy whose loops match `want` exactly; -1 when the op has none.
int FindStrategy(const IntraOpProblem& p, size_t op, std::array<int8_t, 2> want)
{
    const auto& ss = p.strategies[op];
    for (size_t i = 0; i < ss.size(); ++i)
        if (ss[i].loop == want) return static_cast<int>(i);
    return -1;
}

// The first of `wishes` the op has; replicated (always strategy 0) otherwise.
int FirstAvailable(const IntraOpProblem& p, size_t op, std::initializer_list<std::array<int8_t, 2>> wishes)
{
    for (const auto& w : wishes) {
        const int s = FindStrategy(p, op, w);
        if (s >= 0) return s;
    }
    return 0;
}

} // namespace

IntraOpSolution SolveBruteForce(const IntraOpProblem& p, uint64_t maxAssignments)
{
    const auto t0 = Clock::now();
    uint64_t total = 1;
    for (const auto& s : p.strategies) {
        total *= s.size();
        Require(total <= maxAssignments, "brute force would try more than " + std::to_string(maxAssignments) +
                                             " assignments on graph '" + p.graph->name + "'; use the ILP");
    }
    std::vector<int> cur(p.Ops(), 0), bestChoice = cur;
    double best = std::numeric_limits<double>::infinity();
    for (uint64_t n = 0; n < total; ++n) {
        const double c = p.Cost(cur);
        if (c < best) {
            best = c;
            bestChoice = cur;
        }
        for (size_t v = 0; v < cur.size(); ++v) { // odometer
            if (++cur[v] < static_cast<int>(p.strategies[v].size())) break;
            cur[v] = 0;
        }
    }
    return Finish(p, "brute-force", std::move(bestChoice), t0, true);
}

IntraOpSolution SolveGreedy(const IntraOpProblem& p)
{
    const auto t0 = Clock::now();
    std::vector<int> choice(p.Ops(), -1);
    for (size_t v = 0; v < p.Ops(); ++v) {
        double best = std::numeric_limits<double>::infinity();
        for (size_t j = 0; j < p.strategies[v].size(); ++j) {
            double c = p.nodeCost[v][j];
            for (const EdgeCosts& e : p.edges)
                if (e.consumer == static_cast<int>(v)) c += EdgeCost(p, e, choice[static_cast<size_t>(e.producer)], static_cast<int>(j));
            if (c < best) {
                best = c;
                choice[v] = static_cast<int>(j);
            }
        }
    }
    return Finish(p, "greedy", std::move(choice), t0, false);
}

IntraOpSolution SolveRandom(const IntraOpProblem& p, int samples, uint64_t seed)
{
    const auto t0 = Clock::now();
    std::mt19937_64 rng(seed);
    std::vector<int> cur(p.Ops(), 0), bestChoice(p.Ops(), 0);
    double best = std::numeric_limits<double>::infinity();
    for (int n = 0; n < samples; ++n) {
        for (size_t v = 0; v < cur.size(); ++v) cur[v] = static_cast<int>(rng() % p.strategies[v].size());
        const double c = p.Cost(cur);
        if (c < best) {
            best = c;
            bestChoice = cur;
        }
    }
    IntraOpSolution s = Finish(p, "random", std::move(bestChoice), t0, false);
    s.note = "best of " + std::to_string(samples) + " random assignments";
    return s;
}

IntraOpSolution DataParallelBaseline(const IntraOpProblem& p)
{
    const auto t0 = Clock::now();
    std::vector<int> choice(p.Ops(), 0);
    for (size_t v = 0; v < p.Ops(); ++v) {
        const int b = p.graph->ops[v].LoopIndex(p.graph->ops[v].batchLoop);
        if (b < 0) continue;
        const auto l = static_cast<int8_t>(b);
        choice[v] = FirstAvailable(p, v, {{l, l}, {-1, l}, {l, -1}});
    }
    return Finish(p, "data-parallel", std::move(choice), t0, false);
}

IntraOpSolution MegatronBaseline(const IntraOpProblem& p)
{
    const auto t0 = Clock::now();
    std::vector<int> choice(p.Ops(), 0);
    for (size_t v = 0; v < p.Ops(); ++v) {
        const GraphOp& op = p.graph->ops[v];
        const auto tp = static_cast<int8_t>(op.LoopIndex(op.megatronLoop));
        const auto dp = static_cast<int8_t>(p.mesh.rows > 1 ? op.LoopIndex(op.batchLoop) : -1);
        choice[v] = FirstAvailable(p, v, {{dp, tp}, {-1, tp}, {dp, -1}});
    }
    return Finish(p, "megatron", std::move(choice), t0, false);
}

IntraOpSolution SolveByName(const IntraOpProblem& p, const std::string& name)
{
    if (name == "ilp") return SolveIlp(p);
    if (name == "dp") return SolveDp(p);
    if (name == "brute-force") return SolveBruteForce(p);
    if (name == "greedy") return SolveGreedy(p);
    if (name == "random") return SolveRandom(p);
    if (name == "data-parallel") return DataParallelBaseline(p);
    if (name == "megatron") return MegatronBaseline(p);
    throw Error("unknown solver '" + name + "' (known: " + SolverNamesList() + ")");
}

std::string SolverNamesList() { return "ilp, dp, brute-force, greedy, random, data-parallel, megatron"; }

} // namespace paralens::core
