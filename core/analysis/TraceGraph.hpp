// The dependency graph of a trace: which op waited for which. Built from what the trace says and
// nothing else:
// - nodes are the leaf spans of every track (a span with no other span nested in it), except
//   annotations and idle marks: GPU kernels, memcpys, CPU ops at their innermost level, the
//   simulator's compute, send, recv and collective spans;
// - order: each track runs its nodes one after the other (a CUDA stream, a host thread, a
//   simulated lane): a node cannot start before the previous node of its track has ended;
// - launches: a flow from a host thread to a GPU (Kineto's ac2g flows, or the correlation ids
//   the reader pairs) lets the kernel start no earlier than its launch call started;
// - messages: a flow whose two ends are a send span and a recv span of the same times is one
//   transfer (the two spans move together); any other flow is an end-to-start dependency;
// - recorded: the dependencies the producer wrote down (Trace::Dependencies(): paralens'
//   simulators' data and schedule dependencies; a PyTorch execution trace's data dependencies
//   between CPU ops). One that names a parent span binds its last node inside (from) or its
//   first (to); one whose ends overlap in time is left out (counted as unresolved);
// - collectives matched across ranks (CollectiveMatch.hpp) are synchronisation points: each
//   rank arrives when it arrives, and every rank leaves the transfer time after the last arrival;
// - host synchronisation: a blocking call on a host thread (cudaDeviceSynchronize,
//   cudaStreamSynchronize, cudaEventSynchronize, a synchronous cudaMemcpy, and their driver-API
//   twins) cannot return before the GPU work it waited for has ended. That work is taken to be
//   the GPU op of the same rank, launched before the call began and ended by the time it
//   returned (2 us of slack for the two clocks), that ended last. A copy call (cudaMemcpyAsync
//   too: from pageable memory it blocks) that returned only after the copy it launched ended
//   depends on that copy the same way. Unlike the others, this dependency binds the call's end,
//   not its start.
// What it assumes: spans on one track do not run concurrently (true of CUDA streams and of a
// thread's innermost ops); GPU-side markers of synchronisation (Kineto's cuda_sync events) are
// not ops; cross-stream event waits (cudaStreamWaitEvent) are not modelled, so a kernel that
// waited for another stream keeps its measured delay after its own stream's previous op; a gap between a node and what it waited for is a delay the node keeps
// under any change (the launch latency, a thread's Python time, a scheduler's gap), so replaying
// with no change reproduces every time exactly. Pure functions of an immutable Trace.
#pragma once

#include "trace/Trace.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::core {

enum class EdgeKind : uint8_t { Order, Launch, Message, Recorded, Sync };
inline constexpr int kEdgeKindCount = 5;
std::string_view Name(EdgeKind k);

struct GraphNode {
    uint32_t track = 0, span = 0; // Tracks()[track].spans[span]
    uint32_t device = 0;
    int64_t startNs = 0, endNs = 0;
    uint32_t group = UINT32_MAX;  // the transfer or collective it belongs to
};

struct GraphEdge {
    uint32_t from = 0, to = 0;
    EdgeKind kind = EdgeKind::Order;
    bool fromStart = false; // the dependency is on `from`'s start (a launch), not its end
    bool BindsEnd() const { return kind == EdgeKind::Sync; } // `to` cannot end (rather than start) before
};

// Nodes that finish together: a point-to-point transfer's send and recv spans (one start, one
// end), or a collective's per-rank spans (each its own start; every end = the last arrival +
// that rank's transfer time).
struct NodeGroup {
    enum class Kind : uint8_t { Transfer, Collective } kind = Kind::Transfer;
    std::vector<uint32_t> members;
};

class TraceGraph {
public:
    explicit TraceGraph(const Trace& trace);

    const Trace& Source() const { return *m_trace; }
    const std::vector<GraphNode>& Nodes() const { return m_nodes; }
    const std::vector<GraphEdge>& Edges() const { return m_edges; }
    const std::vector<NodeGroup>& Groups() const { return m_groups; }
    // The edges into node n, as indices into Edges().
    std::span<const uint32_t> InEdges(uint32_t n) const
    {
        return std::span<const uint32_t>(m_inEdges).subspan(m_inBegin[n], m_inBegin[n + 1] - m_inBegin[n]);
    }
    const Span& SpanOf(uint32_t n) const { return m_trace->Tracks()[m_nodes[n].track].spans[m_nodes[n].span]; }
    // The node of a track whose span starts and ends at these times, or UINT32_MAX.
    uint32_t Find(uint32_t track, int64_t startNs, int64_t endNs) const;
    // The nodes of one track, by start.
    std::span<const uint32_t> TrackNodes(uint32_t track) const
    {
        return std::span<const uint32_t>(m_byTrack).subspan(m_trackBegin[track], m_trackBegin[track + 1] - m_trackBegin[track]);
    }
    size_t CountOf(EdgeKind k) const { return m_edgeCount[static_cast<size_t>(k)]; }
    size_t UnresolvedFlows() const { return m_unresolvedFlows; }          // flows with an end on no node
    size_t UnresolvedDependencies() const { return m_unresolvedDeps; }    // recorded ones naming no node

private:
    void AddNodes();
    void AddOrderEdges();
    void AddFlowEdges();
    void AddRecordedEdges();
    void AddCollectiveGroups();
    void AddSyncEdges();
    void IndexEdges();
    uint32_t NodeAt(uint32_t track, int64_t t, bool atEnd) const;
    uint32_t StartingAt(uint32_t track, int64_t t) const;
    uint32_t Inside(uint32_t track, int64_t startNs, int64_t endNs, bool last) const;
    void AddEdge(uint32_t from, uint32_t to, EdgeKind kind, bool fromStart = false);

    const Trace* m_trace;
    std::vector<GraphNode> m_nodes;
    std::vector<uint32_t> m_byTrack, m_trackBegin;
    std::vector<GraphEdge> m_edges;
    std::vector<uint32_t> m_inEdges, m_inBegin;
    std::vector<NodeGroup> m_groups;
    size_t m_edgeCount[kEdgeKindCount] = {};
    size_t m_unresolvedFlows = 0, m_unresolvedDeps = 0;
};

// A time for every node of a graph: as measured, or as a replay (sim/TraceReplay.hpp) moved them.
struct NodeTimes {
    std::vector<int64_t> startNs, endNs; // per node
};
NodeTimes MeasuredTimes(const TraceGraph& graph);

} // namespace paralens::core
