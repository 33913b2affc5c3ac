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

struct TimelineView::DrawContext {
    ImDrawList* dl;
    const Theme& theme;
    const ViewSettings& settings;
    ImVec2 mouse{0, 0};
    bool hovered = false;
    float clipY0 = 0, clipY1 = 0; // visible rows (screen)
    int arrows = 0;               // drawn this frame
    int hiddenArrows = 0;         // not drawn: too many in view
    char text[160] = {};
};

} // namespace paralens::app
