// Small plots drawn with ImDrawList (Debian has no ImPlot): linear or log axes with nice ticks and
// labels, clipped polylines, markers, a legend and a hover crosshair. Used by the model and MFU
// views. GUI thread only; no allocation per frame (labels go through fixed buffers).
#pragma once

#include <imgui.h>

namespace paralens::app {

enum class AxisUnit { Bytes, Seconds, GBps, Fraction, Plain, Count }; // Count: powers of two on a log axis

struct PlotAxis {
    double min = 1.0;
    double max = 10.0;
    bool log = false;
    AxisUnit unit = AxisUnit::Plain;
};

struct PlotFrame {
    ImVec2 min{0, 0}; // the data area, inside the axes
    ImVec2 max{0, 0};
    PlotAxis x, y;

    float ToX(double v) const;
    float ToY(double v) const;
    double FromX(float px) const;
    bool Contains(ImVec2 p) const { return p.x >= min.x && p.x <= max.x && p.y >= min.y && p.y <= max.y; }
};

// Draws the axes, the grid and the tick labels inside [outerMin, outerMax] and returns the data
// area. `title` is drawn above the data area (may be null).
PlotFrame DrawPlotFrame(ImDrawList* dl, ImVec2 outerMin, ImVec2 outerMax, const PlotAxis& x, const PlotAxis& y,
                        const char* xLabel, const char* yLabel, const char* title);

// A polyline through (xs[i], ys[i]); points outside a log axis's domain are skipped. Clipped to
// the data area.
void PlotLine(ImDrawList* dl, const PlotFrame& f, const double* xs, const double* ys, int n, ImU32 color,
              float thickness);
void PlotMarker(ImDrawList* dl, const PlotFrame& f, double x, double y, ImU32 color, float radius, bool filled);
void PlotVLine(ImDrawList* dl, const PlotFrame& f, double x, ImU32 color, float thickness, bool dashed);
void PlotHLine(ImDrawList* dl, const PlotFrame& f, double y, ImU32 color, float thickness, bool dashed);

// Legend entries drawn as colour swatches and text in a box at the top-left of the data area.
void DrawLegend(ImDrawList* dl, const PlotFrame& f, const char* const* labels, const ImU32* colors, int n);

// A cost formula of core/model with its single-letter symbols as Greek letters:
// "2(p-1) a + (p-1)/p n (2b + g)" -> "2(p-1) α + (p-1)/p n (2β + γ)". Writes into buf.
char* GreekFormula(char* buf, int size, const char* formula);

// A value with its axis unit: "64 KiB", "1.24 ms", "37.5 GB/s", "42%".
char* FormatValue(char* buf, int size, double v, AxisUnit unit);

} // namespace paralens::app
