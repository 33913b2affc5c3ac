#include "ModelView.hpp"

#include "PlotUtil.hpp"
#include "Theme.hpp"
#include "TimeAxis.hpp"

#include "model/RegimeFit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace paralens::app {

namespace {

ImU32 AlgorithmColor(core::Algorithm a)
{
    const Theme& th = CurrentTheme();
    switch (a) {
    case core::Algorithm::Ring: return th.palette[0];
    case core::Algorithm::Tree: return th.palette[1];
    case core::Algorithm::HalvingDoubling: return th.palette[4];
    case core::Algorithm::RecursiveDoubling: return th.palette[6];
    case core::Algorithm::Naive: return th.palette[2];
    case core::Algorithm::Pairwise: return th.palette[3];
    case core::Algorithm::Direct: return th.palette[8];
    case core::Algorithm::Hierarchical: return th.palette[5];
    case core::Algorithm::HierarchicalTree: return th.palette[7];
    }
    return th.accent;
}

// A curve read at `bytes`: straight between its samples on log-log axes.
double SecondsAt(const ModelData& m, const std::vector<double>& seconds, double bytes)
{
    if (seconds.empty() || m.sizes.empty()) return 0;
    const auto it = std::lower_bound(m.sizes.begin(), m.sizes.end(), bytes);
    if (it == m.sizes.begin()) return seconds.front();
    if (it == m.sizes.end()) return seconds.back();
    const size_t i = static_cast<size_t>(it - m.sizes.begin());
    const double x0 = m.sizes[i - 1], x1 = m.sizes[i], y0 = seconds[i - 1], y1 = seconds[i];
    if (!(y0 > 0 && y1 > 0)) return y1;
    return y0 * std::pow(y1 / y0, std::log(bytes / x0) / std::log(x1 / x0));
}

// The sizes where one regime gives way to the next: dashed lines, each range labelled with its
// likely protocol along the top of the plot.
void DrawRegimeSwitches(ImDrawList* dl, const PlotFrame& f, const ModelData& m)
{
    const Theme& th = CurrentTheme();
    for (double x : m.regimeSwitchBytes) PlotVLine(dl, f, x, th.critical, th.line, true);
    const float y = f.min.y + ImGui::GetFontSize() * 0.2f;
    for (size_t i = 0; i < m.regimes.size(); ++i) {
        const float from = i == 0 ? f.min.x : f.ToX(m.regimeSwitchBytes[i - 1]);
        const float to = i + 1 < m.regimes.size() ? f.ToX(m.regimeSwitchBytes[i]) : f.max.x;
        const char* text = m.regimes[i].protocol.c_str();
        const float w = ImGui::CalcTextSize(text).x;
        if (to - from > w + th.Px(8) && from >= f.min.x && to <= f.max.x)
            dl->AddText(ImVec2((from + to - w) / 2, y), th.critical, text);
    }
}

} // namespace

void ModelView::SetSnapshot(std::shared_ptr<const Snapshot> snapshot)
{
    m_snapshot = std::move(snapshot);
    m_lastData = nullptr; // they point into the old snapshot's runs: Layout() before the next Draw must not read them
    m_lastPipeline = nullptr;
}

const RunResult* ModelView::Chosen(const ViewSettings& settings) const
{
    if (!m_snapshot) return nullptr;
    const auto& runs = m_snapshot->runs;
    auto has = [](const RunResult& r) { return r.model || r.pipelineModel; };
    for (int want : {settings.modelExperiment, settings.selected})
        if (want >= 0 && static_cast<size_t>(want) < runs.size() && has(*runs[static_cast<size_t>(want)]))
            return runs[static_cast<size_t>(want)].get();
    for (const auto& r : runs)
        if (r->model) return r.get();
    for (const auto& r : runs)
        if (r->pipelineModel) return r.get();
    return nullptr;
}

void ModelView::Draw(ViewSettings& settings, ImVec2 size)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float fontH = ImGui::GetFontSize();
    dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), th.background);
    const RunResult* run = Chosen(settings);
    m_lastData = run ? run->model.get() : nullptr;
    m_lastPipeline = run && !run->model ? run->pipelineModel.get() : nullptr;
    if (!run) {
        dl->AddText(ImVec2(origin.x + fontH, origin.y + fontH), th.textDim,
                    "The model view plots a collective's cost against message size, or a pipeline's bubble against N: "
                    "add one in the controls.");
        ImGui::Dummy(size);
        return;
    }
    const float side = std::clamp(size.x * 0.3f, fontH * 17.0f, fontH * 28.0f);
    const ImVec2 plotMax(origin.x + size.x - side, origin.y + size.y);
    m_hoverX = -1;
    if (run->model) {
        const ModelData& m = *run->model;
        const float split = origin.y + std::floor(size.y * 0.6f);
        DrawTimePlot(m, origin, ImVec2(plotMax.x, split));
        DrawBusBwPlot(m, ImVec2(origin.x, split), plotMax);
        if (m_hoverX >= 0 && ImGui::IsWindowHovered()) {
            char a[32], b[32];
            ImGui::BeginTooltip();
            ImGui::Text("n = %s", FormatValue(a, sizeof a, m_hoverBytes, AxisUnit::Bytes));
            for (const ModelCurve& c : m.curves) {
                const double t = SecondsAt(m, c.seconds, m_hoverBytes);
                const std::string_view name = core::Name(c.algorithm);
                char net[48] = "";
                if (!c.netSeconds.empty())
                    std::snprintf(net, sizeof net, "   between nodes %.0f%%", t > 0 ? SecondsAt(m, c.netSeconds, m_hoverBytes) / t * 100 : 0.0);
                ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(AlgorithmColor(c.algorithm)), "%-20.*s %10s   busbw %s%s",
                                   static_cast<int>(name.size()), name.data(), FormatDuration(a, sizeof a, t * 1e9),
                                   FormatValue(b, sizeof b, m_hoverBytes / t * m.busBwFactor * 1e-9, AxisUnit::GBps), net);
            }
            if (const core::FitSegment* seg = core::SegmentFor(m.regimes, static_cast<uint64_t>(m_hoverBytes))) {
                const double t = core::PredictSegmented(m.regimes, static_cast<uint64_t>(m_hoverBytes));
                ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(CurrentTheme().critical), "%-20s %10s   busbw %s   (likely %s)", "regimes",
                                   FormatDuration(a, sizeof a, t * 1e9),
                                   FormatValue(b, sizeof b, m_hoverBytes / t * m.busBwFactor * 1e-9, AxisUnit::GBps), seg->protocol.c_str());
            }
            ImGui::EndTooltip();
        }
    } else {
        DrawPipelinePlot(*run, origin, plotMax);
    }
    ImGui::SetCursorScreenPos(ImVec2(plotMax.x, origin.y));
    ImGui::BeginChild("##model-side", ImVec2(side, size.y), false);
    if (run->model) DrawSidebar(*run, *run->model, ImVec2(plotMax.x, origin.y), ImVec2(origin.x + size.x, origin.y + size.y));
    else DrawPipelineSidebar(*run);
    DrawChoice(settings, run);
    ImGui::EndChild();
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + size.y));
}

// Which run's model to plot, when there are several.
void ModelView::DrawChoice(ViewSettings& settings, const RunResult* chosen)
{
    int count = 0;
    for (const auto& r : m_snapshot->runs) count += r->model || r->pipelineModel ? 1 : 0;
    if (count < 2) return;
    ImGui::Spacing();
    ImGui::TextDisabled("plot the model of:");
    for (size_t i = 0; i < m_snapshot->runs.size(); ++i) {
        const RunResult& r = *m_snapshot->runs[i];
        if (!r.model && !r.pipelineModel) continue;
        if (ImGui::RadioButton(r.title.c_str(), &r == chosen)) settings.modelExperiment = static_cast<int>(i);
    }
}

void ModelView::DrawTimePlot(const ModelData& m, ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    double lo = 1e300, hi = 0;
    for (const ModelCurve& c : m.curves)
        for (double t : c.seconds)
            if (t > 0) lo = std::min(lo, t), hi = std::max(hi, t);
    for (double t : m.measuredSeconds)
        if (t > 0) lo = std::min(lo, t), hi = std::max(hi, t);
    if (!(hi > 0)) return;
    const PlotAxis x{m.sizes.front(), m.sizes.back(), true, AxisUnit::Bytes};
    const PlotAxis y{std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi))), true, AxisUnit::Seconds};
    char title[96];
    const std::string_view collective = core::Name(m.collective);
    std::snprintf(title, sizeof title, "%.*s on p = %d: time against message size n", static_cast<int>(collective.size()),
                  collective.data(), m.ranks);
    const PlotFrame f = DrawPlotFrame(dl, min, max, x, y, "message size n (bytes)", "time", title);
    if (m.crossoverBytes > 0) {
        PlotVLine(dl, f, m.crossoverBytes, th.textDim, th.line * 1.5f, true);
        char a[32], label[64];
        std::snprintf(label, sizeof label, "ring = tree at %s", FormatValue(a, sizeof a, m.crossoverBytes, AxisUnit::Bytes));
        const float px = f.ToX(m.crossoverBytes);
        dl->AddText(ImVec2(px + th.Px(4), f.max.y - ImGui::GetFontSize() * 1.4f), th.text, label);
    }
    constexpr int kLegendItems = 11; // every algorithm, the regimes, the protocols, the measurements
    const char* labels[kLegendItems];
    ImU32 colors[kLegendItems];
    int n = 0;
    for (const ModelCurve& c : m.curves) {
        const ImU32 col = AlgorithmColor(c.algorithm);
        const bool current = c.algorithm == m.currentAlgorithm;
        PlotLine(dl, f, m.sizes.data(), c.seconds.data(), static_cast<int>(m.sizes.size()), col, (current ? 3.0f : 1.8f) * th.line);
        if (current && !c.netSeconds.empty()) // two levels: the share between nodes, thin and faded
            PlotLine(dl, f, m.sizes.data(), c.netSeconds.data(), static_cast<int>(m.sizes.size()), (col & 0x00FFFFFF) | 0x90000000,
                     1.2f * th.line);
        for (size_t i = 0; i < m.pointSizes.size(); ++i) PlotMarker(dl, f, m.pointSizes[i], c.simulatedSeconds[i], col, th.Px(4), false);
        if (n < kLegendItems) {
            labels[n] = core::Name(c.algorithm).data();
            colors[n++] = col;
        }
    }
    if (!m.protocolSeconds.empty()) { // under the regimes: where they agree, the regimes show
        for (double at : m.protocolSwitchBytes) PlotVLine(dl, f, at, th.predicted, th.line, true);
        PlotLine(dl, f, m.sizes.data(), m.protocolSeconds.data(), static_cast<int>(m.sizes.size()), th.predicted, 1.6f * th.line);
        if (n < kLegendItems) {
            labels[n] = "protocols (lowest line)";
            colors[n++] = th.predicted;
        }
    }
    if (!m.regimeSeconds.empty()) {
        DrawRegimeSwitches(dl, f, m);
        PlotLine(dl, f, m.sizes.data(), m.regimeSeconds.data(), static_cast<int>(m.sizes.size()), th.critical, 2.2f * th.line);
        if (n < kLegendItems) {
            labels[n] = "regimes (fit)";
            colors[n++] = th.critical;
        }
    }
    // Measurements: dark squares.
    for (size_t i = 0; i < m.measuredBytes.size(); ++i) {
        if (!(m.measuredSeconds[i] > 0)) continue;
        const ImVec2 p(f.ToX(m.measuredBytes[i]), f.ToY(m.measuredSeconds[i]));
        if (!f.Contains(p)) continue;
        const float r = th.Px(4);
        dl->AddRectFilled(ImVec2(p.x - r, p.y - r), ImVec2(p.x + r, p.y + r), th.text);
    }
    if (!m.measuredBytes.empty() && n < kLegendItems) {
        labels[n] = "measured";
        colors[n++] = th.text;
    }
    PlotMarker(dl, f, m.currentBytes, m.currentSeconds, th.text, th.Px(7), true);
    PlotMarker(dl, f, m.currentBytes, m.currentSeconds, AlgorithmColor(m.currentAlgorithm), th.Px(5), true);
    DrawLegend(dl, f, labels, colors, n);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (f.Contains(mouse)) {
        m_hoverX = mouse.x;
        m_hoverBytes = f.FromX(mouse.x);
    }
    if (m_hoverX >= 0) PlotVLine(dl, f, m_hoverBytes, th.predicted, th.line, false);
}

void ModelView::DrawBusBwPlot(const ModelData& m, ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    double hi = 0;
    for (const ModelCurve& c : m.curves)
        for (size_t i = 0; i < m.sizes.size(); ++i)
            if (c.seconds[i] > 0) hi = std::max(hi, m.sizes[i] / c.seconds[i] * m.busBwFactor * 1e-9);
    for (size_t i = 0; i < m.measuredBytes.size(); ++i)
        if (m.measuredSeconds[i] > 0) hi = std::max(hi, m.measuredBytes[i] / m.measuredSeconds[i] * m.busBwFactor * 1e-9);
    const PlotAxis x{m.sizes.front(), m.sizes.back(), true, AxisUnit::Bytes};
    const PlotAxis y{0.0, std::max(hi * 1.1, 1e-3), false, AxisUnit::GBps};
    const PlotFrame f = DrawPlotFrame(dl, min, max, x, y, nullptr, "busbw", nullptr);
    for (const ModelCurve& c : m.curves) {
        m_busbw.resize(m.sizes.size());
        for (size_t i = 0; i < m.sizes.size(); ++i)
            m_busbw[i] = c.seconds[i] > 0 ? m.sizes[i] / c.seconds[i] * m.busBwFactor * 1e-9 : 0.0;
        const bool current = c.algorithm == m.currentAlgorithm;
        PlotLine(dl, f, m.sizes.data(), m_busbw.data(), static_cast<int>(m.sizes.size()), AlgorithmColor(c.algorithm),
                 (current ? 3.0f : 1.8f) * th.line);
    }
    if (!m.protocolSeconds.empty()) {
        m_busbw.resize(m.sizes.size());
        for (size_t i = 0; i < m.sizes.size(); ++i)
            m_busbw[i] = m.protocolSeconds[i] > 0 ? m.sizes[i] / m.protocolSeconds[i] * m.busBwFactor * 1e-9 : 0.0;
        PlotLine(dl, f, m.sizes.data(), m_busbw.data(), static_cast<int>(m.sizes.size()), th.predicted, 1.6f * th.line);
    }
    if (!m.regimeSeconds.empty()) {
        m_busbw.resize(m.sizes.size());
        for (size_t i = 0; i < m.sizes.size(); ++i)
            m_busbw[i] = m.regimeSeconds[i] > 0 ? m.sizes[i] / m.regimeSeconds[i] * m.busBwFactor * 1e-9 : 0.0;
        for (double at : m.regimeSwitchBytes) PlotVLine(dl, f, at, th.critical, th.line, true);
        PlotLine(dl, f, m.sizes.data(), m_busbw.data(), static_cast<int>(m.sizes.size()), th.critical, 2.2f * th.line);
    }
    for (size_t i = 0; i < m.measuredBytes.size(); ++i) {
        if (!(m.measuredSeconds[i] > 0)) continue;
        const ImVec2 p(f.ToX(m.measuredBytes[i]), f.ToY(m.measuredBytes[i] / m.measuredSeconds[i] * m.busBwFactor * 1e-9));
        if (!f.Contains(p)) continue;
        const float r = th.Px(4);
        dl->AddRectFilled(ImVec2(p.x - r, p.y - r), ImVec2(p.x + r, p.y + r), th.text);
    }
    const double bw = 1e-9 / m.params.betaSecPerByte;
    PlotHLine(dl, f, bw, th.textDim, th.line, true);
    char label[64];
    std::snprintf(label, sizeof label, "link bandwidth %.4g GB/s", bw);
    if (f.ToY(bw) > f.min.y + ImGui::GetFontSize())
        dl->AddText(ImVec2(f.min.x + th.Px(6), f.ToY(bw) - ImGui::GetFontSize() * 1.2f), th.textDim, label);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (f.Contains(mouse)) {
        m_hoverX = mouse.x;
        m_hoverBytes = f.FromX(mouse.x);
    }
    if (m_hoverX >= 0) PlotVLine(dl, f, m_hoverBytes, th.predicted, th.line, false);
}

void ModelView::DrawSidebar(const RunResult& run, const ModelData& m, ImVec2, ImVec2)
{
    const Theme& th = CurrentTheme();
    char a[32], b[32], formula[128];
    ImGui::PushTextWrapPos(0.0f);
    ImGui::PushFont(th.bold);
    const std::string_view collective = core::Name(m.collective);
    ImGui::Text("%.*s on %d ranks", static_cast<int>(collective.size()), collective.data(), m.ranks);
    ImGui::PopFont();
    ImGui::TextDisabled("\xCE\xB1 = %s, bandwidth %.4g GB/s (\xCE\xB2 = 1/bandwidth)%s", FormatDuration(a, sizeof a, m.params.alphaSec * 1e9),
                        1e-9 / m.params.betaSecPerByte, m.params.gammaSecPerByte > 0 ? "" : ", free reductions (\xCE\xB3 = 0)");
    ImGui::Separator();
    for (const ModelCurve& c : m.curves) {
        const std::string_view name = core::Name(c.algorithm);
        const char* mark = c.algorithm != m.currentAlgorithm ? "" : m.currentSeconds > 0 ? "  (this run)" : "  (the measurements' fit)";
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(AlgorithmColor(c.algorithm)), "\xE2\x96\xA0 %.*s%s",
                           static_cast<int>(name.size()), name.data(), mark);
        ImGui::Indent();
        ImGui::TextUnformatted(GreekFormula(formula, sizeof formula, c.formula.c_str()));
        ImGui::Unindent();
    }
    ImGui::Separator();
    if (m.currentSeconds > 0) {
        ImGui::Text("This run: %s in %s", FormatValue(a, sizeof a, m.currentBytes, AxisUnit::Bytes), FormatDuration(b, sizeof b, m.currentSeconds * 1e9));
        ImGui::Text("busbw %.4g GB/s (algbw x %.3g)", run.busbwGBps, m.busBwFactor);
    }
    if (!m.measuredBytes.empty())
        ImGui::Text("Squares: %zu measurements (%s).", m.measuredBytes.size(), m.measuredLabel.c_str());
    DrawTwoLevel(m);
    if (m.crossoverBytes > 0)
        ImGui::Text("Above %s the ring is faster than the tree: the n\xCE\xB2 terms outweigh the extra \xCE\xB1 steps.",
                    FormatValue(a, sizeof a, m.crossoverBytes, AxisUnit::Bytes));
    if (m.fitted)
        ImGui::Text("Fit of \xCE\xB1 and \xCE\xB2 to the %s through %.*s's formula: \xCE\xB1 = %s, bandwidth %.4g GB/s "
                    "(mean error %.2g%%)%s.",
                    m.fittedToMeasurements ? "measurements" : "simulated points",
                    static_cast<int>(core::Name(m.currentAlgorithm).size()), core::Name(m.currentAlgorithm).data(),
                    FormatDuration(a, sizeof a, m.fitAlphaUs * 1e3), m.fitBandwidthGBps, m.fitMapePct,
                    m.fittedToMeasurements ? "; the lines use them" : "");
    if (!m.fitNote.empty()) ImGui::TextDisabled("%s", m.fitNote.c_str());
    DrawRegimes(m);
    ImGui::TextDisabled("Lines: the closed forms. Circles: the simulator.%s%s", m.currentSeconds > 0 ? " Dot: this run." : "",
                        m.measuredBytes.empty() ? "" : " Squares: measured.");
    ImGui::PopTextWrapPos();
}

// Two levels: the nodes, the network, and the current algorithm's time split between the levels.
void ModelView::DrawTwoLevel(const ModelData& m)
{
    if (!m.twoLevel) return;
    char a[32], b[32], c[32];
    if (!m.twoLevelNote.empty()) ImGui::TextWrapped("%s", m.twoLevelNote.c_str());
    const int nodes = m.ranksPerNode > 0 ? (m.ranks + m.ranksPerNode - 1) / m.ranksPerNode : 1;
    ImGui::Text("Two levels: %d nodes of %d GPUs; between nodes \xCE\xB1' = %s, bandwidth %.4g GB/s%s.", nodes, m.ranksPerNode,
                FormatDuration(a, sizeof a, m.netAlphaUs * 1e3), m.netBandwidthGBps, m.nicBandwidthGBps > 0 ? " (the ring's)" : "");
    if (m.nicBandwidthGBps > 0)
        ImGui::Text("The others, through each rank's NIC: \xCE\xB1' = %s, bandwidth %.4g GB/s per NIC.",
                    FormatDuration(a, sizeof a, m.nicAlphaUs * 1e3), m.nicBandwidthGBps);
    for (const ModelCurve& curve : m.curves) {
        if (curve.algorithm != m.currentAlgorithm || curve.netSeconds.empty()) continue;
        const double bytes = m.currentBytes > 0 ? m.currentBytes : m.sizes.back();
        const double t = SecondsAt(m, curve.seconds, bytes), net = SecondsAt(m, curve.netSeconds, bytes);
        ImGui::Text("%.*s at %s: %s within nodes, %s between them (thin line: %.0f%%).", static_cast<int>(core::Name(curve.algorithm).size()),
                    core::Name(curve.algorithm).data(), FormatValue(a, sizeof a, bytes, AxisUnit::Bytes),
                    FormatDuration(b, sizeof b, (t - net) * 1e9), FormatDuration(c, sizeof c, net * 1e9), t > 0 ? net / t * 100 : 0.0);
    }
    ImGui::TextDisabled("Ring and the hierarchical ones: their two-level formulas (\xCE\xB1', \xCE\xB2' between nodes); the others priced step by "
                        "step from their Plans, each step as long as its slowest message.");
}

// The measurements' regimes: where NCCL changes protocol or algorithm, each range's own alpha
// and bandwidth through the formula, and how well they fit and predict.
void ModelView::DrawRegimes(const ModelData& m)
{
    if (m.regimes.empty()) return;
    const Theme& th = CurrentTheme();
    char a[32], b[32];
    ImGui::Separator();
    ImGui::PushFont(th.bold);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(th.critical), "Regimes: %zu size range%s", m.regimes.size(), m.regimes.size() == 1 ? "" : "s");
    ImGui::PopFont();
    ImGui::Text("mean error %.2g%% (one line %.2g%%); on sizes held out of the fit %.2g%%", m.regimesMapePct, m.fitMapePct,
                m.regimesHeldOutPct);
    if (m.noisePct > 0) ImGui::TextDisabled("the measurements disagree with themselves by %.2g%%", m.noisePct);
    ImGui::PushTextWrapPos(-1.0f); // the table's cells on one line each
    if (ImGui::BeginTable("##regimes", 4, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
        ImGui::TableSetupColumn("sizes");
        ImGui::TableSetupColumn("likely");
        ImGui::TableSetupColumn("\xCE\xB1");
        ImGui::TableSetupColumn("bandwidth");
        ImGui::TableHeadersRow();
        for (const core::FitSegment& s : m.regimes) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%s..%s", FormatValue(a, sizeof a, static_cast<double>(s.fromBytes), AxisUnit::Bytes),
                        FormatValue(b, sizeof b, static_cast<double>(s.toBytes), AxisUnit::Bytes));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(s.protocol.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(FormatDuration(a, sizeof a, s.params.alphaSec * 1e9));
            ImGui::TableNextColumn();
            ImGui::Text("%.4g GB/s", s.params.betaSecPerByte > 0 ? 1e-9 / s.params.betaSecPerByte : 0.0);
        }
        ImGui::EndTable();
    }
    ImGui::PopTextWrapPos();
    ImGui::TextDisabled("Dashed: where NCCL switches (protocol from the sizes: LL below ~64 KiB, LL128 to ~16 MiB, Simple above).");
    DrawProtocols(m);
}

// The protocol envelope: NCCL's ways to move the bytes, each a line, the lowest taken; where two
// cross, NCCL switches.
void ModelView::DrawProtocols(const ModelData& m)
{
    if (m.protocols.empty()) return;
    const Theme& th = CurrentTheme();
    char a[32], b[32], c[32];
    ImGui::Separator();
    ImGui::PushFont(th.bold);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(th.predicted), "Protocols: the lowest of %zu line%s", m.protocols.size(),
                       m.protocols.size() == 1 ? "" : "s");
    ImGui::PopFont();
    ImGui::Text("mean error %.2g%%; on sizes held out of the fit %.2g%%", m.protocolMapePct, m.protocolHeldOutPct);
    ImGui::PushTextWrapPos(-1.0f);
    if (ImGui::BeginTable("##protocols", 4, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
        ImGui::TableSetupColumn("lowest at");
        ImGui::TableSetupColumn("likely");
        ImGui::TableSetupColumn("latency");
        ImGui::TableSetupColumn("busbw");
        ImGui::TableHeadersRow();
        for (const core::ProtocolLine& l : m.protocols) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%s..%s", FormatValue(a, sizeof a, static_cast<double>(l.fromBytes), AxisUnit::Bytes),
                        FormatValue(b, sizeof b, static_cast<double>(l.toBytes), AxisUnit::Bytes));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(l.protocol.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(FormatDuration(c, sizeof c, l.latencySec * 1e9));
            ImGui::TableNextColumn();
            ImGui::Text("%.4g GB/s", l.secPerByte > 0 ? m.busBwFactor / l.secPerByte * 1e-9 : 0.0);
        }
        ImGui::EndTable();
    }
    ImGui::PopTextWrapPos();
    ImGui::TextDisabled("Each line one way NCCL moves the bytes (LL, LL128, Simple and its chunk sizes); its tuner takes the fastest.");
}

void ModelView::DrawPipelinePlot(const RunResult& chosen, ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    double maxN = 1;
    for (const auto& r : m_snapshot->runs)
        if (r->pipelineModel)
            for (double n : r->pipelineModel->pointN) maxN = std::max(maxN, n);
    const PlotAxis x{1.0, maxN, true, AxisUnit::Count};
    const PlotAxis y{0.0, 1.0, false, AxisUnit::Fraction};
    const PlotFrame f = DrawPlotFrame(dl, min, max, x, y, "micro-batches N", "bubble",
                                      "pipeline bubble fraction against the number of micro-batches");
    const char* labels[8];
    ImU32 colors[8];
    int n = 0, index = 0;
    for (const auto& r : m_snapshot->runs) {
        if (!r->pipelineModel) continue;
        const PipelineModelData& m = *r->pipelineModel;
        const ImU32 col = th.palette[(index++ * 3) % kPaletteSize];
        const bool current = r.get() == &chosen;
        if (!m.formula.empty())
            PlotLine(dl, f, m.n.data(), m.formula.data(), static_cast<int>(m.n.size()), col, (current ? 3.0f : 1.8f) * th.line);
        for (size_t i = 0; i < m.pointN.size(); ++i) PlotMarker(dl, f, m.pointN[i], m.simulated[i], col, th.Px(4), false);
        PlotMarker(dl, f, m.currentN, m.currentBubble, th.text, th.Px(7), true);
        PlotMarker(dl, f, m.currentN, m.currentBubble, col, th.Px(5), true);
        if (n < 8) {
            labels[n] = r->experiment.label.empty() ? r->title.c_str() : r->experiment.label.c_str();
            colors[n++] = col;
        }
    }
    DrawLegend(dl, f, labels, colors, n);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (f.Contains(mouse) && ImGui::IsWindowHovered()) {
        PlotVLine(dl, f, f.FromX(mouse.x), th.accent, th.line, false);
        ImGui::SetTooltip("N = %.1f", f.FromX(mouse.x));
    }
}

void ModelView::DrawPipelineSidebar(const RunResult& chosen)
{
    const Theme& th = CurrentTheme();
    const PipelineModelData& m = *chosen.pipelineModel;
    ImGui::PushTextWrapPos(0.0f);
    ImGui::PushFont(th.bold);
    ImGui::TextUnformatted(chosen.title.c_str());
    ImGui::PopFont();
    if (m.formula.empty())
        ImGui::TextWrapped("The lectures give no closed form for this schedule: circles are the simulator's bubble.");
    else if (m.schedule == core::ScheduleKind::Interleaved)
        ImGui::TextWrapped("bubble = (D-1) / (D-1+vN) with D = %d stages and v = %d chunks: the line.", m.stages, m.chunks);
    else if (m.schedule == core::ScheduleKind::ZeroBubbleH1)
        ImGui::TextWrapped("ZB-H1 idles (D-1)(F + B - min(F, B, W)) per stage beside N(F + B + W) of work, B the input "
                           "backward, with D = %d stages and N >= D: the line ((D-1) / (D-1+3N) at equal F, B and W).",
                           m.stages);
    else if (m.schedule == core::ScheduleKind::Naive)
        ImGui::TextWrapped("bubble = (D-1) / D with D = %d: one micro-batch in flight.", m.stages);
    else
        ImGui::TextWrapped("bubble = (D-1) / (D-1+N) with D = %d stages: the line.", m.stages);
    ImGui::Separator();
    ImGui::Text("This run: N = %.0f, bubble %.1f%%", m.currentN, m.currentBubble * 100);
    if (chosen.bubbleFormula >= 0) ImGui::Text("formula %.1f%%", chosen.bubbleFormula * 100);
    ImGui::TextDisabled("More micro-batches shrink the bubble; the simulator (circles) follows the formula when "
                        "backward = 2 x forward and links are free.");
    ImGui::PopTextWrapPos();
}

nlohmann::json ModelView::Layout() const
{
    nlohmann::json j;
    j["view"] = "model";
    if (m_lastData) {
        j["collective"] = core::Name(m_lastData->collective);
        j["ranks"] = m_lastData->ranks;
        j["curves"] = m_lastData->curves.size();
        j["crossoverBytes"] = m_lastData->crossoverBytes;
        const ImU32 c = CurrentTheme().critical; // the regimes' colour
        char hex[8];
        std::snprintf(hex, sizeof hex, "#%02x%02x%02x", c & 0xFF, (c >> 8) & 0xFF, (c >> 16) & 0xFF);
        j["regimesColour"] = hex;
        j["regimes"] = m_lastData->regimes.size();
        j["twoLevel"] = m_lastData->twoLevel;
        nlohmann::json names = nlohmann::json::array();
        for (const ModelCurve& curve : m_lastData->curves) names.push_back(core::Name(curve.algorithm));
        j["algorithms"] = names;
        j["regimeSwitchBytes"] = m_lastData->regimeSwitchBytes;
        j["protocols"] = m_lastData->protocols.size();
        j["protocolSwitchBytes"] = m_lastData->protocolSwitchBytes;
    }
    if (m_lastPipeline) {
        j["pipeline"] = core::Name(m_lastPipeline->schedule);
        j["curves"] = 1;
    }
    return j;
}

} // namespace paralens::app
