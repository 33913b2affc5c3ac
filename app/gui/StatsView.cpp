#include "StatsView.hpp"

#include "PlotUtil.hpp"
#include "Theme.hpp"
#include "TimeAxis.hpp"

#include <cstdio>

namespace paralens::app {

void StatsView::Draw(ViewSettings&, ImVec2 size)
{
    ImGui::BeginChild("##stats", size, false);
    if (!m_snapshot || m_snapshot->runs.empty()) ImGui::TextDisabled("Nothing to show yet.");
    else {
        if (!m_snapshot->comparisons.empty()) DrawComparisons();
        for (size_t i = 0; i < m_snapshot->runs.size(); ++i) DrawRun(*m_snapshot->runs[i], i);
    }
    ImGui::EndChild();
}

void StatsView::DrawRun(const RunResult& run, size_t index)
{
    const Theme& th = CurrentTheme();
    char a[32], b[32], c[32];
    ImGui::PushID(static_cast<int>(index));
    ImGui::PushFont(th.bold);
    const bool open = ImGui::CollapsingHeader(run.title.c_str(), ImGuiTreeNodeFlags_DefaultOpen);
    ImGui::PopFont();
    if (!open) {
        ImGui::PopID();
        return;
    }
    if (run.experiment.kind == ExperimentKind::Collective) {
        ImGui::Text("%s %s   closed form %s%s   algbw %.4g GB/s   busbw %.4g GB/s", run.measured ? run.measuredAs : "simulated",
                    FormatDuration(a, sizeof a, run.simulatedSeconds * 1e9), FormatDuration(b, sizeof b, run.predictedSeconds * 1e9),
                    run.predictionExact ? "" : " (approximate)", run.algbwGBps, run.busbwGBps);
    }
    if (run.bubbleFraction >= 0) {
        if (run.bubbleFormula >= 0)
            ImGui::Text("bubble fraction %.2f%%   lectures' formula %.2f%%   step %s", run.bubbleFraction * 100,
                        run.bubbleFormula * 100, FormatDuration(c, sizeof c, static_cast<double>(run.windowEndNs - run.windowBeginNs)));
        else
            ImGui::Text("bubble fraction %.2f%% (the lectures give no formula for this schedule)", run.bubbleFraction * 100);
        if (run.bubbleModel >= 0)
            ImGui::Text("model %.2f%%: the run's schedule simulated at its measured op times, free links", run.bubbleModel * 100);
    }
    const bool activations = !run.peakActivations.empty();
    const int columns = activations ? 9 : 8;
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuterH |
                                  ImGuiTableFlags_SizingStretchProp;
    if (ImGui::BeginTable("##usage", columns, flags)) {
        for (const char* h : {"device", "busy", "idle", "idle %", "compute", "communication", "overlap", "exposed comm."})
            ImGui::TableSetupColumn(h);
        if (activations) ImGui::TableSetupColumn("peak activations");
        ImGui::TableHeadersRow();
        const core::Trace& t = *run.trace;
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(run.usage.size()));
        while (clipper.Step())
            for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
                const core::DeviceUsage& u = run.usage[static_cast<size_t>(row)];
                const std::string_view name = t.Str(t.Devices()[u.device].name);
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::Text("%.*s", static_cast<int>(name.size()), name.data());
                const int64_t values[] = {u.busyNs, u.idleNs};
                for (int64_t v : values) {
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(FormatDuration(a, sizeof a, static_cast<double>(v)));
                }
                ImGui::TableNextColumn();
                ImGui::Text("%.1f%%", u.windowNs > 0 ? 100.0 * static_cast<double>(u.idleNs) / static_cast<double>(u.windowNs) : 0.0);
                for (int64_t v : {u.computeNs, u.commNs, u.overlapNs, u.exposedCommNs}) {
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(FormatDuration(a, sizeof a, static_cast<double>(v)));
                }
                if (activations) {
                    ImGui::TableNextColumn();
                    const size_t d = static_cast<size_t>(row);
                    if (d < run.peakActivations.size()) {
                        if (d < run.peakActivationsFormula.size())
                            ImGui::Text("%d (formula %d)", run.peakActivations[d], run.peakActivationsFormula[d]);
                        else
                            ImGui::Text("%d", run.peakActivations[d]);
                    }
                }
            }
        ImGui::EndTable();
    }
    if (run.whatIf) DrawWhatIf(run);
    if (run.report) DrawCollectives(*run.report);
    if (run.critical) DrawCritical(run);
    ImGui::Spacing();
    ImGui::PopID();
}

void StatsView::DrawCollectives(const core::TraceReport& report)
{
    char a[32], b[32], c[32];
    if (!report.collectives.empty()) {
        ImGui::Spacing();
        ImGui::TextDisabled("Collectives (matched across ranks: skew = last arrival - first; the slowest rank is the one waited for)");
        const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuterH |
                                      ImGuiTableFlags_SizingStretchProp;
        if (ImGui::BeginTable("##collectives", 8, flags)) {
            for (const char* h : {"collective", "ranks", "operations", "bytes (total)", "time (per rank)", "busbw", "max skew", "slowest rank"})
                ImGui::TableSetupColumn(h);
            ImGui::TableHeadersRow();
            for (const core::CollectiveSummary& s : report.collectives) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(s.collective.c_str());
                ImGui::TableNextColumn();
                ImGui::Text("%d", s.ranks);
                ImGui::TableNextColumn();
                ImGui::Text("%zu", s.instances ? s.instances : s.count);
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(FormatValue(a, sizeof a, static_cast<double>(s.bytes), AxisUnit::Bytes));
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(FormatDuration(b, sizeof b, static_cast<double>(s.timeNs)));
                ImGui::TableNextColumn();
                ImGui::Text("%.4g GB/s", s.busbwGBps);
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(FormatDuration(c, sizeof c, static_cast<double>(s.maxSkewNs)));
                ImGui::TableNextColumn();
                if (s.slowestRank >= 0) ImGui::Text("%d", s.slowestRank);
                else ImGui::TextDisabled("-");
            }
            ImGui::EndTable();
        }
    }
    for (const std::string& note : report.notes) ImGui::TextDisabled("%s", note.c_str());
}

} // namespace paralens::app
