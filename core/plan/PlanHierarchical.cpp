// The hierarchical (two-level) allreduce of NCCL-like libraries on nodes of g GPUs: p = g N ranks,
// rank k g + j is GPU j of node k. Block b of the p blocks belongs to shard b / N: shard j holds
// blocks [j N, (j + 1) N), contiguous in the buffer.
//   1. reduce-scatter within each node: a ring of its g ranks over the g shards (g - 1 steps);
//      GPU j of every node then holds shard j summed over its node;
//   2. allreduce between nodes, rail by rail: GPUs j of all nodes run a ring reduce-scatter and
//      allgather over the N blocks of shard j (2 (N - 1) steps, every rail at once);
//   3. allgather within each node: a ring over the g shards (g - 1 steps).
// Only phase 2 crosses nodes, with 1/g of the data per GPU. On one node (N = 1) it is the ring.
#include "plan/PlanAlgorithms.hpp"

namespace paralens::core {

namespace {

int Mod(int a, int m) { return ((a % m) + m) % m; }

} // namespace

void AppendHierarchicalAllReduce(PlanWriter& w)
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
    for (int k = 0; k < nodes - 1; ++k) {
        w.BeginStep("reduce-scatter between nodes");
        for (int node = 0; node < nodes; ++node)
            for (int j = 0; j < g; ++j)
                w.SendBlocks(rank(node, j), rank(Mod(node + 1, nodes), j), TransferOp::Reduce, j * nodes + Mod(node - 1 - k, nodes), 1);
    }
    for (int k = 0; k < nodes - 1; ++k) {
        w.BeginStep("allgather between nodes");
        for (int node = 0; node < nodes; ++node)
            for (int j = 0; j < g; ++j)
                w.SendBlocks(rank(node, j), rank(Mod(node + 1, nodes), j), TransferOp::Copy, j * nodes + Mod(node - k, nodes), 1);
    }
    for (int k = 0; k < g - 1; ++k) {
        w.BeginStep("allgather in nodes");
        for (int node = 0; node < nodes; ++node)
            for (int j = 0; j < g; ++j) w.SendBlocks(rank(node, j), rank(node, j + 1), TransferOp::Copy, Mod(j - k, g) * nodes, nodes);
    }
}

} // namespace paralens::core
