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
};

// What to run: one collective with one algorithm on p ranks over n bytes.
struct CollectiveSpec {
    Collective collective = Collective::AllReduce;
    Algorithm algorithm = Algorithm::Ring;
    int ranks = 2;
    uint64_t bytes = 0;       // n: the full vector (see FORMULAS.md)
    int root = 0;             // for broadcast, reduce, scatter, gather
    uint64_t alignBytes = 1;  // blocks are split on multiples of this (the element size on GPUs)
};

std::string_view Name(Collective c);
std::string_view Name(Algorithm a);

std::optional<Collective> ParseCollective(std::string_view name);
std::optional<Algorithm> ParseAlgorithm(std::string_view name);

std::span<const Collective> AllCollectives();
// The algorithms that apply to a collective, the default first.
std::span<const Algorithm> AlgorithmsFor(Collective c);
bool Supports(Collective c, Algorithm a);

// "broadcast, reduce, ..." for error messages and --help.
std::string CollectiveNamesList();
std::string AlgorithmNamesList(Collective c);

// True for collectives that reduce (so gamma applies).
bool Reduces(Collective c);
// True for collectives with a root rank.
bool HasRoot(Collective c);

} // namespace paralens::core
