// The Stats view's critical paths, what-if results and run comparisons (StatsView::DrawCritical,
// DrawWhatIf, DrawComparisons).
#include "StatsView.hpp"

#include "PlotUtil.hpp"
#include "Theme.hpp"
#include "TimeAxis.hpp"

#include <algorithm>
#include <cstdio>

namespace paralens::app {

namespace {

constexpr size_t kStepsShown = 12;  // a long trace's steps beyond these are summed up in a line
constexpr size_t kLongestShown = 8; // ops of a path listed
constexpr size_t kOpsShown = 40;    // ops of a comparison listed

const ImGuiTableFlags kTable = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuterH |
                               ImGuiTableFlags_SizingStretchProp;

ImU32 CategoryColor(const Theme& th, core::PathCategory c)
{
    using C = core::SpanCategory;
    switch (c) {
    case core::PathCategory::Compute: return th.category[static_cast<int>(C::Compute)];
    case core::PathCategory::Communication: return th.category[static_cast<int>(C::Collective)];
    case core::PathCategory::Memcpy: return th.category[static_cast<int>(C::Memcpy)];
    case core::PathCategory::Cpu: return th.category[static_cast<int>(C::Other)];
    case core::PathCategory::Launch: return th.category[static_cast<int>(C::Sync)];
    case core::PathCategory::Idle: return th.bubbleFill;
    case core::PathCategory::PreviousStep: return th.gridMajor;
    }
    return th.bubbleFill;
}

// The path's time by category as one stacked bar, with a legend of what is in it.
void Breakdown(const core::StepPath& p)
{
    const Theme& th = CurrentTheme();
    const float width = ImGui::GetContentRegionAvail().x, height = ImGui::GetFontSize() * 0.9f;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const double total = static_cast<double>(std::max<int64_t>(1, p.DurationNs()));
    float x = at.x;
    for (int c = 0; c < core::kPathCategoryCount; ++c) {
        const float w = static_cast<float>(static_cast<double>(p.byCategory[static_cast<size_t>(c)]) / total) * width;
        if (w <= 0) continue;
        dl->AddRectFilled(ImVec2(x, at.y), ImVec2(x + w, at.y + height), CategoryColor(th, static_cast<core::PathCategory>(c)));
        x += w;
    }
    ImGui::Dummy(ImVec2(width, height + 2));
    bool first = true;
    char a[32];
    for (int c = 0; c < core::kPathCategoryCount; ++c) {
        const int64_t ns = p.byCategory[static_cast<size_t>(c)];
        if (ns == 0) continue;
        if (!first) ImGui::SameLine();
        first = false;
        const ImVec2 sw = ImGui::GetCursorScreenPos();
        const float s = ImGui::GetFontSize() * 0.7f;
        ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(sw.x, sw.y + s * 0.3f), ImVec2(sw.x + s, sw.y + s * 1.3f),
                                                  CategoryColor(th, static_cast<core::PathCategory>(c)));
        ImGui::Dummy(ImVec2(s, s));
        ImGui::SameLine();
        ImGui::Text("%s %s (%.0f%%)", std::string(core::Name(static_cast<core::PathCategory>(c))).c_str(),
                    FormatDuration(a, sizeof a, static_cast<double>(ns)), 100.0 * static_cast<double>(ns) / total);
    }
}

void Longest(const core::StepPath& p, const core::Trace& t)
{
    std::vector<const core::PathSegment*> longest;
    for (const auto& s : p.segments) longest.push_back(&s);
    std::partial_sort(longest.begin(), longest.begin() + static_cast<ptrdiff_t>(std::min(kLongestShown, longest.size())), longest.end(),
                      [](auto* x, auto* y) { return x->endNs - x->startNs > y->endNs - y->startNs; });
    longest.resize(std::min(kLongestShown, longest.size()));
    if (!ImGui::BeginTable("##longest", 4, kTable)) return;
    for (const char* h : {"on the path", "what", "device", "op"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    char a[32];
    for (const auto* s : longest) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(FormatDuration(a, sizeof a, static_cast<double>(s->endNs - s->startNs)));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(std::string(core::Name(s->category)).c_str());
        ImGui::TableNextColumn();
        const std::string_view device = t.Str(t.Devices()[s->device].name);
        ImGui::Text("%.*s", static_cast<int>(device.size()), device.data());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(core::SegmentName(t, *s).c_str());
    }
    ImGui::EndTable();
}

} // namespace

void StatsView::DrawCritical(const RunResult& run)
{
    const CriticalPathData& c = *run.critical;
    if (c.steps.empty()) return;
    char a[32];
    ImGui::Spacing();
    ImGui::TextDisabled("Critical path (View > Critical path outlines it on the timeline): %zu ops, %zu dependencies", c.ops, c.dependencies);
    for (size_t i = 0; i < std::min(kStepsShown, c.steps.size()); ++i) {
        const core::StepPath& p = c.steps[i];
        ImGui::PushID(static_cast<int>(i));
        ImGui::Text("%s: %s, crosses ranks %zu times", p.label.c_str(), FormatDuration(a, sizeof a, static_cast<double>(p.DurationNs())),
                    p.rankCrossings);
        Breakdown(p);
        if (i == 0 || ImGui::TreeNode("ops", "its longest ops")) {
            Longest(p, *run.trace);
            if (i > 0) ImGui::TreePop();
        }
        ImGui::PopID();
    }
    if (c.steps.size() > kStepsShown) ImGui::TextDisabled("... and %zu more steps", c.steps.size() - kStepsShown);
}

void StatsView::DrawWhatIf(const RunResult& run)
{
    const core::WhatIfAnalysis& w = *run.whatIf;
    char a[32], b[32];
    ImGui::Spacing();
    ImGui::TextWrapped("What-if: %s", run.whatIfChanges.c_str());
    if (ImGui::BeginTable("##whatif", 4, kTable)) {
        for (const char* h : {"step", "measured", "what-if", "change"}) ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < std::min(kStepsShown, w.measured.size()); ++i) {
            const int64_t m = w.measured[i].DurationNs(), r = w.replayed[i].DurationNs();
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(w.measured[i].label.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(FormatDuration(a, sizeof a, static_cast<double>(m)));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(FormatDuration(b, sizeof b, static_cast<double>(r)));
            ImGui::TableNextColumn();
            ImGui::Text("%+.2f%%", m > 0 ? 100.0 * static_cast<double>(r - m) / static_cast<double>(m) : 0.0);
        }
        ImGui::EndTable();
    }
    auto mfu = [](const core::RunFigures& f, char* buf, size_t size) {
        if (f.mfu) std::snprintf(buf, size, "%.1f%%", *f.mfu * 100);
        else std::snprintf(buf, size, "-");
        return buf;
    };
    ImGui::Text("idle %.1f%% -> %.1f%%   MFU %s -> %s   %zu ops changed their duration", w.measuredFigures.idleFraction * 100,
                w.replayedFigures.idleFraction * 100, mfu(w.measuredFigures, a, sizeof a), mfu(w.replayedFigures, b, sizeof b), w.changedNodes);
    if (w.simulatedCollectives > 0) ImGui::TextDisabled("%zu collectives re-run through the simulator", w.simulatedCollectives);
}

void StatsView::DrawComparisons()
{
    const Theme& th = CurrentTheme();
    char a[32], b[32];
    for (size_t k = 0; k < m_snapshot->comparisons.size(); ++k) {
        const RunComparison& cmp = m_snapshot->comparisons[k];
        const core::TraceDiffResult& d = *cmp.diff;
        ImGui::PushID(static_cast<int>(1000 + k));
        const std::string title = "Compare: " + m_snapshot->runs[static_cast<size_t>(cmp.second)]->title + "  against  " +
                                  m_snapshot->runs[static_cast<size_t>(cmp.first)]->title;
        ImGui::PushFont(th.bold);
        const bool open = ImGui::CollapsingHeader(title.c_str(), ImGuiTreeNodeFlags_DefaultOpen);
        ImGui::PopFont();
        if (!open) {
            ImGui::PopID();
            continue;
        }
        if (d.Empty()) ImGui::TextUnformatted("No difference: every op paired, at the same time, with the same duration.");
        else
            ImGui::TextWrapped("%zu ops paired (%zu changed duration), %zu only in the first, %zu only in the second; starts moved by %s "
                               "(median, from each run's beginning)",
                               d.matched, d.durationChanged, d.onlyA, d.onlyB, FormatDuration(a, sizeof a, static_cast<double>(d.medianRelativeShiftNs)));
        if (ImGui::BeginTable("##steps", 4, kTable)) {
            for (const char* h : {"step", "first", "second", "change"}) ImGui::TableSetupColumn(h);
            ImGui::TableHeadersRow();
            for (size_t i = 0; i < std::min(kStepsShown, d.steps.size()); ++i) {
                const core::StepDelta& s = d.steps[i];
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(s.label.c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(s.durationNsA >= 0 ? FormatDuration(a, sizeof a, static_cast<double>(s.durationNsA)) : "-");
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(s.durationNsB >= 0 ? FormatDuration(b, sizeof b, static_cast<double>(s.durationNsB)) : "-");
                ImGui::TableNextColumn();
                if (s.durationNsA > 0 && s.durationNsB >= 0)
                    ImGui::Text("%+.2f%%", 100.0 * static_cast<double>(s.durationNsB - s.durationNsA) / static_cast<double>(s.durationNsA));
            }
            ImGui::EndTable();
        }
        if (!d.ops.empty() && ImGui::BeginTable("##ops", 5, kTable | ImGuiTableFlags_ScrollY,
                                                ImVec2(0, ImGui::GetTextLineHeightWithSpacing() * std::min<float>(12, 1.5f + static_cast<float>(d.ops.size()))))) {
            ImGui::TableSetupScrollFreeze(0, 1);
            for (const char* h : {"delta", "count", "count (second)", "category", "op (regressions first)"}) ImGui::TableSetupColumn(h);
            ImGui::TableHeadersRow();
            ImGuiListClipper clipper;
            clipper.Begin(static_cast<int>(std::min(kOpsShown, d.ops.size())));
            while (clipper.Step())
                for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
                    const core::OpDelta& o = d.ops[static_cast<size_t>(row)];
                    ImGui::TableNextRow();
                    ImGui::TableNextColumn();
                    const int64_t delta = o.DeltaNs();
                    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(delta > 0 ? th.warning : th.text));
                    ImGui::Text("%s%s", delta >= 0 ? "+" : "-", FormatDuration(a, sizeof a, static_cast<double>(delta >= 0 ? delta : -delta)));
                    ImGui::PopStyleColor();
                    ImGui::TableNextColumn();
                    ImGui::Text("%zu", o.countA);
                    ImGui::TableNextColumn();
                    ImGui::Text("%zu", o.countB);
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(std::string(core::Name(o.category)).c_str());
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(o.name.c_str());
                }
            ImGui::EndTable();
        }
        ImGui::Spacing();
        ImGui::PopID();
    }
}

} // namespace paralens::app
