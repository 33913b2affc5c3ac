// The Auto-parallel tab: the lectures' picture of intra-op parallelism for the selected
// auto-parallel run (or the snapshot's first). On the left the op graph, each op a node coloured
// by the layout of its output with the lectures' legend (replicated grey, row-partitioned blue,
// column-partitioned red, another dimension purple; partial sums hatched and marked P; on a 2-D
// mesh the left half is the slow axis, the right half the fast one), each edge labelled with its
// re-partition collectives and their cost. On the right the strategies side by side, each bar its
// cost breakdown (compute, intra-op partial sums, re-partitioning, gradient sync), and the
// inter-op pipeline's stages, with its bubbles, when it was searched. The controls' sliders
// re-solve; the timeline shows the chosen strategy simulated. GUI thread only.
#pragma once

#include "RunResult.hpp"

#include <imgui.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paralens::app {

class AutoparView {
public:
    void SetSnapshot(std::shared_ptr<const Snapshot> snapshot);
    void Draw(ViewSettings& settings, ImVec2 size);
    nlohmann::json Layout() const;

private:
    struct Node {
        int op = -1;
        int column = 0, row = 0;
        std::string title, strategy, layout;
        std::string detail;     // the third line: "-> S1  1.02 ms" (the layout alone for a terminal)
        int8_t axis[2]{-1, -1}; // the output's layout per mesh axis (kReplicated, kPartial or a dim)
        int dims = 0;
        double seconds = 0.0;   // the op's node cost
    };
    struct Edge {
        int from = -1, to = -1; // node indices
        std::string label;      // "allgather 211 us" ("" when free)
        double seconds = 0.0;
    };
    struct Bar {
        std::string name;
        double total = 0.0;
        double parts[4]{};      // compute, partial sums, re-partition, gradient sync
        bool optimal = false, shown = false;
    };
    void Prepare(const RunResult& run);
    void AddTerminals(const RunResult& run, const std::vector<int>& nodeOf);
    void DrawGraph(ImVec2 min, ImVec2 max);
    void DrawBars(ImVec2 min, ImVec2 max);
    void DrawPipeline(ImVec2 min, ImVec2 max);
    void DrawLegend(ImVec2 at);
    const RunResult* Chosen(const ViewSettings& settings) const;

    std::shared_ptr<const Snapshot> m_snapshot;
    const RunResult* m_prepared = nullptr;
    std::string m_header, m_graphNote;
    std::vector<Node> m_nodes;
    std::vector<Edge> m_edges;
    std::vector<Bar> m_bars;
    int m_columns = 0, m_rows = 0;
    bool m_twoAxes = false;
    // The last frame's node rectangles (x, y, w, h) for Layout().
    std::vector<ImVec4> m_nodeRects;
    std::vector<ImVec4> m_barRects;
};

} // namespace paralens::app
