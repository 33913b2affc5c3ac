#include "ScenarioLoader.hpp"

#include "PlanRuns.hpp"

#include "TrainingRuns.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "trace/FileIO.hpp"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <utility>

namespace paralens::app {

// Generated at configure time from assets/scenarios/*.json (ScenarioData.cpp.in).
const std::vector<std::pair<std::string, std::string>>& EmbeddedScenarioTexts();

namespace {

using nlohmann::json;

class Reader {
public:
    Reader(const json& object, std::string where) : m_obj(object), m_where(std::move(where))
    {
        Require(object.is_object(), m_where + ": expected a JSON object");
    }

    template <class T>
    void Get(const char* key, T& out)
    {
        m_seen.push_back(key);
        auto it = m_obj.find(key);
        if (it == m_obj.end()) return;
        try {
            out = it->template get<T>();
        } catch (const json::exception&) {
            throw Error(m_where + ": key \"" + key + "\" has the wrong type (" + it->dump() + ")");
        }
    }

    void Bytes(const char* key, uint64_t& out)
    {
        m_seen.push_back(key);
        auto it = m_obj.find(key);
        if (it == m_obj.end()) return;
        if (it->is_number_unsigned()) out = it->get<uint64_t>();
        else if (it->is_string()) {
            try {
                out = core::ParseBytes(it->get<std::string>());
            } catch (const Error& e) {
                throw Error(m_where + ": key \"" + key + "\": " + e.what());
            }
        } else throw Error(m_where + ": key \"" + key + "\" must be a size such as \"64MiB\" or a number of bytes");
    }

    const json* Child(const char* key)
    {
        m_seen.push_back(key);
        auto it = m_obj.find(key);
        return it == m_obj.end() ? nullptr : &*it;
    }

    void Fail(const char* key, const std::string& what) const
    {
        throw Error(m_where + ": key \"" + key + "\": " + what);
    }

    // Every key must have been read: an unknown one is a typo.
    void Finish() const
    {
        for (auto it = m_obj.begin(); it != m_obj.end(); ++it)
            if (std::find(m_seen.begin(), m_seen.end(), it.key()) == m_seen.end())
                throw Error(m_where + ": unknown key \"" + it.key() + "\"");
    }

    const std::string& Where() const { return m_where; }

private:
    const json& m_obj;
    std::string m_where;
    std::vector<std::string> m_seen;
};

void ReadCollective(Reader& r, CollectiveParams& c)
{
    std::string collective, algorithm;
    r.Get("collective", collective);
    r.Get("algorithm", algorithm);
    if (!collective.empty()) {
        auto parsed = core::ParseCollective(collective);
        if (!parsed) r.Fail("collective", "unknown collective \"" + collective + "\" (one of: " + core::CollectiveNamesList() + ")");
        c.collective = *parsed;
        c.algorithm = core::AlgorithmsFor(c.collective)[0];
    }
    if (!algorithm.empty()) {
        auto parsed = core::ParseAlgorithm(algorithm);
        if (!parsed || !core::Supports(c.collective, *parsed))
            r.Fail("algorithm", "\"" + algorithm + "\" does not apply to " + std::string(core::Name(c.collective)) +
                                    " (one of: " + core::AlgorithmNamesList(c.collective) + ")");
        c.algorithm = *parsed;
    }
    r.Get("ranks", c.ranks);
    r.Bytes("bytes", c.bytes);
    r.Get("root", c.root);
    if (c.ranks < 1) r.Fail("ranks", "must be at least 1");
    if (c.root < 0 || c.root >= c.ranks) r.Fail("root", "must be a rank from 0 to ranks-1");
}

void ReadPipeline(Reader& r, PipelineParams& p)
{
    std::string schedule;
    r.Get("schedule", schedule);
    if (!schedule.empty()) {
        auto parsed = core::ParseScheduleKind(schedule);
        if (!parsed) r.Fail("schedule", "unknown schedule \"" + schedule + "\" (one of: " + core::ScheduleNamesList() + ")");
        p.schedule = *parsed;
    }
    r.Get("stages", p.stages);
    r.Get("microBatches", p.microBatches);
    r.Get("chunks", p.chunks);
    r.Get("batches", p.batches);
    r.Get("forwardMs", p.forwardMs);
    r.Get("backwardRatio", p.backwardRatio);
    r.Get("recompute", p.recompute);
    r.Get("communicate", p.communicate);
    r.Bytes("activationBytes", p.activationBytes);
    r.Get("gpu", p.gpu);
    r.Get("dtype", p.dtype);
    r.Get("kernelEfficiency", p.kernelEfficiency);
    if (p.stages < 1) r.Fail("stages", "must be at least 1");
    if (p.microBatches < 1) r.Fail("microBatches", "must be at least 1");
    if (!(p.kernelEfficiency > 0 && p.kernelEfficiency <= 1)) r.Fail("kernelEfficiency", "must be in (0, 1]");
}

void ReadTraining(Reader& r, TrainingParams& t)
{
    r.Get("workload", t.workload);
    if (std::find(TrainingWorkloadNames().begin(), TrainingWorkloadNames().end(), t.workload) == TrainingWorkloadNames().end())
        r.Fail("workload", "expected dp, ps, tp, interop, intraop or moe (got \"" + t.workload + "\")");
    r.Get("devices", t.devices);
    r.Get("layers", t.layers);
    r.Get("iterations", t.iterations);
    r.Get("forwardMs", t.forwardMs);
    r.Bytes("gradBytes", t.gradBytes);
    r.Get("overlap", t.overlap);
    r.Get("servers", t.servers);
    r.Get("consistency", t.consistency);
    r.Get("staleness", t.staleness);
    r.Get("tokens", t.tokens);
    r.Get("hidden", t.hidden);
    r.Get("inputs", t.inputs);
    std::string algorithm;
    r.Get("algorithm", algorithm);
    if (!algorithm.empty()) {
        auto parsed = core::ParseAlgorithm(algorithm);
        if (!parsed || !core::Supports(core::Collective::AllReduce, *parsed))
            r.Fail("algorithm", "expected an allreduce algorithm (" + core::AlgorithmNamesList(core::Collective::AllReduce) + ")");
        t.algorithm = *parsed;
    }
    r.Get("experts", t.experts);
    r.Get("topK", t.topK);
    r.Get("imbalance", t.imbalance);
    r.Get("gpu", t.gpu);
    r.Get("dtype", t.dtype);
    r.Get("kernelEfficiency", t.kernelEfficiency);
    if (t.devices < 1) r.Fail("devices", "must be at least 1");
    if (t.consistency != "bsp" && t.consistency != "ssp" && t.consistency != "async") r.Fail("consistency", "expected bsp, ssp or async");
}

// Runs `check` (building the core request from what was read) and turns its Error, whose message
// starts with the command line's option, into a failure naming the scenario key it came from
// (`options`: option prefix -> key; `fallback` when none matches).
template <class Check>
void CheckAsRequest(Reader& r, Check check, const char* fallback, std::initializer_list<std::pair<const char*, const char*>> options)
{
    try {
        check();
    } catch (const Error& e) {
        const std::string what = e.what();
        const char* key = fallback;
        for (const auto& [option, k] : options)
            if (what.rfind(option, 0) == 0) key = k;
        // "--gpus 16 is not divisible by --tp 3": the fixed degree is what to change.
        for (const auto& [option, k] : options)
            if (what.find(std::string("divisible by ") + option) != std::string::npos) key = k;
        r.Fail(key, what);
    }
}

void ReadAutopar(Reader& r, AutoparParams& a)
{
    r.Get("graph", a.graph);
    r.Get("layers", a.layers);
    r.Get("batch", a.batch);
    r.Get("seq", a.seq);
    r.Get("hidden", a.hidden);
    r.Get("heads", a.heads);
    r.Get("ffn", a.ffn);
    std::string mesh;
    r.Get("mesh", mesh);
    if (!mesh.empty()) {
        try {
            const core::DeviceMesh m = core::ParseMeshShape(mesh, "\"mesh\"");
            a.mesh.rows = m.rows;
            a.mesh.cols = m.cols;
        } catch (const Error& e) {
            r.Fail("mesh", e.what());
        }
    }
    r.Get("fastAlphaUs", a.mesh.fastAlphaUs);
    r.Get("fastGBps", a.mesh.fastGBps);
    r.Get("slowAlphaUs", a.mesh.slowAlphaUs);
    r.Get("slowGBps", a.mesh.slowGBps);
    r.Get("gpu", a.mesh.gpu);
    r.Get("dtype", a.mesh.dtype);
    r.Get("efficiency", a.mesh.efficiency);
    r.Get("solvers", a.solvers);
    r.Get("microBatches", a.microBatches);
    r.Get("show", a.show);
    CheckAsRequest(r, [&] { (void)a.ToRequest(); }, "mesh",
                   {{"--solvers", "solvers"}, {"--gpu", "gpu"}, {"--dtype", "dtype"}, {"--efficiency", "efficiency"}});
}

void ReadPlan(Reader& r, PlanParams& p)
{
    r.Get("model", p.model);
    r.Get("layers", p.layers);
    r.Get("hidden", p.hidden);
    r.Get("gpu", p.gpu);
    r.Get("gpus", p.gpus);
    r.Get("gpusPerNode", p.gpusPerNode);
    r.Get("globalBatch", p.globalBatch);
    r.Get("seq", p.seq);
    r.Get("nvlinkGBps", p.nvlinkGBps);
    r.Get("networkGBps", p.networkGBps);
    r.Get("efficiency", p.efficiency);
    r.Get("fp8", p.fp8);
    r.Get("cp", p.cp);
    r.Get("tp", p.tp);
    r.Get("pp", p.pp);
    r.Get("firstStageLayers", p.firstStageLayers);
    r.Get("lastStageLayers", p.lastStageLayers);
    r.Get("ppLayout", p.ppLayout);
    r.Get("tpCommOverlap", p.tpCommOverlap);
    r.Get("dpCommOverlap", p.dpCommOverlap);
    r.Get("epCommOverlap", p.epCommOverlap);
    r.Get("mtpLayers", p.mtpLayers);
    r.Get("flashAttention2", p.flashAttention2);
    r.Get("bf16Gradients", p.bf16Gradients);
    std::string modules = core::RecomputeModulesText(p.recomputeModules);
    r.Get("recomputeModules", modules);
    try {
        p.recomputeModules = core::ParseRecomputeModules(modules, "\"" + modules + "\"");
    } catch (const Error& e) {
        r.Fail("recomputeModules", e.what());
    }
    r.Get("calibrate", p.calibrate);
    r.Get("publishedRun", p.published);
    if (!p.published.empty()) {
        p.row = 0; // unless the scenario says: the run's own configuration
        CheckAsRequest(r, [&] { CheckPublishedRun(p.published); }, "publishedRun", {});
    }
    r.Get("row", p.row);
    CheckAsRequest(r, [&] { core::CheckPlanRequest(p.ToRequest()); }, "model",
                   {{"--gpu:", "gpu"}, {"--gpus ", "gpus"}, {"--layers", "layers"}, {"--hidden", "hidden"}, {"--global-batch", "globalBatch"},
                    {"--fp8", "fp8"}, {"--cp", "cp"}, {"--tp ", "tp"}, {"--pp ", "pp"}, {"--pp-layout", "ppLayout"},
                    {"--first-stage-layers", "firstStageLayers"}, {"--last-stage-layers", "lastStageLayers"},
                    {"--recompute-modules", "recomputeModules"}});
}

// A what-if's changes: "computeX", "commX", "cpuX", "scale" (rules), "bandwidthX", "alphaX",
// "model" (a fit file), "noStraggler" (a rank), "skew" ({"rank", "us"}).
void ReadWhatIf(Reader& r, WhatIfParams& w)
{
    r.Get("computeX", w.computeX);
    r.Get("commX", w.commX);
    r.Get("cpuX", w.cpuX);
    r.Get("scale", w.scale);
    r.Get("bandwidthX", w.bandwidthX);
    r.Get("alphaX", w.alphaX);
    r.Get("model", w.model);
    int straggler = -1;
    r.Get("noStraggler", straggler);
    if (straggler >= 0) w.noStragglers.push_back(straggler);
    if (const json* s = r.Child("skew")) {
        Reader sr(*s, r.Where() + ".skew");
        int rank = -1;
        double us = 0;
        sr.Get("rank", rank);
        sr.Get("us", us);
        sr.Finish();
        if (rank < 0) r.Fail("skew", "needs a \"rank\" >= 0");
        w.skewUs.push_back({rank, us});
    }
    for (const auto& [name, v] : {std::pair<const char*, double>{"computeX", w.computeX}, {"commX", w.commX}, {"cpuX", w.cpuX},
                                  {"bandwidthX", w.bandwidthX}, {"alphaX", w.alphaX}})
        if (!(v > 0)) r.Fail(name, "must be > 0");
}

} // namespace

Experiment ParseExperiment(const json& j, const std::string& where)
{
    Reader r(j, where);
    Experiment e;
    std::string kind = "collective";
    r.Get("label", e.label);
    r.Get("kind", kind);
    if (kind == "collective") e.kind = ExperimentKind::Collective;
    else if (kind == "pipeline") e.kind = ExperimentKind::Pipeline;
    else if (kind == "training") e.kind = ExperimentKind::Training;
    else if (kind == "autopar") e.kind = ExperimentKind::Autopar;
    else if (kind == "plan") e.kind = ExperimentKind::Plan;
    else if (kind == "file") e.kind = ExperimentKind::File;
    else if (kind == "whatif") e.kind = ExperimentKind::WhatIf;
    else r.Fail("kind", "expected \"collective\", \"pipeline\", \"training\", \"autopar\", \"plan\", \"file\" or \"whatif\" (got \"" + kind + "\")");
    if (e.kind == ExperimentKind::Collective) ReadCollective(r, e.collective);
    if (e.kind == ExperimentKind::Pipeline) ReadPipeline(r, e.pipeline);
    if (e.kind == ExperimentKind::Training) ReadTraining(r, e.training);
    if (e.kind == ExperimentKind::Autopar) ReadAutopar(r, e.autopar);
    if (e.kind == ExperimentKind::Plan) ReadPlan(r, e.plan);
    if (e.kind == ExperimentKind::File || e.kind == ExperimentKind::WhatIf) {
        std::string file;
        r.Get("file", file);
        r.Get("files", e.files);
        if (!file.empty()) e.files.insert(e.files.begin(), file);
        if (e.files.empty()) r.Fail("file", "a file experiment needs a path (\"file\") or several (\"files\")");
    }
    if (e.kind == ExperimentKind::WhatIf) ReadWhatIf(r, e.whatIf);
    std::string backend;
    r.Get("backend", backend);
    if (!backend.empty() && !ParseBackend(backend, e.backend)) r.Fail("backend", "expected simulated, processes or gpu (got \"" + backend + "\")");
    r.Get("warmup", e.live.warmup);
    if (e.kind != ExperimentKind::Training) r.Get("iterations", e.live.iterations); // a training step's are its own (it runs them)
    r.Get("timeoutS", e.live.timeoutSec);
    r.Get("sweep", e.live.sweep);
    r.Bytes("sweepFrom", e.live.sweepFromBytes);
    if (e.live.sweepFromBytes < 1) r.Fail("sweepFrom", "must be at least 1 byte");
    if (e.live.warmup < 0) r.Fail("warmup", "must be at least 0");
    if (e.live.iterations < 1) r.Fail("iterations", "must be at least 1");
    if (!(e.live.timeoutSec > 0)) r.Fail("timeoutS", "must be > 0 seconds");
    r.Get("alphaUs", e.cluster.alphaUs);
    r.Get("bandwidthGBps", e.cluster.bandwidthGBps);
    r.Get("gammaGBps", e.cluster.gammaGBps);
    r.Get("ranksPerNode", e.cluster.ranksPerNode);
    r.Get("netAlphaUs", e.cluster.netAlphaUs);
    r.Get("netBandwidthGBps", e.cluster.netBandwidthGBps);
    if (e.cluster.ranksPerNode < 0) r.Fail("ranksPerNode", "must be at least 0 (0: one node)");
    if (e.cluster.netBandwidthGBps < 0) r.Fail("netBandwidthGBps", "must be >= 0 (0: one level)");
    if (const json* s = r.Child("straggler")) {
        Reader sr(*s, where + ".straggler");
        sr.Get("rank", e.cluster.stragglerRank);
        sr.Get("slowdown", e.cluster.stragglerSlowdown);
        sr.Finish();
    }
    r.Finish();
    return e;
}

ViewSettings ParseView(const json& j, const std::string& where)
{
    Reader r(j, where);
    ViewSettings v;
    std::string tab, colorBy;
    r.Get("tab", tab);
    if (!tab.empty() && !ParseViewTab(tab, v.tab)) r.Fail("tab", "expected flow, model, mfu, stats, autopar or planner (got \"" + tab + "\")");
    r.Get("colorBy", colorBy);
    if (colorBy == "category") v.colorBy = ColorMode::Category;
    else if (colorBy == "micro-batch" || colorBy.empty()) v.colorBy = ColorMode::MicroBatch;
    else r.Fail("colorBy", "expected \"category\" or \"micro-batch\"");
    r.Get("showPredicted", v.showPredicted);
    r.Get("outlinesFromFit", v.outlinesFromFit);
    r.Get("showFlows", v.showFlows);
    r.Get("showBubbles", v.showBubbles);
    r.Get("showCriticalPath", v.showCriticalPath);
    r.Get("expandTracks", v.expandTracks);
    r.Get("flowStep", v.flowStep);
    r.Get("selected", v.selected);
    r.Get("modelExperiment", v.modelExperiment);
    r.Get("timelineShare", v.timelineShare);
    if (!(v.timelineShare >= 0.15f && v.timelineShare <= 0.85f)) r.Fail("timelineShare", "must be from 0.15 to 0.85");
    r.Finish();
    return v;
}

std::string_view Name(ExperimentKind k)
{
    switch (k) {
    case ExperimentKind::Collective: return "collective";
    case ExperimentKind::Pipeline: return "pipeline";
    case ExperimentKind::Training: return "training";
    case ExperimentKind::Autopar: return "autopar";
    case ExperimentKind::Plan: return "plan";
    case ExperimentKind::File: return "file";
    case ExperimentKind::WhatIf: return "whatif";
    }
    return "?";
}

std::string_view Name(Backend b)
{
    switch (b) {
    case Backend::Simulated: return "simulated";
    case Backend::Processes: return "processes";
    case Backend::Gpu: return "gpu";
    }
    return "?";
}

bool ParseBackend(std::string_view text, Backend& out)
{
    for (Backend b : {Backend::Simulated, Backend::Processes, Backend::Gpu})
        if (Name(b) == text) {
            out = b;
            return true;
        }
    return false;
}

std::string_view Name(ViewTab t)
{
    switch (t) {
    case ViewTab::Flow: return "flow";
    case ViewTab::Model: return "model";
    case ViewTab::Mfu: return "mfu";
    case ViewTab::Stats: return "stats";
    case ViewTab::Autopar: return "autopar";
    case ViewTab::Planner: return "planner";
    }
    return "?";
}

bool ParseViewTab(std::string_view text, ViewTab& out)
{
    for (ViewTab t : {ViewTab::Flow, ViewTab::Model, ViewTab::Mfu, ViewTab::Stats, ViewTab::Autopar, ViewTab::Planner})
        if (Name(t) == text) {
            out = t;
            return true;
        }
    return false;
}

Scenario ParseScenario(const std::string& text, const std::string& origin)
{
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        throw Error(origin + ": not valid JSON at byte " + std::to_string(e.byte) + " (" + e.what() + ")");
    }
    Reader r(doc, origin);
    Scenario s;
    r.Get("title", s.title);
    r.Get("description", s.description);
    r.Get("order", s.order);
    const json* experiments = r.Child("experiments");
    if (!experiments || !experiments->is_array() || experiments->empty())
        throw Error(origin + ": \"experiments\" must be a non-empty array");
    for (size_t i = 0; i < experiments->size(); ++i)
        s.experiments.push_back(ParseExperiment((*experiments)[i], origin + ": experiments[" + std::to_string(i) + "]"));
    if (const json* view = r.Child("view")) s.view = ParseView(*view, origin + ": view");
    r.Finish();
    const int count = static_cast<int>(s.experiments.size());
    if (s.view.selected < 0 || s.view.selected >= count) throw Error(origin + ": view.selected must name an experiment (0 to " + std::to_string(count - 1) + ")");
    if (s.view.modelExperiment >= count) throw Error(origin + ": view.modelExperiment must name an experiment or be -1");
    if (s.title.empty()) s.title = origin;
    return s;
}

const std::vector<Scenario>& BuiltinScenarios()
{
    static const std::vector<Scenario> list = [] {
        std::vector<Scenario> out;
        for (const auto& [name, text] : EmbeddedScenarioTexts()) {
            Scenario s = ParseScenario(text, "assets/scenarios/" + name + ".json");
            s.name = name;
            out.push_back(std::move(s));
        }
        std::stable_sort(out.begin(), out.end(), [](const Scenario& a, const Scenario& b) { return a.order < b.order; });
        return out;
    }();
    return list;
}

const Scenario* FindScenario(std::string_view name)
{
    for (const Scenario& s : BuiltinScenarios())
        if (s.name == name) return &s;
    return nullptr;
}

std::string ScenarioNamesList()
{
    std::string out;
    for (const Scenario& s : BuiltinScenarios()) out += (out.empty() ? "" : ", ") + s.name;
    return out;
}

Scenario ResolveScenario(const std::string& nameOrPath)
{
    if (const Scenario* s = FindScenario(nameOrPath)) return *s;
    if (nameOrPath.size() > 5 && nameOrPath.ends_with(".json")) {
        Scenario s = ParseScenario(core::ReadFileDecompressed(nameOrPath), nameOrPath);
        s.name = std::filesystem::path(nameOrPath).stem().string();
        return s;
    }
    throw Error("--scenario: no scenario named '" + nameOrPath + "' (built in: " + ScenarioNamesList() +
                "; or give a path to a .json scenario file)");
}

} // namespace paralens::app
