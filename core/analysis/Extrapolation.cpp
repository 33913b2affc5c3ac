#include "analysis/Extrapolation.hpp"

#include "analysis/Fitting.hpp"
#include "common/Error.hpp"
#include "common/Statistics.hpp"
#include "model/ProtocolFit.hpp"
#include "model/RegimeFit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace paralens::core {

double NcclTreeEfficiency(uint64_t bytes)
{
    // NVIDIA/nccl src/graph/tuning.cc (5067397c): busBw * .92 for the tree's allreduce, and
    // treeCorrectionFactor[NCCL_PROTO_SIMPLE][log2(bytes / 64)] for 64 B to 256 MiB ("trees are not
    // perfectly sticking to the model for medium sizes").
    static constexpr double kCorrection[23] = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};
    const uint64_t units = bytes >> 6;
    const int logSize = units == 0 ? -1 : static_cast<int>(std::floor(std::log2(static_cast<double>(units))));
    return 0.92 * (logSize >= 0 && logSize < 23 ? kCorrection[logSize] : 1.0);
}

namespace {

double TreeDepth(int nodes) { return std::ceil(std::log2(static_cast<double>(std::max(nodes, 1)))); }

// A level's link at one size: alpha per hop from the line of the smallest sizes (a hop's latency
// does not grow with the message), beta from the line of the size, and that line above the
// smallest sizes' at no bytes (`extraSec`: the pipeline's fill and the protocol's overhead of
// those sizes, paid once, not per hop).
struct LinkAt {
    CostParams params;
    double extraSec = 0;
};

// A log's line at a size: the protocol envelope's lowest line there (ProtocolFit.hpp), and its
// line at the smallest sizes; the regimes' segments where a fit has no envelope.
struct Line {
    double latencySec = 0, secPerByte = 0;
};

Line LineAt(const FitResult& fit, uint64_t bytes)
{
    if (fit.protocols.empty()) {
        const FitSegment* s = SegmentFor(fit.segments, bytes);
        return {s->latencySec, s->secPerByte};
    }
    const ProtocolLine* best = LowestLine(fit.protocols, bytes);
    return {best->latencySec, best->secPerByte};
}

// The line of a log's smallest sizes, the latency a hop takes when those sizes measured it: where
// the line's bytes outweigh its latency already at its smallest size (a log from 32 MiB up), no
// size of the log was latency-bound, so no hop's latency is known: its latency then is 0 (alpha
// 0), and the whole line at no bytes is paid once (LinkAt::extraSec).
Line FirstLine(const FitResult& fit)
{
    const uint64_t smallest = fit.protocols.empty() ? fit.segments.front().fromBytes : fit.protocols.front().fromBytes;
    Line l = fit.protocols.empty() ? Line{fit.segments.front().latencySec, fit.segments.front().secPerByte} : LineAt(fit, smallest);
    if (l.latencySec < l.secPerByte * static_cast<double>(smallest)) l.latencySec = 0;
    return l;
}

// Alpha and beta per link within a node for an allreduce of n bytes (the one-node regime of n
// through the ring's formula on q0 ranks).
LinkAt NodeAt(const FitResult& node, uint64_t n)
{
    const Line at = LineAt(node, n), first = FirstLine(node);
    auto read = [&](const Line& s) {
        return ParamsFromLine(Collective::AllReduce, Algorithm::Ring, node.ranks, s.latencySec, s.secPerByte);
    };
    LinkAt l;
    l.params.alphaSec = std::max(0.0, read(first).alphaSec);
    l.params.betaSecPerByte = read(at).betaSecPerByte;
    l.extraSec = std::max(0.0, at.latencySec - first.latencySec);
    return l;
}

// Alpha per network hop and beta per byte per NIC where `bytesPerNic` go through each NIC, from
// a log across `nodes` nodes: the line of the size whose bytes per NIC those are.
LinkAt NetworkAt(const FitResult& fit, int nodes, double bytesPerNic, double alphaIntraSec)
{
    const double perUnit = NetworkBytesPerNic(fit.collective, nodes, fit.ranks, 1.0);
    const uint64_t size = static_cast<uint64_t>(std::max(1.0, std::round(bytesPerNic / perUnit)));
    const Line at = LineAt(fit, size), first = FirstLine(fit);
    auto read = [&](const Line& s) {
        return NcclNetworkReading(fit.collective, nodes, fit.ranks, s.latencySec, s.secPerByte, alphaIntraSec);
    };
    LinkAt l;
    l.params.alphaSec = read(first).alphaSec;
    l.params.betaSecPerByte = read(at).betaSecPerByte;
    if (fit.collective == Collective::AllReduce && nodes == 2 && fit.ranks > 2) // NCCL's tree measured: its efficiency out
        l.params.betaSecPerByte *= NcclTreeEfficiency(size);
    l.extraSec = std::max(0.0, at.latencySec - first.latencySec);
    return l;
}

// Whether a log of `collective` on `ranks` ranks across `nodes` nodes can be read so (see
// CheckedNetNodes for what is said when not).
bool ReadableLayout(Collective collective, int nodes, int ranks)
{
    if (!PricesNetwork(collective) || nodes < 2 || ranks % nodes != 0) return false;
    const int q = ranks / nodes;
    return q == 1 || collective == Collective::SendRecv || (collective == Collective::AllReduce && nodes == 2);
}

// A log across nodes, and the node log whose alpha its reading takes.
struct NetLog {
    const FitResult& fit;
    int nodes;
    LinkAt At(double bytesPerNic, const FitResult& node) const
    {
        return NetworkAt(fit, nodes, bytesPerNic, NodeAt(node, 1).params.alphaSec);
    }
};

// NCCL's ring over N nodes of q (see the header): latency along a byte's path, bytes through the
// slower of a GPU's NVLink and its NIC, with that level's extra.
void Ring(ExtrapolationRow& row, const NetLog& net, const FitResult& node, int nodes, int q)
{
    const double p = static_cast<double>(nodes) * q, n = static_cast<double>(row.bytes), share = 2 * (p - 1) / p;
    const LinkAt intra = NodeAt(node, row.bytes), link = net.At(share * n / q, node);
    const double netLatency = share * nodes * link.params.alphaSec, intraLatency = share * (p - nodes) * intra.params.alphaSec;
    const double nic = share * n / q * link.params.betaSecPerByte + link.extraSec;
    const double nvlink = share * n * intra.params.betaSecPerByte + intra.extraSec;
    row.ringNetSec = netLatency + (nic >= nvlink ? nic : 0);
    row.ringIntraSec = intraLatency + (nic >= nvlink ? 0 : nvlink);
    row.ringSec = row.ringNetSec + row.ringIntraSec;
}

// NCCL's tree: chains within nodes, double binary trees between them, pipelined.
void Tree(ExtrapolationRow& row, const NetLog& net, const FitResult& node, int nodes, int q)
{
    const double n = static_cast<double>(row.bytes), perNic = (nodes == 2 ? 1.0 : 2.0) * n / q;
    const LinkAt intra = NodeAt(node, row.bytes), link = net.At(perNic, node);
    const double nic = perNic * link.params.betaSecPerByte / NcclTreeEfficiency(row.bytes) + link.extraSec;
    const double nvlink = n * intra.params.betaSecPerByte + intra.extraSec;
    row.treeNetSec = 2 * TreeDepth(nodes) * link.params.alphaSec + (nic >= nvlink ? nic : 0);
    row.treeIntraSec = 2 * (q - 1.0) * intra.params.alphaSec + (nic >= nvlink ? 0 : nvlink);
    row.treeSec = row.treeNetSec + row.treeIntraSec;
}

// The textbook hierarchical allreduce (PredictTwoLevel): its network messages of n/p.
void Hierarchical(ExtrapolationRow& row, const NetLog& net, const FitResult& node, int nodes, int q)
{
    CollectiveSpec spec{Collective::AllReduce, Algorithm::Hierarchical, q * nodes, row.bytes, 0, 1};
    spec.ranksPerNode = q;
    const double p = static_cast<double>(nodes) * q;
    const LinkAt intra = NodeAt(node, row.bytes), link = net.At(2 * (nodes - 1.0) / p * static_cast<double>(row.bytes), node);
    const TwoLevelPrediction h = PredictTwoLevel(spec, intra.params, link.params);
    row.hierarchicalIntraSec = h.intraSeconds + intra.extraSec;
    row.hierarchicalNetSec = h.netSeconds + link.extraSec;
    row.hierarchicalSec = row.hierarchicalIntraSec + row.hierarchicalNetSec;
}

int CheckedNetNodes(const FitResult& node, const FitResult& net, int nodes, int netNodes)
{
    Require(node.collective == Collective::AllReduce, "the node's log must be an allreduce (it is " + std::string(Name(node.collective)) + ")");
    Require(PricesNetwork(net.collective), "the network's log must be a sendrecv, allreduce, allgather or reduce-scatter across "
                                           "nodes (it is " + std::string(Name(net.collective)) + ")");
    Require(node.ranks >= 2, "the node's log must have at least 2 ranks");
    Require(nodes >= 2, "nodes must be at least 2 (got " + std::to_string(nodes) + ")");
    Require(!node.segments.empty() && !net.segments.empty(), "the logs need rows of more than 0 bytes");
    const int n = netNodes > 0 ? netNodes : 2;
    const std::string layout = "the network's " + std::string(Name(net.collective)) + " log";
    Require(netNodes > 0 || net.collective == Collective::SendRecv || net.ranks == 2,
            layout + " must have 2 ranks, one GPU on each of two nodes, or name its hosts (it has " + std::to_string(net.ranks) +
                " ranks and no host names)");
    Require(n >= 2 && net.ranks % n == 0, layout + " has " + std::to_string(net.ranks) + " ranks on " + std::to_string(n) +
                                              " nodes: not the same GPU count on each");
    Require(ReadableLayout(net.collective, n, net.ranks), layout + " has " + std::to_string(net.ranks / n) + " GPUs on each of " +
                                                          std::to_string(n) + " nodes: use one GPU per node, or an allreduce on two nodes");
    return n;
}

void Score(Extrapolation& e)
{
    double ring = 0, tree = 0, hier = 0, best = 0;
    for (const ExtrapolationRow& r : e.rows) {
        if (!(r.measuredSec > 0)) continue;
        ring += std::fabs(r.ErrorPct(r.ringSec));
        tree += std::fabs(r.ErrorPct(r.treeSec));
        hier += std::fabs(r.ErrorPct(r.hierarchicalSec));
        const double err = r.ErrorPct(r.bestSec);
        best += std::fabs(err);
        if (std::fabs(err) > std::fabs(e.worstErrorPct)) {
            e.worstErrorPct = err;
            e.worstBytes = r.bytes;
        }
        ++e.measuredRows;
    }
    if (e.measuredRows == 0) return;
    const double n = static_cast<double>(e.measuredRows);
    e.ringMapePct = ring / n;
    e.treeMapePct = tree / n;
    e.hierarchicalMapePct = hier / n;
    e.bestMapePct = best / n;
}

} // namespace

bool PricesNetwork(Collective c)
{
    return c == Collective::SendRecv || c == Collective::AllReduce || c == Collective::AllGather || c == Collective::ReduceScatter;
}

NetworkLogGroup NetworkGroupOf(const NcclTestsLog& log, const std::string& path)
{
    for (const NcclTestsBlock& block : log.blocks) {
        NcclTestsLog one; // this block alone, so that its group and its header's hosts go together
        one.origin = log.origin;
        one.blocks = {block};
        std::vector<FitGroup> groups = FitGroupsFromLog(one, LogHalf::OutOfPlace);
        if (groups.empty() || !PricesNetwork(groups[0].collective)) continue;
        const int hosts = groups[0].nodes;
        Require(block.devices.size() < 2 || hosts != 1, path + ": its " + std::to_string(block.devices.size()) + " ranks are all on " +
                                                            block.devices.front().host + "; the network needs a log across nodes");
        return {std::move(groups[0]), hosts};
    }
    throw Error(path + " has no sendrecv, allreduce, allgather or reduce-scatter table");
}

double NetworkBytesPerNic(Collective collective, int netNodes, int ranks, double n)
{
    const double p = ranks, q = static_cast<double>(ranks) / std::max(netNodes, 1);
    switch (collective) {
    case Collective::SendRecv: return n;
    case Collective::AllGather:
    case Collective::ReduceScatter: return (p - 1) / p * n;
    case Collective::AllReduce: return netNodes == 2 ? n / q : 2 * (p - 1) / p * n;
    default: return n;
    }
}

CostParams NcclNetworkReading(Collective collective, int netNodes, int ranks, double c0, double c1, double alphaIntraSec)
{
    const double p = ranks, q = static_cast<double>(ranks) / std::max(netNodes, 1);
    CostParams k;
    switch (collective) {
    case Collective::SendRecv: k.alphaSec = c0; break;
    case Collective::AllGather:
    case Collective::ReduceScatter: k.alphaSec = c0 / (p - 1); break;
    case Collective::AllReduce:
        k.alphaSec = netNodes == 2 ? c0 / 2 - (q - 1) * alphaIntraSec : c0 / (2 * TreeDepth(netNodes));
        break;
    default: k.alphaSec = c0; break;
    }
    k.alphaSec = std::max(0.0, k.alphaSec);
    k.betaSecPerByte = c1 / NetworkBytesPerNic(collective, netNodes, ranks, 1.0);
    return k;
}

std::optional<CostParams> NetworkLinkFromFit(const FitFile& file, double bytesPerNic, double alphaIntraSec, std::string* why)
{
    for (const FitResult& fit : file.fits) {
        const int nodes = fit.nodes > 0 ? fit.nodes : fit.ranks == 2 ? 2 : 0; // 2 ranks without hosts: 1 + 1
        if (!ReadableLayout(fit.collective, nodes, fit.ranks) || (fit.protocols.empty() && fit.segments.empty())) continue;
        if (why)
            *why = "per NIC from the " + std::string(Name(fit.collective)) + " on " + std::to_string(fit.ranks) + " ranks across " +
                   std::to_string(nodes) + " nodes of " + (fit.source.empty() ? std::string("the fit") : fit.source);
        return NetworkAt(fit, nodes, std::max(bytesPerNic, 1.0), alphaIntraSec).params;
    }
    return std::nullopt;
}

Extrapolation ExtrapolateAllReduce(const FitResult& node, const FitResult& net, int nodes, const std::vector<uint64_t>& sizes,
                                   const std::vector<FitSample>& measured, int ranksPerNode, int netNodes)
{
    const NetLog log{net, CheckedNetNodes(node, net, nodes, netNodes)};
    Require(ranksPerNode >= 0, "ranks per node must not be negative");
    const int q = ranksPerNode > 0 ? ranksPerNode : node.ranks;
    Extrapolation e;
    e.ranksPerNode = q;
    e.nodes = nodes;
    e.netNodes = log.nodes;
    e.netRanksPerNode = net.ranks / log.nodes;
    std::map<uint64_t, std::vector<double>> bySize;
    for (const FitSample& s : measured)
        if (s.seconds > 0) bySize[s.bytes].push_back(s.seconds);
    for (uint64_t n : sizes) {
        if (n == 0) continue;
        ExtrapolationRow row;
        row.bytes = n;
        Ring(row, log, node, nodes, q);
        Tree(row, log, node, nodes, q);
        Hierarchical(row, log, node, nodes, q);
        row.bestSec = std::min(row.ringSec, row.treeSec);
        if (auto it = bySize.find(n); it != bySize.end()) row.measuredSec = Median(it->second);
        e.rows.push_back(row);
    }
    Score(e);
    return e;
}

} // namespace paralens::core
