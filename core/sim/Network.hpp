// The ports of the modelled cluster: every device sends one message and receives one at a time
// (single-port, full-duplex). A message of m bytes from a to b costs alpha + m*beta (the link's:
// the network's between nodes of a two-level cluster, then per-link overrides) times the slower endpoint's straggler factor; a reducing receiver then
// spends m*gamma (times its own factor) before the bytes are usable, and its receive port stays
// busy until then. Not thread-safe: one Network per simulation.
#pragma once

#include "sim/ClusterModel.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace paralens::core {

struct MessageTiming {
    double start = 0;     // both ports taken
    double end = 0;       // last byte arrived; the send port is free again
    double usable = 0;    // the bytes are usable at the receiver (after the reduction, if any)
    double ideal = 0;     // alpha + m*beta of the link, without straggler factors
    double idealReduce = 0;
};

class Network {
public:
    // Throws Error when a straggler or link override names a device outside [0, devices).
    // `ranksPerNode` places devices on nodes (0: one node) for a two-level cluster.
    Network(const ClusterModel& cluster, int devices, int ranksPerNode = 0);

    // Schedules a message that may start at `readyAt` (data ready at the sender, receiver posted).
    // `accumulatorReady` is when the receiver's destination bytes hold all earlier writes (reduce).
    MessageTiming Send(int src, int dst, uint64_t bytes, double readyAt, bool reduce, double accumulatorReady = 0.0);

    double Slowdown(int device) const { return m_slow[static_cast<size_t>(device)]; }
    double SendFree(int device) const { return m_sendFree[static_cast<size_t>(device)]; }
    double RecvFree(int device) const { return m_recvFree[static_cast<size_t>(device)]; }
    int Devices() const { return static_cast<int>(m_slow.size()); }
    const ClusterModel& Cluster() const { return m_cluster; }

private:
    ClusterModel m_cluster;
    std::vector<double> m_slow;
    std::vector<double> m_sendFree, m_recvFree;
    std::unordered_map<uint64_t, LinkOverride> m_links;
    int m_ranksPerNode = 0;
};

} // namespace paralens::core
