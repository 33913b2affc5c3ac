// The model view: for the chosen collective and p, time against message size on log-log axes,
// one curve per algorithm from core/model, the simulated points, the current run highlighted,
// the ring/tree crossover marked; beneath it busbw against size; on the side the formulas and
// alpha and beta fitted to the points. Measurements (an nccl-tests log, a trace's collectives) add
// their regimes: the segmented fit's curve, the sizes where NCCL switches dashed, each range's
// likely protocol, alpha and bandwidth on the side. Hovering reads every curve out at the cursor's size.
// For a pipeline, the bubble fraction against the number of micro-batches: the lectures' formula
// and the simulator, every pipeline of the snapshot together.
// Reads ModelData / PipelineModelData computed on the worker. GUI thread only.
#pragma once

#include "RunResult.hpp"

#include <imgui.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace paralens::app {

class ModelView {
public:
    void SetSnapshot(std::shared_ptr<const Snapshot> snapshot);
    void Draw(ViewSettings& settings, ImVec2 size);
    nlohmann::json Layout() const;

private:
    void DrawSidebar(const RunResult& run, const ModelData& m, ImVec2 min, ImVec2 max);
    void DrawTimePlot(const ModelData& m, ImVec2 min, ImVec2 max);
    void DrawBusBwPlot(const ModelData& m, ImVec2 min, ImVec2 max);
    void DrawRegimes(const ModelData& m);
    void DrawProtocols(const ModelData& m);
    void DrawTwoLevel(const ModelData& m);
    void DrawPipelinePlot(const RunResult& chosen, ImVec2 min, ImVec2 max);
    void DrawPipelineSidebar(const RunResult& chosen);
    void DrawChoice(ViewSettings& settings, const RunResult* chosen);
    const RunResult* Chosen(const ViewSettings& settings) const;

    std::shared_ptr<const Snapshot> m_snapshot;
    std::vector<double> m_busbw; // reused per curve
    float m_hoverX = -1;         // the size under the cursor, shared by both plots (pixels)
    double m_hoverBytes = 0;
    const ModelData* m_lastData = nullptr;
    const PipelineModelData* m_lastPipeline = nullptr;
};

} // namespace paralens::app
