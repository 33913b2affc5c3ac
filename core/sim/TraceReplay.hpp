// What-if replay: the trace's dependency graph (analysis/TraceGraph.hpp) re-timed under changes,
// with the simulator's engine for the collectives the model reproduces.
//
// Every node keeps the delay it had after what it waited for (start - latest ready), so a replay
// with no change reproduces the trace exactly; a changed node takes its new duration, and each
// node starts at max(ready of its dependencies) + its delay. A blocking host call keeps the part
// of it that came after the GPU work it waited for ended. A transfer's send and recv move
// together; a collective's ranks each arrive when their dependencies allow and leave their
// transfer time after the last one arrives, so removing a straggler removes the others' wait.
//
// Network changes are priced by the cost model: a message's time is scaled by
// (alpha' + n beta') / (alpha + n beta); a collective whose measured times the simulator
// reproduces from its arrivals (RunPlan of its Plan on the network before the change, to 2 ns:
// paralens' own traces) is run again through RunPlan on the new network from its new arrivals;
// any other collective (a real NCCL kernel) has its time after the last arrival scaled by
// PredictSeconds(after) / PredictSeconds(before) for its collective, algorithm, ranks and bytes.
// So on paralens' own simulated traces a bandwidth change equals simulating again with that
// bandwidth, to the nanosecond rounding of the trace.
//
// Pure functions of an immutable Trace; thread-safe.
#pragma once

#include "analysis/TraceGraph.hpp"
#include "model/CostModel.hpp"

#include <optional>
#include <string>
#include <vector>

namespace paralens::core {

// `pattern` is a category (compute, comm, collective, send, recv, memcpy, memset, forward,
// backward, weight-grad, cpu) or a glob on span names (`*gemm*`, `nccl*`; case-insensitive).
struct ScaleRule {
    std::string pattern;
    double factor = 1.0;
};

struct WhatIfChanges {
    std::vector<ScaleRule> scale;              // every matching rule multiplies a node's time
    std::optional<CostParams> networkBefore;   // with networkAfter: re-price communication
    std::optional<CostParams> networkAfter;
    std::vector<int32_t> removeStragglers;     // ranks whose GPU ops take the other ranks' median time per op name
    std::vector<std::pair<int32_t, int64_t>> skewNs; // rank, extra delay of its first ops
    bool Empty() const { return scale.empty() && !networkAfter && removeStragglers.empty() && skewNs.empty(); }
};

// Parses "PATTERN=FACTOR" (FACTOR > 0); throws Error naming `option` otherwise.
ScaleRule ParseScaleRule(const std::string& text, const std::string& option);
// Parses "RANK:MICROSECONDS"; throws Error naming `option` otherwise.
std::pair<int32_t, int64_t> ParseSkew(const std::string& text, const std::string& option);
// Whether `name` matches the glob (`*` any run, `?` one character), ignoring case.
bool GlobMatch(std::string_view glob, std::string_view name);

// The network a trace says it ran on (the model section paralens' simulations write), if any.
std::optional<CostParams> TraceNetwork(const Trace& trace);

struct ReplayResult : NodeTimes {
    size_t changedNodes = 0;             // nodes whose duration changed
    size_t cyclesBroken = 0;             // units replayed out of order because the graph had a cycle
    size_t simulatedCollectives = 0;     // collectives re-run through the simulator (the rest scaled)
};

// Without changes.networkBefore, a network change (networkAfter) is priced against
// TraceNetwork(graph.Source()); throws Error when there is neither.
ReplayResult Replay(const TraceGraph& graph, const WhatIfChanges& changes);

// The source trace with every span moved to its replayed times (spans that are not nodes, such
// as CPU parents and annotations, move with the nodes inside them); flows and recorded
// dependencies follow their ends; counters are left out (they described the measured run).
Trace RetimedTrace(const TraceGraph& graph, const NodeTimes& replay, const std::string& title);

} // namespace paralens::core
