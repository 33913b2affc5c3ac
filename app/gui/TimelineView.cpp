// TimelineView: sections and rows, input, tooltip and layout export. Drawing is in TimelineDraw.cpp.
#include "TimelineView.hpp"

#include "ImGuiCompat.hpp"
#include "Theme.hpp"
#include "TimelineDrawContext.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace paralens::app {

namespace {

// Runs of one kind share a time axis; each file gets its own, which a what-if of it shares (the
// replay right under the measured run, zoomed together).
int SectionKey(const Snapshot& snap, const RunResult& r, size_t index)
{
    switch (r.experiment.kind) {
    case ExperimentKind::Collective: return 0;
    case ExperimentKind::Pipeline: return 1;
    case ExperimentKind::Training: return 2;
    case ExperimentKind::Autopar: return 3;
    case ExperimentKind::Plan: return 4;
    case ExperimentKind::File: return 100 + static_cast<int>(index);
    case ExperimentKind::WhatIf:
        for (size_t j = 0; j < snap.runs.size(); ++j)
            if (snap.runs[j]->experiment.kind == ExperimentKind::File && snap.runs[j]->experiment.files == r.experiment.files)
                return 100 + static_cast<int>(j);
        return 100 + static_cast<int>(index);
    }
    return 0;
}

constexpr double kMinSpanNs = 10.0;

} // namespace

void TimelineView::SetSnapshot(std::shared_ptr<const Snapshot> snapshot, const ViewSettings& settings)
{
    const bool sameShape = m_snapshot && snapshot && m_snapshot->runs.size() == snapshot->runs.size();
    std::vector<std::vector<uint8_t>> oldExpanded;
    for (auto& c : m_cache) oldExpanded.push_back(std::move(c.expanded));
    m_snapshot = std::move(snapshot);
    m_expandDefault = settings.expandTracks;
    m_cache.assign(m_snapshot ? m_snapshot->runs.size() : 0, RunCache{});
    std::vector<int> keys;
    for (size_t i = 0; i < m_cache.size(); ++i) {
        const RunResult& r = *m_snapshot->runs[i];
        RunCache& c = m_cache[i];
        c.beginNs = r.trace->BeginNs();
        for (const core::Flow& f : r.trace->Flows()) c.maxFlowNs = std::max(c.maxFlowNs, f.dstNs - f.srcNs);
        c.pipeline = r.experiment.kind == ExperimentKind::Pipeline || r.trace->Meta().workload.GetString("kind") == "pipeline";
        c.depths.assign(r.trace->Tracks().size(), 0);
        for (size_t tr = 0; tr < r.trace->Tracks().size(); ++tr) {
            const core::Track& track = r.trace->Tracks()[tr];
            for (int d = track.DepthCount() - 1; d >= 0 && c.depths[tr] == 0; --d)
                for (const core::Span& sp : track.Lane(d))
                    if (sp.endNs > sp.startNs) {
                        c.depths[tr] = static_cast<uint16_t>(d + 1);
                        break;
                    }
        }
        const size_t devices = r.trace->Devices().size();
        // Expanded at first only when every lane fits on a screen (a profiler trace's host threads
        // can have dozens).
        size_t lanes = 0;
        for (uint16_t d : c.depths) lanes += d;
        if (sameShape && i < oldExpanded.size() && oldExpanded[i].size() == devices) c.expanded = oldExpanded[i];
        else c.expanded.assign(devices, m_expandDefault && lanes <= 32 ? 1 : 0);
        keys.push_back(SectionKey(*m_snapshot, r, i));
    }
    // Sections: keep the zoom of those that survive with the same runs.
    std::vector<Section> sections;
    for (size_t i = 0; i < keys.size(); ++i) {
        auto it = std::find(keys.begin(), keys.begin() + static_cast<ptrdiff_t>(i), keys[i]);
        if (it != keys.begin() + static_cast<ptrdiff_t>(i)) continue;
        Section s;
        for (size_t j = i; j < keys.size(); ++j)
            if (keys[j] == keys[i]) s.runs.push_back(static_cast<uint16_t>(j));
        for (uint16_t run : s.runs) {
            const core::Trace& t = *m_snapshot->runs[run]->trace;
            s.extentNs = std::max(s.extentNs, static_cast<double>(t.EndNs() - t.BeginNs()));
        }
        for (const Section& old : m_sections)
            if (sameShape && old.runs == s.runs && !old.fit) {
                s.window = old.window;
                s.fit = false;
            }
        sections.push_back(std::move(s));
    }
    m_sections = std::move(sections);
    m_keySection = std::min(m_keySection, std::max(0, static_cast<int>(m_sections.size()) - 1));
    m_rowsDirty = true;
}

void TimelineView::FitAll()
{
    for (Section& s : m_sections) s.fit = true;
}

void TimelineView::SetWindow(double beginNs, double endNs)
{
    for (Section& s : m_sections) {
        s.window = {beginNs, std::max(endNs, beginNs + kMinSpanNs)};
        s.fit = false;
    }
}

void TimelineView::ExpandAll(bool expand)
{
    m_expandDefault = expand;
    for (RunCache& c : m_cache) std::fill(c.expanded.begin(), c.expanded.end(), expand ? 1 : 0);
    m_rowsDirty = true;
}

void TimelineView::BuildRows()
{
    for (Section& s : m_sections) {
        s.rows.clear();
        for (uint16_t run : s.runs) {
            const core::Trace& t = *m_snapshot->runs[run]->trace;
            RunCache& c = m_cache[run];
            c.trackRow.assign(t.Tracks().size(), -1);
            c.trackBand.assign(t.Tracks().size(), 0.0f);
            s.rows.push_back({RowKind::Run, run});
            for (uint32_t d = 0; d < t.Devices().size(); ++d) {
                const core::Device& dev = t.Devices()[d];
                uint16_t lanes = 0;
                for (uint32_t tr : dev.tracks) lanes = static_cast<uint16_t>(lanes + c.depths[tr]);
                Row row{RowKind::Device, run, d};
                row.lanes = std::max<uint16_t>(lanes, 1);
                if (!c.expanded[d] || lanes <= 1) {
                    uint16_t band = 0;
                    for (uint32_t tr : dev.tracks) {
                        if (c.depths[tr] == 0) continue;
                        c.trackRow[tr] = static_cast<int>(s.rows.size());
                        c.trackBand[tr] = static_cast<float>(band);
                        band = static_cast<uint16_t>(band + c.depths[tr]);
                    }
                    s.rows.push_back(row);
                    continue;
                }
                row.lanes = 0; // a header line for the device, then its lanes
                s.rows.push_back(row);
                for (uint32_t tr : dev.tracks) {
                    if (c.depths[tr] == 0) continue;
                    c.trackRow[tr] = static_cast<int>(s.rows.size());
                    for (int depth = 0; depth < c.depths[tr]; ++depth)
                        s.rows.push_back({RowKind::Lane, run, d, tr, static_cast<uint16_t>(depth)});
                }
            }
        }
    }
    m_rowsDirty = false;
}

void TimelineView::LayoutRows(float rowH, float laneH, float runH, float rulerH)
{
    float y = 0;
    for (Section& s : m_sections) {
        float sy = rulerH;
        for (Row& r : s.rows) {
            r.y = sy;
            r.h = r.kind == RowKind::Run ? runH : r.kind == RowKind::Lane ? laneH : (r.lanes == 0 ? runH * 0.8f : rowH);
            sy += r.h;
        }
        s.height = sy + rulerH * 0.4f;
        y += s.height;
    }
    m_contentH = y;
}

double TimelineView::XToNs(const Section& s, float x) const
{
    const double w = std::max(1.0f, s.plotX1 - s.plotX0);
    return s.window.beginNs + (x - s.plotX0) / w * s.window.Span();
}

float TimelineView::NsToX(const Section& s, double relNs) const
{
    const double w = std::max(1.0f, s.plotX1 - s.plotX0);
    return static_cast<float>(s.plotX0 + (relNs - s.window.beginNs) / s.window.Span() * w);
}

void TimelineView::Draw(ViewSettings& settings, ImVec2 size)
{
    const Theme& theme = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    m_origin = ImGui::GetCursorScreenPos();
    m_size = size;
    dl->AddRectFilled(m_origin, ImVec2(m_origin.x + size.x, m_origin.y + size.y), theme.background);
    if (!m_snapshot || m_sections.empty()) {
        ImGui::Dummy(size);
        return;
    }
    if (m_rowsDirty) BuildRows();
    const float fontH = ImGui::GetFontSize();
    // Rows fill the height when they can (a lecture's few devices get tall rows), within limits.
    float units = 0, fixed = 0;
    const float runH = std::floor(fontH * 1.45f), rulerH = std::floor(fontH * 1.6f);
    for (const Section& s : m_sections) {
        fixed += rulerH * 1.4f;
        for (const Row& r : s.rows)
            if (r.kind == RowKind::Run) fixed += runH;
            else if (r.kind == RowKind::Device && r.lanes == 0) fixed += runH * 0.8f;
            else units += r.kind == RowKind::Lane ? 0.8f : 1.0f;
    }
    const float rowH = std::clamp((size.y - fixed) / std::max(units, 1.0f), fontH * 1.05f, fontH * 3.4f);
    LayoutRows(std::floor(rowH), std::floor(rowH * 0.8f), runH, rulerH);
    m_headerW = std::floor(std::clamp(size.x * 0.16f, fontH * 8.0f, fontH * 13.0f));
    m_scrollY = std::clamp(m_scrollY, 0.0f, std::max(0.0f, m_contentH - size.y));

    ImGui::InvisibleButton("##timeline", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
    const bool hovered = ImGui::IsItemHovered();
    DrawContext dc{dl, theme, settings};
    dc.mouse = ImGui::GetIO().MousePos;
    dc.hovered = hovered;
    dc.clipY0 = m_origin.y;
    dc.clipY1 = m_origin.y + size.y;
    m_lastHover = m_hover; // input below acts on what the mouse was over in the last frame
    m_hover = Hover{};
    dl->PushClipRect(m_origin, ImVec2(m_origin.x + size.x, m_origin.y + size.y), true);
    float y = m_origin.y - m_scrollY;
    for (size_t i = 0; i < m_sections.size(); ++i) {
        Section& s = m_sections[i];
        s.screenTop = y;
        s.plotX0 = m_origin.x + m_headerW;
        s.plotX1 = m_origin.x + size.x - theme.Px(6);
        if (s.fit) s.window.Fit(0.0, s.extentNs, 0.02, kMinSpanNs);
        const ImVec2 pmin(s.plotX0, std::max(y, m_origin.y)), pmax(s.plotX1, std::min(y + s.height, m_origin.y + size.y));
        if (hovered && dc.mouse.y >= pmin.y && dc.mouse.y < pmax.y) HandleInput(s, settings, pmin, pmax);
        // Keys act on the section last pointed at, while the timeline is hovered or focused.
        if ((hovered || ImGui::IsWindowFocused(ImGuiFocusedFlags_ChildWindows)) && static_cast<int>(i) == m_keySection) HandleKeys(s);
        if (y + s.height >= m_origin.y && y <= m_origin.y + size.y) DrawSection(s, dc);
        y += s.height;
    }
    m_criticalSegments = dc.criticalSegments;
    // Wheel over the row headers scrolls the rows; drags pan (or measure) until released.
    ImGuiIO& io = ImGui::GetIO();
    if (hovered && dc.mouse.x < m_origin.x + m_headerW && io.MouseWheel != 0) m_scrollY -= io.MouseWheel * rowH * 2;
    if (m_dragSection >= 0 && m_dragSection < static_cast<int>(m_sections.size()) && !m_measuring &&
        ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
        Section& s = m_sections[static_cast<size_t>(m_dragSection)];
        if (io.MouseDelta.x != 0) {
            s.window.Pan(-io.MouseDelta.x * s.window.Span() / std::max(1.0f, s.plotX1 - s.plotX0));
            s.fit = false;
        }
        m_scrollY -= io.MouseDelta.y;
    } else {
        m_dragSection = -1;
    }
    if (m_measuring && m_measureSection >= 0 && m_measureSection < static_cast<int>(m_sections.size())) {
        m_measureB = XToNs(m_sections[static_cast<size_t>(m_measureSection)], io.MousePos.x);
        if (!ImGui::IsMouseDown(ImGuiMouseButton_Right) && !ImGui::IsMouseDown(ImGuiMouseButton_Left)) m_measuring = false;
    }
    for (Section& s : m_sections)
        if (!s.fit) s.window.Clamp(s.extentNs);
    if (m_contentH > size.y) {
        const float barH = size.y * size.y / m_contentH, barY = m_origin.y + m_scrollY / m_contentH * size.y;
        dl->AddRectFilled(ImVec2(m_origin.x + size.x - theme.Px(4), barY), ImVec2(m_origin.x + size.x, barY + barH),
                          theme.gridMajor, 2.0f);
    }
    dl->PopClipRect();
    if (m_hover.any && hovered) DrawTooltip(dc);
}

void TimelineView::HandleInput(Section& s, ViewSettings&, const ImVec2& pmin, const ImVec2& pmax)
{
    ImGuiIO& io = ImGui::GetIO();
    const int index = static_cast<int>(&s - m_sections.data());
    const bool inPlot = io.MousePos.x >= pmin.x && io.MousePos.x < pmax.x;
    if (inPlot) m_keySection = index;
    const double anchor = XToNs(s, io.MousePos.x);
    if (inPlot && io.MouseWheel != 0) {
        s.window.ZoomAround(anchor, std::pow(0.8, io.MouseWheel), kMinSpanNs, s.extentNs * 4);
        s.fit = false;
    }
    const bool measureDrag = ImGui::IsMouseClicked(ImGuiMouseButton_Right) || (io.KeyShift && ImGui::IsMouseClicked(ImGuiMouseButton_Left));
    if (inPlot && measureDrag) {
        m_measuring = true;
        m_measureSection = index;
        m_measureA = m_measureB = anchor;
    } else if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        m_dragSection = index;
        if (!io.KeyShift) m_measureSection = -1;
    }
    if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) && inPlot) {
        const Hover& h = m_lastHover;
        if (h.any && !h.fold) {
            const double b = static_cast<double>(h.span.startNs - m_cache[h.run].beginNs);
            s.window.Fit(b, b + static_cast<double>(h.span.DurationNs()), 0.1, kMinSpanNs);
        } else if (h.any) {
            const double b = static_cast<double>(h.foldBeginNs - m_cache[h.run].beginNs);
            s.window.Fit(b, b + static_cast<double>(h.foldEndNs - h.foldBeginNs), 0.1, kMinSpanNs);
        } else {
            s.fit = true;
        }
        if (h.any) s.fit = false;
    }
}

void TimelineView::HandleKeys(Section& s)
{
    ImGuiIO& io = ImGui::GetIO();
    if (io.WantTextInput) return;
    const double step = s.window.Span() * 0.1;
    const double mid = (s.window.beginNs + s.window.endNs) / 2;
    bool changed = true;
    if (KeyPressed(Key::Left) || KeyPressed(Key::A)) s.window.Pan(-step);
    else if (KeyPressed(Key::Right) || KeyPressed(Key::D)) s.window.Pan(step);
    else if (KeyPressed(Key::Up) || KeyPressed(Key::W) || KeyPressed(Key::Plus)) s.window.ZoomAround(mid, 0.8, kMinSpanNs, s.extentNs * 4);
    else if (KeyPressed(Key::Down) || KeyPressed(Key::S) || KeyPressed(Key::Minus)) s.window.ZoomAround(mid, 1.25, kMinSpanNs, s.extentNs * 4);
    else if (KeyPressed(Key::Home)) {
        for (Section& all : m_sections) all.fit = true;
        changed = false;
    } else changed = false;
    if (changed) s.fit = false;
}

void TimelineView::DrawTooltip(const DrawContext& dc) const
{
    const ViewSettings& settings = dc.settings;
    const RunResult& run = *m_snapshot->runs[m_hover.run];
    const core::Trace& t = *run.trace;
    const int64_t begin = m_cache[m_hover.run].beginNs;
    char a[48], b[48], c[48];
    ImGui::BeginTooltip();
    if (m_hover.fold) {
        ImGui::Text("%zu spans folded (each narrower than 3 pixels)", m_hover.foldCount);
        ImGui::Text("from %s to %s (%s)", FormatDuration(a, sizeof a, static_cast<double>(m_hover.foldBeginNs - begin)),
                    FormatDuration(b, sizeof b, static_cast<double>(m_hover.foldEndNs - begin)),
                    FormatDuration(c, sizeof c, static_cast<double>(m_hover.foldEndNs - m_hover.foldBeginNs)));
        ImGui::TextDisabled("zoom in (wheel) or double-click to see them");
        ImGui::EndTooltip();
        return;
    }
    const core::Span& s = m_hover.span;
    const core::Track& track = t.Tracks()[m_hover.track];
    const std::string_view name = t.Str(s.name), device = t.Str(t.Devices()[track.device].name), lane = t.Str(track.name);
    const std::string_view category = core::Name(s.category);
    ImGui::PushFont(CurrentTheme().bold);
    ImGui::Text("%.*s", static_cast<int>(name.size()), name.data());
    ImGui::PopFont();
    ImGui::Text("%.*s on %.*s / %.*s (depth %d)", static_cast<int>(category.size()), category.data(),
                static_cast<int>(device.size()), device.data(), static_cast<int>(lane.size()), lane.data(), s.depth);
    ImGui::Text("start %s   end %s", FormatDuration(a, sizeof a, static_cast<double>(s.startNs - begin)),
                FormatDuration(b, sizeof b, static_cast<double>(s.endNs - begin)));
    ImGui::Text("duration %s", FormatDuration(a, sizeof a, static_cast<double>(s.DurationNs())));
    const core::CostParams* fit = settings.outlinesFromFit ? run.fitCost.get() : nullptr;
    const int64_t predictedNs = fit ? PredictedNs(s, t.Meta(), fit) : s.predictedNs;
    if (predictedNs >= 0) {
        const double diff = predictedNs > 0 ? (static_cast<double>(s.DurationNs()) / static_cast<double>(predictedNs) - 1) * 100 : 0;
        ImGui::Text("predicted %s (%+.1f%%)%s", FormatDuration(a, sizeof a, static_cast<double>(predictedNs)), diff,
                    fit ? ", alpha and beta fitted to the run" : "");
    }
    if (s.bytes > 0) {
        const double gbps = s.DurationNs() > 0 ? static_cast<double>(s.bytes) / static_cast<double>(s.DurationNs()) : 0;
        ImGui::Text("bytes %" PRIu64 " (%.4g MiB)   bandwidth %.2f GB/s", s.bytes, static_cast<double>(s.bytes) / (1 << 20), gbps);
    }
    if (s.flops > 0) {
        const double tflops = s.DurationNs() > 0 ? s.flops / static_cast<double>(s.DurationNs()) * 1e-3 : 0;
        ImGui::Text("FLOPs %.4g   achieved %.1f TFLOP/s", s.flops, tflops);
    }
    if (s.microBatch >= 0 || s.chunk >= 0 || s.step >= 0)
        ImGui::Text("micro-batch %d   chunk %d   step %d", s.microBatch, s.chunk, s.step);
    if (s.detail) {
        const std::string_view detail = t.Str(s.detail);
        ImGui::Text("detail: %.*s", static_cast<int>(detail.size()), detail.data());
    }
    ImGui::EndTooltip();
}

nlohmann::json TimelineView::Layout() const
{
    nlohmann::json j;
    j["view"] = "timeline";
    const Theme& theme = CurrentTheme();
    auto hex = [](ImU32 c) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c & 0xFF, (c >> 8) & 0xFF, (c >> 16) & 0xFF);
        return std::string(buf);
    };
    j["bubbleFill"] = hex(theme.bubbleFill);
    j["bubbleHatch"] = hex(theme.bubbleHatch);
    j["critical"] = hex(theme.critical);
    j["criticalSegments"] = m_criticalSegments;
    for (const Section& s : m_sections) {
        nlohmann::json js;
        js["plotX0"] = s.plotX0 - m_origin.x;
        js["plotX1"] = s.plotX1 - m_origin.x;
        js["windowBeginNs"] = s.window.beginNs;
        js["windowEndNs"] = s.window.endNs;
        js["rulerY1"] = s.rows.empty() ? 0.0f : s.screenTop - m_origin.y + s.rows.front().y;
        if (s.noteY0 >= 0) // too many messages in view to draw their arrows: where that is said
            js["messagesNote"] = {{"x0", s.noteX0 - m_origin.x}, {"y0", s.noteY0 - m_origin.y}, {"x1", s.noteX1 - m_origin.x},
                                  {"y1", s.noteY1 - m_origin.y}};
        for (const Row& r : s.rows) {
            if (r.kind == RowKind::Run) continue;
            const RunResult& run = *m_snapshot->runs[r.run];
            nlohmann::json jr;
            jr["run"] = r.run;
            jr["title"] = run.title;
            jr["device"] = r.device;
            jr["kind"] = r.kind == RowKind::Device ? (r.lanes == 0 ? "device-header" : "device") : "lane";
            jr["y0"] = r.screenY - m_origin.y;
            jr["y1"] = r.screenY - m_origin.y + r.h;
            jr["windowEndNs"] = static_cast<double>(run.windowEndNs - run.windowBeginNs);
            jr["idleFraction"] = r.device < run.usage.size() && run.usage[r.device].windowNs > 0
                                     ? static_cast<double>(run.usage[r.device].idleNs) / static_cast<double>(run.usage[r.device].windowNs)
                                     : 0.0;
            jr["bubbleFraction"] = run.bubbleFraction;
            js["rows"].push_back(jr);
        }
        j["sections"].push_back(js);
    }
    for (int i = 0; i < kPaletteSize; ++i) {
        core::Span f;
        f.category = core::SpanCategory::Forward;
        f.microBatch = i;
        j["forwardColors"].push_back(hex(theme.SpanFill(f, ColorMode::MicroBatch)));
    }
    return j;
}

} // namespace paralens::app
