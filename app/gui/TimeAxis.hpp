// The timeline's visible window and its ruler, without ImGui: zoom around a point, pan, fit,
// and "nice" tick steps (1, 2, 5 x 10^k ns) with labels in the unit that suits the step.
// Times are nanoseconds relative to the start of each run (so runs compare side by side).
// Plain value types; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace paralens::app {

struct TimeWindow {
    double beginNs = 0.0;
    double endNs = 1.0;

    double Span() const { return endNs - beginNs; }
    // Scales the window by `factor` (< 1 zooms in) keeping `anchorNs` at the same place on screen;
    // the span stays within [minSpanNs, maxSpanNs].
    void ZoomAround(double anchorNs, double factor, double minSpanNs, double maxSpanNs);
    void Pan(double deltaNs);
    // [beginNs, endNs] with `margin` of its span on both sides (at least `minSpanNs` wide).
    void Fit(double beginNs, double endNs, double margin, double minSpanNs);
    // Keeps the window from drifting far beyond [0, extentNs].
    void Clamp(double extentNs);
};

// The smallest of 1, 2, 5 x 10^k ns that is not below `rawNs`.
double NiceStepNs(double rawNs);

struct Tick {
    double ns = 0.0;
    bool major = false;
};

// Ticks in [beginNs, endNs]: majors at least `minMajorPx` apart for a width of `widthPx` pixels,
// with minor ticks between (5 or 2 per major). `out` is cleared and refilled (no allocation once
// it has grown). Returns the major step in ns.
double ComputeTicks(const TimeWindow& w, double widthPx, double minMajorPx, std::vector<Tick>& out);

// "250 ns", "1.5 us", "12 ms", "2 s": the unit follows `stepNs` so that consecutive labels differ.
// Writes into `buf` (NUL-terminated, truncated to `size`); returns buf.
char* FormatTime(char* buf, size_t size, double ns, double stepNs);
// A duration with 3-4 significant digits in a unit that suits it: "1.234 ms".
char* FormatDuration(char* buf, size_t size, double ns);

} // namespace paralens::app
