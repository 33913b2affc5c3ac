// What TimelineView's drawing functions share within one frame. Private to TimelineView*.cpp.
#pragma once

#include "AppState.hpp"
#include "TimelineView.hpp"

#include "analysis/SpanPrediction.hpp"

#include <cmath>
#include <imgui.h>

namespace paralens::app {

// A span's predicted duration with alpha and beta fitted to its run (the model, core's), or the
// one the trace holds when the model says nothing about this span.
inline int64_t PredictedNs(const core::Span& s, const core::Metadata& meta, const core::CostParams* fit)
{
    const double seconds = core::PredictSpanSeconds(s, meta, *fit);
    return seconds >= 0 ? static_cast<int64_t>(std::llround(seconds * 1e9)) : s.predictedNs;
}

// A line from a to b with a filled head at b (`head` pixels long); nothing under a pixel long.
inline void Arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float head)
{
    const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
    if (len < 1.0f) return;
    const float ux = dx / len, uy = dy / len;
    const ImVec2 base(b.x - ux * head, b.y - uy * head);
    dl->AddLine(a, base, color, thickness);
    dl->AddTriangleFilled(b, ImVec2(base.x - uy * head * 0.45f, base.y + ux * head * 0.45f),
                          ImVec2(base.x + uy * head * 0.45f, base.y - ux * head * 0.45f), color);
}

struct TimelineView::DrawContext {
    ImDrawList* dl;
    const Theme& theme;
    const ViewSettings& settings;
    ImVec2 mouse{0, 0};
    bool hovered = false;
    float clipY0 = 0, clipY1 = 0; // visible rows (screen)
    int arrows = 0;               // drawn this frame
    int hiddenArrows = 0;         // not drawn: too many in view
    int criticalSegments = 0;     // critical-path ops outlined this frame
    char text[160] = {};
};

} // namespace paralens::app
