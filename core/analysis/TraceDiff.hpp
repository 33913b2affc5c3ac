// Two runs compared: their ops aligned by step, rank, device and name (the i-th
// "ncclKernel_AllReduce" on the first rank's GPU in the first profiler step of one with the i-th
// of the other). Steps, ranks and GPUs pair by their order in each run, since step numbers,
// ranks of single-rank traces and GPU indices differ from run to run; threads and streams are
// not part of the key, their ids do too. Then summed per op name and per category, the largest
// regressions first. Ops are the dependency graph's nodes
// (TraceGraph.hpp): leaf spans, without annotations. Pure function of two immutable Traces.
#pragma once

#include "analysis/CriticalPath.hpp"
#include "trace/Trace.hpp"

#include <array>
#include <string>
#include <vector>

namespace paralens::core {

struct OpDelta {
    std::string name;
    PathCategory category = PathCategory::Compute;
    size_t countA = 0, countB = 0;
    int64_t totalNsA = 0, totalNsB = 0;
    int64_t DeltaNs() const { return totalNsB - totalNsA; }
};

struct StepDelta {
    std::string label; // "ProfilerStep#12", or "ProfilerStep#12 / ProfilerStep#40" when they differ
    int64_t durationNsA = 0, durationNsB = 0; // -1: the step is missing from that run
};

struct TraceDiffResult {
    std::vector<OpDelta> ops;                 // per (name, category) that differs: regressions (B slower), then improvements, each the largest first
    std::array<int64_t, kPathCategoryCount> categoryNsA{}, categoryNsB{};
    std::vector<StepDelta> steps;
    size_t matched = 0, onlyA = 0, onlyB = 0; // ops paired, and ops of one run without a partner
    size_t durationChanged = 0;               // paired ops whose duration differs
    int64_t minShiftNs = 0, medianShiftNs = 0, maxShiftNs = 0; // start(B) - start(A) over paired ops
    // The same, each start taken from its run's beginning (runs recorded on different days).
    int64_t minRelativeShiftNs = 0, medianRelativeShiftNs = 0, maxRelativeShiftNs = 0;
    bool Empty() const { return ops.empty() && onlyA == 0 && onlyB == 0 && durationChanged == 0 && minShiftNs == 0 && maxShiftNs == 0; }
};

TraceDiffResult DiffTraces(const Trace& a, const Trace& b);

} // namespace paralens::core
