#include "TimeAxis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace paralens::app {

void TimeWindow::ZoomAround(double anchorNs, double factor, double minSpanNs, double maxSpanNs)
{
    const double span = std::clamp(Span() * factor, minSpanNs, maxSpanNs);
    const double t = Span() > 0 ? (anchorNs - beginNs) / Span() : 0.5;
    beginNs = anchorNs - t * span;
    endNs = beginNs + span;
}

void TimeWindow::Pan(double deltaNs)
{
    beginNs += deltaNs;
    endNs += deltaNs;
}

void TimeWindow::Fit(double b, double e, double margin, double minSpanNs)
{
    double span = std::max(e - b, minSpanNs);
    const double mid = (b + e) / 2;
    span *= 1.0 + 2.0 * margin;
    beginNs = mid - span / 2;
    endNs = mid + span / 2;
}

void TimeWindow::Clamp(double extentNs)
{
    // At least a quarter of the window (or of the data, when it is shorter) keeps showing data.
    const double keep = 0.25 * std::min(Span(), std::max(extentNs, 1.0));
    if (endNs < keep) Pan(keep - endNs);
    if (beginNs > extentNs - keep) Pan(extentNs - keep - beginNs);
}

double NiceStepNs(double rawNs)
{
    if (!(rawNs > 0)) return 1.0;
    const double p = std::pow(10.0, std::floor(std::log10(rawNs)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= rawNs * (1 - 1e-12)) return std::max(1.0, m * p);
    return std::max(1.0, 10.0 * p);
}

double ComputeTicks(const TimeWindow& w, double widthPx, double minMajorPx, std::vector<Tick>& out)
{
    out.clear();
    if (!(widthPx > 0) || !(w.Span() > 0)) return 1.0;
    const double step = NiceStepNs(w.Span() / widthPx * minMajorPx);
    const double lead = std::floor(std::log10(step));
    const double mantissa = step / std::pow(10.0, lead);
    const int minorPerMajor = std::lround(mantissa) == 2 ? 4 : 5;
    const double minor = step / minorPerMajor;
    const double firstMinor = std::ceil(w.beginNs / minor);
    const double lastMinor = std::floor(w.endNs / minor);
    for (double i = firstMinor; i <= lastMinor && out.size() < 4096; i += 1.0) {
        const double ns = i * minor;
        const bool major = std::fmod(std::abs(i), static_cast<double>(minorPerMajor)) < 0.5;
        out.push_back({ns, major});
    }
    return step;
}

namespace {

struct Unit {
    double ns;
    const char* name;
};

Unit UnitFor(double ns)
{
    const double a = std::abs(ns);
    if (a >= 1e9) return {1e9, "s"};
    if (a >= 1e6) return {1e6, "ms"};
    if (a >= 1e3) return {1e3, "\xC2\xB5s"}; // µs
    return {1.0, "ns"};
}

} // namespace

char* FormatTime(char* buf, size_t size, double ns, double stepNs)
{
    // The unit of twice the step: 0.5 ms steps read "1.5 ms", not "1500 us".
    const Unit u = UnitFor(2 * stepNs);
    // Decimals enough to tell steps apart: step 0.5 ms -> 1 decimal, 0.02 ms -> 2.
    const double stepInUnit = stepNs / u.ns;
    int decimals = 0;
    while (decimals < 6 && std::abs(stepInUnit * std::pow(10.0, decimals) - std::round(stepInUnit * std::pow(10.0, decimals))) > 1e-6)
        ++decimals;
    const double v = ns / u.ns;
    std::snprintf(buf, size, "%.*f %s", decimals, std::abs(v) < 1e-12 ? 0.0 : v, u.name);
    return buf;
}

char* FormatDuration(char* buf, size_t size, double ns)
{
    const Unit u = UnitFor(ns);
    const double v = ns / u.ns;
    const int decimals = std::abs(v) >= 100 ? 1 : std::abs(v) >= 10 ? 2 : 3;
    std::snprintf(buf, size, "%.*f %s", u.ns == 1.0 ? 0 : decimals, v, u.name);
    return buf;
}

} // namespace paralens::app
