#include "PlannerView.hpp"

#include "Theme.hpp"

#include "common/Units.hpp"
#include "planner/Calibration.hpp"
#include "planner/PipelineLayout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace paralens::app {

namespace {

constexpr size_t kStepParts = 6, kComputeParts = 4, kMemoryParts = 4;

std::string Format(const char* format, double value)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, format, value);
    return buf;
}

} // namespace

void PlannerView::SetSnapshot(std::shared_ptr<const Snapshot> snapshot)
{
    m_snapshot = std::move(snapshot);
    m_prepared = nullptr;
}

const RunResult* PlannerView::Chosen(const ViewSettings& settings) const
{
    return m_snapshot ? m_snapshot->SelectedOrFirst(settings.selected, [](const RunResult& r) { return r.trainingPlan != nullptr; }) : nullptr;
}

void PlannerView::Prepare(const RunResult& run)
{
    m_prepared = &run;
    const core::PlanRequest& r = *run.trainingPlanRequest;
    const core::PlanResult& res = *run.trainingPlan;
    char text[320];
    std::snprintf(text, sizeof text, "%s (%.1f B parameters) on %d x %s, global batch %d x %d tokens: %zu configurations, %zu fit in %s per GPU",
                  r.model.id.c_str(), r.model.TotalParams() * 1e-9, r.cluster.gpus, r.cluster.gpu.id.c_str(), r.globalBatch, r.Seq(),
                  res.candidates, res.fitting, core::GbText(r.cluster.UsableBytes()).c_str());
    m_header = text;
    if (r.cluster.gemmCurve.empty() && r.cluster.gemmTflops <= 0)
        m_header += ", GEMMs at " + Format("%.2f", r.cluster.EfficiencyFor(r.cluster.fp8 ? "fp8" : r.cluster.dtype)) + " of " +
                    (r.cluster.fp8 ? "the fp8" : r.cluster.dtype) + " peak x F / (F + " +
                    Format("%.1f", r.cluster.GemmHalfFlops(r.cluster.fp8 ? "fp8" : r.cluster.dtype) * 1e-9) + " GFLOP) by size";
    if (r.flashAttention2) m_header += ", attention through flash-attn 2";
    if (r.recomputeModules.Any()) m_header += ", recomputing " + core::RecomputeModulesText(r.recomputeModules) + " (--recompute-modules)";
    if (r.layout)
        m_header += ", pipeline layout '" + r.layout->text + "' (pp " + std::to_string(r.layout->pp) + ", v " + std::to_string(r.layout->chunks) + ")";
    if (!r.cluster.gemmCurve.empty())
        m_header += ", GEMMs at the calibrated efficiency of their size (" + Format("%.0f%%", r.cluster.gemmCurve.back().second * 100) +
                    " of peak for the largest)";
    if (!r.cluster.hbmCurve.empty())
        m_header += ", memory-bound ops at the calibrated share of HBM bandwidth (" +
                    Format("%.0f%%", r.cluster.hbmCurve.back().second * 100) + " for the largest)";
    if (const std::string other = core::CalibratedOnOtherGpu(r.cluster); !other.empty()) m_header += "; " + other;
    PrepareTable(run);
    m_scrollToShown = true;
    if (run.trainingPlanShown < 0) return;
    const core::PlanRow& row = res.rows[static_cast<size_t>(run.trainingPlanShown)];
    const core::StepBreakdown& t = row.time;
    std::snprintf(text, sizeof text, "#%d %s: %s a step, %.0f tokens/s, MFU %.1f%%", run.trainingPlanShown + 1,
                  core::ConfigText(row.config).c_str(), core::FormatSeconds(t.step).c_str(), row.tokensPerSecond, row.mfu * 100);
    m_stepTitle = text;
    m_laidOut.clear();
    if (const auto& laid = run.trainingPlanLaidOut) {
        std::snprintf(text, sizeof text, "laid out by hand to balance the output layer, --pp-layout '%s': %s a step (%+.1f%%), %s",
                      laid->config.layout->text.c_str(), core::FormatSeconds(laid->time.step).c_str(), (laid->time.step / t.step - 1) * 100,
                      core::GbText(laid->memory.Total()).c_str());
        m_laidOut = text;
    }
    m_step = {Segment{"compute", t.compute},      Segment{"TP/CP/EP comm", t.tpComm + t.cpComm + t.epComm}, Segment{"bubble", t.bubble},
              Segment{"stage sends", t.ppComm},  Segment{"DP sync", t.dpComm},               Segment{"optimizer", t.optimizer}};
    // The compute segment opened up beneath it, as long: what the bounding stage's micro-batches run.
    std::snprintf(text, sizeof text, "compute: %s (%d micro-batches through the bounding stage)", core::FormatSeconds(t.compute).c_str(),
                  row.microBatches);
    m_computeTitle = text;
    const core::ComputeParts& p = t.computeParts;
    m_compute = {Segment{"GEMMs", p.gemms}, Segment{"attention", p.attention}, Segment{"memory-bound ops", p.memoryBound},
                 Segment{"recomputation", p.recompute}, Segment{}, Segment{}};
    const core::MemoryBreakdown& m = row.memory;
    std::snprintf(text, sizeof text, "memory per GPU (stage %d, %.3g micro-batches in flight): %s of %s usable", m.stage, m.inFlight,
                  core::GbText(m.Total()).c_str(), core::GbText(r.cluster.UsableBytes()).c_str());
    m_memoryTitle = text;
    m_memory = {Segment{"weights", m.weights}, Segment{"gradients", m.gradients}, Segment{"optimizer", m.optimizer},
                Segment{"activations", m.activations}, Segment{}, Segment{}};
}

void PlannerView::PrepareTable(const RunResult& run)
{
    const core::PlanResult& res = *run.trainingPlan;
    // The first 50 rows (20 of the closest when none fits), then the rows the timeline or a
    // published run's own configuration point at further down.
    const size_t shown = res.fitting > 0 ? std::min<size_t>(res.fitting, 50) : std::min<size_t>(res.rows.size(), 20);
    m_rowOf.resize(shown);
    std::iota(m_rowOf.begin(), m_rowOf.end(), size_t{0});
    for (int extra : {run.trainingPlanShown, run.trainingPlanPublished})
        if (extra >= 0 && static_cast<size_t>(extra) >= shown && std::find(m_rowOf.begin(), m_rowOf.end(), static_cast<size_t>(extra)) == m_rowOf.end())
            m_rowOf.push_back(static_cast<size_t>(extra));
    std::sort(m_rowOf.begin() + static_cast<std::ptrdiff_t>(shown), m_rowOf.end());
    m_cells.clear();
    for (size_t i : m_rowOf) {
        const core::PlanRow& row = res.rows[i];
        const core::TrainingConfig& c = row.config;
        std::string degrees = std::to_string(c.dp) + " x " + std::to_string(c.tp) + " x " + std::to_string(c.pp);
        if (c.layout) degrees.append(" laid out"); // the header names the layout
        else if (c.Uneven()) degrees.append(" ").append(core::StageSplitText(c)); // rows of one degree apart by their split
        m_cells.push_back({std::to_string(i + 1) + (static_cast<int>(i) == run.trainingPlanPublished ? " published" : ""),
                           degrees,
                           std::to_string(c.cp),
                           std::to_string(c.ep),
                           std::to_string(c.microBatch),
                           core::ScheduleText(c),
                           std::string(core::Name(c.recompute)),
                           std::to_string(c.zero) + (c.sequenceParallel ? " sp" : ""),
                           row.fits ? core::FormatSeconds(row.time.step) : "does not fit",
                           row.fits ? Format("%.1f%%", row.mfu * 100) : "",
                           core::GbText(row.memory.Total())});
    }
}

void PlannerView::Draw(ViewSettings& settings, ImVec2 size)
{
    const Theme& th = CurrentTheme();
    const RunResult* run = Chosen(settings);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float pad = th.Px(10);
    m_drawn = false;
    m_front.clear();
    m_publishedY = -1;
    if (!run) {
        ImGui::InvisibleButton("##planner", ImVec2(std::max(size.x, 1.0f), std::max(size.y, 1.0f)));
        dl->AddText(ImVec2(origin.x + pad, origin.y + pad), th.textDim,
                    "No training plan: pick \"plan\" in the controls, or open the scenario \"Plan a training run\".");
        return;
    }
    if (run != m_prepared) Prepare(*run);
    m_drawn = true;
    const core::PlanResult& res = *run->trainingPlan;
    ImGui::PushFont(th.Bold());
    const float wrap = std::max(size.x - 2 * pad, 1.0f); // a calibrated plan's header runs long: wrapped
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(origin.x + pad, origin.y + pad), th.text, m_header.c_str(), nullptr, wrap);
    const float extraLines = ImGui::CalcTextSize(m_header.c_str(), nullptr, false, wrap).y - ImGui::GetFontSize();
    ImGui::PopFont();
    float top = origin.y + pad + extraLines + ImGui::GetTextLineHeightWithSpacing() * 1.4f;
    if (!run->trainingPlanNote.empty()) { // a published run's note runs long: wrapped
        const char* note = run->trainingPlanNote.c_str();
        dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(origin.x + pad, top), res.fitting ? th.textDim : th.warning, note, nullptr, wrap);
        top += ImGui::CalcTextSize(note, nullptr, false, wrap).y + ImGui::GetStyle().ItemSpacing.y;
    }
    const float split = origin.x + std::floor(size.x * 0.55f);
    ImGui::SetCursorScreenPos(ImVec2(origin.x + pad, top));
    DrawTable(*run, ImVec2(origin.x + pad, top), ImVec2(split - pad, origin.y + size.y - pad));
    if (run->trainingPlanShown < 0) return;
    const float width = origin.x + size.x - pad - (split + pad);
    const ImU32 stepColors[kStepParts] = {th.category[static_cast<int>(core::SpanCategory::Forward)],
                                          th.category[static_cast<int>(core::SpanCategory::Collective)], th.bubbleFill,
                                          th.category[static_cast<int>(core::SpanCategory::Send)], th.accent,
                                          th.category[static_cast<int>(core::SpanCategory::Compute)]};
    const ImU32 memoryColors[kMemoryParts] = {th.Block(0), th.Block(1), th.Block(2), th.Block(3)};
    const ImU32 computeColors[kComputeParts] = {th.Block(4), th.Block(5), th.Block(6), th.Block(7)};
    const core::PlanRow& row = res.rows[static_cast<size_t>(run->trainingPlanShown)];
    const double usable = run->trainingPlanRequest->cluster.UsableBytes();
    float y = top;
    y += DrawBar(m_stepTitle, m_step, kStepParts, stepColors, row.time.step, ImVec2(split + pad, y), width, width) + pad;
    if (!m_laidOut.empty()) { // what a layout by hand would buy, under the step it would change
        dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(split + pad, y), th.textDim, m_laidOut.c_str(), nullptr, width);
        y += ImGui::CalcTextSize(m_laidOut.c_str(), nullptr, false, width).y + pad;
    }
    y += DrawBar(m_computeTitle, m_compute, kComputeParts, computeColors, row.time.compute, ImVec2(split + pad, y),
                 width * static_cast<float>(row.time.step > 0 ? row.time.compute / row.time.step : 0.0), width) + pad;
    y += DrawBar(m_memoryTitle, m_memory, kMemoryParts, memoryColors, row.memory.Total(), ImVec2(split + pad, y),
                 width * static_cast<float>(std::min(1.0, row.memory.Total() / usable)), width) + pad;
    DrawPareto(*run, ImVec2(split + pad, y), ImVec2(origin.x + size.x - pad, origin.y + size.y - pad));
}

void PlannerView::DrawTable(const RunResult& run, ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("##plan", kColumns, flags, ImVec2(max.x - min.x, max.y - min.y))) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"#", "dp x tp x pp", "cp", "ep", "mb", "schedule", "recompute", "zero/sp", "step", "MFU", "memory"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    const ImVec4 warning = ImGui::ColorConvertU32ToFloat4(th.warning);
    for (size_t k = 0; k < m_cells.size(); ++k) {
        const size_t i = m_rowOf[k];
        ImGui::TableNextRow();
        if (static_cast<int>(i) == run.trainingPlanShown) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, WithAlpha(th.selection, 0.35f));
        const bool fits = run.trainingPlan->rows[i].fits;
        for (int c = 0; c < kColumns; ++c) {
            ImGui::TableNextColumn();
            if (c == 7 && !fits) ImGui::TextColored(warning, "%s", m_cells[k][static_cast<size_t>(c)].c_str());
            else ImGui::TextUnformatted(m_cells[k][static_cast<size_t>(c)].c_str());
        }
        if (m_scrollToShown && static_cast<int>(i) == run.trainingPlanShown) {
            ImGui::SetScrollHereY(0.5f);
            m_scrollToShown = false;
        }
    }
    ImGui::EndTable();
}

// A stacked bar of the first `count` parts scaled to `total`, titled, with a legend under it.
float PlannerView::DrawBar(const std::string& title, std::array<Segment, 6>& parts, size_t count, const ImU32* colors, double total,
                           ImVec2 at, float width, float titleWidth)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float top = at.y, wrap = std::max(titleWidth, 1.0f); // a long configuration's title wraps at the panel's edge
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), at, th.text, title.c_str(), nullptr, wrap);
    const float lineH = ImGui::GetTextLineHeightWithSpacing();
    at.y += ImGui::CalcTextSize(title.c_str(), nullptr, false, wrap).y + (lineH - ImGui::GetFontSize());
    const float h = ImGui::GetFontSize() * 1.6f;
    float x = at.x;
    for (size_t i = 0; i < count; ++i) {
        const float w = total > 0 ? static_cast<float>(parts[i].value / total) * width : 0.0f;
        parts[i].rect = ImVec4(x, at.y, std::max(w, 0.0f), h);
        if (w <= 0) continue;
        dl->AddRectFilled(ImVec2(x, at.y), ImVec2(x + w, at.y + h), colors[i]);
        x += w;
    }
    dl->AddRect(at, ImVec2(at.x + width, at.y + h), th.gridMajor, 0.0f, 0, th.line);
    float lx = at.x, ly = at.y + h + th.Px(4);
    const float box = ImGui::GetFontSize() * 0.8f;
    for (size_t i = 0; i < count; ++i) {
        char text[96];
        std::snprintf(text, sizeof text, "%s %.0f%%", parts[i].label, total > 0 ? 100.0 * parts[i].value / total : 0.0);
        const float tw = box + th.Px(4) + ImGui::CalcTextSize(text).x + th.Px(12);
        if (lx + tw > at.x + std::max(width, th.Px(200))) {
            lx = at.x;
            ly += lineH;
        }
        dl->AddRectFilled(ImVec2(lx, ly + th.Px(2)), ImVec2(lx + box, ly + th.Px(2) + box), colors[i]);
        dl->AddText(ImVec2(lx + box + th.Px(4), ly), th.text, text);
        lx += tw;
    }
    return ly + lineH - top;
}

void PlannerView::DrawPareto(const RunResult& run, ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const core::PlanResult& res = *run.trainingPlan;
    if (max.y - min.y < th.Px(80) || res.fitting == 0) return;
    dl->AddText(min, th.text, "every fitting configuration: step time against memory per GPU (Pareto front joined)");
    const float lineH = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 p0(min.x + th.Px(56), min.y + lineH * 1.3f), p1(max.x - th.Px(8), max.y - lineH * 1.6f);
    double tMin = res.rows.front().time.step, tMax = tMin, mMax = 0;
    for (size_t i = 0; i < res.fitting; ++i) {
        tMax = std::max(tMax, res.rows[i].time.step);
        mMax = std::max(mMax, res.rows[i].memory.Total());
    }
    tMax = std::min(tMax, tMin * 3); // the slow tail is off the chart
    if (const double published = run.trainingPlanPublishedSeconds; published > 0) { // a published run's step on the chart too
        tMin = std::min(tMin, published);
        tMax = std::max(tMax, std::min(published, tMin * 3));
    }
    auto at = [&](const core::PlanRow& r) {
        const float x = p0.x + static_cast<float>(r.memory.Total() / mMax) * (p1.x - p0.x);
        const double f = tMax > tMin ? (std::clamp(r.time.step, tMin, tMax) - tMin) / (tMax - tMin) : 0.5;
        return ImVec2(x, p1.y - static_cast<float>(f) * (p1.y - p0.y));
    };
    dl->AddRect(p0, p1, th.gridMajor, 0.0f, 0, th.line);
    // One small square per occupied cell, cells sized so that at most about 8000 are drawn: tens of
    // thousands of configurations stay one draw list of 16-bit indices (the web page's WebGL).
    const ImU32 dot = WithAlpha(th.textDim, 0.5f);
    const float r = th.Px(2), cell = std::max(2 * r, std::sqrt((p1.x - p0.x) * (p1.y - p0.y) / 8000.0f));
    const int cols = std::max(1, static_cast<int>((p1.x - p0.x) / cell) + 1), cellRows = std::max(1, static_cast<int>((p1.y - p0.y) / cell) + 1);
    m_dotCells.assign(static_cast<size_t>(cols) * static_cast<size_t>(cellRows), 0); // no allocation once grown
    for (size_t i = 0; i < res.fitting; ++i) {
        const ImVec2 p = at(res.rows[i]);
        const int cx = std::clamp(static_cast<int>((p.x - p0.x) / cell), 0, cols - 1), cy = std::clamp(static_cast<int>((p.y - p0.y) / cell), 0, cellRows - 1);
        uint8_t& seen = m_dotCells[static_cast<size_t>(cy) * static_cast<size_t>(cols) + static_cast<size_t>(cx)];
        if (seen) continue;
        seen = 1;
        dl->AddRectFilled(ImVec2(p.x - r, p.y - r), ImVec2(p.x + r, p.y + r), dot);
    }
    for (size_t k = 0; k < res.pareto.size(); ++k) {
        const ImVec2 p = at(res.rows[res.pareto[k]]);
        if (k > 0) dl->AddLine(m_front.back(), p, th.accent, th.Px(2));
        dl->AddCircleFilled(p, th.Px(4), th.accent);
        m_front.push_back(p);
    }
    if (run.trainingPlanShown >= 0) dl->AddCircle(at(res.rows[static_cast<size_t>(run.trainingPlanShown)]), th.Px(7), th.selection, 0, th.Px(2));
    DrawPublishedStep(run, tMin, tMax, p0, p1);
    char label[32];
    std::snprintf(label, sizeof label, "%s", core::FormatSeconds(tMin).c_str());
    dl->AddText(ImVec2(min.x, p1.y - lineH * 0.5f), th.textDim, label);
    std::snprintf(label, sizeof label, "%s", core::FormatSeconds(tMax).c_str());
    dl->AddText(ImVec2(min.x, p0.y - lineH * 0.5f), th.textDim, label);
    dl->AddText(ImVec2(p0.x, p1.y + th.Px(2)), th.textDim, "0 GB");
    std::snprintf(label, sizeof label, "%.1f GB", mMax / 1e9);
    dl->AddText(ImVec2(p1.x - ImGui::CalcTextSize(label).x, p1.y + th.Px(2)), th.textDim, label);
}

// A published run's step as it was published: a dashed line across the chart at that time (or an
// arrow at the edge it is beyond), its own configuration's dot joined to it.
void PlannerView::DrawPublishedStep(const RunResult& run, double tMin, double tMax, ImVec2 p0, ImVec2 p1)
{
    if (run.trainingPlanPublishedSeconds <= 0) return;
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const double t = run.trainingPlanPublishedSeconds;
    const double f = tMax > tMin ? (std::clamp(t, tMin, tMax) - tMin) / (tMax - tMin) : 0.5;
    const float y = p1.y - static_cast<float>(f) * (p1.y - p0.y);
    m_publishedY = y;
    const float dash = th.Px(6);
    for (float x = p0.x; x < p1.x; x += 2 * dash) dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + dash, p1.x), y), th.warning, th.Px(2));
    char label[64];
    std::snprintf(label, sizeof label, "published %s%s", core::FormatSeconds(t).c_str(), t > tMax ? " (above)" : t < tMin ? " (below)" : "");
    const ImVec2 size = ImGui::CalcTextSize(label);
    dl->AddText(ImVec2(p1.x - size.x - th.Px(4), y - size.y - th.Px(2)), th.warning, label);
}

nlohmann::json PlannerView::Layout() const
{
    nlohmann::json j = {{"view", "planner"}};
    if (!m_drawn || !m_prepared) return j;
    const core::PlanResult& res = *m_prepared->trainingPlan;
    j["header"] = m_header;
    j["fitting"] = res.fitting;
    j["shownRow"] = m_prepared->trainingPlanShown + 1;
    if (m_prepared->trainingPlanPublished >= 0) j["publishedRow"] = m_prepared->trainingPlanPublished + 1;
    if (!m_prepared->trainingPlanNote.empty()) j["note"] = m_prepared->trainingPlanNote;
    nlohmann::json rows = nlohmann::json::array();
    for (size_t i : m_rowOf)
        rows.push_back({{"rank", i + 1}, {"config", core::ConfigText(res.rows[i].config)}, {"stepSeconds", res.rows[i].time.step},
                        {"fits", res.rows[i].fits}});
    j["rows"] = rows;
    if (m_prepared->trainingPlanShown < 0) return j;
    auto bar = [](const std::array<Segment, 6>& parts, size_t count, const char* unit) {
        nlohmann::json out = nlohmann::json::array();
        for (size_t i = 0; i < count; ++i)
            if (parts[i].rect.z > 0)
                out.push_back({{"label", parts[i].label}, {unit, parts[i].value},
                               {"rect", {parts[i].rect.x, parts[i].rect.y, parts[i].rect.z, parts[i].rect.w}}});
        return out;
    };
    if (const auto& laid = m_prepared->trainingPlanLaidOut)
        j["balancedLayout"] = {{"layout", laid->config.layout->text}, {"stepSeconds", laid->time.step}, {"text", m_laidOut}};
    j["stepBar"] = bar(m_step, kStepParts, "seconds");
    j["computeBar"] = bar(m_compute, kComputeParts, "seconds");
    j["memoryBar"] = bar(m_memory, kMemoryParts, "bytes");
    j["points"] = res.fitting;
    nlohmann::json front = nlohmann::json::array();
    for (const ImVec2& p : m_front) front.push_back({p.x, p.y});
    j["front"] = front;
    if (m_publishedY >= 0) j["publishedLineY"] = m_publishedY;
    return j;
}

} // namespace paralens::app
