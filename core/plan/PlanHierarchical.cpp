// The hierarchical (two-level) allreduce of NCCL-like libraries on nodes of g GPUs: p = g N ranks,
// rank k g + j is GPU j of node k. Block b of the p blocks belongs to shard b / N: shard j holds
// blocks [j N, (j + 1) N), contiguous in the buffer.
//   1. reduce-scatter within each node: a ring of its g ranks over the g shards (g - 1 steps);
//      GPU j of every node then holds shard j summed over its node;
//   2. allreduce between nodes, rail by rail: GPUs j of all nodes run a ring reduce-scatter and
//      allgather over the N blocks of shard j (2 (N - 1) steps, every rail at once);
//   3. allgather within each node: a ring over the g shards (g - 1 steps).
// Only phase 2 crosses nodes, with 1/g of the data per GPU. On one node (N = 1) it is the ring.
// The tree variant's phase 2 is a binomial tree per rail instead: shard j reduced up to node 0 in
// ceil(log2 N) steps, then broadcast back down in as many (the lectures' MST, whole shards).
#include "plan/PlanAlgorithms.hpp"

#include <vector>

namespace paralens::core {

namespace {

int Mod(int a, int m) { return ((a % m) + m) % m; }

// Phase 2 as rings: GPUs j of all nodes reduce-scatter, then allgather, the N blocks of shard j.
void AppendRailRings(PlanWriter& w, int g, int nodes)
{
    auto rank = [&](int node, int local) { return Mod(node, nodes) * g + local; };
    for (int k = 0; k < nodes - 1; ++k) {
        w.BeginStep("reduce-scatter between nodes");
        for (int node = 0; node < nodes; ++node)
            for (int j = 0; j < g; ++j)
                w.SendBlocks(rank(node, j), rank(node + 1, j), TransferOp::Reduce, j * nodes + Mod(node - 1 - k, nodes), 1);
    }
    for (int k = 0; k < nodes - 1; ++k) {
        w.BeginStep("allgather between nodes");
        for (int node = 0; node < nodes; ++node)
            for (int j = 0; j < g; ++j)
                w.SendBlocks(rank(node, j), rank(node + 1, j), TransferOp::Copy, j * nodes + Mod(node - k, nodes), 1);
    }
}

// Phase 2 as binomial trees: at distance d = 1, 2, 4, ... node k (k mod 2d = d) sends its shard
// to node k - d, which adds it; then the same pairs in reverse order copy the sum back down.
void AppendRailTrees(PlanWriter& w, int g, int nodes)
{
    std::vector<int> distances;
    for (int d = 1; d < nodes; d *= 2) distances.push_back(d);
    for (int d : distances) {
        w.BeginStep("reduce between nodes");
        for (int node = d; node < nodes; node += 2 * d)
            for (int j = 0; j < g; ++j) w.SendBlocks(node * g + j, (node - d) * g + j, TransferOp::Reduce, j * nodes, nodes);
    }
    for (auto it = distances.rbegin(); it != distances.rend(); ++it) {
        w.BeginStep("broadcast between nodes");
        for (int node = *it; node < nodes; node += 2 * *it)
            for (int j = 0; j < g; ++j) w.SendBlocks((node - *it) * g + j, node * g + j, TransferOp::Copy, j * nodes, nodes);
    }
}

} // namespace

void AppendHierarchicalAllReduce(PlanWriter& w, bool tree)
{
    const int p = w.Ranks();
    const int g = w.Target().spec.ranksPerNode > 0 ? w.Target().spec.ranksPerNode : p;
    const int nodes = p / g;
    auto rank = [&](int node, int local) { return node * g + Mod(local, g); };
    for (int k = 0; k < g - 1; ++k) {
        w.BeginStep("reduce-scatter in nodes");
        for (int node = 0; node < nodes; ++node)
            for (int j = 0; j < g; ++j) w.SendBlocks(rank(node, j), rank(node, j + 1), TransferOp::Reduce, Mod(j - 1 - k, g) * nodes, nodes);
    }
    if (tree) AppendRailTrees(w, g, nodes);
    else AppendRailRings(w, g, nodes);
    for (int k = 0; k < g - 1; ++k) {
        w.BeginStep("allgather in nodes");
        for (int node = 0; node < nodes; ++node)
            for (int j = 0; j < g; ++j) w.SendBlocks(rank(node, j), rank(node, j + 1), TransferOp::Copy, Mod(j - k, g) * nodes, nodes);
    }
}

} // namespace paralens::core
