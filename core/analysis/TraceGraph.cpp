#include "analysis/TraceGraph.hpp"

#include "analysis/CollectiveMatch.hpp"

#include <algorithm>
#include <map>

namespace paralens::core {

std::string_view Name(EdgeKind k)
{
    switch (k) {
    case EdgeKind::Order: return "order";
    case EdgeKind::Launch: return "launch";
    case EdgeKind::Message: return "message";
    case EdgeKind::Recorded: return "recorded";
    case EdgeKind::Sync: return "sync";
    }
    return "order";
}

namespace {

bool IsWork(const Span& s, bool host)
{
    return s.category != SpanCategory::Annotation && s.category != SpanCategory::Idle && (host || s.category != SpanCategory::Sync);
}

bool IsCopyCall(std::string_view name) { return name.substr(0, 10) == "cudaMemcpy" || name.substr(0, 8) == "cuMemcpy"; }

// A host call that blocks until GPU work has ended (runtime and driver API names, with or
// without Nsight Systems' version suffix).
bool IsBlockingCall(std::string_view name)
{
    static constexpr std::string_view kPrefixes[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                                                     "cuCtxSynchronize",      "cuStreamSynchronize",   "cuEventSynchronize"};
    for (std::string_view p : kPrefixes)
        if (name.substr(0, p.size()) == p) return true;
    // Synchronous copies: cudaMemcpy, cudaMemcpy2D, ... but not the ...Async ones.
    return IsCopyCall(name) && name.find("Async") == std::string_view::npos;
}

constexpr int64_t kSyncSlackNs = 2000;
constexpr size_t kSyncLookBack = 256; // GPU ops launched before a call that are looked at

} // namespace

TraceGraph::TraceGraph(const Trace& trace) : m_trace(&trace)
{
    AddNodes();
    AddOrderEdges();
    AddFlowEdges();
    AddRecordedEdges();
    AddCollectiveGroups();
    AddSyncEdges();
    IndexEdges();
}

// Leaves: in start order (on ties instants first, then longer first), a span is a leaf unless the
// next one starts inside it and ends inside it too (a child); zero-length spans are never children.
// A track's depth levels are each sorted by start already: they are merged, and only sorted
// whole when a level is not in this order (instants tied with longer spans).
void TraceGraph::AddNodes()
{
    const auto tracks = m_trace->Tracks();
    m_trackBegin.assign(tracks.size() + 1, 0);
    m_nodes.reserve(m_trace->SpanCount());
    m_byTrack.reserve(m_trace->SpanCount());
    std::vector<uint32_t> order;
    for (uint32_t t = 0; t < tracks.size(); ++t) {
        const Track& track = tracks[t];
        const std::vector<Span>& spans = track.spans;
        const auto before = [&](uint32_t a, uint32_t b) {
            const Span& x = spans[a];
            const Span& y = spans[b];
            if (x.startNs != y.startNs) return x.startNs < y.startNs;
            const bool xInstant = x.endNs == x.startNs, yInstant = y.endNs == y.startNs;
            if (xInstant != yInstant) return xInstant; // an instant op (a free optimizer step) before what starts with it
            return x.endNs > y.endNs;
        };
        order.clear();
        const bool host = m_trace->Devices()[track.device].kind == DeviceKind::Cpu;
        bool sorted = true;
        for (int d = 0; d < track.DepthCount(); ++d) {
            const size_t levelBegin = order.size();
            for (uint32_t i = track.depthBegin[static_cast<size_t>(d)]; i < track.depthBegin[static_cast<size_t>(d) + 1]; ++i)
                if (IsWork(spans[i], host)) order.push_back(i);
            sorted = sorted && std::is_sorted(order.begin() + static_cast<ptrdiff_t>(levelBegin), order.end(), before);
            if (sorted && levelBegin > 0) std::inplace_merge(order.begin(), order.begin() + static_cast<ptrdiff_t>(levelBegin), order.end(), before);
        }
        if (!sorted) std::stable_sort(order.begin(), order.end(), before);
        for (size_t k = 0; k < order.size(); ++k) {
            const Span& s = spans[order[k]];
            if (k + 1 < order.size()) {
                const Span& next = spans[order[k + 1]];
                if (next.startNs < s.endNs && next.endNs <= s.endNs && next.endNs > next.startNs) continue;
            }
            m_byTrack.push_back(static_cast<uint32_t>(m_nodes.size()));
            m_nodes.push_back({t, order[k], track.device, s.startNs, s.endNs});
        }
        m_trackBegin[t + 1] = static_cast<uint32_t>(m_byTrack.size());
    }
}

void TraceGraph::AddEdge(uint32_t from, uint32_t to, EdgeKind kind, bool fromStart)
{
    if (from == to) return;
    m_edges.push_back({from, to, kind, fromStart});
    ++m_edgeCount[static_cast<size_t>(kind)];
}

void TraceGraph::AddOrderEdges()
{
    for (uint32_t t = 0; t + 1 < m_trackBegin.size(); ++t) {
        const auto nodes = TrackNodes(t);
        for (size_t k = 1; k < nodes.size(); ++k) AddEdge(nodes[k - 1], nodes[k], EdgeKind::Order);
    }
}

uint32_t TraceGraph::Find(uint32_t track, int64_t startNs, int64_t endNs) const
{
    if (track + 1 >= m_trackBegin.size()) return UINT32_MAX;
    const auto nodes = TrackNodes(track);
    auto it = std::lower_bound(nodes.begin(), nodes.end(), startNs,
                               [&](uint32_t n, int64_t t) { return m_nodes[n].startNs < t; });
    for (; it != nodes.end() && m_nodes[*it].startNs == startNs; ++it)
        if (m_nodes[*it].endNs == endNs) return *it;
    return UINT32_MAX;
}

uint32_t TraceGraph::StartingAt(uint32_t track, int64_t t) const
{
    if (track + 1 >= m_trackBegin.size()) return UINT32_MAX;
    const auto nodes = TrackNodes(track);
    auto it = std::lower_bound(nodes.begin(), nodes.end(), t, [&](uint32_t n, int64_t x) { return m_nodes[n].startNs < x; });
    return it != nodes.end() && m_nodes[*it].startNs == t ? *it : UINT32_MAX;
}

// The node of `track` that a flow end at time t names: one starting at t (a launched kernel, the
// start of a send), else one ending at t (Chrome's enclosing-slice binding: a recv's end), else
// the one running at t.
uint32_t TraceGraph::NodeAt(uint32_t track, int64_t t, bool atEnd) const
{
    if (track + 1 >= m_trackBegin.size()) return UINT32_MAX;
    const auto nodes = TrackNodes(track);
    auto it = std::lower_bound(nodes.begin(), nodes.end(), t, [&](uint32_t n, int64_t x) { return m_nodes[n].startNs < x; });
    if (!atEnd && it != nodes.end() && m_nodes[*it].startNs == t) return *it;
    // Nodes of one track do not overlap, so ends are sorted too.
    auto byEnd = std::lower_bound(nodes.begin(), nodes.end(), t, [&](uint32_t n, int64_t x) { return m_nodes[n].endNs < x; });
    if (byEnd != nodes.end() && m_nodes[*byEnd].endNs == t) return *byEnd;
    if (it != nodes.end() && m_nodes[*it].startNs == t) return *it;
    if (it != nodes.begin() && m_nodes[*(it - 1)].endNs >= t) return *(it - 1);
    return UINT32_MAX;
}

void TraceGraph::AddFlowEdges()
{
    const auto devices = m_trace->Devices();
    const bool recorded = !m_trace->Dependencies().empty();
    for (const Flow& f : m_trace->Flows()) {
        const bool launch = devices[f.srcDevice].kind == DeviceKind::Cpu && devices[f.dstDevice].kind != DeviceKind::Cpu;
        const uint32_t from = NodeAt(f.srcTrack, f.srcNs, false);
        // A launch lands on the start of what it launched; one that lands elsewhere launched
        // something that is not an op (a GPU-side synchronisation marker).
        const uint32_t to = launch ? StartingAt(f.dstTrack, f.dstNs) : NodeAt(f.dstTrack, f.dstNs, true);
        if (from == UINT32_MAX || to == UINT32_MAX || from == to) {
            ++m_unresolvedFlows;
            continue;
        }
        const Span& a = SpanOf(from);
        const Span& b = SpanOf(to);
        const bool transfer = a.category == SpanCategory::Send && b.category == SpanCategory::Recv &&
                              a.startNs == b.startNs && a.endNs == b.endNs;
        if (transfer) {
            GraphNode& x = m_nodes[from];
            GraphNode& y = m_nodes[to];
            if (x.group == UINT32_MAX && y.group == UINT32_MAX) {
                x.group = y.group = static_cast<uint32_t>(m_groups.size());
                m_groups.push_back({NodeGroup::Kind::Transfer, {from, to}});
            }
            continue;
        }
        if (!launch && recorded) continue; // the producer's own dependencies say it exactly
        if (launch) AddEdge(from, to, EdgeKind::Launch, true);
        else AddEdge(from, to, EdgeKind::Message);
    }
}

// The node a recorded dependency names: the span itself when it is a node, else (a parent, such
// as a CPU op with the runtime calls it made nested in it) the last node inside it (its end is
// what a dependent waits for) or the first (its start is what waits).
uint32_t TraceGraph::Inside(uint32_t track, int64_t startNs, int64_t endNs, bool last) const
{
    if (const uint32_t n = Find(track, startNs, endNs); n != UINT32_MAX) return n;
    if (track + 1 >= m_trackBegin.size()) return UINT32_MAX;
    const auto nodes = TrackNodes(track);
    auto it = std::lower_bound(nodes.begin(), nodes.end(), startNs, [&](uint32_t n, int64_t t) { return m_nodes[n].startNs < t; });
    if (it == nodes.end() || m_nodes[*it].endNs > endNs) return UINT32_MAX;
    if (!last) return *it;
    auto end = std::upper_bound(it, nodes.end(), endNs, [&](int64_t t, uint32_t n) { return t < m_nodes[n].endNs; });
    return *(end - 1);
}

void TraceGraph::AddRecordedEdges()
{
    for (const Dependency& d : m_trace->Dependencies()) {
        const uint32_t from = Inside(d.from.track, d.from.startNs, d.from.endNs, true);
        const uint32_t to = Inside(d.to.track, d.to.startNs, d.to.endNs, false);
        if (from == UINT32_MAX || to == UINT32_MAX || m_nodes[from].endNs > m_nodes[to].startNs) {
            ++m_unresolvedDeps;
            continue;
        }
        AddEdge(from, to, EdgeKind::Recorded);
    }
}

void TraceGraph::AddCollectiveGroups()
{
    const auto devices = m_trace->Devices();
    for (const CollectiveInstance& c : MatchCollectives(*m_trace)) {
        NodeGroup g{NodeGroup::Kind::Collective, {}};
        for (const auto& p : c.participants) {
            uint32_t node = UINT32_MAX;
            for (uint32_t t : devices[p.device].tracks)
                if ((node = Find(t, p.startNs, p.endNs)) != UINT32_MAX) break;
            if (node != UINT32_MAX && m_nodes[node].group == UINT32_MAX) g.members.push_back(node);
        }
        if (g.members.size() < 2) continue;
        for (uint32_t n : g.members) m_nodes[n].group = static_cast<uint32_t>(m_groups.size());
        m_groups.push_back(std::move(g));
    }
}

// Per rank, its GPU ops by the start of their launch; each blocking host call then depends on
// the op launched before it began that ended last, by its return.
void TraceGraph::AddSyncEdges()
{
    const auto devices = m_trace->Devices();
    struct Launched {
        int64_t launchNs;
        uint32_t node;
    };
    std::map<int32_t, std::vector<Launched>> byRank;
    const size_t edgeCount = m_edges.size();
    for (size_t i = 0; i < edgeCount; ++i) {
        const GraphEdge e = m_edges[i];
        if (e.kind != EdgeKind::Launch) continue;
        byRank[devices[m_nodes[e.to].device].rank].push_back({m_nodes[e.from].startNs, e.to});
        // A copy call (cudaMemcpyAsync from pageable memory is one) that returned only after its
        // copy ended waited for it, and for what ran before it on its stream.
        const GraphNode& call = m_nodes[e.from];
        const GraphNode& copy = m_nodes[e.to];
        if (IsCopyCall(m_trace->Str(SpanOf(e.from).name)) && copy.endNs > call.startNs && copy.endNs <= call.endNs + kSyncSlackNs)
            AddEdge(e.to, e.from, EdgeKind::Sync);
    }
    if (byRank.empty()) return;
    for (auto& [rank, v] : byRank)
        std::sort(v.begin(), v.end(), [](const Launched& a, const Launched& b) { return a.launchNs < b.launchNs; });
    for (uint32_t n = 0; n < m_nodes.size(); ++n) {
        const GraphNode& call = m_nodes[n];
        if (devices[call.device].kind != DeviceKind::Cpu || !IsBlockingCall(m_trace->Str(SpanOf(n).name))) continue;
        auto it = byRank.find(devices[call.device].rank);
        if (it == byRank.end()) continue;
        const std::vector<Launched>& v = it->second;
        size_t k = static_cast<size_t>(std::lower_bound(v.begin(), v.end(), call.startNs,
                                                        [](const Launched& l, int64_t t) { return l.launchNs < t; }) - v.begin());
        uint32_t best = UINT32_MAX;
        for (size_t seen = 0; k > 0 && seen < kSyncLookBack; --k, ++seen) {
            const GraphNode& op = m_nodes[v[k - 1].node];
            if (op.endNs <= call.endNs + kSyncSlackNs && (best == UINT32_MAX || op.endNs > m_nodes[best].endNs)) best = v[k - 1].node;
        }
        if (best != UINT32_MAX) AddEdge(best, n, EdgeKind::Sync);
    }
}

void TraceGraph::IndexEdges()
{
    m_inBegin.assign(m_nodes.size() + 1, 0);
    for (const GraphEdge& e : m_edges) ++m_inBegin[e.to + 1];
    for (size_t i = 1; i < m_inBegin.size(); ++i) m_inBegin[i] += m_inBegin[i - 1];
    m_inEdges.resize(m_edges.size());
    std::vector<uint32_t> fill(m_inBegin.begin(), m_inBegin.end() - 1);
    for (uint32_t e = 0; e < m_edges.size(); ++e) m_inEdges[fill[m_edges[e].to]++] = e;
}

NodeTimes MeasuredTimes(const TraceGraph& graph)
{
    NodeTimes t;
    t.startNs.reserve(graph.Nodes().size());
    t.endNs.reserve(graph.Nodes().size());
    for (const GraphNode& n : graph.Nodes()) {
        t.startNs.push_back(n.startNs);
        t.endNs.push_back(n.endNs);
    }
    return t;
}

} // namespace paralens::core
