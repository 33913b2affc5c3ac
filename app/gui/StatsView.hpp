// The stats view: per run, the headline numbers (simulated vs predicted time, algbw/busbw, bubble
// fraction vs formula) and a table per device of busy, idle, compute, communication, their
// overlap and the exposed communication (core/analysis/DeviceUsage: interval unions), with the
// peak activations held per pipeline stage next to the lectures' figure; for traces and training
// steps the collectives matched across ranks (core/analysis/TraceReport: busbw, skew, slowest rank);
// each step's critical path broken down by category with its longest ops; a what-if's step times
// against the measured ones; and runs compared op by op (the largest regressions first).
// Large tables are clipped to the visible rows. GUI thread only.
#pragma once

#include "RunResult.hpp"

#include <imgui.h>
#include <memory>

namespace paralens::app {

class StatsView {
public:
    void SetSnapshot(std::shared_ptr<const Snapshot> snapshot) { m_snapshot = std::move(snapshot); }
    void Draw(ViewSettings& settings, ImVec2 size);

private:
    void DrawRun(const RunResult& run, size_t index);
    void DrawCollectives(const core::TraceReport& report);
    void DrawCritical(const RunResult& run); // StatsPaths.cpp
    void DrawWhatIf(const RunResult& run);
    void DrawComparisons();

    std::shared_ptr<const Snapshot> m_snapshot;
};

} // namespace paralens::app
