// The selected experiment's real run in the controls: warm-up and iterations, Run (greyed out with
// the reason when the backend cannot run it), Stop and the progress while it runs, and how the
// last run ended. The app starts and stops the job (ControlsContext's startLive / stopLive).
#include "ControlsPanel.hpp"

#include "ExperimentRunner.hpp"
#include "Theme.hpp"

#include <algorithm>
#include <cmath>

namespace paralens::app {

ImVec4 LastItemRect()
{
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    return ImVec4(a.x, a.y, b.x - a.x, b.y - a.y);
}

bool DrawRunControls(Experiment& e, int index, ControlsContext& ctx)
{
    const Theme& th = CurrentTheme();
    bool changed = false;
    const LiveStatus& live = *ctx.live;
    const bool mine = live.running && live.experiment == index;
    ImGui::BeginDisabled(live.running);
    int warmup = e.live.warmup, iterations = e.live.iterations;
    if (ImGui::InputInt("warm-up", &warmup, 1, 5)) changed = true, e.live.warmup = std::clamp(warmup, 0, 1000);
    if (e.kind == ExperimentKind::Training) // its own iterations (above) are the ones measured
        ImGui::TextDisabled("measures the step's %d iterations", e.training.iterations);
    else if (ImGui::InputInt("iterations", &iterations, 1, 10)) changed = true, e.live.iterations = std::clamp(iterations, 1, 100000);
    ImGui::EndDisabled();
    const std::string refusal = BackendRefusal(e);
    if (!live.running) {
        ImGui::BeginDisabled(!refusal.empty());
        if (ImGui::Button(e.backend == Backend::Gpu ? "Run on the GPU" : "Run for real", ImVec2(-1, 0))) ctx.startLive = true;
        ImGui::EndDisabled();
        ctx.runButton = LastItemRect();
        if (!refusal.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", refusal.c_str());
        if (!refusal.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(th.textDim));
            ImGui::TextWrapped("%s", refusal.c_str());
            ImGui::PopStyleColor();
        }
    } else {
        if (ImGui::Button(mine ? "Stop" : "Stop the other run", ImVec2(-1, 0))) ctx.stopLive = true;
        ctx.runButton = LastItemRect();
        char overlay[64];
        std::snprintf(overlay, sizeof overlay, "%.0f%%  (%.1f s)", live.fraction * 100.0, live.elapsedSeconds);
        ImGui::ProgressBar(static_cast<float>(std::clamp(live.fraction, 0.0, 1.0)), ImVec2(-1, 0), overlay);
        ImGui::TextWrapped("%s", live.phase.c_str());
    }
    if (!live.running && !live.message.empty() && live.experiment == index) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(live.failed ? th.warning : th.textDim));
        ImGui::TextWrapped("%s", live.message.c_str());
        ImGui::PopStyleColor();
    }
    ImGui::Separator();
    return changed;
}

} // namespace paralens::app
