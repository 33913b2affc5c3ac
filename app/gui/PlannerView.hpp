// The Planner tab: the training-configuration planner's answer for the selected plan experiment
// (or the snapshot's first). At the top the model and cluster; on the left the ranked table (the
// row the timeline shows simulated is highlighted); on the right that row's explanation bar (where
// the step goes: compute, exposed TP/EP communication, pipeline bubble, stage-to-stage sends,
// exposed DP gradient sync, optimizer) and its memory per GPU (weights, gradients, optimizer
// states, activations) against the usable HBM, and below them every fitting configuration as a
// point of step time against memory with the Pareto front drawn through. The controls' sliders
// re-rank at once. GUI thread only.
#pragma once

#include "RunResult.hpp"

#include <imgui.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace paralens::app {

class PlannerView {
public:
    void SetSnapshot(std::shared_ptr<const Snapshot> snapshot) { m_snapshot = std::move(snapshot); }
    void Draw(ViewSettings& settings, ImVec2 size);
    nlohmann::json Layout() const { return m_layout; }

private:
    const RunResult* Chosen(const ViewSettings& settings) const;
    void DrawTable(const RunResult& run, ImVec2 min, ImVec2 max);
    float DrawStepBar(const RunResult& run, ImVec2 min, float width);
    float DrawMemoryBar(const RunResult& run, ImVec2 min, float width);
    void DrawPareto(const RunResult& run, ImVec2 min, ImVec2 max);

    std::shared_ptr<const Snapshot> m_snapshot;
    nlohmann::json m_layout;
};

} // namespace paralens::app
