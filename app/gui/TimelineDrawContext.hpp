// What TimelineView's drawing functions share within one frame. Private to TimelineView*.cpp.
#pragma once

#include "AppState.hpp"
#include "TimelineView.hpp"

#include <imgui.h>

namespace paralens::app {

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
