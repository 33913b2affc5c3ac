#include "analysis/CriticalPath.hpp"

#include "common/CharConv.hpp"

#include <algorithm>
#include <charconv>
#include <map>

namespace paralens::core {

std::string_view Name(PathCategory c)
{
    switch (c) {
    case PathCategory::Compute: return "compute";
    case PathCategory::Communication: return "communication";
    case PathCategory::Memcpy: return "memcpy";
    case PathCategory::Cpu: return "cpu";
    case PathCategory::Launch: return "launch";
    case PathCategory::Idle: return "idle";
    case PathCategory::PreviousStep: return "previous step";
    }
    return "idle";
}

namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";

struct Window {
    int64_t startNs, endNs;
    int32_t step;
};

// Per rank, its ProfilerStep annotations by start; step numbers are shared by every rank.
std::map<int32_t, std::vector<Window>> StepWindows(const Trace& t, std::map<int64_t, int32_t>& indexOf, TraceSteps& out)
{
    std::map<int32_t, std::vector<Window>> byRank;
    std::vector<std::pair<int32_t, Window>> found;
    for (const Device& d : t.Devices()) {
        if (d.kind != DeviceKind::Cpu) continue;
        for (uint32_t k : d.tracks)
            for (const Span& s : t.Tracks()[k].spans) {
                std::string_view name = t.Str(s.name);
                if (s.category != SpanCategory::Annotation || name.substr(0, kStepPrefix.size()) != kStepPrefix) continue;
                int64_t number = 0;
                auto digits = name.substr(kStepPrefix.size());
                if (paralens::FromChars(digits.data(), digits.data() + digits.size(), number).ec != std::errc()) continue;
                indexOf.emplace(number, 0);
                found.push_back({d.rank, {s.startNs, s.endNs, static_cast<int32_t>(number)}});
            }
    }
    int32_t i = 0;
    for (auto& [number, index] : indexOf) {
        index = i++;
        out.steps.push_back({std::string(kStepPrefix) + std::to_string(number)});
    }
    for (auto& [rank, w] : found) byRank[rank].push_back({w.startNs, w.endNs, indexOf[w.step]});
    for (auto& [rank, ws] : byRank) std::sort(ws.begin(), ws.end(), [](const Window& a, const Window& b) { return a.startNs < b.startNs; });
    return byRank;
}

// The window holding t (host ops: [start, end)), or for GPU ops the latest window started by t.
int32_t StepAt(const std::vector<Window>& ws, int64_t t, bool host)
{
    auto it = std::upper_bound(ws.begin(), ws.end(), t, [](int64_t x, const Window& w) { return x < w.startNs; });
    if (it == ws.begin()) return -1;
    --it;
    return !host || t < it->endNs ? it->step : -1;
}

// A training step's trace of several iterations (paralens' data-parallel and parameter-server
// workloads, simulated or measured): its ops say their iteration (Span::step).
bool IterationsOf(const TraceGraph& graph, TraceSteps& out)
{
    const std::string kind = graph.Source().Meta().workload.GetString("kind");
    if (kind != "dp" && kind != "ps") return false;
    std::map<int32_t, int32_t> indexOf;
    for (uint32_t n = 0; n < graph.Nodes().size(); ++n)
        if (graph.SpanOf(n).step >= 0) indexOf.emplace(graph.SpanOf(n).step, 0);
    if (indexOf.size() < 2) return false;
    for (auto& [iteration, index] : indexOf) {
        index = static_cast<int32_t>(out.steps.size());
        out.steps.push_back({"iteration " + std::to_string(iteration)});
    }
    out.stepOf.assign(graph.Nodes().size(), -1);
    for (uint32_t n = 0; n < graph.Nodes().size(); ++n)
        if (const int32_t step = graph.SpanOf(n).step; step >= 0) out.stepOf[n] = indexOf[step];
    return true;
}

} // namespace

TraceSteps FindSteps(const TraceGraph& graph)
{
    const Trace& t = graph.Source();
    TraceSteps out;
    std::map<int64_t, int32_t> indexOf;
    const auto byRank = StepWindows(t, indexOf, out);
    const auto& nodes = graph.Nodes();
    if (out.steps.empty() && IterationsOf(graph, out)) return out;
    if (out.steps.empty()) {
        out.steps.push_back({"whole trace"});
        out.stepOf.assign(nodes.size(), 0);
        return out;
    }
    out.stepOf.assign(nodes.size(), -1);
    // Host ops first, so a kernel can take its launch's step.
    for (int pass = 0; pass < 2; ++pass)
        for (uint32_t n = 0; n < nodes.size(); ++n) {
            const Device& d = t.Devices()[nodes[n].device];
            const bool host = d.kind == DeviceKind::Cpu;
            if (host != (pass == 0)) continue;
            auto it = byRank.find(d.rank);
            if (it == byRank.end()) continue;
            int32_t step = -1;
            for (uint32_t e : graph.InEdges(n))
                if (graph.Edges()[e].kind == EdgeKind::Launch) step = out.stepOf[graph.Edges()[e].from];
            out.stepOf[n] = step >= 0 ? step : StepAt(it->second, nodes[n].startNs, host);
        }
    return out;
}

namespace {

class PathWalker {
public:
    PathWalker(const TraceGraph& g, const TraceSteps& steps, const NodeTimes& r) : m_g(g), m_steps(steps), m_s(r.startNs), m_e(r.endNs) {}

    StepPath Walk(int32_t step);

private:
    // Segments are added walking back in time; each ends where the one after it begins, so
    // overlapping ops (a kernel launched before its predecessor ended) are not counted twice.
    void Add(StepPath& p, uint32_t node, uint32_t device, int64_t a, int64_t b, PathCategory c)
    {
        a = std::max(a, p.startNs);
        b = std::min(b, m_cursor);
        if (b <= a) return;
        PathSegment seg{node, kNoTrack, 0, device, a, b, c};
        if (node != UINT32_MAX) { seg.track = m_g.Nodes()[node].track; seg.span = m_g.Nodes()[node].span; }
        p.segments.push_back(seg);
        m_cursor = a;
    }
    // The in-edge binding the start whose ready time is latest, over the node's group for a transfer.
    const GraphEdge* Binding(uint32_t n, int64_t& ready) const;
    const GraphEdge* Waited(uint32_t n) const;

    const TraceGraph& m_g;
    const TraceSteps& m_steps;
    const std::vector<int64_t>& m_s;
    const std::vector<int64_t>& m_e;
    int64_t m_cursor = INT64_MAX;
};

const GraphEdge* PathWalker::Binding(uint32_t n, int64_t& ready) const
{
    const GraphEdge* best = nullptr;
    ready = INT64_MIN;
    const uint32_t group = m_g.Nodes()[n].group;
    const bool transfer = group != UINT32_MAX && m_g.Groups()[group].kind == NodeGroup::Kind::Transfer;
    uint32_t self = n;
    std::span<const uint32_t> members = transfer ? std::span<const uint32_t>(m_g.Groups()[group].members) : std::span<const uint32_t>(&self, 1);
    for (uint32_t m : members)
        for (uint32_t ei : m_g.InEdges(m)) {
            const GraphEdge& e = m_g.Edges()[ei];
            if (e.BindsEnd() || (group != UINT32_MAX && m_g.Nodes()[e.from].group == group)) continue;
            const int64_t r = e.fromStart ? m_s[e.from] : m_e[e.from];
            // On a tie the lane's own order wins: the path stays on one device where it can.
            if (r > ready || (r == ready && e.kind == EdgeKind::Order)) { ready = r; best = &e; }
        }
    return best;
}

// The GPU op a blocking host call waited for, when it ended after the call began (null if none).
const GraphEdge* PathWalker::Waited(uint32_t n) const
{
    const GraphEdge* best = nullptr;
    for (uint32_t ei : m_g.InEdges(n)) {
        const GraphEdge& e = m_g.Edges()[ei];
        if (e.BindsEnd() && m_e[e.from] > m_s[n] && m_e[e.from] <= m_e[n] && (!best || m_e[e.from] > m_e[best->from])) best = &e;
    }
    return best;
}

StepPath PathWalker::Walk(int32_t step)
{
    const auto& nodes = m_g.Nodes();
    StepPath p;
    p.step = step;
    p.label = m_steps.steps[static_cast<size_t>(step)].label;
    p.waitNsByDevice.assign(m_g.Source().Devices().size(), 0);
    uint32_t sink = UINT32_MAX;
    p.startNs = INT64_MAX;
    p.endNs = INT64_MIN;
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        if (m_steps.stepOf[n] != step) continue;
        p.startNs = std::min(p.startNs, m_s[n]);
        if (m_e[n] > p.endNs) { p.endNs = m_e[n]; sink = n; }
    }
    if (sink == UINT32_MAX) { p.startNs = p.endNs = 0; return p; }
    for (const NodeGroup& g : m_g.Groups()) { // the others' wait for the last arrival
        if (g.kind != NodeGroup::Kind::Collective || m_steps.stepOf[g.members[0]] != step) continue;
        int64_t last = INT64_MIN;
        for (uint32_t m : g.members) last = std::max(last, m_s[m]);
        for (uint32_t m : g.members) p.waitNsByDevice[nodes[m].device] += std::min(last, m_e[m]) - m_s[m];
    }
    uint32_t n = sink;
    bool atEnd = true;
    m_cursor = p.endNs;
    for (size_t guard = 0; guard <= 2 * nodes.size() + 2; ++guard) {
        const uint32_t device = nodes[n].device;
        if (atEnd) {
            const uint32_t group = nodes[n].group;
            if (group != UINT32_MAX && m_g.Groups()[group].kind == NodeGroup::Kind::Collective) {
                uint32_t last = n;
                for (uint32_t m : m_g.Groups()[group].members)
                    if (m_s[m] > m_s[last]) last = m;
                Add(p, n, device, m_s[last], m_e[n], PathCategory::Communication);
                if (m_g.Source().Devices()[nodes[last].device].rank != m_g.Source().Devices()[device].rank) ++p.rankCrossings;
                n = last;
            } else if (const GraphEdge* w = Waited(n)) { // the call returned after the GPU work it waited for
                Add(p, n, device, m_e[w->from], m_e[n], PathCategory::Cpu);
                if (m_steps.stepOf[w->from] == step) {
                    n = w->from;
                    continue;
                }
                Add(p, n, device, m_s[n], m_e[w->from], PathCategory::Cpu);
            } else {
                Add(p, n, device, m_s[n], m_e[n], OpCategory(m_g, n));
            }
            atEnd = false;
            continue;
        }
        int64_t ready = 0;
        const GraphEdge* e = Binding(n, ready);
        if (!e) { Add(p, UINT32_MAX, device, p.startNs, m_s[n], PathCategory::Idle); break; }
        const bool host = m_g.Source().Devices()[device].kind == DeviceKind::Cpu;
        const PathCategory gap = e->kind == EdgeKind::Launch ? PathCategory::Launch : host ? PathCategory::Cpu : PathCategory::Idle;
        Add(p, UINT32_MAX, device, std::min(ready, m_s[n]), m_s[n], gap);
        if (m_steps.stepOf[e->from] != step) {
            Add(p, UINT32_MAX, nodes[e->from].device, p.startNs, std::min(ready, m_s[n]), PathCategory::PreviousStep);
            break;
        }
        if (m_g.Source().Devices()[nodes[e->from].device].rank != m_g.Source().Devices()[device].rank) ++p.rankCrossings;
        n = e->from;
        atEnd = !e->fromStart;
    }
    std::reverse(p.segments.begin(), p.segments.end());
    for (const PathSegment& s : p.segments) p.byCategory[static_cast<size_t>(s.category)] += s.endNs - s.startNs;
    return p;
}

} // namespace

PathCategory OpCategory(const TraceGraph& g, uint32_t n)
{
    if (g.Source().Devices()[g.Nodes()[n].device].kind == DeviceKind::Cpu) return PathCategory::Cpu;
    switch (g.SpanOf(n).category) {
    case SpanCategory::Collective:
    case SpanCategory::Send:
    case SpanCategory::Recv: return PathCategory::Communication;
    case SpanCategory::Memcpy:
    case SpanCategory::Memset: return PathCategory::Memcpy;
    default: return PathCategory::Compute;
    }
}

std::string SegmentName(const Trace& trace, const PathSegment& segment)
{
    if (segment.track == kNoTrack) {
        switch (segment.category) {
        case PathCategory::Cpu: return "(host thread between traced ops)";
        case PathCategory::Launch: return "(launch latency)";
        case PathCategory::PreviousStep: return "(the previous step)";
        default: return "(" + std::string(Name(segment.category)) + ")";
        }
    }
    const Span& s = trace.Tracks()[segment.track].spans[segment.span];
    std::string name(trace.Str(s.name));
    if (s.microBatch >= 0) name += " " + std::to_string(s.microBatch) + (s.chunk > 0 ? ":" + std::to_string(s.chunk) : "");
    return name;
}

std::vector<StepPath> CriticalPaths(const TraceGraph& graph, const TraceSteps& steps, const NodeTimes& times)
{
    PathWalker walker(graph, steps, times);
    std::vector<StepPath> out;
    for (size_t s = 0; s < steps.steps.size(); ++s) out.push_back(walker.Walk(static_cast<int32_t>(s)));
    return out;
}

} // namespace paralens::core
