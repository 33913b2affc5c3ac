#include "PlanRuns.hpp"

#include "TrainingRuns.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/Hardware.hpp"
#include "planner/Calibration.hpp"
#include "planner/PipelineLayout.hpp"
#include "planner/PlannerTrace.hpp"
#include "planner/PublishedSet.hpp"
#include "trace/TraceFile.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

namespace paralens::app {

namespace {

// A simulated step with more ops than this is not drawn on a slider move (the CLI's --trace draws it).
constexpr double kMaxTraceOps = 400'000;

// The views want a Trace: an empty one titled with why there is no step to draw.
void EmptyTrace(RunResult& r, const std::string& why)
{
    core::TraceBuilder b;
    b.Meta().title = why;
    b.Meta().workload.Set("kind", std::string("plan"));
    r.trace = std::make_shared<const core::Trace>(std::move(b).Finish());
    r.trainingPlanNote = why;
    FillUsage(r);
}

// The calibration of `paths` (comma-separated trace files) against `gpu`, read once per process
// for the same files: the controls re-plan on every change.
core::Calibration CalibrationOf(const std::string& paths, const core::GpuSpec& gpu, int gpusPerNode)
{
    static std::mutex mutex;
    static std::map<std::string, core::Calibration> cache;
    const std::string key = paths + '\n' + gpu.id + '\n' + std::to_string(gpusPerNode);
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    std::vector<std::string> files;
    for (size_t at = 0; at <= paths.size();) {
        const size_t comma = std::min(paths.find(',', at), paths.size());
        std::string f = paths.substr(at, comma - at);
        f.erase(0, f.find_first_not_of(' '));
        f.erase(f.find_last_not_of(' ') + 1);
        if (!f.empty()) files.push_back(f);
        at = comma + 1;
    }
    Require(!files.empty(), "--calibrate: no trace file named");
    const core::Calibration c = core::CalibrateFromTrace(core::ReadTraceFiles(files), "--calibrate " + paths, gpu, gpusPerNode);
    std::lock_guard<std::mutex> lock(mutex);
    cache[key] = c;
    return c;
}

} // namespace

core::PlanRequest PlanParams::ToRequest() const
{
    core::PlanRequest r;
    const core::TransformerModel* preset = core::FindModelPreset(model);
    Require(preset != nullptr, "--model: unknown model '" + model + "' (one of " + core::ModelPresetList() + ")");
    r.model = *preset;
    if (layers > 0 && layers != preset->layers) r.model.layers = layers;
    if (hidden > 0 && hidden != preset->hidden) { // heads keep their width; the FFN keeps its ratio
        const double scale = static_cast<double>(hidden) / preset->hidden;
        r.model.hidden = hidden;
        // Heads as wide as hidden / heads: as many as fit the new width. Heads of their own width
        // (Qwen3, GPT-OSS: 64 of 64 against a hidden of 2880) scale with it, as the FFN does.
        r.model.heads = preset->headDim > 0 ? std::max(1, static_cast<int>(std::lround(preset->heads * scale)))
                                            : std::max(1, hidden / preset->HeadDim());
        r.model.kvHeads = std::max(1, std::min(r.model.heads, static_cast<int>(preset->kvHeads * scale + 0.5)));
        while (r.model.heads % r.model.kvHeads) --r.model.kvHeads;
        r.model.ffn = static_cast<int>(preset->ffn * scale / 64 + 0.5) * 64;
    }
    r.model.mtpLayers = mtpLayers;
    if (r.model.layers != preset->layers || r.model.hidden != preset->hidden || mtpLayers != preset->mtpLayers) r.model.id += "*";
    core::CheckModel(r.model);
    const core::GpuSpec* g = core::FindGpu(gpu);
    Require(g != nullptr, "--gpu: unknown GPU '" + gpu + "' (one of " + core::GpuIdsList() + ")");
    r.cluster.gpu = *g;
    r.cluster.gpus = gpus;
    r.cluster.gpusPerNode = gpusPerNode;
    r.cluster.nvlinkGBps = nvlinkGBps;
    r.cluster.networkGBps = networkGBps;
    r.cluster.efficiency = efficiency;
    r.cluster.fp8 = fp8;
    r.tpCommOverlap = tpCommOverlap;
    r.dpCommOverlap = dpCommOverlap;
    r.epCommOverlap = epCommOverlap;
    r.flashAttention2 = flashAttention2;
    r.gradReduceFp32 = !bf16Gradients;
    r.recomputeModules = recomputeModules;
    Require(!fp8 || g->PeakFlops("fp8") > 0, "--fp8: " + gpu + " has no fp8 peak in the spec table");
    r.globalBatch = globalBatch;
    r.seq = seq;
    for (const auto& [v, flag] : {std::pair{cp, "--cp"}, std::pair{tp, "--tp"}, std::pair{pp, "--pp"}})
        Require(v >= 0, std::string(flag) + " must be at least 1, or 0 to search it (got " + std::to_string(v) + ")");
    if (cp > 0) r.cp = cp;
    if (tp > 0) r.tp = tp;
    if (pp > 0) r.pp = pp;
    for (const auto& [v, flag] : {std::pair{firstStageLayers, "--first-stage-layers"}, std::pair{lastStageLayers, "--last-stage-layers"}})
        Require(v >= 0, std::string(flag) + " must not be negative (got " + std::to_string(v) + "; 0: the search's splits)");
    if (firstStageLayers > 0) r.firstStageLayers = firstStageLayers;
    if (lastStageLayers > 0) r.lastStageLayers = lastStageLayers;
    if (!ppLayout.empty()) r.layout = std::make_shared<const core::PipelineLayout>(core::ParsePipelineLayout(ppLayout, pp));
    Require(gpus >= 1, "--gpus must be at least 1");
    Require(globalBatch >= 1, "--global-batch must be at least 1");
    return r;
}

std::string PlanTitle(const PlanParams& p)
{
    const std::string row = p.row < 1 && !p.published.empty() ? std::string("its own configuration") : "row " + std::to_string(std::max(1, p.row));
    if (!p.published.empty()) return "plan: published run " + p.published + ", " + row;
    return "plan: " + p.model + " on " + std::to_string(p.gpus) + " x " + p.gpu + ", batch " + std::to_string(p.globalBatch) + ", " + row;
}

namespace {

// "published run R091: 15.5 s a step; its configuration, ..., predicted 17.8 s (+15.0%), row 1 of
// the planner's choices with its techniques (S9: mosaicml/llm-foundry ...)".
std::string PublishedNote(const core::PublishedSetRun& run, const core::PublishedRunChoices& c)
{
    std::string note = "published run " + run.id + ": " + core::FormatSeconds(run.publishedSeconds) + " a step";
    if (!run.fits) {
        note += "; its configuration does not fit in the planner's memory model: " + run.config + ", " + run.rejected;
    } else {
        char error[32];
        std::snprintf(error, sizeof error, "%+.1f%%", run.errorPct);
        note += "; its configuration, " + run.config + ", predicted " + core::FormatSeconds(run.predictedSeconds) + " (" + error +
                "), row " + std::to_string(c.row.value_or(0) + 1) + " of the planner's choices with its techniques";
    }
    return note + " (" + run.source + ": " + run.citation + ")";
}

// The rows of `result` for `request`, row `shown` (0-based) simulated into the timeline's trace.
std::shared_ptr<RunResult> PlanResultRun(std::shared_ptr<const core::PlanRequest> request, std::shared_ptr<const core::PlanResult> result,
                                         int shown)
{
    auto r = std::make_shared<RunResult>();
    r->trainingPlan = result;
    r->trainingPlanRequest = request;
    if (result->fitting == 0) {
        EmptyTrace(*r, result->notes.empty() ? "nothing fits" : result->notes.front());
        return r;
    }
    r->trainingPlanShown = std::clamp(shown, 0, static_cast<int>(result->fitting) - 1);
    const core::PlanRow& row = result->rows[static_cast<size_t>(r->trainingPlanShown)];
    r->trainingPlanLaidOut = core::BalancedLayoutRow(*request, row);
    const double ops = static_cast<double>(row.microBatches) * row.config.pp * row.config.tp * 3;
    r->predictedSeconds = row.time.step;
    r->predictionExact = true;
    if (ops > kMaxTraceOps) {
        EmptyTrace(*r, "row " + std::to_string(r->trainingPlanShown + 1) + "'s step has about " + std::to_string(static_cast<long>(ops)) + " ops on " +
                           std::to_string(row.config.pp * row.config.tp) +
                           " lanes: too many to re-simulate on every change; paralens plan --trace writes it");
        return r;
    }
    core::PlanStepSimulation sim = core::SimulatePlanStep(*request, row.config);
    r->trace = std::make_shared<const core::Trace>(std::move(*sim.trace));
    r->windowBeginNs = r->trace->BeginNs();
    r->windowEndNs = r->trace->EndNs();
    FillUsage(*r);
    r->simulatedSeconds = sim.seconds;
    FillMfu(*r, request->cluster.PeakFlops(), request->cluster.gpu.name + ", bf16 dense peak: spec table (assets/hardware.json)");
    return r;
}

// A run of the published set: its request and the planner's choices with its techniques; row 0
// shows its own configuration.
std::shared_ptr<RunResult> BuildPublishedPlan(const PlanParams& p)
{
    core::PublishedRunChoices c;
    const core::PublishedSetRun run = core::PublishedSetRunById(core::PublishedSetCsv(), p.published, &c); // throws for one not modelled
    const int own = c.row ? static_cast<int>(*c.row) : 0;
    auto r = PlanResultRun(std::make_shared<const core::PlanRequest>(run.request),
                           std::make_shared<const core::PlanResult>(std::move(c.choices)), p.row < 1 ? own : p.row - 1);
    r->trainingPlanPublished = c.row ? own : -1;
    r->trainingPlanPublishedSeconds = run.publishedSeconds;
    const std::string note = PublishedNote(run, c);
    r->trainingPlanNote = r->trainingPlanNote.empty() ? note : note + ". " + r->trainingPlanNote;
    return r;
}

} // namespace

const std::vector<core::PublishedSetEntry>& PublishedRunList()
{
    static const std::vector<core::PublishedSetEntry> list = core::PublishedSetIndex(core::PublishedSetCsv());
    return list;
}

void CheckPublishedRun(const std::string& id)
{
    const core::PublishedSetEntry e = core::PublishedSetEntryById(core::PublishedSetCsv(), id);
    Require(e.skipped.empty(), "published run " + id + " is not modelled: " + e.skipped);
}

std::shared_ptr<RunResult> BuildTrainingPlan(const Experiment& e)
{
    const PlanParams& p = e.plan;
    if (!p.published.empty()) return BuildPublishedPlan(p);
    core::PlanRequest planned = p.ToRequest();
    if (!p.calibrate.empty()) { // the profile is read here, on the run's thread (ToRequest validates without files)
        core::ApplyCalibration(CalibrationOf(p.calibrate, planned.cluster.gpu, p.gpusPerNode), planned.cluster);
    }
    auto request = std::make_shared<const core::PlanRequest>(std::move(planned));
    return PlanResultRun(request, std::make_shared<const core::PlanResult>(core::PlanTraining(*request)), std::max(1, p.row) - 1);
}

} // namespace paralens::app
