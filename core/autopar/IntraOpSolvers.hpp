// Solvers of an IntraOpProblem (the lectures' list: manual design, randomized search, dynamic
// programming, integer linear programming), plus brute force as the test oracle. Each returns a
// strategy index per op and the assignment's cost as IntraOpProblem::Cost computes it.
// Pure functions of the problem; thread-safe.
#pragma once

#include "autopar/Sharding.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::core {

struct IntraOpSolution {
    std::string name;          // "ilp", "dp", "brute-force", "greedy", "random", "data-parallel", "megatron"
    std::vector<int> choice;   // strategy per op
    double costSeconds = 0.0;  // one training step (forward + backward) of the graph
    double solveSeconds = 0.0; // wall time of the solver
    bool optimal = false;      // proven optimal (ilp, dp, brute force)
    std::string note;          // e.g. "GLPK: time limit reached, best found"
};

// Exact: binary strategy variables, edge variables tied to both ends' marginals (their LP
// relaxation is tight on chains and trees), solved by GLPK's branch and cut. Throws Error when
// GLPK fails; reports optimal = false when the time limit stops it first.
IntraOpSolution SolveIlp(const IntraOpProblem& p, double timeLimitSeconds = 60.0);

// Exact dynamic programming: min-sum variable elimination over the op graph (on a chain, the
// lectures' DP op by op; on a transformer layer its tables stay over two or three ops). Throws
// Error naming the op when a table would pass 16 Mi entries (then use the ILP).
IntraOpSolution SolveDp(const IntraOpProblem& p);
// The optimum with op `op` fixed to each of its strategies in turn (one elimination, `op` last).
std::vector<IntraOpSolution> SolveDpForEachStrategy(const IntraOpProblem& p, int op);

// Every assignment; throws Error when there are more than `maxAssignments`.
IntraOpSolution SolveBruteForce(const IntraOpProblem& p, uint64_t maxAssignments = 20'000'000);

// Op by op in graph order, the cheapest strategy given the ops already chosen.
IntraOpSolution SolveGreedy(const IntraOpProblem& p);

// The best of `samples` uniformly random assignments (deterministic for a seed).
IntraOpSolution SolveRandom(const IntraOpProblem& p, int samples = 2000, uint64_t seed = 1);

// Every op splits its batch loop over the whole mesh where it can (data parallelism as a case of
// intra-op parallelism); ops without one stay replicated.
IntraOpSolution DataParallelBaseline(const IntraOpProblem& p);

// Megatron-LM's manual split: each op's megatron loop over the fast axis (a row), the batch loop
// over the slow axis (data parallel between rows); replicated where the graph names none.
IntraOpSolution MegatronBaseline(const IntraOpProblem& p);

// The solvers by name for the command line: "ilp,dp,greedy,random,data-parallel,megatron,brute-force".
IntraOpSolution SolveByName(const IntraOpProblem& p, const std::string& name);
std::string SolverNamesList();

} // namespace paralens::core
