// The what-if replayer: a graph's nodes re-timed in dependency order (TraceReplay.hpp).
#include "sim/TraceReplay.hpp"

#include "common/Error.hpp"
#include "plan/Plan.hpp"
#include "sim/Network.hpp"
#include "sim/PlanRunner.hpp"
#include "sim/ReplayFactors.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>

namespace paralens::core {

namespace {

constexpr uint32_t kNoUnit = UINT32_MAX;
constexpr int64_t kNoSync = INT64_MIN;
constexpr int64_t kCalibrationNs = 2; // a collective the simulator reproduces to this is re-simulated

int64_t Scaled(int64_t ns, double factor) { return factor == 1.0 ? ns : static_cast<int64_t>(std::llround(static_cast<double>(ns) * factor)); }

ClusterModel ClusterOf(const CostParams& p)
{
    ClusterModel m;
    m.alphaSec = p.alphaSec;
    m.betaSecPerByte = p.betaSecPerByte;
    m.gammaSecPerByte = p.gammaSecPerByte;
    return m;
}

// A collective group the simulator reproduces: its Plan, and its members in rank order.
struct SimulatedCollective {
    std::shared_ptr<const Plan> plan;
    std::vector<uint32_t> byRank;
};

// Each rank's end when the plan runs from these arrivals (absolute ns) on `network`.
std::vector<int64_t> RunCollective(const SimulatedCollective& c, const std::vector<int64_t>& arrivalNs, const CostParams& network)
{
    const int64_t base = *std::min_element(arrivalNs.begin(), arrivalNs.end());
    std::vector<double> joins(arrivalNs.size());
    for (size_t r = 0; r < joins.size(); ++r) joins[r] = static_cast<double>(arrivalNs[r] - base) * 1e-9;
    std::vector<int> devices(arrivalNs.size());
    std::iota(devices.begin(), devices.end(), 0);
    Network net(ClusterOf(network), static_cast<int>(devices.size()));
    const PlanRunResult run = RunPlan(*c.plan, net, devices, joins, nullptr);
    std::vector<int64_t> ends(arrivalNs.size());
    for (size_t r = 0; r < ends.size(); ++r) ends[r] = base + static_cast<int64_t>(std::llround(run.rankEnd[r] * 1e9));
    return ends;
}

class Replayer {
public:
    Replayer(const TraceGraph& g, const WhatIfChanges& c);
    ReplayResult Run();

private:
    uint32_t UnitOf(uint32_t n) const
    {
        return m_nodes[n].group == UINT32_MAX ? n : static_cast<uint32_t>(m_nodes.size()) + m_nodes[n].group;
    }
    std::span<const uint32_t> Members(uint32_t unit, uint32_t& single) const
    {
        if (unit < m_nodes.size()) { single = unit; return {&single, 1}; }
        return m_g.Groups()[unit - m_nodes.size()].members;
    }
    // The latest ready time of n's dependencies of one kind: those that bind its start, or (sync)
    // its end; `any` says whether there were any.
    int64_t ReadyOf(uint32_t n, const NodeTimes& t, bool bindsEnd, bool& any) const
    {
        int64_t ready = INT64_MIN;
        any = false;
        for (uint32_t ei : m_g.InEdges(n)) {
            const GraphEdge& edge = m_g.Edges()[ei];
            if (edge.BindsEnd() != bindsEnd || UnitOf(edge.from) == UnitOf(n)) continue;
            any = true;
            ready = std::max(ready, edge.fromStart ? t.startNs[edge.from] : t.endNs[edge.from]);
        }
        return ready;
    }
    // The latest ready time over both ends of a transfer.
    int64_t TransferReady(const NodeGroup& group, const NodeTimes& t, bool& any) const
    {
        int64_t ready = INT64_MIN;
        any = false;
        for (uint32_t m : group.members) {
            bool one = false;
            const int64_t r = ReadyOf(m, t, false, one);
            if (one) ready = std::max(ready, r);
            any |= one;
        }
        return ready;
    }
    void Delays();
    void Calibrate(const TraceGraph& g);
    // When n may start: its delay after its dependencies, or (a root) its measured start, skewed.
    int64_t StartOf(uint32_t n) const
    {
        bool any = false;
        const int64_t ready = ReadyOf(n, m_r, false, any);
        return (any ? ready + m_delay[n] : m_nodes[n].startNs) + (m_root[n] ? m_skew[n] : 0);
    }
    void StartNode(uint32_t n) { m_r.startNs[n] = StartOf(n); }
    void FinishNode(uint32_t n);
    void TimeGroup(const NodeGroup& group, size_t index);
    // Times a unit's start (a group: all of it); its end follows in Finish once the GPU work a
    // blocking call waits for is timed.
    void Start(uint32_t unit)
    {
        if (unit < m_nodes.size()) StartNode(unit);
        else TimeGroup(m_g.Groups()[unit - m_nodes.size()], unit - m_nodes.size());
    }
    void Finish(uint32_t unit)
    {
        if (unit < m_nodes.size()) FinishNode(unit);
    }

    const TraceGraph& m_g;
    const std::vector<GraphNode>& m_nodes;
    NodeFactors m_factor;
    std::optional<CostParams> m_before, m_after;
    std::vector<int64_t> m_delay, m_skew;
    std::vector<int64_t> m_transferDelay;     // per transfer group: its start - the later end's ready
    std::vector<int64_t> m_wait, m_syncDelay; // blocking calls: time before the GPU work ended; end - its end
    std::vector<bool> m_root;
    std::vector<int32_t> m_simulatedOf;       // per group: index into m_simulated, or -1
    std::vector<SimulatedCollective> m_simulated;
    ReplayResult m_r;
};

Replayer::Replayer(const TraceGraph& g, const WhatIfChanges& c) : m_g(g), m_nodes(g.Nodes())
{
    m_before = c.networkBefore ? c.networkBefore : TraceNetwork(g.Source());
    if (c.networkAfter && !m_before)
        throw Error("a network change needs the network the trace ran on: this trace does not say (give the model it "
                    "ran on, e.g. a fit of its machine's nccl-tests logs)");
    m_after = c.networkAfter ? c.networkAfter : m_before;
    m_factor = ComputeFactors(g, c, m_before);
    const size_t n = m_nodes.size();
    static_cast<NodeTimes&>(m_r) = MeasuredTimes(g);
    for (size_t i = 0; i < n; ++i) m_r.changedNodes += m_factor.Of(static_cast<uint32_t>(i)) != 1.0;
    m_skew.assign(n, 0);
    for (const auto& [rank, ns] : c.skewNs)
        for (size_t i = 0; i < n; ++i)
            if (g.Source().Devices()[m_nodes[i].device].rank == rank) m_skew[i] += ns;
    Delays();
    m_simulatedOf.assign(g.Groups().size(), -1);
    if (!c.Empty() && m_before) Calibrate(g);
}

void Replayer::Delays()
{
    const size_t n = m_nodes.size();
    m_delay.assign(n, 0);
    m_wait.assign(n, 0);
    m_syncDelay.assign(n, kNoSync);
    m_root.assign(n, false);
    for (uint32_t i = 0; i < n; ++i) {
        bool any = false;
        const int64_t ready = ReadyOf(i, m_r, false, any);
        m_delay[i] = any ? m_nodes[i].startNs - ready : 0;
        m_root[i] = !any;
        const int64_t gpuDone = ReadyOf(i, m_r, true, any);
        if (!any) continue;
        const int64_t duration = m_nodes[i].endNs - m_nodes[i].startNs;
        m_wait[i] = std::clamp(gpuDone - m_nodes[i].startNs, int64_t{0}, duration);
        m_syncDelay[i] = m_nodes[i].endNs - gpuDone;
    }
    m_transferDelay.assign(m_g.Groups().size(), 0);
    for (size_t gi = 0; gi < m_g.Groups().size(); ++gi) {
        const NodeGroup& group = m_g.Groups()[gi];
        if (group.kind != NodeGroup::Kind::Transfer) continue;
        bool any = false;
        const int64_t ready = TransferReady(group, m_r, any);
        if (any) m_transferDelay[gi] = m_nodes[group.members[0]].startNs - ready;
    }
}

// Which collective groups the simulator reproduces from their measured arrivals on the network
// before the change (paralens' own traces): those are re-run, not scaled.
void Replayer::Calibrate(const TraceGraph& g)
{
    std::map<std::tuple<int, int, int, uint64_t>, std::shared_ptr<const Plan>> plans;
    const auto devices = g.Source().Devices();
    for (size_t gi = 0; gi < g.Groups().size(); ++gi) {
        const NodeGroup& group = g.Groups()[gi];
        if (group.kind != NodeGroup::Kind::Collective) continue;
        std::optional<CollectiveSpec> spec = CollectiveOfNode(g, group.members[0]);
        if (!spec || spec->bytes == 0) continue;
        spec->ranks = static_cast<int>(group.members.size());
        SimulatedCollective sc;
        sc.byRank = group.members;
        std::stable_sort(sc.byRank.begin(), sc.byRank.end(),
                         [&](uint32_t a, uint32_t b) { return devices[m_nodes[a].device].rank < devices[m_nodes[b].device].rank; });
        auto& plan = plans[{static_cast<int>(spec->collective), static_cast<int>(spec->algorithm), spec->ranks, spec->bytes}];
        try {
            if (!plan) plan = std::make_shared<const Plan>(BuildPlan(*spec));
        } catch (const Error&) {
            continue; // the model has no such plan: scaled instead
        }
        sc.plan = plan;
        std::vector<int64_t> arrivals;
        for (uint32_t m : sc.byRank) arrivals.push_back(m_nodes[m].startNs);
        const std::vector<int64_t> ends = RunCollective(sc, arrivals, *m_before);
        bool same = true;
        for (size_t r = 0; r < ends.size() && same; ++r) same = std::llabs(ends[r] - m_nodes[sc.byRank[r]].endNs) <= kCalibrationNs;
        if (!same) continue;
        m_simulatedOf[gi] = static_cast<int32_t>(m_simulated.size());
        m_simulated.push_back(std::move(sc));
    }
}

void Replayer::FinishNode(uint32_t n)
{
    const int64_t own = m_nodes[n].endNs - m_nodes[n].startNs - m_wait[n];
    int64_t end = m_r.startNs[n] + Scaled(own, m_factor.Of(n));
    if (m_syncDelay[n] != kNoSync) {
        bool any = false;
        end = std::max(end, ReadyOf(n, m_r, true, any) + m_syncDelay[n]);
    }
    m_r.endNs[n] = end;
}

void Replayer::TimeGroup(const NodeGroup& group, size_t index)
{
    if (group.kind == NodeGroup::Kind::Transfer) {
        // A message starts when both ends allow, after the delay it had after the later of the two.
        bool any = false;
        const int64_t ready = TransferReady(group, m_r, any);
        const uint32_t first = group.members[0];
        const int64_t start = any ? ready + m_transferDelay[index] : m_nodes[first].startNs + m_skew[first];
        for (uint32_t m : group.members) {
            m_r.startNs[m] = start;
            m_r.endNs[m] = start + Scaled(m_nodes[m].endNs - m_nodes[m].startNs, m_factor.Of(first));
        }
        return;
    }
    int64_t last = INT64_MIN, lastOrig = INT64_MIN;
    bool scaledByRule = false;
    for (uint32_t m : group.members) {
        m_r.startNs[m] = StartOf(m);
        last = std::max(last, m_r.startNs[m]);
        lastOrig = std::max(lastOrig, m_nodes[m].startNs);
        scaledByRule |= m_factor.scale[m] != 1.0;
    }
    if (const int32_t sim = m_simulatedOf[index]; sim >= 0 && !scaledByRule) {
        const SimulatedCollective& sc = m_simulated[static_cast<size_t>(sim)];
        std::vector<int64_t> arrivals;
        for (uint32_t m : sc.byRank) arrivals.push_back(m_r.startNs[m]);
        const std::vector<int64_t> ends = RunCollective(sc, arrivals, *m_after);
        for (size_t r = 0; r < ends.size(); ++r) m_r.endNs[sc.byRank[r]] = std::max(arrivals[r], ends[r]);
        ++m_r.simulatedCollectives;
        return;
    }
    for (uint32_t m : group.members) {
        const GraphNode& node = m_nodes[m];
        // A rank that waited for the last arrival leaves its transfer time after it; one that
        // finished before (a tree's leaf) keeps its own duration.
        m_r.endNs[m] = node.endNs >= lastOrig ? last + Scaled(node.endNs - lastOrig, m_factor.Of(m))
                                              : m_r.startNs[m] + Scaled(node.endNs - node.startNs, m_factor.Of(m));
        m_r.endNs[m] = std::max(m_r.endNs[m], m_r.startNs[m]);
    }
}

// Kahn's order over units (a node, or a group timed as one), in two phases: a unit starts when
// what binds its start is timed, and ends when what binds its end (the GPU work a blocking call
// waits for) is timed too; an edge from a unit's start (a launch) is released when it starts,
// others when it ends. A cycle (a mismatched collective, a flow against time) is broken by
// taking the earliest waiting unit with what is known.
ReplayResult Replayer::Run()
{
    const size_t n = m_nodes.size(), units = n + m_g.Groups().size();
    std::vector<uint32_t> startIn(units, 0), endIn(units, 0), outBegin(n + 1, 0), out(m_g.Edges().size());
    for (const GraphEdge& e : m_g.Edges()) {
        if (UnitOf(e.from) == UnitOf(e.to)) continue;
        ++(e.BindsEnd() ? endIn : startIn)[UnitOf(e.to)];
        ++outBegin[e.from + 1];
    }
    for (size_t i = 1; i <= n; ++i) outBegin[i] += outBegin[i - 1];
    std::vector<uint32_t> fill(outBegin.begin(), outBegin.end() - 1);
    for (uint32_t i = 0; i < m_g.Edges().size(); ++i)
        if (const GraphEdge& e = m_g.Edges()[i]; UnitOf(e.from) != UnitOf(e.to)) out[fill[e.from]++] = i;
    enum State : uint8_t { kWaiting, kStarted, kDone, kAbsent };
    std::vector<State> state(units, kAbsent);
    for (uint32_t i = 0; i < n; ++i) state[UnitOf(i)] = kWaiting;
    size_t remaining = 0;
    for (State st : state) remaining += st == kWaiting;
    std::vector<uint32_t> startable, finishable;
    for (uint32_t u = 0; u < units; ++u)
        if (state[u] == kWaiting && startIn[u] == 0) startable.push_back(u);
    auto release = [&](uint32_t u, bool fromStart) {
        uint32_t single = 0;
        for (uint32_t m : Members(u, single))
            for (uint32_t k = outBegin[m]; k < outBegin[m + 1]; ++k) {
                const GraphEdge& e = m_g.Edges()[out[k]];
                if (e.fromStart != fromStart) continue;
                const uint32_t to = UnitOf(e.to);
                if (e.BindsEnd()) {
                    if (--endIn[to] == 0 && state[to] == kStarted) finishable.push_back(to);
                } else if (--startIn[to] == 0 && state[to] == kWaiting) {
                    startable.push_back(to);
                }
            }
    };
    auto finish = [&](uint32_t u) {
        Finish(u);
        state[u] = kDone;
        --remaining;
        release(u, false);
    };
    auto start = [&](uint32_t u) {
        Start(u);
        state[u] = kStarted;
        release(u, true);
        if (endIn[u] == 0) finish(u);
    };
    while (remaining > 0) {
        while (!startable.empty() || !finishable.empty()) {
            const bool fin = !finishable.empty();
            const uint32_t u = fin ? finishable.back() : startable.back();
            (fin ? finishable : startable).pop_back();
            if (fin && state[u] == kStarted) finish(u);
            else if (!fin && state[u] == kWaiting) start(u);
        }
        if (remaining == 0) break;
        uint32_t earliest = kNoUnit;
        int64_t earliestStart = INT64_MAX;
        for (uint32_t u = 0; u < units; ++u) {
            if (state[u] != kWaiting && state[u] != kStarted) continue;
            uint32_t single = 0;
            const int64_t t = m_nodes[Members(u, single)[0]].startNs;
            if (t < earliestStart) { earliestStart = t; earliest = u; }
        }
        ++m_r.cyclesBroken;
        if (state[earliest] == kWaiting) start(earliest);
        else finish(earliest);
    }
    return std::move(m_r);
}

} // namespace

ReplayResult Replay(const TraceGraph& graph, const WhatIfChanges& changes) { return Replayer(graph, changes).Run(); }

} // namespace paralens::core
