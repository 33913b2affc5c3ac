// TimelineView's drawing: ruler, row headers, lanes (spans folded Tracy-style), bubbles,
// message arrows and the measured range. Every loop over data goes through FoldVisible or a
// binary search on the visible window, so the work follows the pixels.
#include "Theme.hpp"
#include "TimelineDrawContext.hpp"
#include "TimelineFold.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace paralens::app {

namespace {

constexpr float kMinSpanPx = 3.0f; // narrower spans fold (STYLE.md)
constexpr int kMaxArrowsPerSection = 4000;

int64_t StartOf(const core::Span& s) { return s.startNs; }
int64_t EndOf(const core::Span& s) { return s.endNs; }

// The label of a span into `buf`, shorter for each `level` (0, 1, 2): "F3:1" / "F3" / "3" for
// pipeline ops (R for a recomputed forward, :1 for model chunk 1); "reduce-scatter 5" /
// "reduce-scatter" / "5" for a collective's block (or any indexed span); else its name.
const char* Label(const core::Trace& t, const core::Span& s, bool pipeline, char* buf, size_t size, int level)
{
    const std::string_view name = t.Str(s.name);
    const int n = static_cast<int>(name.size());
    if (s.microBatch >= 0 && pipeline) {
        const bool recompute = s.detail != 0 && t.Str(s.detail) == "recompute";
        const char letter = recompute ? 'R' : (n > 0 ? name[0] : '?');
        if (level == 0 && s.chunk > 0) std::snprintf(buf, size, "%c%d:%d", letter, s.microBatch, s.chunk);
        else if (level <= 1) std::snprintf(buf, size, "%c%d", letter, s.microBatch);
        else std::snprintf(buf, size, "%d", s.microBatch);
    } else if (s.chunk >= 0 || s.microBatch >= 0) {
        const int index = s.chunk >= 0 ? s.chunk : s.microBatch;
        if (level == 0) std::snprintf(buf, size, "%.*s %d", n, name.data(), index);
        else if (level == 1) std::snprintf(buf, size, "%.*s", n, name.data());
        else std::snprintf(buf, size, "%d", index);
    } else {
        std::snprintf(buf, size, "%.*s", n, name.data());
    }
    return buf;
}

void Hatch(ImDrawList* dl, float x0, float y0, float x1, float y1, ImU32 color, float spacing, float thickness)
{
    dl->PushClipRect(ImVec2(x0, y0), ImVec2(x1, y1), true);
    const float h = y1 - y0;
    // Lines on a grid fixed to the screen, so neighbouring bubbles line up.
    for (float x = std::floor((x0 - h) / spacing) * spacing; x < x1; x += spacing)
        dl->AddLine(ImVec2(x, y1), ImVec2(x + h, y0), color, thickness);
    dl->PopClipRect();
}

} // namespace

void TimelineView::DrawSection(Section& s, DrawContext& dc)
{
    const float top = s.screenTop;
    DrawRuler(s, dc, top);
    // Backgrounds first (device blocks alternate), so nothing drawn across rows is covered.
    for (Row& r : s.rows) {
        r.screenY = top + r.y;
        if (r.kind != RowKind::Run && (r.device % 2) == 1 && r.screenY <= dc.clipY1 && r.screenY + r.h >= dc.clipY0)
            dc.dl->AddRectFilled(ImVec2(m_origin.x, r.screenY), ImVec2(s.plotX1, r.screenY + r.h), dc.theme.rowAlt);
    }
    for (size_t i = 0; i < s.rows.size(); ++i) {
        Row& r = s.rows[i];
        if (r.screenY > dc.clipY1 || r.screenY + r.h < dc.clipY0) continue;
        const float y = r.screenY;
        DrawRowHeader(s, r, dc, y);
        if (r.kind == RowKind::Device && r.lanes > 0) DrawDeviceRow(s, r, dc, y);
        if (r.kind == RowKind::Device && r.lanes == 0) {
            // An expanded device: its bubbles span all its lanes.
            size_t last = i;
            while (last + 1 < s.rows.size() && s.rows[last + 1].kind == RowKind::Lane && s.rows[last + 1].device == r.device) ++last;
            const float pad = dc.theme.Px(2);
            if (dc.settings.showBubbles)
                DrawBubbles(s, r.run, r.device, top + s.rows[i].y + r.h, top + s.rows[last].y + s.rows[last].h - pad, dc);
        }
        if (r.kind == RowKind::Lane) {
            const float pad = std::max(1.0f, std::floor(r.h * 0.1f));
            DrawLane(s, r.run, r.track, r.depth, y + pad, y + r.h - pad, dc);
        }
    }
    s.noteY0 = -1;
    if (dc.settings.showFlows) DrawFlows(s, dc);
    if (dc.settings.showCriticalPath) DrawCriticalPath(s, dc);
    DrawMeasure(s, dc);
}

void TimelineView::DrawRuler(const Section& s, DrawContext& dc, float y)
{
    const Theme& th = dc.theme;
    const float rulerH = s.rows.empty() ? 0.0f : s.rows.front().y;
    dc.dl->AddRectFilled(ImVec2(m_origin.x, y), ImVec2(m_origin.x + m_size.x, y + rulerH), th.panel);
    dc.dl->AddLine(ImVec2(m_origin.x, y + rulerH - 0.5f), ImVec2(m_origin.x + m_size.x, y + rulerH - 0.5f), th.gridMajor, 1.0f);
    // The section's name in the header column.
    const RunResult& first = *m_snapshot->runs[s.runs.front()];
    const char* what = first.experiment.kind == ExperimentKind::Collective ? "collectives"
                       : first.experiment.kind == ExperimentKind::Pipeline ? "pipelines"
                       : first.experiment.kind == ExperimentKind::Training ? "training steps"
                       : first.experiment.kind == ExperimentKind::Autopar ? "auto-parallel strategies"
                       : first.experiment.kind == ExperimentKind::Plan    ? "planned training steps"
                       : first.experiment.kind == ExperimentKind::WhatIf  ? "what-if replay"
                       : first.experiment.label.empty()                    ? "trace file"
                                                                           : first.experiment.label.c_str();
    const float fontH = ImGui::GetFontSize();
    dc.dl->PushClipRect(ImVec2(m_origin.x, y), ImVec2(s.plotX0 - th.Px(4), y + rulerH), true);
    dc.dl->AddText(th.bold, fontH, ImVec2(m_origin.x + th.Px(6), y + (rulerH - fontH) / 2), th.text, what);
    dc.dl->PopClipRect();
    const float width = s.plotX1 - s.plotX0;
    const double step = ComputeTicks(s.window, width, th.Px(95), m_ticks);
    const float sectionBottom = y + s.height - rulerH * 0.4f;
    for (const Tick& t : m_ticks) {
        const float x = std::round(NsToX(s, t.ns)) + 0.5f;
        if (x < s.plotX0 || x > s.plotX1) continue;
        if (t.major) {
            dc.dl->AddLine(ImVec2(x, y + rulerH), ImVec2(x, sectionBottom), th.grid, 1.0f);
            dc.dl->AddLine(ImVec2(x, y + rulerH * 0.55f), ImVec2(x, y + rulerH), th.textDim, 1.0f);
            FormatTime(dc.text, sizeof dc.text, t.ns, step);
            dc.dl->AddText(ImVec2(x + th.Px(3), y + th.Px(2)), th.text, dc.text);
        } else {
            dc.dl->AddLine(ImVec2(x, y + rulerH * 0.8f), ImVec2(x, y + rulerH), th.textDim, 1.0f);
        }
    }
}

void TimelineView::DrawRowHeader(const Section& s, const Row& r, DrawContext& dc, float y)
{
    const Theme& th = dc.theme;
    const RunResult& run = *m_snapshot->runs[r.run];
    const core::Trace& t = *run.trace;
    const float fontH = ImGui::GetFontSize();
    const float textY = y + std::max(0.0f, (std::min(r.h, fontH * 1.6f) - fontH) / 2);
    if (r.kind == RowKind::Run) {
        dc.dl->AddRectFilled(ImVec2(m_origin.x, y), ImVec2(m_origin.x + m_size.x, y + r.h), th.rowHeader);
        int n = std::snprintf(dc.text, sizeof dc.text, "%s", run.title.c_str());
        char a[32], b[32];
        if (run.bubbleFraction >= 0 && n > 0 && n < static_cast<int>(sizeof dc.text)) {
            n += std::snprintf(dc.text + n, sizeof dc.text - static_cast<size_t>(n), "   \xE2\x80\x94   bubble %.1f%%", run.bubbleFraction * 100);
            if (run.bubbleFormula >= 0 && n < static_cast<int>(sizeof dc.text))
                n += std::snprintf(dc.text + n, sizeof dc.text - static_cast<size_t>(n), " (formula %.1f%%)", run.bubbleFormula * 100);
            if (run.bubbleModel >= 0 && n > 0 && n < static_cast<int>(sizeof dc.text))
                std::snprintf(dc.text + n, sizeof dc.text - static_cast<size_t>(n), ", model %.1f%%", run.bubbleModel * 100);
        } else if (run.experiment.kind == ExperimentKind::Collective && n > 0 && n < static_cast<int>(sizeof dc.text)) {
            std::snprintf(dc.text + n, sizeof dc.text - static_cast<size_t>(n), "   \xE2\x80\x94   %s %s, model %s",
                          FormatDuration(a, sizeof a, run.simulatedSeconds * 1e9), run.measured ? run.measuredAs : "simulated",
                          FormatDuration(b, sizeof b, run.predictedSeconds * 1e9));
        }
        dc.dl->AddText(th.bold, fontH, ImVec2(m_origin.x + th.Px(6), textY), th.text, dc.text);
        return;
    }
    if (r.kind == RowKind::Lane) {
        const std::string_view lane = t.Str(t.Tracks()[r.track].name);
        if (r.depth == 0) std::snprintf(dc.text, sizeof dc.text, "%.*s", static_cast<int>(lane.size()), lane.data());
        else std::snprintf(dc.text, sizeof dc.text, "%.*s +%d", static_cast<int>(lane.size()), lane.data(), r.depth);
        dc.dl->AddText(ImVec2(m_origin.x + th.Px(22), textY), th.textDim, dc.text);
        return;
    }
    const std::string_view name = t.Str(t.Devices()[r.device].name);
    const bool expandable = r.lanes != 1;
    const ImVec2 hmin(m_origin.x, y), hmax(s.plotX0, y + r.h);
    const bool hovered = dc.hovered && dc.mouse.x >= hmin.x && dc.mouse.x < hmax.x && dc.mouse.y >= hmin.y && dc.mouse.y < hmax.y;
    if (hovered && expandable && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        m_cache[r.run].expanded[r.device] ^= 1;
        m_rowsDirty = true;
    }
    float x = m_origin.x + th.Px(6);
    if (expandable) {
        dc.dl->AddText(ImVec2(x, textY), hovered ? th.accent : th.textDim, r.lanes == 0 ? "\xE2\x96\xBE" : "\xE2\x96\xB8");
        x += th.Px(13);
    }
    // The idle share on the right of the header; the name clipped before it.
    float nameEnd = s.plotX0 - th.Px(6);
    if (r.device < run.usage.size() && run.usage[r.device].windowNs > 0) {
        const core::DeviceUsage& u = run.usage[r.device];
        std::snprintf(dc.text, sizeof dc.text, "idle %.0f%%", 100.0 * static_cast<double>(u.idleNs) / static_cast<double>(u.windowNs));
        const float w = ImGui::CalcTextSize(dc.text).x;
        dc.dl->AddText(ImVec2(s.plotX0 - w - th.Px(8), textY), th.textDim, dc.text);
        nameEnd = s.plotX0 - w - th.Px(14);
    }
    std::snprintf(dc.text, sizeof dc.text, "%.*s", static_cast<int>(name.size()), name.data());
    dc.dl->PushClipRect(ImVec2(x, y), ImVec2(std::max(x, nameEnd), y + r.h), true);
    dc.dl->AddText(ImVec2(x, textY), th.text, dc.text);
    dc.dl->PopClipRect();
}

void TimelineView::DrawDeviceRow(const Section& s, const Row& r, DrawContext& dc, float y)
{
    const core::Trace& t = *m_snapshot->runs[r.run]->trace;
    const float pad = std::max(1.0f, std::floor(r.h * 0.1f));
    const float y0 = y + pad, y1 = y + r.h - pad;
    if (dc.settings.showBubbles) DrawBubbles(s, r.run, r.device, y0, y1, dc);
    // Every lane of the device in its own sub-band.
    const float band = (y1 - y0) / static_cast<float>(std::max<uint16_t>(r.lanes, 1));
    int i = 0;
    for (uint32_t tr : t.Devices()[r.device].tracks)
        for (int depth = 0; depth < m_cache[r.run].depths[tr]; ++depth, ++i) {
            const float b0 = y0 + band * static_cast<float>(i);
            const float gap = r.lanes > 1 ? std::min(1.0f, band * 0.1f) : 0.0f;
            DrawLane(s, r.run, tr, depth, b0, b0 + band - gap, dc);
        }
}

void TimelineView::DrawLane(const Section& s, uint16_t run, uint32_t track, int depth, float y0, float y1, DrawContext& dc)
{
    const core::Trace& t = *m_snapshot->runs[run]->trace;
    const core::Track& tr = t.Tracks()[track];
    if (tr.DepthCount() == 0) return;
    const Theme& th = dc.theme;
    const int64_t begin = m_cache[run].beginNs;
    const double nsPerPx = s.window.Span() / std::max(1.0f, s.plotX1 - s.plotX0);
    const int64_t t0 = begin + static_cast<int64_t>(std::floor(s.window.beginNs));
    const int64_t t1 = begin + static_cast<int64_t>(std::ceil(s.window.endNs)) + 1;
    const float fontH = ImGui::GetFontSize();
    const bool predicted = dc.settings.showPredicted && (y1 - y0) >= fontH * 1.4f;
    const float barY1 = predicted ? y1 - std::max(3.0f, std::floor((y1 - y0) * 0.18f)) : y1;
    // Labels shrink with the bar down to a readable minimum.
    const float labelSize = std::min(fontH, std::floor((barY1 - y0) * 0.95f));
    const bool labels = labelSize >= std::max(9.0f, fontH * 0.7f);
    const bool inLane = dc.hovered && dc.mouse.y >= y0 && dc.mouse.y < y1;
    const bool pipeline = m_cache[run].pipeline;
    const core::CostParams* fit = dc.settings.outlinesFromFit ? m_snapshot->runs[run]->fitCost.get() : nullptr;
    auto onSpan = [&](const core::Span& sp, size_t) {
        const float x0 = std::max(NsToX(s, static_cast<double>(sp.startNs - begin)), s.plotX0 - 2);
        const float x1 = std::min(NsToX(s, static_cast<double>(sp.endNs - begin)), s.plotX1 + 2);
        const ImU32 fill = th.SpanFill(sp, dc.settings.colorBy);
        dc.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, barY1), fill);
        if (x1 - x0 > 4) dc.dl->AddRect(ImVec2(x0, y0), ImVec2(x1, barY1), Mix(fill, IM_COL32_BLACK, 0.4f), 0.0f, 0, th.line);
        // A pipeline op of model chunk 1, 2, ... (interleaving) gets a dark band on top.
        if (pipeline && sp.microBatch >= 0 && sp.chunk > 0 && x1 - x0 > 2)
            dc.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y0 + std::max(2.0f, std::floor((barY1 - y0) * 0.16f))),
                                 Mix(fill, IM_COL32_BLACK, 0.45f));
        if (sp.detail != 0 && sp.microBatch >= 0 && t.Str(sp.detail) == "recompute")
            Hatch(dc.dl, x0, y0, x1, barY1, WithAlpha(IM_COL32_WHITE, 0.55f), th.Px(5), th.line);
        const int64_t predictedNs = fit ? PredictedNs(sp, t.Meta(), fit) : sp.predictedNs;
        if (predicted && predictedNs >= 0) {
            const float px1 = NsToX(s, static_cast<double>(sp.startNs - begin + predictedNs));
            dc.dl->AddRect(ImVec2(x0, barY1 + 1), ImVec2(std::max(px1, x0 + 1), y1), Mix(fill, th.predicted, 0.55f), 0.0f, 0, 1.0f);
        }
        if (labels && x1 - x0 > labelSize * 1.2f) {
            ImFont* font = ImGui::GetFont();
            const char* text = Label(t, sp, pipeline, dc.text, sizeof dc.text, 0);
            ImVec2 size = font->CalcTextSizeA(labelSize, 1e9f, 0, text);
            for (int level = 1; level <= 2 && size.x > x1 - x0 - 4; ++level)
                size = font->CalcTextSizeA(labelSize, 1e9f, 0, text = Label(t, sp, pipeline, dc.text, sizeof dc.text, level));
            if (size.x <= x1 - x0 - 4)
                dc.dl->AddText(font, labelSize, ImVec2(std::floor((x0 + x1 - size.x) / 2), std::floor((y0 + barY1 - size.y) / 2)),
                               th.TextOn(fill), text);
        }
        if (inLane && dc.mouse.x >= x0 && dc.mouse.x < x1) {
            m_hover = Hover{};
            m_hover.any = true;
            m_hover.run = run;
            m_hover.track = track;
            m_hover.span = sp;
        }
    };
    auto onFold = [&](int64_t b, int64_t e, size_t, size_t count) {
        float x0 = NsToX(s, static_cast<double>(b - begin)), x1 = NsToX(s, static_cast<double>(e - begin));
        x0 = std::max(x0, s.plotX0 - 2);
        x1 = std::min(std::max(x1, x0 + 2.0f), s.plotX1 + 2);
        dc.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, barY1), th.fold);
        if (labels && x1 - x0 > fontH * 2.5f) {
            std::snprintf(dc.text, sizeof dc.text, "%zu", count);
            const ImVec2 size = ImGui::CalcTextSize(dc.text);
            if (size.x < x1 - x0 - 4)
                dc.dl->AddText(ImVec2(std::floor((x0 + x1 - size.x) / 2), std::floor((y0 + barY1 - size.y) / 2)), th.textOnDark, dc.text);
        }
        if (inLane && dc.mouse.x >= x0 && dc.mouse.x < x1) {
            m_hover = Hover{};
            m_hover.any = m_hover.fold = true;
            m_hover.run = run;
            m_hover.track = track;
            m_hover.foldBeginNs = b;
            m_hover.foldEndNs = e;
            m_hover.foldCount = count;
        }
    };
    const RunResult& result = *m_snapshot->runs[run];
    const FoldIndex* index = result.index && track < result.index->spans.size() &&
                                     static_cast<size_t>(depth) < result.index->spans[track].size()
                                 ? &result.index->spans[track][static_cast<size_t>(depth)]
                                 : nullptr;
    FoldVisible<core::Span>(tr.Lane(depth), t0, t1, nsPerPx, kMinSpanPx, StartOf, EndOf, onSpan, onFold, index);
}

void TimelineView::DrawBubbles(const Section& s, uint16_t run, uint32_t device, float y0, float y1, DrawContext& dc)
{
    const RunResult& r = *m_snapshot->runs[run];
    if (device >= r.usage.size() || y1 <= y0) return;
    // Bubbles are the accelerators' idle time; a host thread's waiting is not hatched.
    if (r.trace->Devices()[device].kind == core::DeviceKind::Cpu) return;
    const Theme& th = dc.theme;
    const int64_t begin = m_cache[run].beginNs;
    const double nsPerPx = s.window.Span() / std::max(1.0f, s.plotX1 - s.plotX0);
    const int64_t t0 = begin + static_cast<int64_t>(std::floor(s.window.beginNs));
    const int64_t t1 = begin + static_cast<int64_t>(std::ceil(s.window.endNs)) + 1;
    auto onGap = [&](const core::Interval& gap, size_t) {
        const float x0 = std::max(NsToX(s, static_cast<double>(gap.begin - begin)), s.plotX0);
        const float x1 = std::min(NsToX(s, static_cast<double>(gap.end - begin)), s.plotX1);
        if (x1 <= x0) return;
        dc.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), th.bubbleFill);
        Hatch(dc.dl, x0, y0, x1, y1, th.bubbleHatch, th.Px(7), th.line);
    };
    // Gaps narrower than a pixel are invisible: folds of them draw nothing.
    const FoldIndex* index = r.index && device < r.index->idle.size() ? &r.index->idle[device] : nullptr;
    FoldVisible<core::Interval>(
        r.usage[device].idle, t0, t1, nsPerPx, 1.0, [](const core::Interval& i) { return i.begin; },
        [](const core::Interval& i) { return i.end; }, onGap, [](int64_t, int64_t, size_t, size_t) {}, index);
}

void TimelineView::DrawFlows(Section& s, DrawContext& dc)
{
    const Theme& th = dc.theme;
    int drawn = 0;
    for (uint16_t run : s.runs) {
        const core::Trace& t = *m_snapshot->runs[run]->trace;
        const RunCache& c = m_cache[run];
        const auto flows = t.Flows();
        const int64_t t0 = c.beginNs + static_cast<int64_t>(std::floor(s.window.beginNs));
        const int64_t t1 = c.beginNs + static_cast<int64_t>(std::ceil(s.window.endNs));
        auto it = std::lower_bound(flows.begin(), flows.end(), t0 - c.maxFlowNs,
                                   [](const core::Flow& f, int64_t v) { return f.srcNs < v; });
        for (; it != flows.end() && it->srcNs <= t1; ++it) {
            if (it->dstNs < t0 || it->srcTrack >= c.trackRow.size() || it->dstTrack >= c.trackRow.size()) continue;
            const int rs = c.trackRow[it->srcTrack], rd = c.trackRow[it->dstTrack];
            if (rs < 0 || rd < 0) continue;
            if (++drawn > kMaxArrowsPerSection) {
                ++dc.hiddenArrows;
                continue;
            }
            auto centre = [&](int row, float band) {
                const Row& r = s.rows[static_cast<size_t>(row)];
                if (r.kind == RowKind::Lane) return r.screenY + r.h / 2;
                const float pad = std::max(1.0f, std::floor(r.h * 0.1f));
                const float bh = (r.h - 2 * pad) / static_cast<float>(std::max<uint16_t>(r.lanes, 1));
                return r.screenY + pad + bh * (band + 0.5f);
            };
            const float ys = centre(rs, c.trackBand[it->srcTrack]), yd = centre(rd, c.trackBand[it->dstTrack]);
            if (std::max(ys, yd) < dc.clipY0 || std::min(ys, yd) > dc.clipY1) continue;
            const ImVec2 a(NsToX(s, static_cast<double>(it->srcNs - c.beginNs)), ys);
            const ImVec2 b(NsToX(s, static_cast<double>(it->dstNs - c.beginNs)), yd);
            // Pure dependencies (no bytes: a free link) are drawn fainter than messages.
            Arrow(dc.dl, a, b, it->bytes > 0 ? th.arrow : WithAlpha(th.arrow, 0.3f), th.line, th.Px(6));
            ++dc.arrows;
        }
    }
    if (drawn > kMaxArrowsPerSection) {
        // On the right of the first run's title row in view (its right side is free), on its own
        // background; in the ruler when no title row is in view. (Drawn in the ruler always, it
        // overlapped the time labels.)
        std::snprintf(dc.text, sizeof dc.text, "%d messages in view: zoom in to see the arrows", drawn);
        const float fontH = ImGui::GetFontSize(), w = ImGui::CalcTextSize(dc.text).x;
        float y = s.screenTop + (s.rows.front().y - fontH) / 2;
        ImU32 back = th.panel;
        for (const Row& r : s.rows)
            if (r.kind == RowKind::Run && r.screenY >= dc.clipY0 && r.screenY + r.h <= dc.clipY1) {
                y = r.screenY + std::max(0.0f, (std::min(r.h, fontH * 1.6f) - fontH) / 2);
                back = th.rowHeader;
                break;
            }
        const ImVec2 at(s.plotX1 - w - th.Px(6), y);
        dc.dl->AddRectFilled(ImVec2(at.x - th.Px(6), y), ImVec2(s.plotX1, y + fontH), back);
        dc.dl->AddText(at, th.textDim, dc.text);
        s.noteX0 = at.x;
        s.noteY0 = y;
        s.noteX1 = at.x + w;
        s.noteY1 = y + fontH;
    }
}

void TimelineView::DrawMeasure(const Section& s, DrawContext& dc)
{
    if (m_measureSection != static_cast<int>(&s - m_sections.data())) return;
    const Theme& th = dc.theme;
    const double a = std::min(m_measureA, m_measureB), b = std::max(m_measureA, m_measureB);
    const float x0 = std::max(NsToX(s, a), s.plotX0), x1 = std::min(NsToX(s, b), s.plotX1);
    if (x1 <= x0) return;
    const float top = s.screenTop, bottom = s.screenTop + s.height;
    dc.dl->AddRectFilled(ImVec2(x0, top), ImVec2(x1, bottom), th.selection);
    dc.dl->AddLine(ImVec2(x0, top), ImVec2(x0, bottom), th.accent, th.line);
    dc.dl->AddLine(ImVec2(x1, top), ImVec2(x1, bottom), th.accent, th.line);
    FormatDuration(dc.text, sizeof dc.text, b - a);
    const ImVec2 size = ImGui::CalcTextSize(dc.text);
    const float lx = std::clamp((x0 + x1 - size.x) / 2, s.plotX0, s.plotX1 - size.x);
    dc.dl->AddRectFilled(ImVec2(lx - 4, top + 2), ImVec2(lx + size.x + 4, top + size.y + 4), th.accent, 3.0f);
    dc.dl->AddText(ImVec2(lx, top + 3), th.textOnDark, dc.text);
}

} // namespace paralens::app
