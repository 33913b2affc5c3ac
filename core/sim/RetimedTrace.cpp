// RetimedTrace: the source trace with its spans moved to a replay's times.
#include "sim/TraceReplay.hpp"

#include "trace/TraceBuilder.hpp"

#include <algorithm>

namespace paralens::core {

namespace {

// Moves one track's spans: nodes to their replayed times, other spans with the nodes inside
// them (their first node's start shift, their last node's end shift), or with the node before.
class TrackRetimer {
public:
    TrackRetimer(const TraceGraph& g, const NodeTimes& r, uint32_t track) : m_g(g), m_r(r), m_nodes(g.TrackNodes(track)) {}

    int64_t StartShift(int64_t t) const
    {
        auto it = std::lower_bound(m_nodes.begin(), m_nodes.end(), t, [&](uint32_t n, int64_t x) { return Orig(n).startNs < x; });
        if (it != m_nodes.end()) return m_r.startNs[*it] - Orig(*it).startNs;
        return m_nodes.empty() ? 0 : m_r.endNs[m_nodes.back()] - Orig(m_nodes.back()).endNs;
    }
    int64_t EndShift(int64_t t, int64_t fallback) const
    {
        auto it = std::upper_bound(m_nodes.begin(), m_nodes.end(), t, [&](int64_t x, uint32_t n) { return x < Orig(n).endNs; });
        if (it == m_nodes.begin()) return fallback;
        return m_r.endNs[*(it - 1)] - Orig(*(it - 1)).endNs;
    }
    // How far a point of the lane (a flow's end) moves: with the op it ends or starts (in the
    // order `atEnd` prefers when both), else with the op it falls in, else with the op before.
    int64_t PointShift(int64_t t, bool atEnd) const
    {
        auto byStart = std::lower_bound(m_nodes.begin(), m_nodes.end(), t, [&](uint32_t n, int64_t x) { return Orig(n).startNs < x; });
        auto byEnd = std::lower_bound(m_nodes.begin(), m_nodes.end(), t, [&](uint32_t n, int64_t x) { return Orig(n).endNs < x; });
        const bool starts = byStart != m_nodes.end() && Orig(*byStart).startNs == t;
        const bool ends = byEnd != m_nodes.end() && Orig(*byEnd).endNs == t;
        if (ends && (atEnd || !starts)) return m_r.endNs[*byEnd] - Orig(*byEnd).endNs;
        if (starts) return m_r.startNs[*byStart] - Orig(*byStart).startNs;
        if (byStart == m_nodes.begin()) return m_nodes.empty() ? 0 : m_r.startNs[m_nodes.front()] - Orig(m_nodes.front()).startNs;
        const uint32_t before = *(byStart - 1);
        return t < Orig(before).endNs ? m_r.startNs[before] - Orig(before).startNs : m_r.endNs[before] - Orig(before).endNs;
    }
    Span Move(const Span& s, uint32_t node) const
    {
        Span out = s;
        if (node != UINT32_MAX) {
            out.startNs = m_r.startNs[node];
            out.endNs = m_r.endNs[node];
            return out;
        }
        const int64_t ds = StartShift(s.startNs);
        out.startNs = s.startNs + ds;
        out.endNs = std::max(out.startNs, s.endNs + EndShift(s.endNs, ds));
        return out;
    }

private:
    const GraphNode& Orig(uint32_t n) const { return m_g.Nodes()[n]; }
    const TraceGraph& m_g;
    const NodeTimes& m_r;
    std::span<const uint32_t> m_nodes;
};

} // namespace

Trace RetimedTrace(const TraceGraph& graph, const NodeTimes& replay, const std::string& title)
{
    const Trace& t = graph.Source();
    TraceBuilder b(t.Strings());
    b.Meta() = t.Meta();
    b.Meta().title = title;
    for (const Device& d : t.Devices()) {
        const uint32_t id = b.AddDevice(t.Str(d.name), d.kind, d.rank, t.Str(d.host), d.gpuIndex);
        (void)id;
    }
    std::vector<uint32_t> nodeOfSpan;
    std::vector<TrackRetimer> retimers;
    for (uint32_t k = 0; k < t.Tracks().size(); ++k) {
        const Track& tr = t.Tracks()[k];
        b.AddTrack(tr.device, t.Str(tr.name));
        nodeOfSpan.assign(tr.spans.size(), UINT32_MAX);
        for (uint32_t n : graph.TrackNodes(k)) nodeOfSpan[graph.Nodes()[n].span] = n;
        retimers.emplace_back(graph, replay, k);
        std::vector<Span> spans;
        spans.reserve(tr.spans.size());
        for (uint32_t i = 0; i < tr.spans.size(); ++i) spans.push_back(retimers.back().Move(tr.spans[i], nodeOfSpan[i]));
        b.AddSpans(k, std::move(spans));
    }
    auto moved = [&](uint32_t track, int64_t ns, bool atEnd) {
        return track < retimers.size() ? ns + retimers[track].PointShift(ns, atEnd) : ns;
    };
    for (const Flow& f : t.Flows()) { // a flow leaves the end of its source and lands on the start of what it feeds
        Flow g = f;
        g.srcNs = moved(f.srcTrack, f.srcNs, true);
        g.dstNs = moved(f.dstTrack, f.dstNs, false);
        b.AddFlow(g);
    }
    for (const Dependency& d : t.Dependencies()) { // their spans, moved as the spans were
        Dependency e = d;
        for (SpanRef* ref : {&e.from, &e.to}) {
            if (ref->track >= retimers.size()) continue;
            Span s;
            s.startNs = ref->startNs;
            s.endNs = ref->endNs;
            s = retimers[ref->track].Move(s, graph.Find(ref->track, ref->startNs, ref->endNs));
            *ref = {ref->track, s.startNs, s.endNs};
        }
        b.AddDependency(e);
    }
    return std::move(b).Finish();
}

} // namespace paralens::core
