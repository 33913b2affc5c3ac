// The collectives and algorithms paralens knows, with their command-line names.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace paralens::core {

enum class Collective {
    Broadcast,
    Reduce,
    Scatter,
    Gather,
    AllGather,
    ReduceScatter,
    AllReduce,
    AllToAll,
    SendRecv,
};

enum class Algorithm {
    Ring,              // bandwidth-optimal: p chunks pipelined around a ring
    Tree,              // latency-optimal: minimum spanning tree by recursive halving of the rank range
    HalvingDoubling,   // Rabenseifner: recursive halving then recursive doubling
    RecursiveDoubling, // full-vector exchange with partners at distance 1, 2, 4, ...
    Naive,             // parameter-server-like root: receive from all, then send to all
    Pairwise,          // all-to-all in p-1 shifted exchanges
    Direct,            // send/recv: one message per rank to its right neighbour
    Hierarchical,      // two levels (allreduce): ring reduce-scatter within each node, ring allreduce
                       // between nodes rail by rail (the GPUs of one local index), ring allgather within
    HierarchicalTree,  // the same with a binomial tree between nodes (reduce to node 0, broadcast back)
};

// What to run: one collective with one algorithm on p ranks over n bytes.
struct CollectiveSpec {
    Collective collective = Collective::AllReduce;
    Algorithm algorithm = Algorithm::Ring;
    int ranks = 2;
    uint64_t bytes = 0;       // n: the full vector (see FORMULAS.md)
    int root = 0;             // for broadcast, reduce, scatter, gather
    uint64_t alignBytes = 1;  // blocks are split on multiples of this (the element size on GPUs)
    // Placement: consecutive ranks share a node, this many per node (0: all on one node). The
    // hierarchical algorithm's groups; on a two-level cluster (sim/ClusterModel.hpp), which links
    // are the network's.
    int ranksPerNode = 0;

    // The node of a rank, and the number of nodes (1 without a placement).
    int NodeOf(int rank) const { return ranksPerNode > 0 ? rank / ranksPerNode : 0; }
    int Nodes() const { return ranksPerNode > 0 ? (ranks + ranksPerNode - 1) / ranksPerNode : 1; }
};

std::string_view Name(Collective c);
std::string_view Name(Algorithm a);

std::optional<Collective> ParseCollective(std::string_view name);
std::optional<Algorithm> ParseAlgorithm(std::string_view name);

std::span<const Collective> AllCollectives();
// The algorithms of the lectures that apply to a collective, the default first (one level: every
// link alike).
std::span<const Algorithm> AlgorithmsFor(Collective c);
// The algorithms made for two-level clusters (nodes of GPUs on a network) that apply to a
// collective: hierarchical for allreduce. On one node they are the ring.
std::span<const Algorithm> TwoLevelAlgorithmsFor(Collective c);
// Either kind.
bool Supports(Collective c, Algorithm a);

// "broadcast, reduce, ..." for error messages and --help.
std::string CollectiveNamesList();
std::string AlgorithmNamesList(Collective c);

// True for collectives that reduce (so gamma applies).
bool Reduces(Collective c);
// True for collectives with a root rank.
bool HasRoot(Collective c);

} // namespace paralens::core
