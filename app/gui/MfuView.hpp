// The MFU view: per run with FLOPs, gauges of MFU and HFU over the analysis window, the peak FLOPS
// used and where it comes from (spec table or measured), and MFU over time per device and overall
// with the overall HFU beside it. Reads MfuData computed on the worker. GUI thread only.
#pragma once

#include "RunResult.hpp"

#include <imgui.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace paralens::app {

class MfuView {
public:
    void SetSnapshot(std::shared_ptr<const Snapshot> snapshot) { m_snapshot = std::move(snapshot); }
    void Draw(ViewSettings& settings, ImVec2 size);
    nlohmann::json Layout() const;

private:
    void DrawRun(const RunResult& run, ImVec2 min, ImVec2 max);
    void DrawGauge(ImVec2 centre, float radius, double value, const char* label, ImU32 color);

    std::shared_ptr<const Snapshot> m_snapshot;
    std::vector<double> m_xs, m_ys; // reused series buffers
    int m_drawn = 0;
};

} // namespace paralens::app
