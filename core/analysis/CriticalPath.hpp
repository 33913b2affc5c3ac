// Steps of a trace and the critical path of each: the chain of ops, across ranks, whose times
// add up to the step's time (TraceGraph.hpp says what depends on what).
//
// Steps: a host thread's "ProfilerStep#N" annotations split a PyTorch profiler trace (host ops by
// their start, GPU ops by their launch's step, or by their start when no launch is known; the
// same N on every rank is one step). A data-parallel or parameter-server training step of
// paralens (simulated or measured) is split into its iterations (the ops' Span::step). Any other
// trace (a collective, a pipeline, a Chrome trace) is one step. A step's time runs from its first
// node's start to its last node's end.
//
// The path is walked back from the step's last end: a node's own time; then what it waited for
// (the dependency whose ready time was latest), the gap between them counted as a launch delay
// (after a launch), host time (on a host thread) or idle; a collective is left at its last
// arrival, on whichever rank that was. The walk stops at the step's first node, or where it
// reaches the previous step (counted as "previous step").
#pragma once

#include "analysis/TraceGraph.hpp"

#include <array>
#include <string>
#include <vector>

namespace paralens::core {

enum class PathCategory : uint8_t { Compute, Communication, Memcpy, Cpu, Launch, Idle, PreviousStep };
inline constexpr int kPathCategoryCount = 7;
std::string_view Name(PathCategory c);

struct TraceSteps {
    struct Step {
        std::string label; // "ProfilerStep#551", or "whole trace"
    };
    std::vector<Step> steps;
    std::vector<int32_t> stepOf; // per node; -1: outside every step
};

TraceSteps FindSteps(const TraceGraph& graph);

struct PathSegment {
    uint32_t node = UINT32_MAX; // the op, or UINT32_MAX for a gap
    uint32_t track = kNoTrack;  // the op's span: Tracks()[track].spans[span]
    uint32_t span = 0;
    uint32_t device = 0;
    int64_t startNs = 0, endNs = 0;
    PathCategory category = PathCategory::Idle;
};

struct StepPath {
    int32_t step = 0;
    std::string label;
    int64_t startNs = 0, endNs = 0;          // the step's first start and last end
    std::vector<PathSegment> segments;        // in time order; their lengths add up to the step's time
    std::array<int64_t, kPathCategoryCount> byCategory{};
    size_t rankCrossings = 0;                 // times the path moves from one rank to another
    std::vector<int64_t> waitNsByDevice;      // per device: time in collectives before the last rank arrived
    int64_t DurationNs() const { return endNs - startNs; }
};

// What an op of the graph counts as: host ops are cpu; device ops compute, communication or memcpy.
PathCategory OpCategory(const TraceGraph& graph, uint32_t node);

// What a segment is, for tables: the op's name (with its micro-batch and chunk when it has them:
// "B 3", "F 2:1"), or what the gap was ("(host thread between traced ops)", "(idle)").
std::string SegmentName(const Trace& trace, const PathSegment& segment);

// One path per step, with `times` the graph's measured times (MeasuredTimes) or a replay's.
std::vector<StepPath> CriticalPaths(const TraceGraph& graph, const TraceSteps& steps, const NodeTimes& times);

} // namespace paralens::core
