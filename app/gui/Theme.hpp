// Colours, fonts and sizes of the window: light and dark themes, a presentation mode (large
// fonts, high contrast, thick lines) and the palettes shared by the views (span categories,
// micro-batches and blocks, bubbles). One Theme is current; views read it through Current().
// GUI thread only.
#pragma once

#include "AppState.hpp"

#include "trace/Trace.hpp"

#include <imgui.h>

namespace paralens::app {

inline constexpr int kPaletteSize = 12;

struct Theme {
    bool dark = false;
    bool presentation = false;
    float dpiScale = 1.0f;
    float scale = 1.0f;     // dpiScale x (presentation ? 1.45 : 1)
    float line = 1.0f;      // line thickness in pixels
    ImFont* body = nullptr;
    ImFont* bold = nullptr;

    ImU32 background, panel, text, textDim, textOnDark, textOnLight, grid, gridMajor, rowAlt, rowHeader;
    ImU32 bubbleFill, bubbleHatch; // neutral greys: nothing else in the timeline is neutral grey
    ImU32 fold, selection, accent, warning, predicted, arrow;
    ImU32 critical; // the critical path's outline and links (a hue no category uses)
    ImU32 nodeFill, nodeBorder, edge, cellEmpty, cellBorder;
    ImU32 category[core::kSpanCategoryCount];
    ImU32 palette[kPaletteSize]; // micro-batches and blocks (no greys)

    // The fill of a span: by category, or by micro-batch (falling back to its block, then its
    // category) with forward light, backward full and weight-gradient dark.
    ImU32 SpanFill(const core::Span& s, ColorMode mode) const;
    ImU32 Block(int block) const { return palette[((block % kPaletteSize) + kPaletteSize) % kPaletteSize]; }
    // Black or white, whichever reads better on `fill`.
    ImU32 TextOn(ImU32 fill) const;
    float Px(float logicalPixels) const { return logicalPixels * scale; }
    // The fonts, or ImGui's current one before LoadFonts ran.
    ImFont* Body() const { return body ? body : ImGui::GetFont(); }
    ImFont* Bold() const { return bold ? bold : ImGui::GetFont(); }
};

const Theme& CurrentTheme();
// Sets the ImGui style and the current Theme. Fonts must have been loaded (LoadFonts).
void ApplyTheme(bool dark, bool presentation, float dpiScale);
// Builds the font atlas: DejaVu Sans at the normal and the presentation size, compiled in
// (EmbeddedFonts.hpp) or else from the system (fonts-dejavu), or ImGui's built-in font when
// neither is there. Call before the renderer
// creates its font texture (or recreate it afterwards). Returns false when it fell back.
bool LoadFonts(float dpiScale);
// What LoadFonts loaded: "DejaVu Sans, compiled in", "DejaVu Sans, /usr/share/...ttf" or ImGui's own.
const std::string& LoadedFontSource();

// Colour helpers.
ImU32 Mix(ImU32 a, ImU32 b, float t); // t = 0: a, 1: b (alpha mixed too)
ImU32 WithAlpha(ImU32 c, float alpha);

} // namespace paralens::app
