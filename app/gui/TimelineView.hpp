// The per-device Gantt timeline. Runs are grouped into sections (simulated collectives, simulated
// pipelines, each opened file) that share a time axis, since their time scales differ by orders
// of magnitude; each section has its own ruler, zoom and pan. One row per device, expandable into
// its lanes (one per track and overlap depth); bubbles (the device's idle intervals in the
// analysis window) hatched in grey with the idle % in the row header; messages as arrows; the
// model's predicted durations as outlines under the spans; optionally each step's critical path
// outlined, with links between its ops. Narrow spans fold (TimelineFold.hpp),
// so the cost of a frame follows the pixels on screen.
//
// Input: wheel zooms around the cursor, left drag pans (both axes), right drag (or Shift + left
// drag) measures a range, double-click fits a span (or everything, on empty space); arrows and
// W/A/S/D pan and zoom, Home fits. GUI thread only; no allocation per frame once the buffers
// have grown.
#pragma once

#include "RunResult.hpp"
#include "TimeAxis.hpp"

#include <imgui.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace paralens::app {

struct Theme;

class TimelineView {
public:
    // Takes the runs to draw; keeps the zoom of sections whose runs did not change kind.
    void SetSnapshot(std::shared_ptr<const Snapshot> snapshot, const ViewSettings& settings);
    // Draws into the current window, `size` pixels from the cursor.
    void Draw(ViewSettings& settings, ImVec2 size);
    void FitAll();
    // Shows [beginNs, endNs) (relative to each run's start) in every section.
    void SetWindow(double beginNs, double endNs);
    void ExpandAll(bool expand);
    // Where the last frame put things, in window pixels (for `paralens render --json` and tests).
    nlohmann::json Layout() const;

private:
    enum class RowKind : uint8_t { Run, Device, Lane };
    struct Row {
        RowKind kind = RowKind::Device;
        uint16_t run = 0;
        uint32_t device = 0;
        uint32_t track = core::kNoTrack; // Lane rows; Device rows draw every lane in sub-bands
        uint16_t depth = 0;
        uint16_t lanes = 1;              // Device rows: how many lanes the sub-bands show
        float y = 0, h = 0;              // in the section, from its top (pixels)
        float screenY = 0;               // last frame
    };
    struct RunCache {
        int64_t beginNs = 0;
        int64_t maxFlowNs = 0;            // longest message: how far back to look for visible arrows
        std::vector<int> trackRow;        // row index showing each track's depth-0 lane
        std::vector<float> trackBand;     // sub-band of that row (0 when the row is the lane itself)
        std::vector<uint8_t> expanded;    // per device
        std::vector<uint16_t> depths;     // per track: lanes to show = 1 + the deepest level with a
                                          // span that lasts (0: none; a free reduction's zero-length
                                          // spans get no lane)
        bool pipeline = false;            // F/B/W ops with model chunks (labels "F3:1", chunk band)
    };
    struct Section {
        std::vector<uint16_t> runs;
        std::vector<Row> rows;
        TimeWindow window;
        double extentNs = 1.0;
        bool fit = true;
        float height = 0;                 // ruler + rows, last layout
        float screenTop = 0;
        float plotX0 = 0, plotX1 = 0;     // last frame
        float noteX0 = 0, noteY0 = -1, noteX1 = 0, noteY1 = 0; // "N messages in view: ..." last frame (noteY0 < 0: none)
    };
    struct Hover {
        bool any = false;
        bool fold = false;
        uint16_t run = 0;
        uint32_t track = 0;
        core::Span span;
        int64_t foldBeginNs = 0, foldEndNs = 0;
        size_t foldCount = 0;
    };
    struct DrawContext;

    void BuildRows();
    void LayoutRows(float rowH, float laneH, float runH, float rulerH);
    void HandleInput(Section& s, ViewSettings& settings, const ImVec2& plotMin, const ImVec2& plotMax);
    void HandleKeys(Section& s);
    void DrawSection(Section& s, DrawContext& dc);
    void DrawRuler(const Section& s, DrawContext& dc, float y);
    void DrawRowHeader(const Section& s, const Row& row, DrawContext& dc, float y);
    void DrawDeviceRow(const Section& s, const Row& row, DrawContext& dc, float y);
    void DrawLane(const Section& s, uint16_t run, uint32_t track, int depth, float y0, float y1, DrawContext& dc);
    void DrawBubbles(const Section& s, uint16_t run, uint32_t device, float y0, float y1, DrawContext& dc);
    void DrawFlows(Section& s, DrawContext& dc);
    void DrawMeasure(const Section& s, DrawContext& dc);
    void DrawCriticalPath(const Section& s, DrawContext& dc); // TimelineCritical.cpp
    // The screen band [y0, y1] of a track's lane at `depth` in this frame's layout (false: not shown).
    bool LaneBand(const Section& s, uint16_t run, uint32_t track, int depth, float& y0, float& y1) const;
    void DrawTooltip(const DrawContext& dc) const;
    double XToNs(const Section& s, float x) const;
    float NsToX(const Section& s, double relNs) const;

    std::shared_ptr<const Snapshot> m_snapshot;
    std::vector<RunCache> m_cache;
    std::vector<Section> m_sections;
    std::vector<Tick> m_ticks;
    Hover m_hover;      // this frame's, for the tooltip
    Hover m_lastHover;  // the last frame's, for clicks
    int m_criticalSegments = 0; // outlined in the last frame
    bool m_expandDefault = true;
    bool m_rowsDirty = true;
    float m_headerW = 0;
    // Interaction state.
    int m_dragSection = -1;
    bool m_measuring = false;
    int m_measureSection = -1;
    double m_measureA = 0, m_measureB = 0;
    int m_keySection = 0;
    float m_scrollY = 0;
    float m_contentH = 0;
    ImVec2 m_origin{0, 0};
    ImVec2 m_size{0, 0};
};

} // namespace paralens::app
