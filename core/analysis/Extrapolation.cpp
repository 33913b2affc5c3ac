#include "analysis/Extrapolation.hpp"

#include "common/Error.hpp"
#include "model/RegimeFit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace paralens::core {

namespace {

// alpha and beta of one message between nodes of m bytes: the regime of the size whose ring
// messages are m (sendrecv: m itself; the others on 2 ranks: 2 m), through its formula.
CostParams NetAt(const FitResult& net, uint64_t m)
{
    const uint64_t size = net.collective == Collective::SendRecv ? m : m * static_cast<uint64_t>(net.ranks);
    const FitSegment* s = SegmentFor(net.segments, size);
    if (net.collective == Collective::SendRecv) return {s->latencySec, s->secPerByte, 0};
    return ParamsFromLine(net.collective, Algorithm::Ring, net.ranks, s->latencySec, s->secPerByte);
}

// alpha and beta per link within a node for an allreduce of n bytes: the one-node regime of n
// through the ring's formula on q ranks.
CostParams NodeAt(const FitResult& node, uint64_t n)
{
    const FitSegment* s = SegmentFor(node.segments, n);
    return ParamsFromLine(Collective::AllReduce, Algorithm::Ring, node.ranks, s->latencySec, s->secPerByte);
}

void Check(const FitResult& node, const FitResult& net, int nodes)
{
    Require(node.collective == Collective::AllReduce, "the node's log must be an allreduce (it is " + std::string(Name(node.collective)) + ")");
    Require(PricesNetwork(net.collective), "the network's log must be a sendrecv, allreduce, allgather or reduce-scatter between "
                                           "two nodes (it is " + std::string(Name(net.collective)) + ")");
    Require(net.collective == Collective::SendRecv || net.ranks == 2,
            "the network's " + std::string(Name(net.collective)) + " log must have 2 ranks, one GPU on each of two nodes (it has " +
                std::to_string(net.ranks) + ")");
    Require(node.ranks >= 2, "the node's log must have at least 2 ranks");
    Require(nodes >= 2, "nodes must be at least 2 (got " + std::to_string(nodes) + ")");
    Require(!node.segments.empty() && !net.segments.empty(), "the logs need rows of more than 0 bytes");
}

void Score(Extrapolation& e)
{
    double ring = 0, hier = 0, tree = 0, best = 0;
    for (const ExtrapolationRow& r : e.rows) {
        if (!(r.measuredSec > 0)) continue;
        ring += std::fabs(r.ErrorPct(r.ringSec));
        hier += std::fabs(r.ErrorPct(r.hierarchicalSec));
        tree += std::fabs(r.ErrorPct(r.treeSec));
        best += std::fabs(r.ErrorPct(r.bestSec));
        ++e.measuredRows;
    }
    if (e.measuredRows == 0) return;
    const double n = static_cast<double>(e.measuredRows);
    e.ringMapePct = ring / n;
    e.hierarchicalMapePct = hier / n;
    e.treeMapePct = tree / n;
    e.bestMapePct = best / n;
}

} // namespace

bool PricesNetwork(Collective c)
{
    return c == Collective::SendRecv || c == Collective::AllReduce || c == Collective::AllGather || c == Collective::ReduceScatter;
}

Extrapolation ExtrapolateAllReduce(const FitResult& node, const FitResult& net, int nodes, const std::vector<uint64_t>& sizes,
                                   const std::vector<FitSample>& measured, int ranksPerNode)
{
    Check(node, net, nodes);
    Require(ranksPerNode >= 0, "ranks per node must not be negative");
    const int q = ranksPerNode > 0 ? ranksPerNode : node.ranks;
    Extrapolation e;
    e.ranksPerNode = q;
    e.nodes = nodes;
    std::map<uint64_t, std::vector<double>> bySize;
    for (const FitSample& s : measured)
        if (s.seconds > 0) bySize[s.bytes].push_back(s.seconds);
    for (uint64_t n : sizes) {
        if (n == 0) continue;
        CollectiveSpec spec{Collective::AllReduce, Algorithm::Ring, q * nodes, n, 0, 1};
        spec.ranksPerNode = q;
        const uint64_t message = std::max<uint64_t>(1, n / static_cast<uint64_t>(spec.ranks));
        const CostParams intra = NodeAt(node, n), link = NetAt(net, message);
        ExtrapolationRow row;
        row.bytes = n;
        const TwoLevelPrediction ring = PredictTwoLevel(spec, intra, link);
        spec.algorithm = Algorithm::Hierarchical;
        const TwoLevelPrediction hier = PredictTwoLevel(spec, intra, link);
        spec.algorithm = Algorithm::HierarchicalTree; // whole shards cross: the network's regime of n/q
        const TwoLevelPrediction tree =
            PredictTwoLevel(spec, intra, NetAt(net, std::max<uint64_t>(1, n / static_cast<uint64_t>(q))));
        row.ringSec = ring.seconds;
        row.ringIntraSec = ring.intraSeconds;
        row.ringNetSec = ring.netSeconds;
        row.hierarchicalSec = hier.seconds;
        row.hierarchicalIntraSec = hier.intraSeconds;
        row.hierarchicalNetSec = hier.netSeconds;
        row.treeSec = tree.seconds;
        row.treeNetSec = tree.netSeconds;
        row.bestSec = std::min({ring.seconds, hier.seconds, tree.seconds});
        if (auto it = bySize.find(n); it != bySize.end()) {
            std::vector<double> v = it->second;
            std::sort(v.begin(), v.end());
            row.measuredSec = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
        }
        e.rows.push_back(row);
    }
    Score(e);
    return e;
}

} // namespace paralens::core
