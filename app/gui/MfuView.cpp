#include "MfuView.hpp"

#include "PlotUtil.hpp"
#include "Theme.hpp"
#include "TimeAxis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace paralens::app {

void MfuView::Draw(ViewSettings&, ImVec2 size)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float fontH = ImGui::GetFontSize();
    dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), th.background);
    int count = 0;
    if (m_snapshot)
        for (const auto& r : m_snapshot->runs) count += r->mfu.available ? 1 : 0;
    m_drawn = count;
    if (count == 0) {
        dl->AddText(ImVec2(origin.x + fontH, origin.y + fontH), th.textDim,
                    "No FLOPs here: MFU needs compute spans with FLOPs and a peak. Pipelines get both from the GPU and "
                    "kernel efficiency in the controls.");
        ImGui::Dummy(size);
        return;
    }
    const float rowH = std::floor(size.y / static_cast<float>(count));
    int i = 0;
    for (const auto& r : m_snapshot->runs) {
        if (!r->mfu.available) continue;
        const ImVec2 min(origin.x, origin.y + rowH * static_cast<float>(i));
        DrawRun(*r, min, ImVec2(origin.x + size.x, min.y + rowH));
        ++i;
    }
    ImGui::Dummy(size);
}

void MfuView::DrawGauge(ImVec2 c, float radius, double value, const char* label, ImU32 color)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float thick = std::max(6.0f, radius * 0.22f);
    const float a0 = std::numbers::pi_v<float>, a1 = 2 * std::numbers::pi_v<float>;
    dl->PathArcTo(c, radius, a0, a1, 48);
    dl->PathStroke(th.grid, 0, thick);
    const float v = static_cast<float>(std::clamp(value, 0.0, 1.0));
    if (v > 0) {
        dl->PathArcTo(c, radius, a0, a0 + (a1 - a0) * v, 48);
        dl->PathStroke(color, 0, thick);
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", value * 100);
    const float big = ImGui::GetFontSize() * 1.5f;
    const ImVec2 ts = th.Bold()->CalcTextSizeA(big, 1e9f, 0, text);
    dl->AddText(th.bold, big, ImVec2(c.x - ts.x / 2, c.y - ts.y), th.text, text);
    const ImVec2 ls = ImGui::CalcTextSize(label);
    dl->AddText(ImVec2(c.x - ls.x / 2, c.y + ImGui::GetFontSize() * 0.25f), th.textDim, label);
}

void MfuView::DrawRun(const RunResult& run, ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fontH = ImGui::GetFontSize();
    const MfuData& m = run.mfu;
    const float left = std::clamp((max.x - min.x) * 0.34f, fontH * 18.0f, fontH * 30.0f);
    const float pad = fontH * 0.6f;
    dl->AddLine(ImVec2(min.x, max.y - 0.5f), ImVec2(max.x, max.y - 0.5f), th.grid);
    dl->PushClipRect(min, ImVec2(min.x + left, max.y), true);
    dl->AddText(th.bold, fontH, ImVec2(min.x + pad, min.y + pad), th.text, run.title.c_str());
    // Two gauges side by side, then as many lines of detail as fit.
    const float gaugeTop = min.y + pad + fontH * 1.6f;
    const float avail = std::max(fontH * 3, max.y - gaugeTop - fontH * 3.0f);
    const float radius = std::clamp(std::min((left - 3 * pad) / 4.8f, avail * 0.75f), fontH * 1.8f, fontH * 6.0f);
    const float cy = gaugeTop + radius;
    DrawGauge(ImVec2(min.x + pad + radius * 1.15f, cy), radius, m.report.mfu, "MFU", th.palette[0]);
    DrawGauge(ImVec2(min.x + pad + radius * 3.55f, cy), radius, m.report.hfu, "HFU", th.palette[1]);
    char line[200], a[32];
    float ty = cy + fontH * 1.6f;
    auto text = [&](const char* s, ImU32 col) {
        const ImVec2 size = ImGui::CalcTextSize(s, nullptr, false, left - 2 * pad);
        if (ty + size.y > max.y - pad * 0.5f) return;
        dl->AddText(nullptr, 0.0f, ImVec2(min.x + pad, ty), col, s, nullptr, left - 2 * pad);
        ty += size.y + fontH * 0.2f;
    };
    std::snprintf(line, sizeof line, "peak %.4g TFLOPS per device \xC3\x97 %d devices", m.peakFlops * 1e-12, m.report.devices);
    text(line, th.text);
    char over[64] = "";
    if (m.iterations > 0) std::snprintf(over, sizeof over, " (%d iterations, without the gaps between them)", m.iterations);
    std::snprintf(line, sizeof line, "model %.3g FLOPs, hardware %.3g FLOPs in %s%s", m.report.modelFlops, m.report.hardwareFlops,
                  FormatValue(a, sizeof a, m.report.seconds, AxisUnit::Seconds), over);
    text(line, th.textDim);
    text(m.peakSource.c_str(), th.textDim);
    dl->PopClipRect();
    // MFU over time: per device thin, overall thick; HFU overall dashed-looking in the second colour.
    if (m.mfuOverall.empty()) return;
    const double window = m.seriesSeconds > 0 ? m.seriesSeconds : m.report.seconds;
    const PlotAxis x{0.0, window, false, AxisUnit::Seconds};
    const PlotAxis y{0.0, 1.0, false, AxisUnit::Fraction};
    const PlotFrame f = DrawPlotFrame(dl, ImVec2(min.x + left, min.y + pad * 0.5f), ImVec2(max.x, max.y - pad * 0.3f), x, y,
                                      "time", "utilisation", nullptr);
    const int64_t begin = m.mfuOverall.front().timeNs;
    auto plot = [&](const std::vector<core::CounterSample>& series, ImU32 col, float thick) {
        m_xs.clear();
        m_ys.clear();
        const double bin = series.size() > 1 ? static_cast<double>(series[1].timeNs - series[0].timeNs) * 1e-9 : window;
        for (const core::CounterSample& s : series) {
            m_xs.push_back(static_cast<double>(s.timeNs - begin) * 1e-9 + bin / 2);
            m_ys.push_back(s.value);
        }
        PlotLine(dl, f, m_xs.data(), m_ys.data(), static_cast<int>(m_xs.size()), col, thick);
    };
    for (size_t d = 0; d < m.mfuPerDevice.size(); ++d) plot(m.mfuPerDevice[d], WithAlpha(th.Block(static_cast<int>(d) + 2), 0.55f), th.line);
    plot(m.hfuOverall, th.palette[1], 2.5f * th.line);
    plot(m.mfuOverall, th.palette[0], 3.0f * th.line);
    PlotHLine(dl, f, m.report.mfu, th.palette[0], th.line, true);
    const char* labels[3] = {"MFU, all devices", "HFU, all devices", "MFU per device"};
    const ImU32 colors[3] = {th.palette[0], th.palette[1], WithAlpha(th.Block(2), 0.55f)};
    DrawLegend(dl, f, labels, colors, 3);
}

nlohmann::json MfuView::Layout() const
{
    nlohmann::json j;
    j["view"] = "mfu";
    j["runs"] = m_drawn;
    return j;
}

} // namespace paralens::app
