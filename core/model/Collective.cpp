#include "model/Collective.hpp"

#include <array>

namespace paralens::core {

namespace {

constexpr std::array<Collective, 9> kCollectives{
    Collective::Broadcast, Collective::Reduce,        Collective::Scatter,
    Collective::Gather,    Collective::AllGather,     Collective::ReduceScatter,
    Collective::AllReduce, Collective::AllToAll,      Collective::SendRecv,
};

constexpr std::array<Algorithm, 9> kAlgorithms{
    Algorithm::Ring,   Algorithm::Tree,         Algorithm::HalvingDoubling,  Algorithm::RecursiveDoubling, Algorithm::Naive,
    Algorithm::Pairwise, Algorithm::Direct,     Algorithm::Hierarchical,     Algorithm::HierarchicalTree,
};

constexpr std::array kRooted{Algorithm::Tree, Algorithm::Ring, Algorithm::HalvingDoubling, Algorithm::Naive};
constexpr std::array kScatterLike{Algorithm::Tree, Algorithm::Ring, Algorithm::Naive};
constexpr std::array kAll{Algorithm::Ring, Algorithm::Tree, Algorithm::HalvingDoubling, Algorithm::Naive};
constexpr std::array kAllReduce{Algorithm::Ring, Algorithm::Tree, Algorithm::HalvingDoubling,
                                Algorithm::RecursiveDoubling, Algorithm::Naive};
constexpr std::array kAllToAll{Algorithm::Pairwise};
constexpr std::array kSendRecv{Algorithm::Direct};
constexpr std::array kTwoLevelAllReduce{Algorithm::Hierarchical, Algorithm::HierarchicalTree};

} // namespace

std::string_view Name(Collective c)
{
    switch (c) {
    case Collective::Broadcast: return "broadcast";
    case Collective::Reduce: return "reduce";
    case Collective::Scatter: return "scatter";
    case Collective::Gather: return "gather";
    case Collective::AllGather: return "allgather";
    case Collective::ReduceScatter: return "reduce-scatter";
    case Collective::AllReduce: return "allreduce";
    case Collective::AllToAll: return "alltoall";
    case Collective::SendRecv: return "sendrecv";
    }
    return "?";
}

std::string_view Name(Algorithm a)
{
    switch (a) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::HalvingDoubling: return "halving-doubling";
    case Algorithm::RecursiveDoubling: return "recursive-doubling";
    case Algorithm::Naive: return "naive";
    case Algorithm::Pairwise: return "pairwise";
    case Algorithm::Direct: return "direct";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::HierarchicalTree: return "hierarchical-tree";
    }
    return "?";
}

std::optional<Collective> ParseCollective(std::string_view name)
{
    for (Collective c : kCollectives)
        if (Name(c) == name) return c;
    // Accepted spellings from NCCL and nccl-tests.
    if (name == "all-gather" || name == "all_gather") return Collective::AllGather;
    if (name == "reducescatter" || name == "reduce_scatter") return Collective::ReduceScatter;
    if (name == "all-reduce" || name == "all_reduce") return Collective::AllReduce;
    if (name == "all-to-all" || name == "all_to_all" || name == "alltoallv") return Collective::AllToAll;
    if (name == "send-recv" || name == "send_recv" || name == "p2p") return Collective::SendRecv;
    return std::nullopt;
}

std::optional<Algorithm> ParseAlgorithm(std::string_view name)
{
    for (Algorithm a : kAlgorithms)
        if (Name(a) == name) return a;
    if (name == "hd" || name == "rabenseifner") return Algorithm::HalvingDoubling;
    if (name == "rd") return Algorithm::RecursiveDoubling;
    if (name == "mst" || name == "binomial") return Algorithm::Tree;
    if (name == "ps" || name == "parameter-server") return Algorithm::Naive;
    if (name == "2d" || name == "two-level") return Algorithm::Hierarchical;
    return std::nullopt;
}

std::span<const Collective> AllCollectives() { return kCollectives; }

std::span<const Algorithm> AlgorithmsFor(Collective c)
{
    switch (c) {
    case Collective::Broadcast:
    case Collective::Reduce: return kRooted;
    case Collective::Scatter:
    case Collective::Gather: return kScatterLike;
    case Collective::AllGather:
    case Collective::ReduceScatter: return kAll;
    case Collective::AllReduce: return kAllReduce;
    case Collective::AllToAll: return kAllToAll;
    case Collective::SendRecv: return kSendRecv;
    }
    return {};
}

std::span<const Algorithm> TwoLevelAlgorithmsFor(Collective c)
{
    if (c == Collective::AllReduce) return kTwoLevelAllReduce;
    return {};
}

bool Supports(Collective c, Algorithm a)
{
    for (Algorithm x : AlgorithmsFor(c))
        if (x == a) return true;
    for (Algorithm x : TwoLevelAlgorithmsFor(c))
        if (x == a) return true;
    return false;
}

std::string CollectiveNamesList()
{
    std::string out;
    for (Collective c : kCollectives) {
        if (!out.empty()) out += ", ";
        out += Name(c);
    }
    return out;
}

std::string AlgorithmNamesList(Collective c)
{
    std::string out;
    for (auto list : {AlgorithmsFor(c), TwoLevelAlgorithmsFor(c)})
        for (Algorithm a : list) {
            if (!out.empty()) out += ", ";
            out += Name(a);
        }
    return out;
}

bool Reduces(Collective c)
{
    return c == Collective::Reduce || c == Collective::ReduceScatter || c == Collective::AllReduce;
}

bool HasRoot(Collective c)
{
    return c == Collective::Broadcast || c == Collective::Reduce || c == Collective::Scatter ||
           c == Collective::Gather;
}

} // namespace paralens::core
