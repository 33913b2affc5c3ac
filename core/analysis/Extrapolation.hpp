// Predicting an allreduce on several nodes from measurements of its parts (issue "Predict real
// NCCL", extrapolation): a one-node allreduce log (q0 GPUs on NVLink) gives the levels' inside,
// a two-node log with one GPU on each node the network: a sendrecv, or an allreduce, allgather or
// reduce-scatter on those 2 ranks (the most common log), each read through its own formula (the
// ring on 2 ranks: 2 steps of n / 2 for allreduce, 1 for the gathers), so a message of m bytes
// takes the regime of the size whose messages are m. Their regimes (model/RegimeFit.hpp) turn
// into alpha and beta per size, within nodes through the ring's formula on q0 ranks (per link,
// so another GPU count per node q takes the same links: NVSwitch gives every GPU its own), and
// PredictTwoLevel (model/CostModel.hpp) prices the allreduce on N nodes of q with NCCL's families:
//   ring over all p = q N GPUs: 2(p-1) steps, each paced by a message of n/p between nodes;
//   hierarchical: the one-node allreduce of n within nodes, 2(N-1) messages of n/p between them
//                 (every GPU its own NIC, as on rail-optimised clusters);
//   hierarchical tree: the same within nodes, binomial trees of whole shards (n/q) between them,
//                 2 ceil(log2 N) messages (NCCL's tree between nodes, without its pipelining).
// NCCL runs whichever it finds faster; `best` is the fastest of the three. With a measured log of
// the same allreduce, each size's prediction is set beside the measurement.
// Pure functions; thread-safe.
#pragma once

#include "model/CostModel.hpp"
#include "model/Fit.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::core {

struct ExtrapolationRow {
    uint64_t bytes = 0;
    double ringSec = 0, hierarchicalSec = 0, treeSec = 0, bestSec = 0;
    double ringIntraSec = 0, ringNetSec = 0, hierarchicalIntraSec = 0, hierarchicalNetSec = 0, treeNetSec = 0;
    double measuredSec = 0; // 0: no measurement of this size
    double ErrorPct(double predicted) const { return measuredSec > 0 ? (predicted - measuredSec) / measuredSec * 100 : 0; }
};

struct Extrapolation {
    int ranksPerNode = 0, nodes = 0;
    std::vector<ExtrapolationRow> rows;
    // Over the rows with a measurement (0 without): the mean absolute percentage errors.
    double ringMapePct = 0, hierarchicalMapePct = 0, treeMapePct = 0, bestMapePct = 0;
    size_t measuredRows = 0;
};

// `node`: the fit of an allreduce on one node (its ranks are q0); `net`: the fit of a sendrecv,
// allreduce, allgather or reduce-scatter between two nodes (2 ranks); `nodes`: N; `ranksPerNode`:
// q (0: q0); `sizes`: the sizes to predict (bytes > 0); `measured`: the samples of the N-node
// allreduce to compare with (may be empty). Throws Error naming what does not fit (not an
// allreduce, another collective or more ranks between the nodes, no regimes).
Extrapolation ExtrapolateAllReduce(const FitResult& node, const FitResult& net, int nodes, const std::vector<uint64_t>& sizes,
                                   const std::vector<FitSample>& measured, int ranksPerNode = 0);

// The collectives a two-node log can price the network from.
bool PricesNetwork(Collective c);

} // namespace paralens::core
