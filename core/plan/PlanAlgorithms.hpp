// Internal: the building blocks the plan builder composes. Each appends the steps of one
// algorithm phase to the writer's plan. Ranks in "rooted" blocks are relabelled so that the
// root is virtual rank 0: virtual rank v is rank (v + root) % p.
#pragma once

#include "plan/PlanWriter.hpp"

namespace paralens::core {

// Minimum-spanning-tree family: recursive halving of the (virtual) rank range [0, p); the
// lower half keeps the root, the upper half's first rank is the partner. ceil(log2 p) steps.
void AppendTreeBroadcast(PlanWriter& w, int root, std::string_view phase);
void AppendTreeReduce(PlanWriter& w, int root, std::string_view phase);
void AppendTreeScatter(PlanWriter& w, int root, std::string_view phase);
void AppendTreeGather(PlanWriter& w, int root, std::string_view phase);

// Root talks to every other rank in turn (one port, so p-1 messages in sequence).
void AppendNaiveBroadcast(PlanWriter& w, int root, std::string_view phase);
void AppendNaiveReduce(PlanWriter& w, int root, std::string_view phase);
void AppendNaiveScatter(PlanWriter& w, int root, std::string_view phase);
void AppendNaiveGather(PlanWriter& w, int root, std::string_view phase);

// Ring: p-1 steps; each rank sends one block to its right neighbour per step.
// After reduce-scatter rank r holds the sum of block r; allgather starts from that.
void AppendRingReduceScatter(PlanWriter& w);
void AppendRingAllGather(PlanWriter& w);

// Recursive halving / doubling over the largest power of two P <= p. The first 2(p-P) ranks
// pair up (2i, 2i+1): the odd one folds its data into the even one first and gets its result
// back last.
void AppendHalvingReduceScatter(PlanWriter& w);
void AppendDoublingAllGather(PlanWriter& w);
void AppendHalvingDoublingAllReduce(PlanWriter& w);
void AppendRecursiveDoublingAllReduce(PlanWriter& w);

// Two levels on nodes of spec.ranksPerNode ranks (PlanHierarchical.cpp): ring reduce-scatter in
// nodes, an allreduce between nodes rail by rail (rings, or binomial trees when `tree`), ring
// allgather in nodes.
void AppendHierarchicalAllReduce(PlanWriter& w, bool tree);

} // namespace paralens::core
