// The controls of a what-if experiment (ControlsPanel::DrawWhatIf): factors on compute,
// communication and host ops, the network's bandwidth and alpha, more rules by op name, a
// straggler removed and a rank's skew; each edit replays the trace on a worker.
#include "ControlsPanel.hpp"
#include "Theme.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

namespace paralens::app {

namespace {

bool Factor(const char* label, double& v, const char* tip)
{
    const double lo = 0.1, hi = 10.0;
    const bool changed = ImGui::SliderScalar(label, ImGuiDataType_Double, &v, &lo, &hi, "x%.2f", ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s (x1: unchanged; Ctrl+click to type a value)", tip);
    return changed;
}

// A text parameter applied on Enter.
bool TextParam(const char* label, std::string& value, const char* tip)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s", value.c_str());
    bool changed = false;
    if (ImGui::InputText(label, buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue) && value != buf) {
        value = buf;
        changed = true;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s; Enter applies", tip);
    return changed;
}

} // namespace

bool ControlsPanel::DrawWhatIf(WhatIfParams& w)
{
    bool changed = false;
    ImGui::TextWrapped("A what-if replays the trace along its dependencies with these changes; its timeline lies under the "
                       "measured one, its critical path and step times are in the Stats tab.");
    changed |= Factor("compute", w.computeX, "GPU compute ops' time times this");
    changed |= Factor("communication", w.commX, "collectives', sends' and receives' time times this");
    changed |= Factor("host ops", w.cpuX, "CPU ops' and runtime calls' time times this");
    changed |= Factor("bandwidth", w.bandwidthX, "the network's bandwidth times this, communication re-priced by the cost model");
    changed |= Factor("alpha", w.alphaX, "the network's latency times this, communication re-priced by the cost model");
    changed |= TextParam("op rules", w.scale, "PATTERN=FACTOR, ...: a category (compute, comm, memcpy, cpu, ...) or a glob on op names, "
                                              "e.g. *gemm*=0.8, nccl*=0.5");
    int straggler = w.noStragglers.empty() ? -1 : w.noStragglers.front();
    if (ImGui::InputInt("no straggler", &straggler)) {
        straggler = std::max(-1, straggler);
        w.noStragglers.clear();
        if (straggler >= 0) w.noStragglers.push_back(straggler);
        changed = true;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("a rank whose ops take the other ranks' median time (-1: none)");
    std::pair<int, double> skew = w.skewUs.empty() ? std::pair<int, double>{-1, 0.0} : w.skewUs.front();
    bool skewed = ImGui::InputInt("skewed rank", &skew.first);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("a rank that starts later (-1: none)");
    const double lo = 0, hi = 10000;
    skewed |= ImGui::SliderScalar("skew", ImGuiDataType_Double, &skew.second, &lo, &hi, "%.0f us", ImGuiSliderFlags_Logarithmic);
    if (skewed) {
        w.skewUs.clear();
        if (skew.first >= 0) w.skewUs.push_back({skew.first, skew.second});
        changed = true;
    }
    changed |= TextParam("network fit", w.model, "the network the trace ran on, as a fit file (`paralens fit --out FIT.json`), "
                                                 "for traces that do not carry their own model");
    if (!w.Empty() && ImGui::Button("Reset the changes")) {
        w = WhatIfParams{};
        changed = true;
    }
    return changed;
}

} // namespace paralens::app
