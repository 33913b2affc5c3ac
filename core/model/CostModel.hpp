// Closed-form alpha-beta-gamma costs of every collective x algorithm (FORMULAS.md), and the
// nccl-tests reporting conventions. Pure functions; thread-safe.
#pragma once

#include "model/Collective.hpp"

#include <string>

namespace paralens::core {

struct CostParams {
    double alphaSec = 0.0;        // latency of one message
    double betaSecPerByte = 0.0;  // 1 / bandwidth
    double gammaSecPerByte = 0.0; // reduction cost per byte (0: free)
};

// The lectures' formula exactly as FORMULAS.md writes it, with log2(p) and n/p as real numbers.
// Meant for p a power of two and n divisible by p; elsewhere it is the lectures' approximation.
double LectureSeconds(Collective c, Algorithm a, int p, double n, const CostParams& k);

// One point-to-point message of `bytes`: T = alpha + n beta (FORMULAS.md).
double MessageSeconds(double bytes, const CostParams& k);

// The formula in words and symbols, e.g. "2(p-1)a + 2(p-1)/p n b + (p-1)/p n g".
std::string FormulaText(Collective c, Algorithm a);

struct Prediction {
    double seconds = 0.0;
    bool exact = false; // true when this is the exact time of paralens's Plan on the model
};

// The time of the Plan for `spec` on the single-port model, generalised from the lectures'
// formulas to any p and any n: log(p) becomes ceil(log2 p), n/p the largest block, and the
// halving/doubling algorithms gain their fold-in and fold-out steps. It equals LectureSeconds for
// p a power of two and n divisible by p. `exact` says whether it is the Plan's exact simulated time
// (see model/CostModel.cpp for when it is not, and by how much).
Prediction PredictSeconds(const CollectiveSpec& spec, const CostParams& k);

// On a two-level cluster (spec.ranksPerNode GPUs per node, `intra` within a node, `net` between
// nodes; gamma is the GPUs' own, intra's), the allreduce of NCCL's families:
//   hierarchical (q per node, N nodes): 2(q-1) a + (q-1)/q n (2b + g) within nodes
//                                       + 2(N-1) a' + (N-1)/p n (2b' + g) between them;
//   hierarchical-tree: the same within nodes + log(N) (2a' + n/q (2b' + g)) between them
//                      (log(N) = ceil(log2 N): binomial trees of whole shards, up and down);
//   ring over all p GPUs: 2(p-1) (a' + n/p b') + (p-1)/p n g, every step paced by a message
//                         between nodes (the ring's formula with the network's a' and b').
// With blocks of n/p (the largest block, c, and the largest shard of N blocks when n does not
// divide). intraSeconds and netSeconds are the two levels' shares; `exact` when this is the
// simulated time of the Plan (n a multiple of p elements). Zero for other collectives and
// algorithms (sim/TwoLevelCost.hpp prices any Plan).
struct TwoLevelPrediction {
    double seconds = 0.0;
    double intraSeconds = 0.0, netSeconds = 0.0;
    bool exact = false;
};
TwoLevelPrediction PredictTwoLevel(const CollectiveSpec& spec, const CostParams& intra, const CostParams& net);

// nccl-tests' busbw = algbw x factor: allreduce 2(p-1)/p; reduce-scatter, allgather, all-to-all
// (p-1)/p; broadcast, reduce, send/recv 1. Scatter and gather, which nccl-tests does not report,
// use (p-1)/p (each rank's share of n that crosses a link).
double BusBwFactor(Collective c, int p);

// algbw = n / t, in GB/s (1e9 bytes/s). Zero when t is not positive.
double AlgBwGBps(uint64_t bytes, double seconds);

} // namespace paralens::core
