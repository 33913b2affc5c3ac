// The flow view: each collective of the snapshot as its ranks (on a ring, a tree, a hypercube or
// a star, as the Plan connects them), the current step's messages as arrows carrying coloured
// chunks, and under each rank a row of cells showing what it holds (which blocks, and how many
// ranks' contributions are summed in each), like the lectures' before/after figures. A step
// slider, play/pause and speed drive all panels; the bottom line explains the focused run's
// current step: its alpha + n beta, the running total and the closed form.
// GUI thread only; everything it draws comes precomputed in RunResult (holdings, layout, steps).
#pragma once

#include "RunResult.hpp"

#include <imgui.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace paralens::app {

struct Theme;

class FlowView {
public:
    // `step`: the step to show after a scenario loads (-1: the last); applied once.
    void SetSnapshot(std::shared_ptr<const Snapshot> snapshot, int step, bool resetStep);
    void Draw(ViewSettings& settings, ImVec2 size);
    bool Animating() const { return m_playing; }
    nlohmann::json Layout() const;

private:
    struct Node {
        ImVec2 centre;
        float radius;
    };
    struct Panel {
        size_t run = 0;
        ImVec2 min, max;
        std::vector<Node> nodes; // last frame
    };
    void DrawPanel(Panel& panel, const RunResult& run, ImVec2 min, ImVec2 max, bool focused);
    // The nodes of a two-level layout as bands under their ranks, named within the area given.
    void DrawNodeBands(const FlowLayout& layout, const std::vector<Node>& nodes, ImVec2 areaMin, ImVec2 areaMax);
    void DrawTransfers(const RunResult& run, const std::vector<Node>& nodes, int step, float phase, float cell);
    void DrawCells(const RunResult& run, const Node& node, int rank, int step, float cell);
    void DrawControls(ImVec2 min, float width, const RunResult* focus);
    void DrawExplanation(const RunResult& run) const;
    int MaxSteps() const;

    std::shared_ptr<const Snapshot> m_snapshot;
    std::vector<Panel> m_panels;
    std::vector<ImVec2> m_bandPoints; // DrawNodeBands' scratch: one node's rank centres
    double m_position = 0.0; // in steps: k = step k shown (its messages arrived); fractions animate
    bool m_playing = false;
    float m_speed = 1.5f;    // steps per second
    size_t m_focus = 0;      // index into m_panels
    int m_pendingStep = -3;  // scenario's step, applied at the next Draw
};

} // namespace paralens::app
