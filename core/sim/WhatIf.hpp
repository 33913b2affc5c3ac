// One what-if analysis of a trace, as the command line and the window show it: the dependency
// graph's size, each step's critical path as measured, the replay under the changes (each step's
// time and path again), the replayed trace, and the idle fraction and MFU of both. Pure function
// of an immutable Trace; run it on a worker for big traces.
#pragma once

#include "analysis/CriticalPath.hpp"
#include "sim/TraceReplay.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace paralens::core {

struct RunFigures {
    double idleFraction = 0;
    std::optional<double> mfu; // mean over devices that have one
};

struct WhatIfAnalysis {
    std::string title;
    size_t nodes = 0, edges = 0, transfers = 0, collectives = 0;
    size_t edgesByKind[kEdgeKindCount] = {}; // by EdgeKind
    size_t unresolvedFlows = 0, unresolvedDependencies = 0;
    bool changed = false;                  // changes were asked for
    std::vector<StepPath> measured;        // per step
    std::vector<StepPath> replayed;        // per step, under the changes (no change: the identity replay)
    size_t changedNodes = 0, cyclesBroken = 0, simulatedCollectives = 0;
    RunFigures measuredFigures, replayedFigures;
    std::shared_ptr<const Trace> replayedTrace; // when asked for
};

WhatIfAnalysis AnalyzeWhatIf(const Trace& trace, const WhatIfChanges& changes, bool buildTrace);

} // namespace paralens::core
