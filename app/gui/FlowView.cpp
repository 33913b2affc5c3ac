#include "FlowView.hpp"

#include "ImGuiCompat.hpp"
#include "PlotUtil.hpp"
#include "Theme.hpp"
#include "TimeAxis.hpp"

#include "model/CostModel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace paralens::app {

namespace {

// The model of the run's collective (for a training step, its collective's, not the whole step's
// prediction).
double ClosedFormSeconds(const RunResult& run)
{
    return run.collectiveModelSeconds > 0 ? run.collectiveModelSeconds : run.predictedSeconds;
}

bool ColourByOrigin(core::Collective c) { return c == core::Collective::AllToAll || c == core::Collective::SendRecv; }

float Ease(float t) { return t * t * (3 - 2 * t); }

struct StepPosition {
    int shown = 0;      // holdings after this many steps
    int inFlight = 0;   // the step whose messages are drawn (0: none)
    float phase = 1.0f; // how far the packets have travelled
};

StepPosition Position(double position, int steps)
{
    StepPosition s;
    const double p = std::clamp(position, 0.0, static_cast<double>(steps));
    const int k = static_cast<int>(std::ceil(p - 1e-9));
    if (k <= 0) return s;
    s.inFlight = k;
    s.phase = static_cast<float>(std::clamp(p - (k - 1), 0.0, 1.0));
    s.shown = s.phase >= 1.0f ? k : k - 1;
    return s;
}

} // namespace

void FlowView::SetSnapshot(std::shared_ptr<const Snapshot> snapshot, int step, bool resetStep)
{
    m_snapshot = std::move(snapshot);
    m_panels.clear();
    if (m_snapshot)
        for (size_t i = 0; i < m_snapshot->runs.size(); ++i)
            if (m_snapshot->runs[i]->holdings && m_snapshot->runs[i]->plan) {
                Panel panel;
                panel.run = i;
                m_panels.push_back(std::move(panel));
            }
    if (resetStep) {
        m_pendingStep = step;
        m_playing = false;
    }
    m_focus = std::min(m_focus, m_panels.empty() ? size_t{0} : m_panels.size() - 1);
}

int FlowView::MaxSteps() const
{
    int steps = 0;
    for (const Panel& p : m_panels) steps = std::max(steps, m_snapshot->runs[p.run]->holdings->Steps());
    return steps;
}

void FlowView::Draw(ViewSettings& settings, ImVec2 size)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float fontH = ImGui::GetFontSize();
    dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), th.background);
    if (m_panels.empty()) {
        const char* msg = "No collective to animate here. Add one with \"+ Add\" in the controls (kind: collective).";
        dl->AddText(ImVec2(origin.x + fontH, origin.y + fontH), th.textDim, msg);
        ImGui::Dummy(size);
        return;
    }
    const int maxSteps = MaxSteps();
    if (m_pendingStep > -3) {
        m_position = m_pendingStep < 0 ? maxSteps : std::min(m_pendingStep, maxSteps);
        m_pendingStep = -3;
    }
    // Keys while the view is under the mouse: Space plays or pauses, Left and Right step.
    if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows) && !ImGui::GetIO().WantTextInput) {
        if (KeyPressed(Key::Space)) {
            if (!m_playing && m_position >= maxSteps) m_position = 0;
            m_playing = !m_playing;
        }
        if (KeyPressed(Key::Right)) {
            m_position = std::min<double>(maxSteps, std::floor(m_position) + 1);
            m_playing = false;
        }
        if (KeyPressed(Key::Left)) {
            m_position = std::max(0.0, std::ceil(m_position) - 1);
            m_playing = false;
        }
    }
    if (m_playing) {
        m_position += ImGui::GetIO().DeltaTime * m_speed;
        if (m_position >= maxSteps) {
            m_position = maxSteps;
            m_playing = false;
        }
    }
    for (size_t i = 0; i < m_panels.size(); ++i)
        if (static_cast<int>(m_panels[i].run) == settings.selected) m_focus = i;
    // The step controls and the explanation go in a column on the right when there is room
    // (the panels keep the full height), else in a strip below.
    const float sideW = std::floor(std::clamp(size.x * 0.3f, fontH * 16.0f, fontH * 26.0f));
    const bool side = size.x >= sideW * 2.4f;
    const float controlsH = std::floor(fontH * 5.6f);
    const ImVec2 area = side ? ImVec2(size.x - sideW, size.y) : ImVec2(size.x, std::max(size.y - controlsH, fontH * 4));
    // The grid of panels that keeps them closest to square.
    const int n = static_cast<int>(m_panels.size());
    int cols = 1;
    float best = 0;
    for (int c = 1; c <= n; ++c) {
        const int rows = (n + c - 1) / c;
        const float cell = std::min(area.x / c, area.y / rows * 1.25f);
        if (cell > best) {
            best = cell;
            cols = c;
        }
    }
    const int rows = (n + cols - 1) / cols;
    const ImVec2 cellSize(std::floor(area.x / cols), std::floor(area.y / rows));
    for (int i = 0; i < n; ++i) {
        const ImVec2 pmin(origin.x + (i % cols) * cellSize.x, origin.y + (i / cols) * cellSize.y);
        const ImVec2 pmax(pmin.x + cellSize.x, pmin.y + cellSize.y);
        Panel& panel = m_panels[static_cast<size_t>(i)];
        if (n > 1 && ImGui::IsMouseClicked(ImGuiMouseButton_Left) && ImGui::IsMouseHoveringRect(pmin, pmax) &&
            ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) {
            m_focus = static_cast<size_t>(i);
            settings.selected = static_cast<int>(panel.run);
        }
        DrawPanel(panel, *m_snapshot->runs[panel.run], pmin, pmax, n > 1 && static_cast<size_t>(i) == m_focus);
    }
    const ImVec2 controls = side ? ImVec2(origin.x + area.x, origin.y) : ImVec2(origin.x, origin.y + area.y);
    ImGui::SetCursorScreenPos(controls);
    ImGui::BeginChild("##flow-controls", side ? ImVec2(sideW, size.y) : ImVec2(size.x, size.y - area.y), false);
    DrawControls(ImGui::GetCursorScreenPos(), ImGui::GetContentRegionAvail().x, m_snapshot->runs[m_panels[m_focus].run].get());
    ImGui::EndChild();
    // At the end: -1, "after the last", as scenarios and links say it.
    settings.flowStep = maxSteps > 0 && m_position >= maxSteps ? -1 : static_cast<int>(std::floor(m_position));
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + size.y));
}

void FlowView::DrawPanel(Panel& panel, const RunResult& run, ImVec2 min, ImVec2 max, bool focused)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fontH = ImGui::GetFontSize();
    const FlowLayout& layout = *run.layout;
    const FlowHoldings& h = *run.holdings;
    const int p = h.Ranks();
    const StepPosition pos = Position(m_position, h.Steps());
    panel.min = min;
    panel.max = max;
    const float pad = fontH * 0.5f;
    dl->AddRect(ImVec2(min.x + 2, min.y + 2), ImVec2(max.x - 2, max.y - 2), focused ? th.accent : th.grid, 4.0f, 0,
                focused ? 2 * th.line : th.line);
    dl->PushClipRect(min, max, true);
    // Title: the label (or the collective); then the algorithm, p, n and the step.
    const core::CollectiveSpec& spec = run.plan->spec;
    const std::string_view collective = core::Name(spec.collective), algorithm = core::Name(spec.algorithm);
    char line[160], bytes[32];
    if (run.experiment.label.empty()) std::snprintf(line, sizeof line, "%.*s", static_cast<int>(collective.size()), collective.data());
    else std::snprintf(line, sizeof line, "%s", run.experiment.label.c_str());
    dl->AddText(th.bold, fontH, ImVec2(min.x + pad, min.y + pad), th.text, line);
    const int k = pos.inFlight;
    int n = std::snprintf(line, sizeof line, "%.*s, p = %d, %s", static_cast<int>(algorithm.size()), algorithm.data(), p,
                          FormatValue(bytes, sizeof bytes, static_cast<double>(spec.bytes), AxisUnit::Bytes));
    if (n > 0 && n < static_cast<int>(sizeof line)) {
        if (k == 0) std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "  \xC2\xB7  before the first step");
        else std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "  \xC2\xB7  step %d of %d: %s", k, h.Steps(),
                           run.steps[static_cast<size_t>(k - 1)].phase.c_str());
    }
    dl->AddText(ImVec2(min.x + pad, min.y + pad + fontH * 1.25f), th.textDim, line);
    // Fit the layout above the rows of cells: rings and stars may stretch into ellipses to use a
    // wide panel; trees and hypercubes keep their shape.
    const int cellRows = h.HasOutputRow() ? 2 : 1;
    const bool stretch = layout.kind == FlowLayoutKind::Ring || layout.kind == FlowLayoutKind::Star;
    const float labels = layout.ranksPerNode > 0 ? fontH * 1.3f : 0.0f; // the nodes' names
    const ImVec2 gmin(min.x + pad, min.y + pad + fontH * 2.8f + labels), gmax(max.x - pad, max.y - pad - (m_panels.size() > 1 ? fontH * 1.2f : 0.0f));
    float cell = fontH, radius = fontH;
    panel.nodes.resize(static_cast<size_t>(p));
    for (int it = 0; it < 3; ++it) {
        const float w = gmax.x - gmin.x - p * cell, hgt = gmax.y - gmin.y - 2 * radius - cellRows * cell * 1.15f - fontH * 0.3f;
        float sy = std::max(1.0f, hgt / layout.height), sx = std::max(1.0f, w / layout.width);
        if (stretch) sx = std::min(sx, sy * 2.2f);
        else sx = sy = std::min(sx, sy);
        const float bw = layout.width * sx, bh = layout.height * sy;
        const float top = gmin.y + radius;
        const float ox = (gmin.x + gmax.x - bw) / 2, oy = top + std::max(0.0f, (hgt - bh) / 2);
        for (int r = 0; r < p; ++r) {
            const FlowPoint& fp = layout.pos[static_cast<size_t>(r)];
            panel.nodes[static_cast<size_t>(r)] = {ImVec2(std::round(ox + fp.x * bw), std::round(oy + fp.y * bh)), std::round(radius)};
        }
        // Nodes as big as the closest pair allows; then the largest cells for which no two ranks'
        // rows of cells (and nodes) collide: side by side, or one row above the other.
        float dmin = std::min(gmax.x - gmin.x, gmax.y - gmin.y);
        for (int i = 0; i < p; ++i)
            for (int j = i + 1; j < p; ++j) {
                const ImVec2 a = panel.nodes[static_cast<size_t>(i)].centre, b = panel.nodes[static_cast<size_t>(j)].centre;
                dmin = std::min(dmin, std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)));
            }
        radius = std::clamp(dmin * 0.3f, fontH * 0.6f, fontH * 1.3f);
        for (cell = fontH * 1.35f; cell > 3.0f; cell -= 0.5f) {
            bool fits = true;
            for (int i = 0; i < p && fits; ++i)
                for (int j = i + 1; j < p && fits; ++j) {
                    const ImVec2 a = panel.nodes[static_cast<size_t>(i)].centre, b = panel.nodes[static_cast<size_t>(j)].centre;
                    fits = std::abs(a.x - b.x) >= p * cell + 3 || std::abs(a.y - b.y) >= cellRows * cell * 1.15f + radius * 1.6f + 3;
                }
            if (fits) break;
        }
        cell = std::max(cell, 3.0f);
    }
    for (Node& node : panel.nodes) node.radius = std::round(radius);
    DrawNodeBands(layout, panel.nodes, ImVec2(gmin.x, gmin.y - labels), gmax);
    for (auto [a, b] : layout.edges)
        dl->AddLine(panel.nodes[static_cast<size_t>(a)].centre, panel.nodes[static_cast<size_t>(b)].centre, th.edge, th.line);
    char label[16];
    for (int r = 0; r < p; ++r) {
        const Node& node = panel.nodes[static_cast<size_t>(r)];
        dl->AddCircleFilled(node.centre, node.radius, th.nodeFill, 32);
        dl->AddCircle(node.centre, node.radius, th.nodeBorder, 32, th.line);
        std::snprintf(label, sizeof label, "%d", r);
        const float fs = std::min(fontH, node.radius * 1.2f);
        const ImVec2 ts = th.Bold()->CalcTextSizeA(fs, 1e9f, 0, label);
        dl->AddText(th.bold, fs, ImVec2(node.centre.x - ts.x / 2, node.centre.y - ts.y / 2), th.textOnDark, label);
        DrawCells(run, node, r, pos.shown, cell);
    }
    DrawTransfers(run, panel.nodes, pos.inFlight, pos.phase, cell);
    // The model's running total against the closed form (the side column says it for one panel).
    if (m_panels.size() < 2) {
        dl->PopClipRect();
        return;
    }
    double total = 0;
    for (int s = 0; s < pos.shown; ++s) total += run.steps[static_cast<size_t>(s)].modelSeconds;
    char a[32], b[32];
    std::snprintf(line, sizeof line, "\xCE\xA3 step costs %s of %s (closed form)", FormatDuration(a, sizeof a, total * 1e9),
                  FormatDuration(b, sizeof b, ClosedFormSeconds(run) * 1e9));
    dl->AddText(ImVec2(min.x + pad, max.y - pad - fontH), th.textDim, line);
    dl->PopClipRect();
}

void FlowView::DrawNodeBands(const FlowLayout& layout, const std::vector<Node>& nodes, ImVec2 areaMin, ImVec2 areaMax)
{
    const int g = layout.ranksPerNode;
    if (g <= 0) return;
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fontH = ImGui::GetFontSize();
    const ImU32 band = Mix(th.background, th.accent, 0.10f), rim = Mix(th.background, th.accent, 0.35f);
    std::vector<ImVec2>& centres = m_bandPoints; // kept between frames: no allocation per frame
    ImVec2 centre(0, 0); // of the circle
    for (const Node& n : nodes) {
        centre.x += n.centre.x / static_cast<float>(nodes.size());
        centre.y += n.centre.y / static_cast<float>(nodes.size());
    }
    char label[24];
    for (size_t first = 0; first + static_cast<size_t>(g) <= nodes.size(); first += static_cast<size_t>(g)) {
        // A band along the node's ranks, as wide as a rank and a half, with round ends.
        centres.clear();
        for (size_t r = first; r < first + static_cast<size_t>(g); ++r) centres.push_back(nodes[r].centre);
        const float half = nodes[first].radius * 1.55f;
        dl->AddPolyline(centres.data(), static_cast<int>(centres.size()), band, ImDrawFlags_None, 2 * half);
        dl->AddCircleFilled(centres.front(), half, band, 32);
        dl->AddCircleFilled(centres.back(), half, band, 32);
        dl->AddCircle(centres.front(), half, rim, 32, th.line);
        dl->AddCircle(centres.back(), half, rim, 32, th.line);
        // Its name: facing nodes above their highest rank (in the room kept for it), nodes around a
        // circle outside it, beyond the node's middle.
        std::snprintf(label, sizeof label, "node %zu", first / static_cast<size_t>(g));
        const ImVec2 ts = ImGui::CalcTextSize(label);
        const ImVec2 a = centres.front(), b = centres.back(), middle = centres[centres.size() / 2];
        if (layout.facing) {
            dl->AddText(ImVec2(std::max(a.x, b.x) - (std::fabs(a.x - b.x) + ts.x) / 2, std::min(a.y, b.y) - half - fontH * 0.15f - ts.y),
                        th.textDim, label);
            continue;
        }
        ImVec2 out((a.x + b.x) / 2 - centre.x, (a.y + b.y) / 2 - centre.y);
        float len = std::sqrt(out.x * out.x + out.y * out.y);
        if (len < 1) {
            out = ImVec2(middle.x - centre.x, middle.y - centre.y);
            len = std::max(1.0f, std::sqrt(out.x * out.x + out.y * out.y));
        }
        const float r = std::sqrt((middle.x - centre.x) * (middle.x - centre.x) + (middle.y - centre.y) * (middle.y - centre.y));
        const float reach = r + half + fontH * 0.3f + std::max(ts.x, ts.y) * 0.5f;
        const float x = centre.x + out.x / len * reach - ts.x / 2, y = centre.y + out.y / len * reach - ts.y / 2;
        dl->AddText(ImVec2(std::clamp(x, areaMin.x, std::max(areaMin.x, areaMax.x - ts.x)),
                           std::clamp(y, areaMin.y, std::max(areaMin.y, areaMax.y - ts.y))),
                    th.textDim, label);
    }
}

void FlowView::DrawTransfers(const RunResult& run, const std::vector<Node>& nodes, int step, float phase, float cell)
{
    if (step <= 0) return;
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const core::Plan& plan = *run.plan;
    const auto transfers = plan.TransfersOf(plan.steps[static_cast<size_t>(step - 1)]);
    const bool byOrigin = ColourByOrigin(plan.spec.collective);
    // Playing: the packets travel; paused: they sit half way, on the arrow they belong to.
    const float t = m_playing ? Ease(phase) : 0.5f;
    for (const core::Transfer& tr : transfers) {
        if (tr.src == tr.dst) continue;
        const Node& a = nodes[static_cast<size_t>(tr.src)];
        const Node& b = nodes[static_cast<size_t>(tr.dst)];
        const bool both = std::any_of(transfers.begin(), transfers.end(), [&](const core::Transfer& o) { return o.src == tr.dst && o.dst == tr.src; });
        float dx = b.centre.x - a.centre.x, dy = b.centre.y - a.centre.y;
        const float len = std::max(1.0f, std::sqrt(dx * dx + dy * dy));
        dx /= len;
        dy /= len;
        // An exchange in both directions: two parallel arrows side by side.
        const float off = both ? a.radius * 0.45f : 0.0f;
        const ImVec2 p0(a.centre.x + dx * a.radius - dy * off, a.centre.y + dy * a.radius + dx * off);
        const ImVec2 p1(b.centre.x - dx * (b.radius + 3) - dy * off, b.centre.y - dy * (b.radius + 3) + dx * off);
        const ImU32 colour = tr.block >= 0 && !byOrigin ? th.Block(tr.block) : byOrigin ? th.Block(tr.src) : th.accent;
        const float head = std::max(8.0f, th.Px(11));
        const float seg = std::sqrt((p1.x - p0.x) * (p1.x - p0.x) + (p1.y - p0.y) * (p1.y - p0.y));
        if (seg < head * 1.5f) continue;
        const ImVec2 base(p1.x - dx * head, p1.y - dy * head);
        const ImU32 stroke = Mix(colour, th.text, 0.15f);
        dl->AddLine(p0, base, stroke, 3.0f * th.line);
        dl->AddTriangleFilled(p1, ImVec2(base.x - dy * head * 0.55f, base.y + dx * head * 0.55f),
                              ImVec2(base.x + dy * head * 0.55f, base.y - dx * head * 0.55f), stroke);
        // The packet: the blocks the message carries, as small squares travelling along it.
        int first = 0, last = 0;
        const auto segs = plan.SegmentsOf(tr);
        if (!segs.empty()) {
            const auto& off0 = plan.blockOffsets;
            const uint64_t lo = segs.front().srcOffset % std::max<uint64_t>(plan.spec.bytes, 1);
            const uint64_t hi = (segs.back().srcOffset + segs.back().bytes - 1) % std::max<uint64_t>(plan.spec.bytes, 1);
            first = static_cast<int>(std::upper_bound(off0.begin(), off0.end(), lo) - off0.begin()) - 1;
            last = static_cast<int>(std::upper_bound(off0.begin(), off0.end(), hi) - off0.begin()) - 1;
            if (last < first) std::swap(first, last);
        }
        const int count = std::clamp(last - first + 1, 1, 8);
        const float sq = std::clamp(cell * 0.8f, 5.0f, a.radius * 0.9f);
        const ImVec2 at(p0.x + (base.x - p0.x) * t, p0.y + (base.y - p0.y) * t);
        const float w = sq * count;
        dl->AddRectFilled(ImVec2(at.x - w / 2 - 1, at.y - sq / 2 - 1), ImVec2(at.x + w / 2 + 1, at.y + sq / 2 + 1), th.text);
        for (int i = 0; i < count; ++i) {
            const int block = first + (last - first + 1 > 8 ? i * (last - first) / 7 : i);
            const ImU32 fill = byOrigin ? th.Block(tr.src) : th.Block(block);
            dl->AddRectFilled(ImVec2(at.x - w / 2 + i * sq, at.y - sq / 2), ImVec2(at.x - w / 2 + (i + 1) * sq, at.y + sq / 2), fill);
        }
        if (tr.op == core::TransferOp::Reduce)
            dl->AddText(CurrentTheme().bold, ImGui::GetFontSize(), ImVec2(at.x + w / 2 + 3, at.y - ImGui::GetFontSize() * 0.55f), th.text, "+");
    }
}

void FlowView::DrawCells(const RunResult& run, const Node& node, int rank, int step, float cell)
{
    if (cell < 4.0f) return; // too many ranks for readable cells: the arrows and the timeline remain
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const FlowHoldings& h = *run.holdings;
    const int p = h.Ranks();
    const bool reduces = core::Reduces(run.plan->spec.collective);
    const bool byOrigin = ColourByOrigin(run.plan->spec.collective);
    const int rows = h.HasOutputRow() ? 2 : 1;
    const float x0 = std::round(node.centre.x - p * cell / 2);
    char count[8];
    for (int row = 0; row < rows; ++row) {
        const float y0 = std::round(node.centre.y + node.radius + cell * 0.3f + row * cell * 1.15f);
        for (int c = 0; c < p; ++c) {
            const FlowCell& fc = h.At(step, rank, row * p + c);
            const ImVec2 a(x0 + c * cell, y0), b(x0 + (c + 1) * cell, y0 + cell);
            dl->AddRectFilled(a, b, th.cellEmpty);
            if (fc.Holds()) {
                // A partial sum's colour deepens with the contributions it holds; a full sum (or any
                // copied block) has the full colour.
                const ImU32 base = byOrigin || row == 1 ? th.Block(fc.Origin()) : th.Block(fc.block);
                const float frac = reduces ? static_cast<float>(fc.Count()) / static_cast<float>(p) : 1.0f;
                const ImU32 fill = Mix(th.cellEmpty, base, 0.3f + 0.7f * frac);
                dl->AddRectFilled(a, b, fill);
                if (reduces && fc.Count() > 1 && cell >= ImGui::GetFontSize() * 0.8f) {
                    std::snprintf(count, sizeof count, "%d", fc.Count());
                    const float fs = cell * 0.72f;
                    const ImVec2 ts = th.Body()->CalcTextSizeA(fs, 1e9f, 0, count);
                    dl->AddText(th.body, fs, ImVec2((a.x + b.x - ts.x) / 2, (a.y + b.y - ts.y) / 2), th.TextOn(fill), count);
                }
            }
            if (cell >= 6) dl->AddRect(a, b, th.cellBorder, 0.0f, 0, 1.0f);
        }
    }
}

void FlowView::DrawControls(ImVec2 min, float width, const RunResult* focus)
{
    const Theme& th = CurrentTheme();
    const int maxSteps = MaxSteps();
    ImGui::SetCursorScreenPos(ImVec2(min.x + th.Px(8), min.y + th.Px(6)));
    ImGui::BeginGroup();
    if (ImGui::Button("\xE2\x97\x80\xE2\x97\x80")) { // to the start
        m_position = 0;
        m_playing = false;
    }
    ImGui::SameLine();
    if (ImGui::Button("\xE2\x97\x80")) {
        m_position = std::max(0.0, std::ceil(m_position) - 1);
        m_playing = false;
    }
    ImGui::SameLine();
    if (ImGui::Button(m_playing ? " \xE2\x9D\x9A\xE2\x9D\x9A pause " : " \xE2\x96\xB6 play ")) {
        if (!m_playing && m_position >= maxSteps) m_position = 0;
        m_playing = !m_playing;
    }
    ImGui::SameLine();
    if (ImGui::Button("\xE2\x96\xB6")) {
        m_position = std::min<double>(maxSteps, std::floor(m_position) + 1);
        m_playing = false;
    }
    ImGui::SameLine();
    if (ImGui::Button("\xE2\x96\xB6\xE2\x96\xB6")) { // to the end
        m_position = maxSteps;
        m_playing = false;
    }
    int step = static_cast<int>(std::floor(m_position));
    const float sliderW = width - th.Px(16);
    ImGui::SetNextItemWidth(sliderW);
    char fmt[32];
    std::snprintf(fmt, sizeof fmt, "step %%d of %d", maxSteps);
    if (ImGui::SliderInt("##step", &step, 0, maxSteps, fmt)) {
        m_position = step;
        m_playing = false;
    }
    ImGui::SetNextItemWidth(sliderW);
    ImGui::SliderFloat("##speed", &m_speed, 0.25f, 8.0f, "speed %.2f steps/s", ImGuiSliderFlags_Logarithmic);
    if (focus) {
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + sliderW);
        DrawExplanation(*focus);
        ImGui::PopTextWrapPos();
    }
    ImGui::EndGroup();
}

void FlowView::DrawExplanation(const RunResult& run) const
{
    const StepPosition pos = Position(m_position, run.holdings->Steps());
    char a[32], b[32], c[32], d[32], e[32], formula[96];
    ImGui::Spacing();
    if (pos.shown == 0) {
        ImGui::TextWrapped("Before the first step. Under each rank, its buffer: the p blocks of the vector. Press play or "
                           "step through; the arrows are the step's messages, the squares on them the blocks they carry.");
    } else {
        const StepInfo& s = run.steps[static_cast<size_t>(pos.shown - 1)];
        const double m = static_cast<double>(s.maxBytes);
        const bool gamma = s.reduces && s.gammaSecPerByte > 0;
        // On the network: alpha' and beta' (the primes say so).
        const char* ab = s.network ? "\xCE\xB1' + n\xCE\xB2'" : "\xCE\xB1 + n\xCE\xB2";
        ImGui::TextWrapped("Step %d of %zu (%s): %d message%s of up to %s at once.", pos.shown, run.steps.size(), s.phase.c_str(),
                           s.transfers, s.transfers == 1 ? "" : "s", FormatValue(a, sizeof a, m, AxisUnit::Bytes));
        if (gamma)
            ImGui::TextWrapped("Cost %s + n\xCE\xB3 = %s + %s + %s = %s", ab, FormatDuration(b, sizeof b, s.alphaSec * 1e9),
                               FormatDuration(c, sizeof c, m * s.betaSecPerByte * 1e9), FormatDuration(d, sizeof d, m * s.gammaSecPerByte * 1e9),
                               FormatDuration(e, sizeof e, s.modelSeconds * 1e9));
        else
            ImGui::TextWrapped("Cost %s = %s + %s = %s%s", ab, FormatDuration(b, sizeof b, s.alphaSec * 1e9),
                               FormatDuration(c, sizeof c, m * s.betaSecPerByte * 1e9), FormatDuration(e, sizeof e, s.modelSeconds * 1e9),
                               s.network ? " (between nodes)" : "");
        if (run.sharedMemoryGBps > 0) // virtual ranks: the run's own model
            ImGui::TextWrapped("On one GPU, where the ranks share its memory: \xCE\xB1 + bytes read and written / %.0f GB/s = %s + %s / %.0f GB/s = %s",
                               run.sharedMemoryGBps, FormatDuration(b, sizeof b, s.alphaSec * 1e9),
                               FormatValue(c, sizeof c, static_cast<double>(s.sharedMemoryBytes), AxisUnit::Bytes), run.sharedMemoryGBps,
                               FormatDuration(e, sizeof e, s.sharedMemorySeconds * 1e9));
    }
    double total = 0, shared = 0;
    for (int s = 0; s < pos.shown; ++s) {
        total += run.steps[static_cast<size_t>(s)].modelSeconds;
        shared += run.steps[static_cast<size_t>(s)].sharedMemorySeconds;
    }
    const double simulated = pos.shown > 0 ? run.steps[static_cast<size_t>(pos.shown - 1)].simulatedEndSeconds : 0.0;
    ImGui::TextWrapped("Running total %s (simulated: %s)", FormatDuration(a, sizeof a, total * 1e9), FormatDuration(b, sizeof b, simulated * 1e9));
    if (run.sharedMemoryGBps > 0)
        ImGui::TextWrapped("On one GPU's shared memory: %s so far, %s in all (what the run predicted)", FormatDuration(a, sizeof a, shared * 1e9),
                           FormatDuration(b, sizeof b, run.predictedSeconds * 1e9));
    ImGui::TextWrapped("Closed form %s = %s", GreekFormula(formula, sizeof formula, run.formula.c_str()),
                       FormatDuration(c, sizeof c, ClosedFormSeconds(run) * 1e9));
}

nlohmann::json FlowView::Layout() const
{
    nlohmann::json j;
    j["view"] = "flow";
    j["step"] = m_position;
    const Theme& th = CurrentTheme();
    char hex[8];
    std::snprintf(hex, sizeof hex, "#%02x%02x%02x", th.nodeFill & 0xFF, (th.nodeFill >> 8) & 0xFF, (th.nodeFill >> 16) & 0xFF);
    j["nodeFill"] = hex;
    for (const Panel& p : m_panels) {
        nlohmann::json jp;
        jp["run"] = p.run;
        jp["title"] = m_snapshot->runs[p.run]->title;
        jp["ranks"] = m_snapshot->runs[p.run]->holdings->Ranks();
        jp["x0"] = p.min.x;
        jp["y0"] = p.min.y;
        jp["x1"] = p.max.x;
        jp["y1"] = p.max.y;
        for (const Node& n : p.nodes) jp["nodes"].push_back({{"x", n.centre.x}, {"y", n.centre.y}, {"r", n.radius}});
        j["panels"].push_back(jp);
    }
    return j;
}

} // namespace paralens::app
