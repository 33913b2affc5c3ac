// The Planner tab: the training-configuration planner's answer for the selected plan experiment
// (or the snapshot's first). At the top the model and cluster; on the left the ranked table (the
// row the timeline shows simulated is highlighted); on the right that row's explanation bar (where
// the step goes: compute, exposed TP/EP communication, pipeline bubble, stage-to-stage sends,
// exposed DP gradient sync, optimizer), its compute opened up beneath (GEMMs, attention, memory-
// bound ops, recomputation) and its memory per GPU (weights, gradients, optimizer
// states, activations) against the usable HBM, and below them every fitting configuration as a
// point of step time against memory with the Pareto front drawn through. The controls' sliders
// re-rank at once. Texts are made once per run (Prepare), not per frame. GUI thread only.
#pragma once

#include "RunResult.hpp"

#include <array>
#include <cstdint>
#include <imgui.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paralens::app {

class PlannerView {
public:
    void SetSnapshot(std::shared_ptr<const Snapshot> snapshot);
    void Draw(ViewSettings& settings, ImVec2 size);
    nlohmann::json Layout() const;

private:
    static constexpr int kColumns = 11;
    struct Segment {
        const char* label = "";
        double value = 0.0;
        ImVec4 rect{}; // the last frame's (x, y, w, h)
    };
    void Prepare(const RunResult& run);
    void PrepareTable(const RunResult& run); // m_cells and m_rowOf
    const RunResult* Chosen(const ViewSettings& settings) const;
    void DrawTable(const RunResult& run, ImVec2 min, ImVec2 max);
    float DrawBar(const std::string& title, std::array<Segment, 6>& parts, size_t count, const ImU32* colors, double total,
                  ImVec2 at, float width, float titleWidth);
    void DrawPareto(const RunResult& run, ImVec2 min, ImVec2 max);
    void DrawPublishedStep(const RunResult& run, double tMin, double tMax, ImVec2 p0, ImVec2 p1);

    std::shared_ptr<const Snapshot> m_snapshot;
    const RunResult* m_prepared = nullptr;
    std::string m_header, m_stepTitle, m_computeTitle, m_memoryTitle;
    std::string m_laidOut; // the shown row laid out to balance its output layer, where faster; empty: none
    std::vector<std::array<std::string, kColumns>> m_cells; // the table's rows
    std::vector<size_t> m_rowOf;                            // each one's index in the plan's rows
    std::array<Segment, 6> m_step{};
    std::array<Segment, 6> m_compute{}; // the step's compute by what it runs
    std::array<Segment, 6> m_memory{};
    std::vector<ImVec2> m_front; // the last frame's Pareto points
    std::vector<uint8_t> m_dotCells; // the scatter's occupied cells, reused frame to frame
    bool m_drawn = false;
    float m_publishedY = -1;       // the last frame's published-step line (-1: none)
    bool m_scrollToShown = false; // a new plan: its shown row scrolled into the table's view once
};

} // namespace paralens::app
