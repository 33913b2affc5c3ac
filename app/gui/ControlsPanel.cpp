#include "ControlsPanel.hpp"

#include "PlanRuns.hpp"

#include "ExperimentRunner.hpp"
#include "PlotUtil.hpp"
#include "RunBuilder.hpp"
#include "Theme.hpp"
#include "TrainingRuns.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/Hardware.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

namespace paralens::app {

namespace {

bool SliderDouble(const char* label, double& v, double lo, double hi, const char* format, bool log)
{
    return ImGui::SliderScalar(label, ImGuiDataType_Double, &v, &lo, &hi, format, log ? ImGuiSliderFlags_Logarithmic : 0);
}

// A size as a power-of-two slider and an exact text input ("64MiB", "1000000").
bool BytesControl(const char* label, uint64_t& bytes, int minLog2, int maxLog2)
{
    bool changed = false;
    ImGui::PushID(label);
    int l = std::clamp(static_cast<int>(std::lround(std::log2(static_cast<double>(std::max<uint64_t>(bytes, 1))))), minLog2, maxLog2);
    char shown[48], escaped[64];
    FormatValue(shown, sizeof shown, static_cast<double>(bytes), AxisUnit::Bytes);
    std::snprintf(escaped, sizeof escaped, "%s", shown);
    if (ImGui::SliderInt(label, &l, minLog2, maxLog2, escaped)) {
        bytes = uint64_t{1} << l;
        changed = true;
    }
    // With EnterReturnsTrue ImGui edits its own copy while the field is active, so the buffer can
    // be refreshed from the value every frame.
    char text[32];
    std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(bytes));
    ImGui::SetNextItemWidth(ImGui::CalcItemWidth());
    if (ImGui::InputText("##exact", text, sizeof text, ImGuiInputTextFlags_EnterReturnsTrue)) {
        try {
            const uint64_t parsed = core::ParseBytes(text);
            if (parsed > 0) {
                bytes = parsed;
                changed = true;
            }
        } catch (const Error&) {
            // Invalid text: the field shows the current size again.
        }
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("exact size in bytes, or with a unit: 64KiB, 1MB, 128M; Enter applies");
    ImGui::PopID();
    return changed;
}

template <class E, class Names>
bool EnumCombo(const char* label, E& value, std::span<const E> options, Names name)
{
    bool changed = false;
    char text[48];
    auto copy = [&](E v) {
        const std::string_view n = name(v);
        std::snprintf(text, sizeof text, "%.*s", static_cast<int>(n.size()), n.data());
        return text;
    };
    if (ImGui::BeginCombo(label, copy(value))) {
        for (E o : options)
            if (ImGui::Selectable(copy(o), o == value)) {
                changed = o != value;
                value = o;
            }
        ImGui::EndCombo();
    }
    return changed;
}

} // namespace

bool ControlsPanel::Draw(std::vector<Experiment>& experiments, ViewSettings& settings, ControlsContext& ctx, ImVec2 size)
{
    const Theme& th = CurrentTheme();
    ImGui::BeginChild("##controls", size, false);
    ImGui::PushItemWidth(-th.Px(96));
    if (!ctx.scenarioTitle.empty()) {
        ImGui::PushFont(th.bold);
        ImGui::TextWrapped("%s", ctx.scenarioTitle.c_str());
        ImGui::PopFont();
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(th.textDim));
        ImGui::TextWrapped("%s", ctx.scenarioDescription.c_str());
        ImGui::PopStyleColor();
        ImGui::Separator();
    }
    m_openFile = false;
    m_ctx = &ctx;
    bool changed = DrawList(experiments, settings);
    ctx.openFile = ctx.openFile || m_openFile;
    if (settings.selected >= 0 && static_cast<size_t>(settings.selected) < experiments.size()) {
        Experiment& e = experiments[static_cast<size_t>(settings.selected)];
        ImGui::Spacing();
        if (e.kind == ExperimentKind::File || e.kind == ExperimentKind::WhatIf) {
            for (const std::string& f : e.files) ImGui::TextWrapped("Trace file: %s", f.c_str());
            if (e.kind == ExperimentKind::WhatIf) changed |= DrawWhatIf(e.whatIf);
            else if (ImGui::Button("Open another file...")) ctx.openFile = true;
            if (e.kind == ExperimentKind::File) {
                ImGui::SameLine();
                const bool replay = ImGui::Button("What-if replay");
                m_ctx->whatIfButton = LastItemRect();
                if (replay) {
                    Experiment w;
                    w.kind = ExperimentKind::WhatIf;
                    w.files = e.files;
                    w.label = "what-if";
                    w.whatIf.commX = 0.5; // a first change to see: communication twice as fast
                    const size_t at = static_cast<size_t>(settings.selected) + 1;
                    experiments.insert(experiments.begin() + static_cast<ptrdiff_t>(at), std::move(w));
                    settings.selected = static_cast<int>(at);
                    settings.showCriticalPath = true;
                    changed = true;
                }
                if (ImGui::IsItemHovered())
                    ImGui::SetTooltip("Replay this trace along its dependencies with changes you choose (faster communication, "
                                      "a straggler removed, ...) and see the new timeline under the measured one");
            }
        } else {
            constexpr ExperimentKind kKinds[] = {ExperimentKind::Collective, ExperimentKind::Pipeline, ExperimentKind::Training,
                                                 ExperimentKind::Autopar, ExperimentKind::Plan};
            int kind = static_cast<int>(std::find(std::begin(kKinds), std::end(kKinds), e.kind) - std::begin(kKinds));
            bool k = false;
            for (int i = 0; i < 5; ++i) {
                if (i % 2) ImGui::SameLine();
                k |= ImGui::RadioButton(std::string(Name(kKinds[i])).c_str(), &kind, i);
            }
            if (k) {
                e.kind = kKinds[kind];
                changed = true;
            }
            int devices = e.collective.ranks;
            if (e.kind == ExperimentKind::Collective) changed |= DrawCollective(e.collective, e.cluster);
            if (e.kind == ExperimentKind::Pipeline) {
                changed |= DrawPipeline(e.pipeline);
                devices = e.pipeline.stages;
            }
            if (e.kind == ExperimentKind::Training) {
                changed |= DrawTraining(e.training);
                devices = e.training.workload == "interop" ? 2 : e.training.devices;
            }
            if (e.kind == ExperimentKind::Autopar) changed |= DrawAutopar(e.autopar);
            else if (e.kind == ExperimentKind::Plan) changed |= DrawPlan(e.plan);
            else changed |= DrawCluster(e.cluster, e.kind == ExperimentKind::Pipeline, devices);
        }
    }
    if (!ctx.simulationError.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(th.warning));
        ImGui::TextWrapped("%s", ctx.simulationError.c_str());
        ImGui::PopStyleColor();
    }
    DrawJobs(ctx);
    ImGui::PopItemWidth();
    ImGui::EndChild();
    return changed;
}

bool ControlsPanel::DrawList(std::vector<Experiment>& experiments, ViewSettings& settings)
{
    const Theme& th = CurrentTheme();
    bool changed = false;
    // The backend of the selected experiment: the simulator, processes of this machine, its GPUs,
    // or a file. A backend this build or machine lacks is listed greyed, the reason in its tooltip.
    Experiment* selected = settings.selected >= 0 && static_cast<size_t>(settings.selected) < experiments.size()
                               ? &experiments[static_cast<size_t>(settings.selected)]
                               : nullptr;
    const bool file = selected && (selected->kind == ExperimentKind::File || selected->kind == ExperimentKind::WhatIf);
    const char* current = file ? (selected->kind == ExperimentKind::WhatIf ? "what-if replay of a trace" : "trace file") : !selected ? "simulated"
                        : selected->backend == Backend::Processes ? "processes (real)"
                        : selected->backend == Backend::Gpu ? "GPU (real)" : "simulated";
    if (ImGui::BeginCombo("backend", current)) {
        const struct {
            Backend backend;
            const char* label;
        } options[] = {{Backend::Simulated, "simulated (the modelled cluster)"},
                       {Backend::Processes, "processes (real messages and GEMMs on this machine)"},
                       {Backend::Gpu, "GPU (this machine's GPUs)"}};
        for (const auto& o : options) {
            const std::string why = BackendAvailability(o.backend);
            const bool on = !file && selected && selected->backend == o.backend;
            if (ImGui::Selectable(o.label, on, why.empty() ? 0 : ImGuiSelectableFlags_Disabled) && selected) {
                if (file) selected->kind = ExperimentKind::Collective, selected->files.clear();
                changed = changed || file || selected->backend != o.backend;
                selected->backend = o.backend;
            }
            if (!why.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", why.c_str());
        }
        if (ImGui::Selectable("trace file...", file)) m_openFile = true;
        ImGui::EndCombo();
    }
    if (selected && !file && selected->backend != Backend::Simulated) changed |= DrawRunControls(*selected, settings.selected, *m_ctx);
    ImGui::Spacing();
    ImGui::PushFont(th.bold);
    ImGui::TextUnformatted("Experiments");
    ImGui::PopFont();
    if (experiments != m_described) {
        m_described = experiments;
        m_labels.clear();
        m_details.clear();
        for (const Experiment& e : experiments) {
            m_details.push_back(Describe(e));
            m_labels.push_back(e.label.empty() ? m_details.back() : e.label + "  \xE2\x80\x94  " + m_details.back());
        }
    }
    for (size_t i = 0; i < experiments.size(); ++i) {
        ImGui::PushID(static_cast<int>(i));
        if (ImGui::Selectable(m_labels[i].c_str(), settings.selected == static_cast<int>(i))) settings.selected = static_cast<int>(i);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", m_details[i].c_str());
        ImGui::PopID();
    }
    if (ImGui::SmallButton("+ add (a copy of the selected)") && !experiments.empty()) {
        Experiment copy = experiments[static_cast<size_t>(std::clamp(settings.selected, 0, static_cast<int>(experiments.size()) - 1))];
        copy.label = copy.label.empty() ? "copy" : copy.label + " (copy)";
        experiments.push_back(copy);
        settings.selected = static_cast<int>(experiments.size()) - 1;
        changed = true;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("- remove") && experiments.size() > 1 && settings.selected >= 0) {
        experiments.erase(experiments.begin() + settings.selected);
        settings.selected = std::min(settings.selected, static_cast<int>(experiments.size()) - 1);
        if (settings.modelExperiment >= static_cast<int>(experiments.size())) settings.modelExperiment = -1;
        changed = true;
    }
    if (settings.selected >= 0 && static_cast<size_t>(settings.selected) < experiments.size()) {
        Experiment& e = experiments[static_cast<size_t>(settings.selected)];
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s", e.label.c_str());
        if (ImGui::InputText("label", buf, sizeof buf)) {
            e.label = buf;
            changed = true;
        }
    }
    return changed;
}

bool ControlsPanel::DrawCollective(CollectiveParams& c, const ClusterParams& cluster)
{
    bool changed = EnumCombo<core::Collective>("collective", c.collective, core::AllCollectives(),
                                               [](core::Collective x) { return core::Name(x); });
    if (!core::Supports(c.collective, c.algorithm)) {
        c.algorithm = core::AlgorithmsFor(c.collective)[0];
        changed = true;
    }
    const std::vector<core::Algorithm> algorithms = AlgorithmChoices(c, cluster); // on nodes: the hierarchical ones too
    changed |= EnumCombo<core::Algorithm>("algorithm", c.algorithm, std::span<const core::Algorithm>(algorithms),
                                          [](core::Algorithm x) { return core::Name(x); });
    changed |= ImGui::SliderInt("ranks p", &c.ranks, 1, 64, "%d", ImGuiSliderFlags_AlwaysClamp);
    changed |= BytesControl("size n", c.bytes, 0, 31);
    if (core::HasRoot(c.collective)) changed |= ImGui::SliderInt("root", &c.root, 0, std::max(0, c.ranks - 1));
    c.root = std::clamp(c.root, 0, std::max(0, c.ranks - 1));
    return changed;
}

bool ControlsPanel::DrawPipeline(PipelineParams& p)
{
    bool changed = EnumCombo<core::ScheduleKind>("schedule", p.schedule, core::AllScheduleKinds(),
                                                 [](core::ScheduleKind x) { return core::Name(x); });
    changed |= ImGui::SliderInt("stages D", &p.stages, 1, 16, "%d", ImGuiSliderFlags_AlwaysClamp);
    changed |= ImGui::SliderInt("micro-batches N", &p.microBatches, 1, 64, "%d", ImGuiSliderFlags_AlwaysClamp);
    if (p.schedule == core::ScheduleKind::Interleaved)
        changed |= ImGui::SliderInt("chunks v", &p.chunks, 1, 4, "%d", ImGuiSliderFlags_AlwaysClamp);
    if (p.schedule == core::ScheduleKind::PipeDream)
        changed |= ImGui::SliderInt("mini-batches", &p.batches, 1, 4, "%d", ImGuiSliderFlags_AlwaysClamp);
    changed |= SliderDouble("forward ms", p.forwardMs, 0.01, 100.0, "%.3g ms", true);
    changed |= SliderDouble("backward / fwd", p.backwardRatio, 0.5, 4.0, "%.2f x", false);
    changed |= ImGui::Checkbox("recompute activations", &p.recompute);
    changed |= ImGui::Checkbox("communication costs", &p.communicate);
    if (p.communicate) changed |= BytesControl("activations", p.activationBytes, 10, 30);
    const auto& table = core::HardwareTable();
    if (ImGui::BeginCombo("GPU", p.gpu.c_str())) {
        for (const core::GpuSpec& g : table)
            if (ImGui::Selectable(g.id.c_str(), g.id == p.gpu)) {
                changed |= g.id != p.gpu;
                p.gpu = g.id;
            }
        ImGui::EndCombo();
    }
    if (const core::GpuSpec* g = core::FindGpu(p.gpu); g && ImGui::BeginCombo("dtype", p.dtype.c_str())) {
        for (const auto& [dtype, tflops] : g->tflops)
            if (ImGui::Selectable(dtype.c_str(), dtype == p.dtype)) {
                changed |= dtype != p.dtype;
                p.dtype = dtype;
            }
        ImGui::EndCombo();
    }
    changed |= SliderDouble("kernel efficiency", p.kernelEfficiency, 0.05, 1.0, "%.2f of peak", false);
    return changed;
}

bool ControlsPanel::DrawTraining(TrainingParams& t)
{
    bool changed = false;
    if (ImGui::BeginCombo("workload", t.workload.c_str())) {
        for (const std::string& name : TrainingWorkloadNames())
            if (ImGui::Selectable(name.c_str(), name == t.workload)) {
                changed |= name != t.workload;
                t.workload = name;
            }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("dp: data parallel, allreduce; ps: parameter server; tp: Megatron MLP;\n"
                          "interop / intraop: Y = X W1 W2 split between or inside operators; moe: experts");
    const bool dataParallel = t.workload == "dp" || t.workload == "ps";
    if (t.workload != "interop") changed |= ImGui::SliderInt(dataParallel ? "workers" : "devices", &t.devices, 1, 32, "%d", ImGuiSliderFlags_AlwaysClamp);
    if (dataParallel || t.workload == "tp") changed |= ImGui::SliderInt("layers", &t.layers, 1, 32, "%d", ImGuiSliderFlags_AlwaysClamp);
    if (dataParallel) {
        changed |= ImGui::SliderInt("iterations", &t.iterations, 1, 8, "%d", ImGuiSliderFlags_AlwaysClamp);
        changed |= SliderDouble("forward ms/layer", t.forwardMs, 0.01, 100.0, "%.3g ms", true);
        changed |= BytesControl("grads/layer", t.gradBytes, 10, 30);
    }
    if (t.workload == "dp") changed |= ImGui::Checkbox("overlap with backward", &t.overlap);
    if (t.workload == "ps") {
        changed |= ImGui::SliderInt("servers", &t.servers, 1, 8, "%d", ImGuiSliderFlags_AlwaysClamp);
        int c = t.consistency == "ssp" ? 1 : t.consistency == "async" ? 2 : 0;
        if (ImGui::Combo("consistency", &c, "bsp\0ssp\0async\0")) {
            t.consistency = c == 1 ? "ssp" : c == 2 ? "async" : "bsp";
            changed = true;
        }
        if (t.consistency == "ssp") changed |= ImGui::SliderInt("staleness", &t.staleness, 0, 4);
    }
    if (!dataParallel) {
        changed |= SliderDouble("tokens", t.tokens, 256, 65536, "%.0f", true);
        changed |= SliderDouble("hidden", t.hidden, 256, 32768, "%.0f", true);
    }
    if (t.workload == "interop") changed |= ImGui::SliderInt("inputs", &t.inputs, 1, 16, "%d", ImGuiSliderFlags_AlwaysClamp);
    if (t.workload == "moe") {
        changed |= ImGui::SliderInt("experts", &t.experts, 1, 64, "%d", ImGuiSliderFlags_AlwaysClamp);
        changed |= ImGui::SliderInt("top-k", &t.topK, 1, 8, "%d", ImGuiSliderFlags_AlwaysClamp);
        changed |= SliderDouble("imbalance", t.imbalance, 0.0, 2.0, "%.2f", false);
    }
    if (t.workload == "dp" || t.workload == "tp" || t.workload == "intraop")
        changed |= EnumCombo<core::Algorithm>("allreduce", t.algorithm, core::AlgorithmsFor(core::Collective::AllReduce),
                                              [](core::Algorithm x) { return core::Name(x); });
    changed |= SliderDouble("kernel efficiency", t.kernelEfficiency, 0.05, 1.0, "%.2f of peak", false);
    return changed;
}

namespace {

// A power of two between 2^lo and 2^hi, slid by its exponent.
bool Pow2Slider(const char* label, int64_t& v, int lo, int hi)
{
    int e = 0;
    while (e < hi && (int64_t{1} << (e + 1)) <= v) ++e;
    e = std::max(e, lo);
    const std::string shown = std::to_string(int64_t{1} << e);
    if (!ImGui::SliderInt(label, &e, lo, hi, shown.c_str(), ImGuiSliderFlags_AlwaysClamp)) return false;
    v = int64_t{1} << e;
    return true;
}

} // namespace

bool ControlsPanel::DrawAutopar(AutoparParams& a)
{
    bool changed = false;
    const bool file = a.graph != "mlp" && a.graph != "transformer" && a.graph != "convnet";
    if (ImGui::BeginCombo("graph", a.graph.c_str())) {
        for (const char* g : {"mlp", "transformer", "convnet"})
            if (ImGui::Selectable(g, a.graph == g)) {
                changed |= a.graph != g;
                a.graph = g;
            }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("mlp: the lectures' Y = X W1 W2; transformer: Megatron layers (attention + MLP);\n"
                          "convnet: two convolutions and a classifier; or a graph .json file from a scenario");
    if (a.graph == "transformer") changed |= ImGui::SliderInt("layers", &a.layers, 1, 32, "%d", ImGuiSliderFlags_AlwaysClamp);
    changed |= ImGui::SliderInt("mesh rows", &a.mesh.rows, 1, 8, "%d", ImGuiSliderFlags_AlwaysClamp);
    changed |= ImGui::SliderInt("devices per row", &a.mesh.cols, 1, 16, "%d", ImGuiSliderFlags_AlwaysClamp);
    if (!file) {
        changed |= Pow2Slider("batch", a.batch, 0, 10);
        if (a.graph != "convnet") {
            changed |= Pow2Slider("sequence", a.seq, 6, 15);
            changed |= Pow2Slider("hidden", a.hidden, 8, 15);
            a.ffn = 4 * a.hidden;
            a.heads = std::clamp<int64_t>(a.heads, 1, a.hidden);
        }
    }
    ImGui::Spacing();
    ImGui::TextDisabled("links: fast inside a row, slow between rows");
    changed |= SliderDouble("fast GB/s", a.mesh.fastGBps, 1.0, 2000.0, "%.4g GB/s", true);
    changed |= SliderDouble("slow GB/s", a.mesh.slowGBps, 0.1, 2000.0, "%.4g GB/s", true);
    changed |= SliderDouble("kernel efficiency", a.mesh.efficiency, 0.05, 1.0, "%.2f of peak", false);
    if (a.graph == "transformer" || file) {
        bool pipeline = a.microBatches > 0;
        if (ImGui::Checkbox("search pipeline stages too", &pipeline)) {
            a.microBatches = pipeline ? static_cast<int>(std::min<int64_t>(a.batch, 8)) : 0;
            changed = true;
        }
        if (pipeline) {
            changed |= ImGui::SliderInt("micro-batches", &a.microBatches, 1, static_cast<int>(std::min<int64_t>(a.batch, 64)), "%d",
                                        ImGuiSliderFlags_AlwaysClamp);
            while (a.microBatches > 1 && a.batch % a.microBatches != 0) --a.microBatches; // they split the batch evenly
        }
    }
    int shown = 0;
    const char* names[] = {"ilp", "dp", "greedy", "random", "data-parallel", "megatron"};
    for (int i = 0; i < 6; ++i)
        if (a.show == names[i]) shown = i;
    if (ImGui::Combo("timeline shows", &shown, "ilp\0dp\0greedy\0random\0data-parallel\0megatron\0")) {
        a.show = names[shown];
        changed = true;
    }
    return changed;
}

namespace {

// A run of the published set instead of the controls below: its model, cluster and techniques.
bool DrawPublishedRun(PlanParams& p)
{
    bool changed = false;
    const auto& runs = PublishedRunList();
    const auto current = std::find_if(runs.begin(), runs.end(), [&](const core::PublishedSetEntry& e) { return e.id == p.published; });
    const char* shown = current == runs.end() ? "none: the controls below" : current->label.c_str();
    if (ImGui::BeginCombo("published run", shown, ImGuiComboFlags_HeightLarge)) {
        if (ImGui::Selectable("none: the controls below", p.published.empty()) && !p.published.empty()) {
            p.published.clear();
            p.row = 1;
            changed = true;
        }
        for (const core::PublishedSetEntry& e : runs) {
            ImGui::PushID(e.id.c_str());
            if (ImGui::Selectable(e.label.c_str(), p.published == e.id, e.skipped.empty() ? 0 : ImGuiSelectableFlags_Disabled)) {
                changed |= p.published != e.id;
                p.published = e.id;
                p.row = 0;
            }
            if (!e.skipped.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
                ImGui::SetTooltip("Not modelled: %s", e.skipped.c_str());
            ImGui::PopID();
        }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("A published training run (tests/data/published-runs.csv): its model, GPUs, batch and techniques;\n"
                          "the planner's step for its configuration beside the published one, and every configuration\n"
                          "the planner would choose with its techniques (its own row marked). Greyed: not modelled");
    if (!p.published.empty()) {
        bool own = p.row < 1;
        if (ImGui::Checkbox("timeline shows its configuration", &own)) {
            p.row = own ? 0 : 1;
            changed = true;
        }
        if (!own) changed |= ImGui::SliderInt("timeline shows row", &p.row, 1, 20, "#%d", ImGuiSliderFlags_AlwaysClamp);
    }
    return changed;
}

// A degree fixed or searched: "searched" and each divisor of the GPUs up to `most`.
bool DegreeCombo(const char* label, int& value, int gpus, int most)
{
    bool changed = false;
    const std::string shown = value > 0 ? std::to_string(value) : std::string("searched");
    if (ImGui::BeginCombo(label, shown.c_str())) {
        if (ImGui::Selectable("searched", value == 0)) changed |= std::exchange(value, 0) != 0;
        for (int d = 1; d <= std::min(gpus, most); ++d)
            if (gpus % d == 0 && ImGui::Selectable(std::to_string(d).c_str(), value == d)) changed |= std::exchange(value, d) != d;
        ImGui::EndCombo();
    }
    return changed;
}

// The pipeline by hand, as `plan --tp --pp --first-stage-layers --last-stage-layers --pp-layout`:
// the degrees, the end stages' layers, or Megatron-Core's layout (which needs pp and places every layer).
bool DrawPlanPipeline(PlanParams& p, int layers)
{
    bool changed = DegreeCombo("TP degree", p.tp, p.gpus, 64);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each layer's GEMMs split over this many GPUs; searched: every degree dividing the heads");
    changed |= DegreeCombo("PP stages", p.pp, p.gpus, layers);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The layers split over this many stages; searched: every degree up to the layers");
    const bool laidOut = !p.ppLayout.empty();
    ImGui::BeginDisabled(laidOut);
    for (auto [label, v] : {std::pair{"first stage", &p.firstStageLayers}, std::pair{"last stage", &p.lastStageLayers}}) {
        changed |= ImGui::SliderInt(label, v, 0, std::max(1, layers - 1), *v > 0 ? "%d layers" : "search's split", ImGuiSliderFlags_AlwaysClamp);
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip(laidOut ? "The pipeline layout places every layer"
                                      : "Megatron-LM's --decoder-first/last-pipeline-num-layers: this end stage's layers, the others "
                                        "splitting the rest evenly; 0: the search's splits (even, the ends a layer lighter for "
                                        "the embedding and the output layer, the last lightened by the output layer's weight)");
    }
    ImGui::EndDisabled();
    ImGui::BeginDisabled(p.pp == 0 && !laidOut);
    char layout[256];
    std::snprintf(layout, sizeof layout, "%s", p.ppLayout.c_str());
    if (ImGui::InputText("PP layout", layout, sizeof layout, ImGuiInputTextFlags_EnterReturnsTrue) && p.ppLayout != layout) {
        p.ppLayout = layout;
        changed = true;
    }
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Megatron-Core's --pipeline-model-parallel-layout: pp x v chunks split by '|', chunk i on stage i %% pp;\n"
                          "E the embedding, t a layer, m an MTP module, L the loss and output layer; x*n and (...)*n repeat.\n"
                          "DeepSeek-V3's on pp 2: Et*4|(t*4|)*14tmL. Needs the pipeline stages fixed; empty: none. Enter applies");
    return changed;
}

// Megatron-Core's fine-grained recomputation (--recompute-modules): a checkbox per module the
// planner models; one the model lacks is disabled (the model's choice clears it, and the planner
// refuses it).
bool DrawPlanRecompute(PlanParams& p, const core::TransformerModel* preset)
{
    bool changed = false;
    ImGui::TextDisabled("recompute modules");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Megatron-Core's --recompute-granularity selective --recompute-modules: each module's outputs dropped after "
                          "the forward and computed again in the backward, in every row that does not recompute fully");
    struct Module {
        const char* name;
        bool* on;
        bool applies;
        const char* what;
    };
    const Module modules[] = {
        {"layernorm", &p.recomputeModules.layernorm, true, "the two norms' outputs (the QKV and MLP or router inputs) freed, the norms run again"},
        {"moe_act", &p.recomputeModules.moeAct, preset && preset->IsMoe(), "the experts' activation outputs freed, the activation run again (a mixture of experts)"},
        {"mla_up_proj", &p.recomputeModules.mlaUpProj, preset && preset->IsMla(), "MLA's Q, K and V freed, the up-projection GEMMs run again (DeepSeek's latent attention)"},
    };
    for (const Module& m : modules) {
        ImGui::BeginDisabled(!m.applies);
        changed |= ImGui::Checkbox(m.name, m.on);
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("%s%s", m.what, m.applies ? "" : "; this model has none");
    }
    return changed;
}

} // namespace

bool ControlsPanel::DrawPlan(PlanParams& p)
{
    bool changed = DrawPublishedRun(p);
    if (!p.published.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("The run sets the model, GPUs, batch and techniques; \"none\" above gives the controls back.");
        ImGui::PopStyleColor();
        return changed;
    }
    if (ImGui::BeginCombo("model", p.model.c_str())) {
        for (const core::TransformerModel& m : core::ModelPresets())
            if (ImGui::Selectable(m.id.c_str(), p.model == m.id)) {
                changed |= p.model != m.id;
                p.model = m.id;
                p.layers = p.hidden = p.seq = p.mtpLayers = 0;
                p.recomputeModules.moeAct = p.recomputeModules.moeAct && m.IsMoe(); // the planner refuses a module
                p.recomputeModules.mlaUpProj = p.recomputeModules.mlaUpProj && m.IsMla(); // the model has none of
            }
        ImGui::EndCombo();
    }
    changed |= ImGui::SliderInt("MTP modules", &p.mtpLayers, 0, 4, "%d", ImGuiSliderFlags_AlwaysClamp);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Multi-token prediction (Megatron-Core's --mtp-num-layers; DeepSeek-V3 trains with 1): each module a layer, "
                          "a 2h x h projection and the output layer and loss again, on the last stage");
    // 0 stays "the preset's" until a slider moves (as the NVLink slider below): the sliders show the value.
    const core::TransformerModel* preset = core::FindModelPreset(p.model);
    int layers = p.layers > 0 || !preset ? p.layers : preset->layers;
    if (ImGui::SliderInt("layers", &layers, 2, 256, "%d", ImGuiSliderFlags_AlwaysClamp)) {
        p.layers = layers;
        changed = true;
    }
    int hidden = (p.hidden > 0 || !preset ? p.hidden : preset->hidden) / 1024;
    if (ImGui::SliderInt("hidden", &hidden, 1, 32, "%d x 1024", ImGuiSliderFlags_AlwaysClamp)) {
        p.hidden = hidden * 1024;
        changed = true;
    }
    int64_t seq = p.seq > 0 || !preset ? p.seq : preset->seq, gpus = p.gpus, batch = p.globalBatch;
    if (Pow2Slider("sequence", seq, 9, 17)) {
        p.seq = static_cast<int>(seq);
        changed = true;
    }
    changed |= Pow2Slider("GPUs", gpus, 3, 15);
    changed |= Pow2Slider("global batch", batch, 3, 13);
    p.gpus = static_cast<int>(gpus);
    p.globalBatch = static_cast<int>(batch);
    if (ImGui::BeginCombo("GPU", p.gpu.c_str())) {
        for (const core::GpuSpec& g : core::HardwareTable())
            if (g.PeakFlops("bf16") > 0 && ImGui::Selectable(g.id.c_str(), p.gpu == g.id)) {
                changed |= p.gpu != g.id;
                p.gpu = g.id;
            }
        ImGui::EndCombo();
    }
    const core::GpuSpec* gpu = core::FindGpu(p.gpu);
    double nvlink = p.nvlinkGBps > 0 ? p.nvlinkGBps : gpu ? gpu->nvlinkUniGBps : 0.0;
    if (SliderDouble("NVLink GB/s", nvlink, 10.0, 2000.0, "%.4g GB/s", true)) {
        p.nvlinkGBps = nvlink;
        changed = true;
    }
    changed |= SliderDouble("network GB/s", p.networkGBps, 1.0, 400.0, "%.4g GB/s", true);
    changed |= SliderDouble("GEMM efficiency", p.efficiency, 0.1, 1.0, "%.2f of peak", false);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The fraction of peak an H100's BF16 GEMMs reach in training; other GPUs and dtypes at it x their measured "
                          "matmul ceiling over the H100's BF16 one (mamf-finder's table: %s)", core::MatmulCeilingsText().c_str());
    const bool hasFp8 = gpu && gpu->PeakFlops("fp8") > 0;
    ImGui::BeginDisabled(!hasFp8 && !p.fp8);
    changed |= ImGui::Checkbox("FP8 GEMMs", &p.fp8);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(hasFp8 ? "The layers' linear GEMMs at the fp8 peak; attention, the output layer and MFU stay in bf16"
                                 : "This GPU has no fp8 peak in the spec table");
    const std::string cpText = p.cp > 0 ? std::to_string(p.cp) : std::string("searched");
    if (ImGui::BeginCombo("context parallel", cpText.c_str())) {
        for (int cp : {0, 1, 2, 4, 8, 16, 32})
            if (ImGui::Selectable(cp > 0 ? std::to_string(cp).c_str() : "searched", p.cp == cp)) {
                changed |= p.cp != cp;
                p.cp = cp;
            }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Each sequence split over this many GPUs (ring attention); searched: every degree leaving a GPU >= 1024 tokens");
    changed |= DrawPlanPipeline(p, layers);
    changed |= ImGui::Checkbox("TP comm overlap", &p.tpCommOverlap);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Megatron-LM's --tp-comm-overlap: Transformer Engine's userbuffers run the TP collectives under the linear GEMMs "
                          "(what they do not cover, and the 16 SMs they take, still cost)");
    changed |= ImGui::Checkbox("DP comm overlap", &p.dpCommOverlap);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Megatron-LM's --overlap-grad-reduce --overlap-param-gather (on in NeMo's and Megatron-Bridge's recipes): "
                          "each model chunk's gradients reduced under the backward left, its weights gathered under the next forward");
    changed |= ImGui::Checkbox("EP comm overlap", &p.epCommOverlap);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Megatron-Core's --overlap-moe-expert-parallel-comm --delay-wgrad-compute (a mixture of experts): each "
                          "micro-batch's forward beside another's backward, each one's all-to-alls under the other's compute; "
                          "with EP > 1, without full recomputation, and with PP > 1 only interleaved");
    changed |= ImGui::Checkbox("flash-attn 2", &p.flashAttention2);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Attention through Dao's flash-attn 2, as PyTorch FSDP stacks (MosaicML's Composer) run it: on Hopper 35%% of "
                          "peak against cuDNN's and FlashAttention-3's 75%%, so %.2f of the rate; other GPUs unchanged",
                          core::FlashAttention2OnHopper());
    changed |= ImGui::Checkbox("bf16 gradients", &p.bf16Gradients);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Gradient buffers held and reduced over DP in bf16, 2 bytes a parameter (NeMo's and Megatron-Bridge's performance "
                          "recipes); off: fp32, 4 bytes (Megatron-LM with --bf16)");
    changed |= DrawPlanRecompute(p, preset);
    char calibrate[512];
    std::snprintf(calibrate, sizeof calibrate, "%s", p.calibrate.c_str());
    if (ImGui::InputText("calibrate from", calibrate, sizeof calibrate, ImGuiInputTextFlags_EnterReturnsTrue) && p.calibrate != calibrate) {
        p.calibrate = calibrate;
        changed = true;
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Profiler traces of one step of your model (comma-separated paths; PyTorch profiler with record_shapes): "
                          "its GEMMs' efficiency by size times every row's GEMMs. Empty: one efficiency. Enter applies");
    changed |= ImGui::SliderInt("timeline shows row", &p.row, 1, 20, "#%d", ImGuiSliderFlags_AlwaysClamp);
    return changed;
}

bool ControlsPanel::DrawCluster(ClusterParams& c, bool pipeline, int ranks)
{
    bool changed = false;
    ImGui::Spacing();
    ImGui::TextDisabled(pipeline ? "links between stages and a slow stage" : "the modelled cluster");
    changed |= SliderDouble("alpha \xC2\xB5s", c.alphaUs, 0.01, 1000.0, "%.3g \xC2\xB5s", true);
    changed |= SliderDouble("bandwidth", c.bandwidthGBps, 0.1, 2000.0, "%.4g GB/s", true);
    if (!pipeline) {
        bool gamma = c.gammaGBps > 0;
        if (ImGui::Checkbox("reductions cost gamma", &gamma)) {
            c.gammaGBps = gamma ? 200.0 : 0.0;
            changed = true;
        }
        if (gamma) changed |= SliderDouble("reduce rate", c.gammaGBps, 1.0, 5000.0, "%.4g GB/s", true);
    }
    bool straggler = c.stragglerRank >= 0;
    if (ImGui::Checkbox(pipeline ? "a slow stage" : "a straggler", &straggler)) {
        c.stragglerRank = straggler ? std::min(ranks - 1, 1) : -1;
        changed = true;
    }
    if (straggler) {
        if (c.stragglerRank > ranks - 1) { // fewer ranks than before: keep the straggler among them
            c.stragglerRank = std::max(0, ranks - 1);
            changed = true;
        }
        changed |= ImGui::SliderInt(pipeline ? "stage" : "rank", &c.stragglerRank, 0, std::max(0, ranks - 1));
        changed |= SliderDouble("slowdown", c.stragglerSlowdown, 1.0, 10.0, "x %.2f", false);
    }
    if (!pipeline) changed |= DrawTwoLevel(c, ranks);
    return changed;
}

// Two levels: nodes of GPUs on a slower network (the hierarchical allreduce's home).
bool ControlsPanel::DrawTwoLevel(ClusterParams& c, int ranks)
{
    bool changed = false, two = c.TwoLevel();
    if (ImGui::Checkbox("nodes on a network", &two)) {
        c.ranksPerNode = two ? std::max(1, std::min(ranks / 2, 8)) : 0;
        c.netBandwidthGBps = two ? std::max(0.1, c.bandwidthGBps / 10) : 0.0;
        changed = true;
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("GPUs in nodes: messages between nodes cost the network's alpha and bandwidth (the sliders above are within a node)");
    if (!two) return changed;
    changed |= ImGui::SliderInt("GPUs per node", &c.ranksPerNode, 1, std::max(1, ranks), "%d", ImGuiSliderFlags_AlwaysClamp);
    changed |= SliderDouble("network alpha", c.netAlphaUs, 0.01, 1000.0, "%.3g \xC2\xB5s", true);
    changed |= SliderDouble("network bandwidth", c.netBandwidthGBps, 0.1, 2000.0, "%.4g GB/s", true);
    return changed;
}

void ControlsPanel::DrawJobs(ControlsContext& ctx)
{
    for (JobStatus* job : {&ctx.simulateJob, &ctx.fileJob}) {
        // Quick jobs (a slider's re-simulation) finish before anyone could read a progress bar.
        if (!job->running || job->elapsedSeconds < 0.25) continue;
        ImGui::Separator();
        ImGui::TextWrapped("%s (%.1f s)", job->label.c_str(), job->elapsedSeconds);
        if (job->progress >= 0) ImGui::ProgressBar(static_cast<float>(job->progress), ImVec2(-1, 0));
        else ImGui::ProgressBar(static_cast<float>(std::fmod(job->elapsedSeconds, 1.0)), ImVec2(-1, 0), "working...");
        if (ImGui::Button(job == &ctx.simulateJob ? "Cancel simulation" : "Cancel loading")) {
            if (job == &ctx.simulateJob) ctx.cancelSimulate = true;
            else ctx.cancelFile = true;
        }
    }
}

} // namespace paralens::app
