#include "PlannerView.hpp"

#include "Theme.hpp"

#include "common/Units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace paralens::app {

namespace {

struct Part {
    const char* label;
    double value;
    ImU32 color;
};

// A horizontal stacked bar of `parts` scaled to `total`, with a legend line under it.
float StackedBar(ImDrawList* dl, ImVec2 at, float width, const std::vector<Part>& parts, double total, nlohmann::json& out)
{
    const Theme& th = CurrentTheme();
    const float h = ImGui::GetFontSize() * 1.6f;
    float x = at.x;
    for (const Part& p : parts) {
        const float w = total > 0 ? static_cast<float>(p.value / total) * width : 0.0f;
        if (w <= 0) continue;
        dl->AddRectFilled(ImVec2(x, at.y), ImVec2(x + w, at.y + h), p.color);
        out.push_back({{"label", p.label}, {"seconds", p.value}, {"rect", {x, at.y, w, h}}});
        x += w;
    }
    dl->AddRect(at, ImVec2(at.x + width, at.y + h), th.gridMajor, 0.0f, 0, th.line);
    float lx = at.x, ly = at.y + h + th.Px(4);
    const float box = ImGui::GetFontSize() * 0.8f;
    for (const Part& p : parts) {
        char text[96];
        std::snprintf(text, sizeof text, "%s %.0f%%", p.label, total > 0 ? 100.0 * p.value / total : 0.0);
        const float tw = box + th.Px(4) + ImGui::CalcTextSize(text).x + th.Px(12);
        if (lx + tw > at.x + width) {
            lx = at.x;
            ly += ImGui::GetTextLineHeightWithSpacing();
        }
        dl->AddRectFilled(ImVec2(lx, ly + th.Px(2)), ImVec2(lx + box, ly + th.Px(2) + box), p.color);
        dl->AddText(ImVec2(lx + box + th.Px(4), ly), th.text, text);
        lx += tw;
    }
    return ly + ImGui::GetTextLineHeightWithSpacing() - at.y;
}

} // namespace

const RunResult* PlannerView::Chosen(const ViewSettings& settings) const
{
    if (!m_snapshot) return nullptr;
    const auto& runs = m_snapshot->runs;
    if (settings.selected >= 0 && static_cast<size_t>(settings.selected) < runs.size() && runs[static_cast<size_t>(settings.selected)]->trainingPlan)
        return runs[static_cast<size_t>(settings.selected)].get();
    for (const auto& r : runs)
        if (r->trainingPlan) return r.get();
    return nullptr;
}

void PlannerView::Draw(ViewSettings& settings, ImVec2 size)
{
    const Theme& th = CurrentTheme();
    const RunResult* run = Chosen(settings);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    m_layout = {{"view", "planner"}};
    const float pad = th.Px(10);
    if (!run) {
        ImGui::InvisibleButton("##planner", ImVec2(std::max(size.x, 1.0f), std::max(size.y, 1.0f)));
        dl->AddText(ImVec2(origin.x + pad, origin.y + pad), th.textDim,
                    "No training plan: pick \"plan\" in the controls, or open the scenario \"Plan a training run\".");
        return;
    }
    const core::PlanRequest& r = *run->trainingPlanRequest;
    const core::PlanResult& res = *run->trainingPlan;
    char header[320];
    std::snprintf(header, sizeof header, "%s (%.1f B parameters) on %d x %s, global batch %d x %d tokens: %zu configurations, %zu fit in %s per GPU",
                  r.model.id.c_str(), r.model.TotalParams() * 1e-9, r.cluster.gpus, r.cluster.gpu.id.c_str(), r.globalBatch, r.Seq(),
                  res.candidates, res.fitting, core::GbText(r.cluster.UsableBytes()).c_str());
    ImGui::PushFont(th.Bold());
    dl->AddText(ImVec2(origin.x + pad, origin.y + pad), th.text, header);
    ImGui::PopFont();
    m_layout["header"] = header;
    m_layout["fitting"] = res.fitting;
    m_layout["shownRow"] = run->trainingPlanShown + 1;
    float top = origin.y + pad + ImGui::GetTextLineHeightWithSpacing() * 1.4f;
    if (!run->trainingPlanNote.empty()) {
        dl->AddText(ImVec2(origin.x + pad, top), res.fitting ? th.textDim : th.warning, run->trainingPlanNote.c_str());
        m_layout["note"] = run->trainingPlanNote;
        top += ImGui::GetTextLineHeightWithSpacing();
    }
    const float split = origin.x + std::floor(size.x * 0.55f);
    ImGui::SetCursorScreenPos(ImVec2(origin.x + pad, top));
    DrawTable(*run, ImVec2(origin.x + pad, top), ImVec2(split - pad, origin.y + size.y - pad));
    if (res.fitting == 0) return;
    float y = top;
    const float width = origin.x + size.x - pad - (split + pad);
    y += DrawStepBar(*run, ImVec2(split + pad, y), width) + pad;
    y += DrawMemoryBar(*run, ImVec2(split + pad, y), width) + pad;
    DrawPareto(*run, ImVec2(split + pad, y), ImVec2(origin.x + size.x - pad, origin.y + size.y - pad));
}

void PlannerView::DrawTable(const RunResult& run, ImVec2 min, ImVec2 max)
{
    const Theme& th = CurrentTheme();
    const core::PlanResult& res = *run.trainingPlan;
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    const size_t shown = res.fitting > 0 ? std::min<size_t>(res.fitting, 50) : std::min<size_t>(res.rows.size(), 20);
    nlohmann::json rows = nlohmann::json::array();
    if (!ImGui::BeginTable("##plan", 10, flags, ImVec2(max.x - min.x, max.y - min.y))) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"#", "dp x tp x pp", "ep", "mb", "schedule", "recompute", "zero/sp", "step", "MFU", "memory"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < shown; ++i) {
        const core::PlanRow& row = res.rows[i];
        const core::TrainingConfig& c = row.config;
        ImGui::TableNextRow();
        if (static_cast<int>(i) == run.trainingPlanShown) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, WithAlpha(th.selection, 0.35f));
        ImGui::TableNextColumn();
        ImGui::Text("%zu", i + 1);
        ImGui::TableNextColumn();
        ImGui::Text("%d x %d x %d", c.dp, c.tp, c.pp);
        ImGui::TableNextColumn();
        ImGui::Text("%d", c.ep);
        ImGui::TableNextColumn();
        ImGui::Text("%d", c.microBatch);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(core::ScheduleText(c).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(std::string(core::Name(c.recompute)).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%d%s", c.zero, c.sequenceParallel ? " sp" : "");
        ImGui::TableNextColumn();
        if (row.fits) ImGui::TextUnformatted(core::FormatSeconds(row.time.step).c_str());
        else ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(th.warning), "does not fit");
        ImGui::TableNextColumn();
        if (row.fits) ImGui::Text("%.1f%%", row.mfu * 100);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(core::GbText(row.memory.Total()).c_str());
        rows.push_back({{"config", core::ConfigText(c)}, {"stepSeconds", row.time.step}, {"fits", row.fits}});
    }
    ImGui::EndTable();
    m_layout["rows"] = rows;
}

float PlannerView::DrawStepBar(const RunResult& run, ImVec2 at, float width)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const core::PlanRow& row = run.trainingPlan->rows[static_cast<size_t>(run.trainingPlanShown)];
    const core::StepBreakdown& t = row.time;
    char title[200];
    std::snprintf(title, sizeof title, "#%d %s: %s a step, %.0f tokens/s, MFU %.1f%%", run.trainingPlanShown + 1, core::ConfigText(row.config).c_str(),
                  core::FormatSeconds(t.step).c_str(), row.tokensPerSecond, row.mfu * 100);
    dl->AddText(at, th.text, title);
    const float lineH = ImGui::GetTextLineHeightWithSpacing();
    const std::vector<Part> parts = {
        {"compute", t.compute, th.category[static_cast<int>(core::SpanCategory::Forward)]},
        {"TP/EP comm", t.tpComm + t.epComm, th.category[static_cast<int>(core::SpanCategory::Collective)]},
        {"bubble", t.bubble, th.bubbleFill},
        {"stage sends", t.ppComm, th.category[static_cast<int>(core::SpanCategory::Send)]},
        {"DP sync", t.dpComm, th.accent},
        {"optimizer", t.optimizer, th.category[static_cast<int>(core::SpanCategory::Compute)]},
    };
    nlohmann::json segments = nlohmann::json::array();
    const float h = StackedBar(dl, ImVec2(at.x, at.y + lineH), width, parts, t.step, segments);
    m_layout["stepBar"] = segments;
    return lineH + h;
}

float PlannerView::DrawMemoryBar(const RunResult& run, ImVec2 at, float width)
{
    const Theme& th = CurrentTheme();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const core::PlanRow& row = run.trainingPlan->rows[static_cast<size_t>(run.trainingPlanShown)];
    const core::MemoryBreakdown& m = row.memory;
    const double usable = run.trainingPlanRequest->cluster.UsableBytes();
    char title[200];
    std::snprintf(title, sizeof title, "memory per GPU (stage %d, %.3g micro-batches in flight): %s of %s usable", m.stage, m.inFlight,
                  core::GbText(m.Total()).c_str(), core::GbText(usable).c_str());
    dl->AddText(at, th.text, title);
    const float lineH = ImGui::GetTextLineHeightWithSpacing();
    const std::vector<Part> parts = {{"weights", m.weights, th.Block(0)},
                                     {"gradients", m.gradients, th.Block(1)},
                                     {"optimizer", m.optimizer, th.Block(2)},
                                     {"activations", m.activations, th.Block(3)}};
    nlohmann::json segments = nlohmann::json::array();
    const float h = StackedBar(dl, ImVec2(at.x, at.y + lineH), width * static_cast<float>(std::min(1.0, m.Total() / usable)), parts,
                               m.Total(), segments);
    m_layout["memoryBar"] = segments;
    return lineH + h;
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
    auto at = [&](const core::PlanRow& r) {
        const float x = p0.x + static_cast<float>(r.memory.Total() / mMax) * (p1.x - p0.x);
        const double f = tMax > tMin ? (std::min(r.time.step, tMax) - tMin) / (tMax - tMin) : 0.5;
        return ImVec2(x, p1.y - static_cast<float>(f) * (p1.y - p0.y));
    };
    dl->AddRect(p0, p1, th.gridMajor, 0.0f, 0, th.line);
    for (size_t i = 0; i < res.fitting; ++i) dl->AddCircleFilled(at(res.rows[i]), th.Px(2), WithAlpha(th.textDim, 0.5f));
    nlohmann::json front = nlohmann::json::array();
    for (size_t k = 0; k < res.pareto.size(); ++k) {
        const ImVec2 p = at(res.rows[res.pareto[k]]);
        if (k > 0) dl->AddLine(at(res.rows[res.pareto[k - 1]]), p, th.accent, th.Px(2));
        dl->AddCircleFilled(p, th.Px(4), th.accent);
        front.push_back({p.x, p.y});
    }
    if (run.trainingPlanShown >= 0) dl->AddCircle(at(res.rows[static_cast<size_t>(run.trainingPlanShown)]), th.Px(7), th.selection, 0, th.Px(2));
    char label[64];
    std::snprintf(label, sizeof label, "%s", core::FormatSeconds(tMin).c_str());
    dl->AddText(ImVec2(min.x, p1.y - lineH * 0.5f), th.textDim, label);
    std::snprintf(label, sizeof label, "%s", core::FormatSeconds(tMax).c_str());
    dl->AddText(ImVec2(min.x, p0.y - lineH * 0.5f), th.textDim, label);
    dl->AddText(ImVec2(p0.x, p1.y + th.Px(2)), th.textDim, "0 GB");
    const std::string right = core::GbText(mMax);
    dl->AddText(ImVec2(p1.x - ImGui::CalcTextSize(right.c_str()).x, p1.y + th.Px(2)), th.textDim, right.c_str());
    m_layout["points"] = res.fitting;
    m_layout["front"] = front;
}

} // namespace paralens::app
