// TimelineView's critical-path overlay: every op on a step's critical path outlined on its lane,
// and a link from each op to the next one on the path where the path changes lanes (an arrow)
// or waits on its lane (a thin line through the gap). Segments come sorted by start, so only the
// visible ones are looked at; runs of segments narrower than a pixel on one lane merge into one
// outline, so the cost follows the pixels.
#include "Theme.hpp"
#include "TimelineDrawContext.hpp"

#include <algorithm>
#include <cmath>

namespace paralens::app {

namespace {

constexpr int kMaxCriticalSegments = 20000; // drawn per section and frame; more: zoom in
constexpr float kMergePx = 6.0f;             // ops narrower than this merge with their neighbours' outline

int DepthOf(const core::Track& t, uint32_t span)
{
    const auto it = std::upper_bound(t.depthBegin.begin(), t.depthBegin.end(), span);
    return static_cast<int>(it - t.depthBegin.begin()) - 1;
}

// From one op on the path to the next: an arrow across lanes, a line through a wait on one lane.
void Link(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float head)
{
    if (std::fabs(b.y - a.y) < 0.5f) dl->AddLine(a, b, color, thickness);
    else Arrow(dl, a, b, color, thickness, head);
}

} // namespace

bool TimelineView::LaneBand(const Section& s, uint16_t run, uint32_t track, int depth, float& y0, float& y1) const
{
    const RunCache& c = m_cache[run];
    if (track >= c.trackRow.size() || c.trackRow[track] < 0 || depth < 0 || depth >= c.depths[track]) return false;
    const Row* r = &s.rows[static_cast<size_t>(c.trackRow[track])];
    if (r->kind == RowKind::Lane) {
        r = &s.rows[static_cast<size_t>(c.trackRow[track]) + static_cast<size_t>(depth)];
        const float pad = std::max(1.0f, std::floor(r->h * 0.1f));
        y0 = r->screenY + pad;
        y1 = r->screenY + r->h - pad;
        return true;
    }
    const float pad = std::max(1.0f, std::floor(r->h * 0.1f));
    const float band = (r->h - 2 * pad) / static_cast<float>(std::max<uint16_t>(r->lanes, 1));
    y0 = r->screenY + pad + band * (c.trackBand[track] + static_cast<float>(depth));
    y1 = y0 + band;
    return true;
}

void TimelineView::DrawCriticalPath(const Section& s, DrawContext& dc)
{
    const Theme& th = dc.theme;
    const float thick = std::max(2.0f, th.Px(2.5f));
    int drawn = 0;
    for (uint16_t run : s.runs) {
        const RunResult& result = *m_snapshot->runs[run];
        if (!result.critical) continue;
        const core::Trace& t = *result.trace;
        const auto& segs = result.critical->segments;
        const int64_t begin = m_cache[run].beginNs;
        const int64_t t0 = begin + static_cast<int64_t>(std::floor(s.window.beginNs));
        const int64_t t1 = begin + static_cast<int64_t>(std::ceil(s.window.endNs));
        // The first op ending in view, and the one before it (its link may cross into view).
        auto it = std::lower_bound(segs.begin(), segs.end(), t0, [](const core::PathSegment& p, int64_t v) { return p.endNs < v; });
        bool havePrev = false;
        ImVec2 prevEnd{0, 0};
        float box[4] = {0, 0, 0, 0}; // x0, y0, x1, y1 of the outline being merged
        bool open = false;
        auto flush = [&] {
            if (open) dc.dl->AddRect(ImVec2(box[0], box[1]), ImVec2(box[2], box[3]), th.critical, 0.0f, 0, thick);
            open = false;
        };
        for (; it != segs.end() && it->startNs <= t1; ++it) {
            if (it->track == core::kNoTrack) continue; // a gap: drawn as the link across it
            float y0 = 0, y1 = 0;
            if (!LaneBand(s, run, it->track, DepthOf(t.Tracks()[it->track], it->span), y0, y1)) continue;
            if (y1 < dc.clipY0 || y0 > dc.clipY1) {
                havePrev = false;
                continue;
            }
            if (++drawn > kMaxCriticalSegments) break;
            const float x0 = std::max(NsToX(s, static_cast<double>(it->startNs - begin)), s.plotX0 - 2);
            const float x1 = std::min(std::max(NsToX(s, static_cast<double>(it->endNs - begin)), x0 + 1.0f), s.plotX1 + 2);
            const float mid = (y0 + y1) / 2;
            if (havePrev && (std::fabs(prevEnd.y - mid) > 0.5f || x0 - prevEnd.x > 2.0f))
                Link(dc.dl, prevEnd, ImVec2(x0, mid), th.critical, std::max(1.0f, th.line * 1.5f), th.Px(7));
            // Narrow ops touching on one lane share an outline; wide ones get their own.
            const bool narrow = x1 - x0 < kMergePx || box[2] - box[0] < kMergePx;
            if (open && narrow && box[1] == y0 && x0 <= box[2] + 1.0f) box[2] = std::max(box[2], x1);
            else {
                flush();
                box[0] = x0, box[1] = y0, box[2] = x1, box[3] = y1;
                open = true;
            }
            prevEnd = ImVec2(x1, mid);
            havePrev = true;
            ++dc.criticalSegments;
        }
        flush();
    }
}

} // namespace paralens::app
