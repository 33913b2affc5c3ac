#include "PlotUtil.hpp"

#include "Theme.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace paralens::app {

namespace {

// The smallest of 1, 2, 5 x 10^k not below `raw`.
double NiceStep(double raw)
{
    if (!(raw > 0)) return 1.0;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (m * p >= raw) return m * p;
    return 10.0 * p;
}

double Transform(const PlotAxis& a, double v) { return a.log ? std::log10(std::max(v, 1e-300)) : v; }

// Calls fn(value, major) for the ticks of an axis of `pixels` length.
template <class Fn>
void ForEachTick(const PlotAxis& a, float pixels, float minGapPx, Fn fn)
{
    if (a.log && (a.unit == AxisUnit::Bytes || a.unit == AxisUnit::Count)) {
        const double lo = std::log2(a.min), hi = std::log2(a.max);
        const double pxPerOctave = pixels / std::max(hi - lo, 1e-9);
        int stride = 10;
        for (int s : {1, 2, 3, 5, 10})
            if (pxPerOctave * s >= minGapPx) {
                stride = s;
                break;
            }
        for (int k = static_cast<int>(std::ceil(lo)); k <= static_cast<int>(std::floor(hi)); ++k) fn(std::exp2(k), k % stride == 0);
        return;
    }
    if (a.log) {
        const int lo = static_cast<int>(std::floor(std::log10(a.min))), hi = static_cast<int>(std::ceil(std::log10(a.max)));
        const double pxPerDecade = pixels / std::max(std::log10(a.max) - std::log10(a.min), 1e-9);
        const int stride = pxPerDecade >= minGapPx ? 1 : pxPerDecade * 2 >= minGapPx ? 2 : 3;
        for (int k = lo; k <= hi; ++k)
            for (int m = 1; m < 10; ++m) {
                const double v = m * std::pow(10.0, k);
                if (v < a.min * (1 - 1e-9) || v > a.max * (1 + 1e-9)) continue;
                if (m == 1) fn(v, k % stride == 0);
                else if (pxPerDecade > minGapPx * 1.5) fn(v, false);
            }
        return;
    }
    const double step = NiceStep((a.max - a.min) / std::max(pixels, 1.0f) * minGapPx);
    for (double v = std::ceil(a.min / step) * step; v <= a.max + step * 1e-9; v += step) fn(std::abs(v) < step * 1e-9 ? 0.0 : v, true);
}

void DashedLine(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness)
{
    const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
    const float dash = 6.0f * CurrentTheme().scale;
    for (float t = 0; t < len; t += 2 * dash) {
        const float e = std::min(t + dash, len);
        dl->AddLine(ImVec2(a.x + dx * t / len, a.y + dy * t / len), ImVec2(a.x + dx * e / len, a.y + dy * e / len), color, thickness);
    }
}

} // namespace

float PlotFrame::ToX(double v) const
{
    const double a = Transform(x, x.min), b = Transform(x, x.max);
    return static_cast<float>(min.x + (Transform(x, v) - a) / (b - a) * (max.x - min.x));
}

float PlotFrame::ToY(double v) const
{
    const double a = Transform(y, y.min), b = Transform(y, y.max);
    return static_cast<float>(max.y - (Transform(y, v) - a) / (b - a) * (max.y - min.y));
}

double PlotFrame::FromX(float px) const
{
    const double a = Transform(x, x.min), b = Transform(x, x.max);
    const double t = a + (px - min.x) / std::max(1.0f, max.x - min.x) * (b - a);
    return x.log ? std::pow(10.0, t) : t;
}

namespace {

// printf's "%.3g" without its exponent: three significant digits below 1000 ("999"), the whole
// number from there on ("1000", "12000"), where "%.3g" wrote "1e+03".
void Significant(char* buf, size_t n, double v, const char* unit)
{
    if (std::abs(v) >= 999.5) std::snprintf(buf, n, "%.0f%s", v, unit);
    else std::snprintf(buf, n, "%.3g%s", v, unit);
}

} // namespace

char* FormatValue(char* buf, int size, double v, AxisUnit unit)
{
    const auto n = static_cast<size_t>(size);
    switch (unit) {
    case AxisUnit::Bytes:
        if (v >= 1073741824.0) std::snprintf(buf, n, "%g GiB", v / 1073741824.0);
        else if (v >= 1048576.0) std::snprintf(buf, n, "%g MiB", v / 1048576.0);
        else if (v >= 1024.0) std::snprintf(buf, n, "%g KiB", v / 1024.0);
        else std::snprintf(buf, n, "%g B", v);
        return buf;
    case AxisUnit::Seconds: {
        const double a = std::abs(v);
        if (a == 0) std::snprintf(buf, n, "0");
        else if (a >= 1) Significant(buf, n, v, " s");
        else if (a >= 1e-3) Significant(buf, n, v * 1e3, " ms");
        else if (a >= 1e-6) Significant(buf, n, v * 1e6, " \xC2\xB5s");
        else Significant(buf, n, v * 1e9, " ns");
        return buf;
    }
    case AxisUnit::GBps: Significant(buf, n, v, " GB/s"); return buf;
    case AxisUnit::Fraction: std::snprintf(buf, n, "%.0f%%", v * 100); return buf;
    case AxisUnit::Plain:
    case AxisUnit::Count: Significant(buf, n, v, ""); return buf;
    }
    return buf;
}

char* GreekFormula(char* buf, int size, const char* formula)
{
    int n = 0;
    auto put = [&](const char* text) {
        while (*text && n + 1 < size) buf[n++] = *text++;
    };
    auto isLetter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    for (const char* p = formula; *p; ++p) {
        // Only a lone letter is a symbol (so "log" stays "log").
        const bool lone = isLetter(*p) && (p == formula || !isLetter(p[-1])) && !isLetter(p[1]);
        if (lone && *p == 'a') put("\xCE\xB1");
        else if (lone && *p == 'b') put("\xCE\xB2");
        else if (lone && *p == 'g') put("\xCE\xB3");
        else if (n + 1 < size) buf[n++] = *p;
    }
    buf[std::min(n, size - 1)] = '\0';
    return buf;
}

PlotFrame DrawPlotFrame(ImDrawList* dl, ImVec2 outerMin, ImVec2 outerMax, const PlotAxis& x, const PlotAxis& y,
                        const char* xLabel, const char* yLabel, const char* title)
{
    const Theme& th = CurrentTheme();
    const float fontH = ImGui::GetFontSize();
    char buf[48];
    // The y labels' width decides the left margin.
    float labelW = 0;
    ForEachTick(y, outerMax.y - outerMin.y, fontH * 2.2f, [&](double v, bool major) {
        if (major) labelW = std::max(labelW, ImGui::CalcTextSize(FormatValue(buf, sizeof buf, v, y.unit)).x);
    });
    PlotFrame f;
    f.x = x;
    f.y = y;
    f.min = ImVec2(outerMin.x + labelW + fontH * 1.9f, outerMin.y + (title || yLabel ? fontH * 1.6f : fontH * 0.6f));
    f.max = ImVec2(outerMax.x - fontH * 0.8f, outerMax.y - fontH * 2.6f);
    if (f.max.x - f.min.x < 40 || f.max.y - f.min.y < 30) return f;
    dl->AddRectFilled(f.min, f.max, th.background);
    // The y axis's name above its labels, the title beside it.
    const float yLabelW = yLabel ? ImGui::CalcTextSize(yLabel).x + fontH : 0.0f;
    if (title) dl->AddText(th.bold, fontH, ImVec2(std::max(f.min.x, outerMin.x + yLabelW), outerMin.y + fontH * 0.2f), th.text, title);
    ForEachTick(x, f.max.x - f.min.x, fontH * 5.0f, [&](double v, bool major) {
        const float px = std::round(f.ToX(v)) + 0.5f;
        dl->AddLine(ImVec2(px, f.min.y), ImVec2(px, f.max.y), major ? th.gridMajor : th.grid, 1.0f);
        if (!major) return;
        FormatValue(buf, sizeof buf, v, x.unit);
        const float w = ImGui::CalcTextSize(buf).x;
        dl->AddText(ImVec2(std::clamp(px - w / 2, outerMin.x, outerMax.x - w - 2), f.max.y + fontH * 0.25f), th.text, buf);
    });
    ForEachTick(y, f.max.y - f.min.y, fontH * 2.2f, [&](double v, bool major) {
        const float py = std::round(f.ToY(v)) + 0.5f;
        dl->AddLine(ImVec2(f.min.x, py), ImVec2(f.max.x, py), major ? th.gridMajor : th.grid, 1.0f);
        if (!major) return;
        FormatValue(buf, sizeof buf, v, y.unit);
        const ImVec2 s = ImGui::CalcTextSize(buf);
        dl->AddText(ImVec2(f.min.x - s.x - fontH * 0.4f, py - s.y / 2), th.text, buf);
    });
    dl->AddRect(f.min, f.max, th.textDim, 0.0f, 0, th.line);
    if (xLabel) {
        const float w = ImGui::CalcTextSize(xLabel).x;
        dl->AddText(ImVec2((f.min.x + f.max.x - w) / 2, f.max.y + fontH * 1.35f), th.textDim, xLabel);
    }
    if (yLabel) dl->AddText(ImVec2(outerMin.x + fontH * 0.3f, outerMin.y + fontH * 0.2f), th.textDim, yLabel);
    return f;
}

void PlotLine(ImDrawList* dl, const PlotFrame& f, const double* xs, const double* ys, int n, ImU32 color, float thickness)
{
    dl->PushClipRect(f.min, f.max, true);
    ImVec2 prev;
    bool have = false;
    for (int i = 0; i < n; ++i) {
        if ((f.x.log && !(xs[i] > 0)) || (f.y.log && !(ys[i] > 0)) || !std::isfinite(ys[i])) {
            have = false;
            continue;
        }
        const ImVec2 p(f.ToX(xs[i]), f.ToY(ys[i]));
        if (have) dl->AddLine(prev, p, color, thickness);
        prev = p;
        have = true;
    }
    dl->PopClipRect();
}

void PlotMarker(ImDrawList* dl, const PlotFrame& f, double x, double y, ImU32 color, float radius, bool filled)
{
    if ((f.x.log && !(x > 0)) || (f.y.log && !(y > 0))) return;
    const ImVec2 p(f.ToX(x), f.ToY(y));
    if (!f.Contains(p)) return;
    if (filled) dl->AddCircleFilled(p, radius, color, 16);
    else dl->AddCircle(p, radius, color, 16, std::max(1.5f, radius * 0.35f));
}

void PlotVLine(ImDrawList* dl, const PlotFrame& f, double x, ImU32 color, float thickness, bool dashed)
{
    const float px = f.ToX(x);
    if (px < f.min.x || px > f.max.x) return;
    if (dashed) DashedLine(dl, ImVec2(px, f.min.y), ImVec2(px, f.max.y), color, thickness);
    else dl->AddLine(ImVec2(px, f.min.y), ImVec2(px, f.max.y), color, thickness);
}

void PlotHLine(ImDrawList* dl, const PlotFrame& f, double y, ImU32 color, float thickness, bool dashed)
{
    const float py = f.ToY(y);
    if (py < f.min.y || py > f.max.y) return;
    if (dashed) DashedLine(dl, ImVec2(f.min.x, py), ImVec2(f.max.x, py), color, thickness);
    else dl->AddLine(ImVec2(f.min.x, py), ImVec2(f.max.x, py), color, thickness);
}

void DrawLegend(ImDrawList* dl, const PlotFrame& f, const char* const* labels, const ImU32* colors, int n)
{
    const Theme& th = CurrentTheme();
    const float fontH = ImGui::GetFontSize();
    const float lineH = fontH * 1.3f;
    // In a short plot the entries go in one row along the top, so they hide less of the data.
    const bool row = (f.max.y - f.min.y) < n * lineH * 2.5f;
    float w = 0, rowW = 0;
    for (int i = 0; i < n; ++i) {
        const float tw = ImGui::CalcTextSize(labels[i]).x;
        w = std::max(w, tw);
        rowW += tw + fontH * 2.6f;
    }
    const ImVec2 p0 = row ? ImVec2(std::max(f.min.x + fontH * 0.4f, f.max.x - rowW - fontH * 0.6f), f.min.y + fontH * 0.3f)
                          : ImVec2(f.min.x + fontH * 0.6f, f.min.y + fontH * 0.5f);
    const ImVec2 p1 = row ? ImVec2(p0.x + rowW, p0.y + lineH) : ImVec2(p0.x + w + fontH * 2.6f, p0.y + n * lineH + fontH * 0.4f);
    dl->AddRectFilled(p0, p1, WithAlpha(th.background, 0.92f), 4.0f);
    dl->AddRect(p0, p1, th.gridMajor, 4.0f);
    float x = p0.x, y = p0.y + (row ? fontH * 0.15f : fontH * 0.35f);
    for (int i = 0; i < n; ++i) {
        dl->AddRectFilled(ImVec2(x + fontH * 0.4f, y + fontH * 0.35f), ImVec2(x + fontH * 1.6f, y + fontH * 0.65f), colors[i]);
        dl->AddText(ImVec2(x + fontH * 2.0f, y), th.text, labels[i]);
        if (row) x += ImGui::CalcTextSize(labels[i]).x + fontH * 2.6f;
        else y += lineH;
    }
}

} // namespace paralens::app
