// Predicting an allreduce on several nodes from measurements of its parts (issue "Predict NCCL at
// scale"): a one-node allreduce log (q0 GPUs on NVLink) gives alpha and beta per link within a
// node (the one-node line of each size through the ring's formula on q0 ranks: another GPU count
// per node q takes the same links, as NVSwitch gives every GPU its own), and a log across nodes the
// network, per NIC (every GPU its own NIC, as on rail-optimised clusters): a sendrecv, or an
// allreduce, allgather or reduce-scatter, on two nodes or on more nodes of one GPU each, and for
// allreduce on two nodes of any GPU count (the most common logs). Each is read through what NCCL
// runs for it (NcclNetworkReading below). Each size takes the line of its log's protocol envelope
// (model/ProtocolFit.hpp; the regimes where a fit has none) lowest at that size, the network's at
// the size whose bytes per NIC are those of the predicted algorithm: its bandwidth per byte, alpha
// per hop from the line of the smallest sizes (none when they were not latency-bound), and the
// rest of its latency paid once.
//
// NCCL runs one of two algorithms on N nodes of q GPUs (p = q N), whichever it finds faster:
//   ring: q rings (channels), one through each NIC, each carrying n/q: every GPU sends
//         2(p-1)/p n over its NVLink and every NIC 2(p-1)/p n/q, the slower sets the pace; one
//         byte's path crosses 2(p-1) links, N/p of them between nodes;
//   tree: a chain through each node's GPUs, double binary trees between the nodes, pipelined:
//         latency 2 (ceil(log2 N) network hops + q-1 NVLink hops); each NIC carries n/q up and
//         n/q down when each node has a parent or children in both trees (N >= 3), half that on 2
//         nodes (each node is the other's only neighbour), at the share of the bandwidth NCCL's
//         own tuner gives its tree (NcclTreeEfficiency); each GPU n over NVLink.
// `best` is the faster of the two. The textbook hierarchical allreduce (the one-node allreduce,
// then 2(N-1) messages of n/p between nodes, not pipelined; model/CostModel.hpp PredictTwoLevel)
// is shown beside them: NCCL does not run it, so it is not in `best`.
// Pure functions; thread-safe.
#pragma once

#include "model/CostModel.hpp"
#include "model/Fit.hpp"
#include "trace/NcclTestsLog.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace paralens::core {

struct ExtrapolationRow {
    uint64_t bytes = 0;
    double ringSec = 0, treeSec = 0, hierarchicalSec = 0, bestSec = 0;
    // Each algorithm's time between nodes (network hops' latency and, when the NICs set the pace,
    // their bytes) and the rest within nodes.
    double ringIntraSec = 0, ringNetSec = 0, treeIntraSec = 0, treeNetSec = 0, hierarchicalIntraSec = 0, hierarchicalNetSec = 0;
    double measuredSec = 0; // 0: no measurement of this size
    double ErrorPct(double predicted) const { return measuredSec > 0 ? (predicted - measuredSec) / measuredSec * 100 : 0; }
};

struct Extrapolation {
    int ranksPerNode = 0, nodes = 0;
    int netNodes = 0, netRanksPerNode = 0; // how the network's log was read
    std::vector<ExtrapolationRow> rows;
    // Over the rows with a measurement (0 without): the mean absolute percentage errors, and the
    // largest of `best`'s with its size.
    double ringMapePct = 0, treeMapePct = 0, hierarchicalMapePct = 0, bestMapePct = 0;
    double worstErrorPct = 0;
    uint64_t worstBytes = 0;
    size_t measuredRows = 0;
};

// Alpha (per hop between nodes) and beta (per byte through one NIC) from the line T = c0 + c1 n of
// a log across `netNodes` nodes of q' = ranks / netNodes GPUs, read through what NCCL runs there:
//   sendrecv: one message of n between nodes per pair: alpha c0, beta c1;
//   allgather, reduce-scatter (q' = 1): a ring of p' messages: c0 = (p'-1) alpha,
//             c1 = (p'-1)/p' beta;
//   allreduce on 2 nodes: the tree, c0 = 2 (alpha + (q'-1) alphaIntra), c1 = beta / q' (over
//             NcclTreeEfficiency of the size when q' > 1: on 1 + 1 GPUs NCCL's ring is as fast);
//   allreduce on 3 or more (q' = 1): latency of the tree, c0 = 2 ceil(log2 N') alpha, bandwidth of
//             the ring, c1 = 2(p'-1)/p' beta.
// `alphaIntraSec` is the node's alpha per link (for q' > 1). Alpha is not negative.
CostParams NcclNetworkReading(Collective collective, int netNodes, int ranks, double c0, double c1, double alphaIntraSec);

// The share of its model's bandwidth NCCL's tree reaches for an allreduce of `bytes`, as NCCL's
// own tuner takes it (src/graph/tuning.cc: x 0.92, and its medium sizes' correction factors, 0.5
// to 0.9 from 64 B to 256 MiB); the tree's bytes through a NIC are divided by it, and a two-node
// allreduce log (a tree) read with it.
double NcclTreeEfficiency(uint64_t bytes);

// The bytes through one NIC of that log at size n (what the network's regime of a size stands for).
double NetworkBytesPerNic(Collective collective, int netNodes, int ranks, double n);

// `node`: the fit of an allreduce on one node (its ranks are q0); `net`: the fit of a log across
// `netNodes` nodes (0: 2) as NcclNetworkReading reads; `nodes`: N; `ranksPerNode`: q (0: q0);
// `sizes`: the sizes to predict (bytes > 0); `measured`: the samples of the N-node allreduce to
// compare with (may be empty). Throws Error naming what does not fit (not an allreduce, a
// collective or a layout of the network's log that cannot be read, no regimes).
Extrapolation ExtrapolateAllReduce(const FitResult& node, const FitResult& net, int nodes, const std::vector<uint64_t>& sizes,
                                   const std::vector<FitSample>& measured, int ranksPerNode = 0, int netNodes = 0);

// The collectives a log across nodes can price the network from.
bool PricesNetwork(Collective c);

// The network per NIC from a fit file (paralens fit --out) of a log across nodes: the first fit
// whose log named its hosts (or has 2 ranks) and is read as NcclNetworkReading says; alpha per
// hop and beta per byte through one NIC where `bytesPerNic` go through each (the regime of that
// size: its protocol envelope's line). `alphaIntraSec`: alpha per NVLink hop (for a two-node log
// of several GPUs a node). None when no fit of the file is such a log (a fit of one node, a fit
// file of an older paralens, a trace's collectives without hosts). `why` says which fit priced it.
// The planner prices its traffic between nodes with it (plan --network-fit).
std::optional<CostParams> NetworkLinkFromFit(const FitFile& file, double bytesPerNic, double alphaIntraSec, std::string* why = nullptr);

// A log's first table of such a collective (out-of-place), with the hosts its header names (0:
// none). Throws Error naming `path` when it has none, or when its ranks are all on one host.
struct NetworkLogGroup {
    FitGroup group;
    int hosts = 0;
};
NetworkLogGroup NetworkGroupOf(const NcclTestsLog& log, const std::string& path);

} // namespace paralens::core
