#include "sim/WhatIf.hpp"

#include "analysis/TraceReport.hpp"

namespace paralens::core {

namespace {

RunFigures Figures(const Trace& t)
{
    const TraceReport r = AnalyzeTrace(t);
    RunFigures f;
    f.idleFraction = r.idleFraction;
    double sum = 0;
    size_t count = 0;
    for (const DeviceReport& d : r.devices)
        if (d.mfu) { sum += *d.mfu; ++count; }
    if (count > 0) f.mfu = sum / static_cast<double>(count);
    return f;
}

} // namespace

WhatIfAnalysis AnalyzeWhatIf(const Trace& trace, const WhatIfChanges& changes, bool buildTrace)
{
    const TraceGraph graph(trace);
    const TraceSteps steps = FindSteps(graph);
    WhatIfAnalysis a;
    a.title = trace.Meta().title;
    a.nodes = graph.Nodes().size();
    a.edges = graph.Edges().size();
    for (int k = 0; k < kEdgeKindCount; ++k) a.edgesByKind[k] = graph.CountOf(static_cast<EdgeKind>(k));
    for (const NodeGroup& g : graph.Groups()) (g.kind == NodeGroup::Kind::Transfer ? a.transfers : a.collectives) += 1;
    a.unresolvedFlows = graph.UnresolvedFlows();
    a.unresolvedDependencies = graph.UnresolvedDependencies();
    a.changed = !changes.Empty();
    a.measured = CriticalPaths(graph, steps, MeasuredTimes(graph));
    const ReplayResult replay = Replay(graph, changes);
    a.changedNodes = replay.changedNodes;
    a.cyclesBroken = replay.cyclesBroken;
    a.simulatedCollectives = replay.simulatedCollectives;
    a.replayed = CriticalPaths(graph, steps, replay);
    a.measuredFigures = Figures(trace);
    if (buildTrace || a.changed) {
        auto retimed = std::make_shared<Trace>(RetimedTrace(graph, replay, "what-if: " + trace.Meta().title));
        a.replayedFigures = Figures(*retimed);
        if (buildTrace) a.replayedTrace = std::move(retimed);
    } else {
        a.replayedFigures = a.measuredFigures;
    }
    return a;
}

} // namespace paralens::core
