#include "sim/Network.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <cmath>

namespace paralens::core {

namespace {
uint64_t LinkKey(int src, int dst) { return (static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst); }
} // namespace

Network::Network(const ClusterModel& cluster, int devices, int ranksPerNode)
    : m_cluster(cluster),
      m_slow(static_cast<size_t>(devices), 1.0),
      m_sendFree(static_cast<size_t>(devices), 0.0),
      m_recvFree(static_cast<size_t>(devices), 0.0),
      m_ranksPerNode(ranksPerNode)
{
    Require(ranksPerNode >= 0, "ranks per node must be at least 0");
    const std::string range = "0.." + std::to_string(devices - 1);
    for (const Straggler& s : cluster.stragglers) {
        Require(s.rank >= 0 && s.rank < devices, "straggler rank " + std::to_string(s.rank) + " is not in " + range);
        Require(s.slowdown > 0 && std::isfinite(s.slowdown), "straggler slowdown must be a number > 0");
        m_slow[static_cast<size_t>(s.rank)] = s.slowdown;
    }
    for (const LinkOverride& l : cluster.links) {
        Require(l.src >= 0 && l.src < devices && l.dst >= 0 && l.dst < devices,
                "link override " + std::to_string(l.src) + "->" + std::to_string(l.dst) + " names a rank outside " + range);
        m_links[LinkKey(l.src, l.dst)] = l;
    }
}

MessageTiming Network::Send(int src, int dst, uint64_t bytes, double readyAt, bool reduce, double accumulatorReady)
{
    double alpha = m_cluster.alphaSec, beta = m_cluster.betaSecPerByte;
    if (m_cluster.BetweenNodes(src, dst, m_ranksPerNode)) {
        alpha = m_cluster.netAlphaSec;
        beta = m_cluster.netBetaSecPerByte;
    }
    if (!m_links.empty()) {
        if (auto it = m_links.find(LinkKey(src, dst)); it != m_links.end()) {
            alpha = it->second.alphaSec;
            beta = it->second.betaSecPerByte;
        }
    }
    const size_t s = static_cast<size_t>(src), d = static_cast<size_t>(dst);
    MessageTiming t;
    t.ideal = alpha + static_cast<double>(bytes) * beta;
    t.start = std::max({readyAt, m_sendFree[s], m_recvFree[d]});
    t.end = t.start + std::max(m_slow[s], m_slow[d]) * t.ideal;
    t.usable = t.end;
    if (reduce) {
        t.idealReduce = static_cast<double>(bytes) * m_cluster.gammaSecPerByte;
        t.usable = std::max(t.end, accumulatorReady) + m_slow[d] * t.idealReduce;
    }
    m_sendFree[s] = t.end;
    m_recvFree[d] = t.usable;
    return t;
}

} // namespace paralens::core
