#include "AutoparView.hpp"

#include "Theme.hpp"

#include "common/Units.hpp"

#include <algorithm>
#include <cmath>

namespace paralens::app {

namespace {

// The lectures' legend.
constexpr ImU32 kReplicatedColor = IM_COL32(158, 158, 158, 255);
constexpr ImU32 kRowColor = IM_COL32(66, 120, 230, 255);
constexpr ImU32 kColumnColor = IM_COL32(220, 68, 55, 255);
constexpr ImU32 kOtherDimColor = IM_COL32(150, 96, 205, 255);
constexpr ImU32 kPartialColor = IM_COL32(240, 160, 30, 255);

ImU32 AxisColor(int8_t axis, int dims)
{
    if (axis == core::kReplicated) return kReplicatedColor;
    if (axis == core::kPartial) return kPartialColor;
    if (axis == 0) return kRowColor;
    return axis == dims - 1 ? kColumnColor : kOtherDimColor;
}

const char* const kPartNames[4] = {"compute", "partial sums", "re-partition", "gradient sync"};

ImU32 PartColor(int part)
{
    const Theme& th = CurrentTheme();
    switch (part) {
    case 0: return th.category[static_cast<int>(core::SpanCategory::Compute)];
    case 1: return th.category[static_cast<int>(core::SpanCategory::Collective)];
    case 2: return th.palette[1];
    default: return th.palette[3];
    }
}

// Longest path from the graph's inputs: the column each op is drawn in.
std::vector<int> Depths(const core::OpGraph& g, const std::vector<int>& ops)
{
    std::vector<int> depth(g.ops.size(), 0);
    for (int i : ops)
        for (const core::OpOperand& in : g.ops[static_cast<size_t>(i)].inputs) {
            const int p = g.tensors[static_cast<size_t>(in.tensor)].producer;
            if (p >= 0 && g.ops[static_cast<size_t>(p)].layer == g.ops[static_cast<size_t>(i)].layer)
                depth[static_cast<size_t>(i)] = std::max(depth[static_cast<size_t>(i)], depth[static_cast<size_t>(p)] + 1);
        }
    return depth;
}

// The collectives of a conversion forward (from -> to) and of its gradient's back (grad -> back).
std::string ConversionLabel(const core::Layout& from, const core::Layout& to, const core::Layout& grad, const core::Layout& back, uint64_t bytes,
                            const core::DeviceMesh& mesh)
{
    std::vector<core::CommItem> items, backItems;
    core::ConvertSeconds(from, to, bytes, mesh, &items);
    core::ConvertSeconds(grad, back, bytes, mesh, &backItems);
    std::string label;
    for (const core::CommItem& c : items) label += (label.empty() ? "" : " + ") + std::string(core::Name(c.collective));
    for (const core::CommItem& c : backItems) label += (label.empty() ? "grad " : ", grad ") + std::string(core::Name(c.collective));
    return label;
}

} // namespace

void AutoparView::SetSnapshot(std::shared_ptr<const Snapshot> snapshot)
{
    m_snapshot = std::move(snapshot);
    m_prepared = nullptr;
}

const RunResult* AutoparView::Chosen(const ViewSettings& settings) const
{
    return m_snapshot ? m_snapshot->SelectedOrFirst(settings.selected, [](const RunResult& r) { return r.autopar != nullptr; }) : nullptr;
}

void AutoparView::Prepare(const RunResult& run)
{
    m_prepared = &run;
    const core::AutoparResult& res = *run.autopar;
    const core::OpGraph& g = *res.graph;
    const core::IntraOpProblem& p = res.problem;
    const core::IntraOpSolution& shown = res.solutions[static_cast<size_t>(run.autoparShown)];
    m_twoAxes = p.mesh.rows > 1 && p.mesh.cols > 1;
    m_header = g.name + ": " + std::to_string(g.ops.size()) + " ops on a " + p.mesh.Text() + " mesh; " + shown.name + " shown, " +
               core::FormatSeconds(shown.costSeconds) + " per training step" + (shown.optimal ? " (optimal)" : "");
    // The ops drawn: all of them, or the first layer of a stack.
    std::vector<int> ops;
    for (size_t i = 0; i < g.ops.size(); ++i)
        if (g.layers <= 1 || g.ops[i].layer == 0) ops.push_back(static_cast<int>(i));
    m_graphNote = g.layers > 1 ? "layer 0 of " + std::to_string(g.layers) + " shown" : "";
    const std::vector<int> depth = Depths(g, ops);
    std::vector<int> nodeOf(g.ops.size(), -1), perColumn;
    m_nodes.clear();
    m_edges.clear();
    for (int i : ops) {
        const core::GraphOp& op = g.ops[static_cast<size_t>(i)];
        const core::OpStrategy& st = p.strategies[static_cast<size_t>(i)][static_cast<size_t>(shown.choice[static_cast<size_t>(i)])];
        Node n;
        n.op = i;
        n.column = depth[static_cast<size_t>(i)];
        if (static_cast<size_t>(n.column) >= perColumn.size()) perColumn.resize(static_cast<size_t>(n.column) + 1, 0);
        n.row = perColumn[static_cast<size_t>(n.column)]++;
        n.title = op.name;
        n.strategy = core::StrategyText(op, st, p.mesh);
        n.layout = core::LayoutText(st.output, p.mesh);
        n.axis[0] = st.output.axis[0];
        n.axis[1] = st.output.axis[1];
        n.dims = static_cast<int>(g.tensors[static_cast<size_t>(op.output.tensor)].shape.size());
        n.seconds = p.nodeCost[static_cast<size_t>(i)][static_cast<size_t>(shown.choice[static_cast<size_t>(i)])];
        nodeOf[static_cast<size_t>(i)] = static_cast<int>(m_nodes.size());
        m_nodes.push_back(std::move(n));
    }
    m_columns = static_cast<int>(perColumn.size());
    m_rows = perColumn.empty() ? 0 : *std::max_element(perColumn.begin(), perColumn.end());
    for (const core::EdgeCosts& e : p.edges) {
        const int from = nodeOf[static_cast<size_t>(e.producer)], to = nodeOf[static_cast<size_t>(e.consumer)];
        if (from < 0 || to < 0) continue;
        const size_t sp = static_cast<size_t>(shown.choice[static_cast<size_t>(e.producer)]);
        const size_t sc = static_cast<size_t>(shown.choice[static_cast<size_t>(e.consumer)]);
        Edge edge{from, to, {}, e.cost[sp * p.strategies[static_cast<size_t>(e.consumer)].size() + sc]};
        if (edge.seconds > 0) {
            const uint64_t bytes = g.tensors[static_cast<size_t>(g.ops[static_cast<size_t>(e.producer)].output.tensor)].Bytes();
            const core::OpStrategy& a = p.strategies[static_cast<size_t>(e.producer)][sp];
            const core::OpStrategy& b = p.strategies[static_cast<size_t>(e.consumer)][sc];
            const size_t k = static_cast<size_t>(e.slot);
            edge.label = ConversionLabel(a.output, b.inputs[k], b.inputGrads[k], a.output.Resolved(), bytes, p.mesh) + " " +
                         core::FormatSeconds(edge.seconds);
        }
        m_edges.push_back(std::move(edge));
    }
    AddTerminals(run, nodeOf);
    for (Node& n : m_nodes) n.detail = n.op < 0 ? n.layout : "-> " + n.layout + "  " + core::FormatSeconds(n.seconds);
    m_bars.clear();
    for (size_t s = 0; s < res.solutions.size(); ++s) {
        const core::IntraOpSolution& sol = res.solutions[s];
        const core::CostBreakdown b = core::Breakdown(p, sol.choice);
        m_bars.push_back(Bar{sol.name, sol.costSeconds, {b.computeSeconds, b.partialSumSeconds, b.repartitionSeconds, b.gradientSyncSeconds},
                             sol.optimal, static_cast<int>(s) == run.autoparShown});
    }
}

// The lectures' picture has X on the left and Y on the right: the activations the drawn ops read
// from outside (arriving replicated) and the graph's outputs (leaving replicated), as terminal
// nodes, their edges labelled with the conversions the node costs include.
void AutoparView::AddTerminals(const RunResult& run, const std::vector<int>& nodeOf)
{
    const core::AutoparResult& res = *run.autopar;
    const core::OpGraph& g = *res.graph;
    const core::IntraOpProblem& p = res.problem;
    const std::vector<int>& choice = res.solutions[static_cast<size_t>(run.autoparShown)].choice;
    for (Node& n : m_nodes) ++n.column; // column 0: the inputs
    const size_t opNodes = m_nodes.size();
    int lastColumn = 0;
    for (size_t i = 0; i < opNodes; ++i) lastColumn = std::max(lastColumn, m_nodes[i].column);
    std::vector<int> terminalOf(g.tensors.size(), -1);
    int inputs = 0, outputs = 0;
    auto terminal = [&](int tensor, int column, int row) {
        Node n;
        n.column = column;
        n.row = row;
        n.title = g.tensors[static_cast<size_t>(tensor)].name;
        n.strategy.assign(column == 0 ? std::string_view("layer input") : std::string_view("graph output"));
        n.layout = "R";
        n.dims = static_cast<int>(g.tensors[static_cast<size_t>(tensor)].shape.size());
        m_nodes.push_back(std::move(n));
        return static_cast<int>(m_nodes.size()) - 1;
    };
    for (size_t i = 0; i < opNodes; ++i) {
        const int opIndex = m_nodes[i].op;
        const core::GraphOp& op = g.ops[static_cast<size_t>(opIndex)];
        const core::OpStrategy& st = p.strategies[static_cast<size_t>(opIndex)][static_cast<size_t>(choice[static_cast<size_t>(opIndex)])];
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            const int t = op.inputs[k].tensor;
            const core::GraphTensor& tensor = g.tensors[static_cast<size_t>(t)];
            const bool outside = tensor.producer < 0 || nodeOf[static_cast<size_t>(tensor.producer)] < 0;
            if (!outside || tensor.kind == core::TensorKind::Weight) continue;
            if (terminalOf[static_cast<size_t>(t)] < 0) terminalOf[static_cast<size_t>(t)] = terminal(t, 0, inputs++);
            const core::Layout r{};
            Edge e{terminalOf[static_cast<size_t>(t)], static_cast<int>(i), {}, 0.0};
            e.seconds = core::ConvertSeconds(r, st.inputs[k], tensor.Bytes(), p.mesh) + core::ConvertSeconds(st.inputGrads[k], r, tensor.Bytes(), p.mesh);
            if (e.seconds > 0) e.label = ConversionLabel(r, st.inputs[k], st.inputGrads[k], r, tensor.Bytes(), p.mesh) + " " + core::FormatSeconds(e.seconds);
            m_edges.push_back(std::move(e));
        }
        if (std::find(g.outputs.begin(), g.outputs.end(), op.output.tensor) == g.outputs.end()) continue;
        const core::GraphTensor& out = g.tensors[static_cast<size_t>(op.output.tensor)];
        core::Layout target;
        const double seconds = core::LeaveSeconds(g, op.output.tensor, st.output, p.mesh, &target);
        Edge e{static_cast<int>(i), terminal(op.output.tensor, lastColumn + 1, outputs++), {}, seconds};
        m_nodes.back().title = out.name == op.name ? "output" : out.name;
        m_nodes.back().layout = core::LayoutText(target, p.mesh);
        m_nodes.back().axis[0] = target.axis[0];
        m_nodes.back().axis[1] = target.axis[1];
        if (seconds > 0) e.label = ConversionLabel(st.output, target, target, st.output.Resolved(), out.Bytes(), p.mesh) + " " + core::FormatSeconds(seconds);
        m_edges.push_back(std::move(e));
    }
    m_columns = lastColumn + 2;
    m_rows = std::max({m_rows, inputs, outputs});
}

void AutoparView::Draw(ViewSettings& settings, ImVec2 size)
{
    const Theme& th = CurrentTheme();
    const RunResult* run = Chosen(settings);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("##autopar", ImVec2(std::max(size.x, 1.0f), std::max(size.y, 1.0f)));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    m_nodeRects.clear();
    m_barRects.clear();
    if (!run) {
        dl->AddText(ImVec2(origin.x + th.Px(12), origin.y + th.Px(12)), th.textDim,
                    "No auto-parallel experiment: pick \"autopar\" in the controls, or open a scenario such as the lectures' MLP.");
        return;
    }
    if (run != m_prepared) Prepare(*run);
    const float pad = th.Px(10);
    ImGui::PushFont(th.Bold());
    dl->AddText(ImVec2(origin.x + pad, origin.y + pad), th.text, m_header.c_str());
    ImGui::PopFont();
    const float lineH = ImGui::GetTextLineHeightWithSpacing();
    DrawLegend(ImVec2(origin.x + pad, origin.y + pad + lineH));
    const float top = origin.y + pad + lineH * 2.4f;
    const float split = origin.x + std::floor(size.x * 0.6f);
    DrawGraph(ImVec2(origin.x + pad, top), ImVec2(split - pad, origin.y + size.y - pad));
    dl->AddLine(ImVec2(split, top), ImVec2(split, origin.y + size.y - pad), th.gridMajor, th.line);
    const bool pipeline = run->autopar->interOp.has_value();
    const float barsBottom = pipeline ? top + (origin.y + size.y - top) * 0.5f : origin.y + size.y - pad;
    DrawBars(ImVec2(split + pad, top), ImVec2(origin.x + size.x - pad, barsBottom));
    if (pipeline) DrawPipeline(ImVec2(split + pad, barsBottom + pad), ImVec2(origin.x + size.x - pad, origin.y + size.y - pad));
}

void AutoparView::DrawLegend(ImVec2 at)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float box = ImGui::GetFontSize() * 0.9f;
    const struct {
        ImU32 color;
        const char* label;
    } items[] = {{kReplicatedColor, "replicated"},
                 {kRowColor, "row-partitioned (dim 0)"},
                 {kColumnColor, "column-partitioned (last dim)"},
                 {kOtherDimColor, "another dim"},
                 {kPartialColor, "partial sum (P)"}};
    float x = at.x;
    for (const auto& it : items) {
        dl->AddRectFilled(ImVec2(x, at.y + 2), ImVec2(x + box, at.y + 2 + box), it.color, th.Px(2));
        x += box + th.Px(4);
        dl->AddText(ImVec2(x, at.y), th.text, it.label);
        x += ImGui::CalcTextSize(it.label).x + th.Px(14);
    }
    if (m_twoAxes) dl->AddText(ImVec2(x, at.y), th.textDim, "left half: across rows (slow), right: in a row (fast)");
}

void AutoparView::DrawGraph(ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float lineH = ImGui::GetTextLineHeight();
    const float nodeW = std::max(lineH * 7.5f, 60.0f), nodeH = lineH * 3.3f;
    const float gapX = lineH * 3.2f, gapY = lineH * 1.6f;
    const int perBand = std::max(1, static_cast<int>((max.x - min.x + gapX) / (nodeW + gapX)));
    const float bandH = static_cast<float>(std::max(1, m_rows)) * (nodeH + gapY) + gapY;
    if (!m_graphNote.empty()) dl->AddText(ImVec2(min.x, max.y - lineH), th.textDim, m_graphNote.c_str());
    auto rectOf = [&](const Node& n) {
        const int band = n.column / perBand, col = n.column % perBand;
        const float x = min.x + static_cast<float>(col) * (nodeW + gapX);
        const float y = min.y + gapY + static_cast<float>(band) * bandH + static_cast<float>(n.row) * (nodeH + gapY);
        return ImVec4(x, y, nodeW, nodeH);
    };
    dl->PushClipRect(min, max, true);
    for (const Edge& e : m_edges) {
        const ImVec4 a = rectOf(m_nodes[static_cast<size_t>(e.from)]), b = rectOf(m_nodes[static_cast<size_t>(e.to)]);
        const ImVec2 p0(a.x + a.z, a.y + a.w * 0.5f), p1(b.x, b.y + b.w * 0.5f);
        const float bend = std::max(gapX * 0.6f, std::abs(p1.x - p0.x) * 0.3f);
        const ImU32 color = e.seconds > 0 ? th.warning : th.edge;
        dl->AddBezierCubic(p0, ImVec2(p0.x + bend, p0.y), ImVec2(p1.x - bend, p1.y), p1, color, e.seconds > 0 ? th.line * 2 : th.line);
        dl->AddTriangleFilled(p1, ImVec2(p1.x - th.Px(6), p1.y - th.Px(3)), ImVec2(p1.x - th.Px(6), p1.y + th.Px(3)), color);
    }
    for (const Node& n : m_nodes) {
        const ImVec4 r = rectOf(n);
        const ImVec2 a(r.x, r.y), b(r.x + r.z, r.y + r.w);
        const ImU32 fast = AxisColor(n.axis[m_twoAxes || m_prepared->autopar->problem.mesh.rows == 1 ? 1 : 0], n.dims);
        const ImU32 slow = AxisColor(n.axis[0], n.dims);
        if (m_twoAxes) {
            dl->AddRectFilled(a, ImVec2((a.x + b.x) * 0.5f, b.y), slow, th.Px(4), ImDrawFlags_RoundCornersLeft);
            dl->AddRectFilled(ImVec2((a.x + b.x) * 0.5f, a.y), b, fast, th.Px(4), ImDrawFlags_RoundCornersRight);
        } else {
            dl->AddRectFilled(a, b, fast, th.Px(4));
        }
        if (n.axis[0] == core::kPartial || n.axis[1] == core::kPartial) // hatched: the lectures' partial sum
            for (float x = a.x - r.w; x < b.x; x += th.Px(7))
                dl->AddLine(ImVec2(std::max(x, a.x), a.y + (std::max(x, a.x) - x)), ImVec2(std::min(x + r.w, b.x), a.y + (std::min(x + r.w, b.x) - x)),
                            IM_COL32(255, 255, 255, 110), th.line);
        dl->AddRect(a, b, th.nodeBorder, th.Px(4), 0, th.line);
        const ImU32 ink = th.TextOn(fast);
        ImGui::PushFont(th.Bold());
        dl->AddText(ImVec2(a.x + th.Px(5), a.y + th.Px(3)), ink, n.title.c_str());
        ImGui::PopFont();
        dl->AddText(ImVec2(a.x + th.Px(5), a.y + th.Px(3) + lineH), ink, n.strategy.c_str());
        dl->AddText(ImVec2(a.x + th.Px(5), a.y + th.Px(3) + lineH * 2), ink, n.detail.c_str());
        m_nodeRects.push_back(r);
        if (n.op >= 0 && ImGui::IsMouseHoveringRect(a, b)) {
            const core::GraphOp& op = m_prepared->autopar->graph->ops[static_cast<size_t>(n.op)];
            ImGui::SetTooltip("%s (%s)\n%s, output %s\nnode cost %s: compute, its weights' gradient sync and the\nconversions at the graph's edges",
                              op.name.c_str(), op.kind.c_str(), n.strategy.c_str(), n.layout.c_str(), core::FormatSeconds(n.seconds).c_str());
        }
    }
    for (const Edge& e : m_edges) { // the labels over everything, where the edge leaves its producer
        if (e.label.empty()) continue;
        const ImVec4 a = rectOf(m_nodes[static_cast<size_t>(e.from)]), b = rectOf(m_nodes[static_cast<size_t>(e.to)]);
        const ImVec2 ts = ImGui::CalcTextSize(e.label.c_str());
        const bool sameRow = std::abs(a.y - b.y) < 1.0f && b.x > a.x;
        const ImVec2 at = sameRow ? ImVec2((a.x + a.z + b.x - ts.x) * 0.5f, a.y - ts.y - th.Px(1)) // above the row, over the gap
                                  : ImVec2((a.x + a.z + b.x - ts.x) * 0.5f, (a.y + b.y + a.w) * 0.5f - ts.y);
        dl->AddRectFilled(ImVec2(at.x - 2, at.y), ImVec2(at.x + ts.x + 2, at.y + ts.y), WithAlpha(th.background, 0.9f), th.Px(2));
        dl->AddText(at, th.warning, e.label.c_str());
    }
    dl->PopClipRect();
}

void AutoparView::DrawBars(ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float lineH = ImGui::GetTextLineHeightWithSpacing();
    dl->AddText(min, th.text, "strategies compared: one training step (forward + backward)");
    float y = min.y + lineH * 1.2f;
    float lx = min.x;
    for (int part = 0; part < 4; ++part) {
        dl->AddRectFilled(ImVec2(lx, y + 3), ImVec2(lx + th.Px(10), y + 3 + th.Px(10)), PartColor(part));
        lx += th.Px(14);
        dl->AddText(ImVec2(lx, y), th.textDim, kPartNames[part]);
        lx += ImGui::CalcTextSize(kPartNames[part]).x + th.Px(10);
    }
    y += lineH * 1.3f;
    double worst = 0.0, best = 0.0;
    for (const Bar& b : m_bars) {
        worst = std::max(worst, b.total);
        best = best == 0.0 ? b.total : std::min(best, b.total);
    }
    const float labelW = ImGui::CalcTextSize("data-parallel  ").x;
    const float textW = ImGui::CalcTextSize(" 999.9 ms  9.99x ").x;
    const float barW = std::max(th.Px(40), max.x - min.x - labelW - textW);
    const float rowH = std::min(lineH * 1.6f, (max.y - y) / static_cast<float>(std::max<size_t>(m_bars.size(), 1)));
    for (const Bar& b : m_bars) {
        if (b.shown) dl->AddRectFilled(ImVec2(min.x - th.Px(4), y - th.Px(2)), ImVec2(max.x, y + rowH - th.Px(2)), th.selection);
        ImGui::PushFont(b.shown ? th.Bold() : th.Body());
        dl->AddText(ImVec2(min.x, y + (rowH - lineH) * 0.5f), th.text, b.name.c_str());
        ImGui::PopFont();
        float x = min.x + labelW;
        const float h = rowH * 0.62f, y0 = y + (rowH - h) * 0.5f - th.Px(1);
        for (int part = 0; part < 4; ++part) {
            const float w = worst > 0 ? static_cast<float>(b.parts[part] / worst) * barW : 0.0f;
            dl->AddRectFilled(ImVec2(x, y0), ImVec2(x + w, y0 + h), PartColor(part));
            x += w;
        }
        m_barRects.push_back(ImVec4(min.x + labelW, y0, x - (min.x + labelW), h));
        char buf[96];
        std::snprintf(buf, sizeof buf, " %s  %.2fx%s", core::FormatSeconds(b.total).c_str(), best > 0 ? b.total / best : 1.0, b.optimal ? "  optimal" : "");
        dl->AddText(ImVec2(x + th.Px(4), y + (rowH - lineH) * 0.5f), th.text, buf);
        if (ImGui::IsMouseHoveringRect(ImVec2(min.x, y), ImVec2(max.x, y + rowH)))
            ImGui::SetTooltip("%s: %s\ncompute %s\npartial sums (intra-op allreduce) %s\nre-partitioning (edges) %s\ngradient sync %s",
                              b.name.c_str(), core::FormatSeconds(b.total).c_str(), core::FormatSeconds(b.parts[0]).c_str(),
                              core::FormatSeconds(b.parts[1]).c_str(), core::FormatSeconds(b.parts[2]).c_str(), core::FormatSeconds(b.parts[3]).c_str());
        y += rowH;
    }
    for (const std::string& note : m_prepared->autopar->notes) {
        if (y + lineH > max.y) break;
        dl->AddText(ImVec2(min.x, y), th.textDim, note.c_str());
        y += lineH;
    }
}

void AutoparView::DrawPipeline(ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const core::InterOpResult& r = *m_prepared->autopar->interOp;
    const float lineH = ImGui::GetTextLineHeightWithSpacing();
    char buf[256];
    std::snprintf(buf, sizeof buf, "inter-op: %zu stages, %d micro-batches: T = sum t + (N-1) max t = %s", r.stages.size(), r.microBatches,
                  core::FormatSeconds(r.stepSeconds).c_str());
    dl->AddText(min, th.text, buf);
    const core::IntraOpSolution* intra = m_prepared->autopar->Best();
    std::snprintf(buf, sizeof buf, "simulated 1F1B with the sends: %s; intra-op alone (%s): %s", core::FormatSeconds(m_prepared->interOpSimulatedSeconds).c_str(),
                  intra->name.c_str(), core::FormatSeconds(intra->costSeconds).c_str());
    dl->AddText(ImVec2(min.x, min.y + lineH), th.textDim, buf);
    float y = min.y + lineH * 2.3f;
    const float labelW = ImGui::CalcTextSize("stage 00: layers 00-00 on 1x16  ").x;
    const float barW = std::max(th.Px(40), max.x - min.x - labelW);
    const float rowH = std::min(lineH * 1.3f, (max.y - y) / static_cast<float>(std::max<size_t>(r.stages.size(), 1)));
    for (size_t s = 0; s < r.stages.size(); ++s) {
        const core::PipelineStagePlan& st = r.stages[s];
        std::snprintf(buf, sizeof buf, "stage %zu: layers %d-%d on %dx%d", s, st.firstLayer, st.firstLayer + st.layers - 1, st.shape.rows, st.shape.cols);
        dl->AddText(ImVec2(min.x, y), th.text, buf);
        const double busy = r.microBatches * st.seconds;
        const float w = r.stepSeconds > 0 ? static_cast<float>(busy / r.stepSeconds) * barW : 0.0f;
        const ImVec2 a(min.x + labelW, y + th.Px(2)), b(min.x + labelW + barW, y + rowH - th.Px(3));
        dl->AddRectFilled(a, b, th.bubbleFill);
        dl->AddRectFilled(a, ImVec2(a.x + w, b.y), PartColor(0));
        y += rowH;
    }
    dl->AddText(ImVec2(min.x, std::min(y + th.Px(4), max.y - lineH)), th.textDim, "each bar: a stage's busy time in the step; grey: its bubbles");
}

nlohmann::json AutoparView::Layout() const
{
    nlohmann::json nodes = nlohmann::json::array(), bars = nlohmann::json::array();
    for (size_t i = 0; i < m_nodeRects.size() && i < m_nodes.size(); ++i) {
        const ImVec4 r = m_nodeRects[i];
        nodes.push_back({{"op", m_nodes[i].title}, {"strategy", m_nodes[i].strategy}, {"layout", m_nodes[i].layout}, {"rect", {r.x, r.y, r.z, r.w}}});
    }
    for (size_t i = 0; i < m_barRects.size() && i < m_bars.size(); ++i) {
        const ImVec4 r = m_barRects[i];
        bars.push_back({{"name", m_bars[i].name}, {"seconds", m_bars[i].total}, {"shown", m_bars[i].shown}, {"rect", {r.x, r.y, r.z, r.w}}});
    }
    nlohmann::json edges = nlohmann::json::array();
    for (const Edge& e : m_edges)
        if (!e.label.empty()) edges.push_back(e.label);
    return {{"view", "autopar"}, {"nodes", nodes}, {"bars", bars}, {"edgeLabels", edges}};
}

} // namespace paralens::app
