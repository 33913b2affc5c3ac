// The scenario format written back: an experiment or the view settings as the JSON object that
// ScenarioLoader.cpp reads, every key of its kind present, so that reading what is written gives
// the same values. Links (Link.cpp) are differences between two such objects.
#include "ScenarioLoader.hpp"

#include "common/Units.hpp"

namespace paralens::app {

namespace {

using nlohmann::json;

// "64MiB" when the size is a whole number of a binary unit (as scenarios write it), else bytes.
json BytesJson(uint64_t bytes)
{
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++unit;
    }
    if (unit == 0) return bytes;
    return std::to_string(bytes) + units[unit];
}

void WriteCollective(json& j, const CollectiveParams& c)
{
    j["collective"] = std::string(core::Name(c.collective));
    j["algorithm"] = std::string(core::Name(c.algorithm));
    j["ranks"] = c.ranks;
    j["bytes"] = BytesJson(c.bytes);
    j["root"] = c.root;
}

void WritePipeline(json& j, const PipelineParams& p)
{
    j["schedule"] = std::string(core::Name(p.schedule));
    j["stages"] = p.stages;
    j["microBatches"] = p.microBatches;
    j["chunks"] = p.chunks;
    j["batches"] = p.batches;
    j["forwardMs"] = p.forwardMs;
    j["backwardRatio"] = p.backwardRatio;
    j["recompute"] = p.recompute;
    j["communicate"] = p.communicate;
    j["activationBytes"] = BytesJson(p.activationBytes);
    j["gpu"] = p.gpu;
    j["dtype"] = p.dtype;
    j["kernelEfficiency"] = p.kernelEfficiency;
}

void WriteTraining(json& j, const TrainingParams& t)
{
    j["workload"] = t.workload;
    j["devices"] = t.devices;
    j["layers"] = t.layers;
    j["iterations"] = t.iterations;
    j["forwardMs"] = t.forwardMs;
    j["gradBytes"] = BytesJson(t.gradBytes);
    j["overlap"] = t.overlap;
    j["servers"] = t.servers;
    j["consistency"] = t.consistency;
    j["staleness"] = t.staleness;
    j["tokens"] = t.tokens;
    j["hidden"] = t.hidden;
    j["inputs"] = t.inputs;
    j["algorithm"] = std::string(core::Name(t.algorithm));
    j["experts"] = t.experts;
    j["topK"] = t.topK;
    j["imbalance"] = t.imbalance;
    j["gpu"] = t.gpu;
    j["dtype"] = t.dtype;
    j["kernelEfficiency"] = t.kernelEfficiency;
}

void WriteAutopar(json& j, const AutoparParams& a)
{
    j["graph"] = a.graph;
    j["layers"] = a.layers;
    j["batch"] = a.batch;
    j["seq"] = a.seq;
    j["hidden"] = a.hidden;
    j["heads"] = a.heads;
    j["ffn"] = a.ffn;
    j["mesh"] = std::to_string(a.mesh.rows) + "x" + std::to_string(a.mesh.cols);
    j["fastAlphaUs"] = a.mesh.fastAlphaUs;
    j["fastGBps"] = a.mesh.fastGBps;
    j["slowAlphaUs"] = a.mesh.slowAlphaUs;
    j["slowGBps"] = a.mesh.slowGBps;
    j["gpu"] = a.mesh.gpu;
    j["dtype"] = a.mesh.dtype;
    j["efficiency"] = a.mesh.efficiency;
    j["solvers"] = a.solvers;
    j["microBatches"] = a.microBatches;
    j["show"] = a.show;
}

void WritePlan(json& j, const PlanParams& p)
{
    j["model"] = p.model;
    j["layers"] = p.layers;
    j["hidden"] = p.hidden;
    j["gpu"] = p.gpu;
    j["gpus"] = p.gpus;
    j["gpusPerNode"] = p.gpusPerNode;
    j["globalBatch"] = p.globalBatch;
    j["seq"] = p.seq;
    j["nvlinkGBps"] = p.nvlinkGBps;
    j["networkGBps"] = p.networkGBps;
    j["efficiency"] = p.efficiency;
    j["fp8"] = p.fp8;
    j["cp"] = p.cp;
    j["tp"] = p.tp;
    j["pp"] = p.pp;
    j["firstStageLayers"] = p.firstStageLayers;
    j["lastStageLayers"] = p.lastStageLayers;
    j["ppLayout"] = p.ppLayout;
    j["tpCommOverlap"] = p.tpCommOverlap;
    j["dpCommOverlap"] = p.dpCommOverlap;
    j["epCommOverlap"] = p.epCommOverlap;
    j["mtpLayers"] = p.mtpLayers;
    j["flashAttention2"] = p.flashAttention2;
    j["bf16Gradients"] = p.bf16Gradients;
    j["recomputeModules"] = core::RecomputeModulesText(p.recomputeModules);
    j["calibrate"] = p.calibrate;
    j["publishedRun"] = p.published;
    j["row"] = p.row;
}

void WriteWhatIf(json& j, const WhatIfParams& w)
{
    j["computeX"] = w.computeX;
    j["commX"] = w.commX;
    j["cpuX"] = w.cpuX;
    j["scale"] = w.scale;
    j["bandwidthX"] = w.bandwidthX;
    j["alphaX"] = w.alphaX;
    j["model"] = w.model;
    if (!w.noStragglers.empty()) j["noStraggler"] = w.noStragglers.front();
    if (!w.skewUs.empty()) j["skew"] = {{"rank", w.skewUs.front().first}, {"us", w.skewUs.front().second}};
}

void WriteRunAndCluster(json& j, const Experiment& e)
{
    j["backend"] = std::string(Name(e.backend));
    j["warmup"] = e.live.warmup;
    if (e.kind != ExperimentKind::Training) j["iterations"] = e.live.iterations; // a training step's "iterations" are its own
    j["timeoutS"] = e.live.timeoutSec;
    j["sweep"] = e.live.sweep;
    j["sweepFrom"] = BytesJson(e.live.sweepFromBytes);
    const ClusterParams& c = e.cluster;
    j["alphaUs"] = c.alphaUs;
    j["bandwidthGBps"] = c.bandwidthGBps;
    j["gammaGBps"] = c.gammaGBps;
    j["ranksPerNode"] = c.ranksPerNode;
    j["netAlphaUs"] = c.netAlphaUs;
    j["netBandwidthGBps"] = c.netBandwidthGBps;
    j["straggler"] = {{"rank", c.stragglerRank}, {"slowdown", c.stragglerSlowdown}};
}

} // namespace

nlohmann::json ExperimentJson(const Experiment& e)
{
    json j = json::object();
    j["label"] = e.label;
    j["kind"] = std::string(Name(e.kind));
    switch (e.kind) {
    case ExperimentKind::Collective: WriteCollective(j, e.collective); break;
    case ExperimentKind::Pipeline: WritePipeline(j, e.pipeline); break;
    case ExperimentKind::Training: WriteTraining(j, e.training); break;
    case ExperimentKind::Autopar: WriteAutopar(j, e.autopar); break;
    case ExperimentKind::Plan: WritePlan(j, e.plan); break;
    case ExperimentKind::File: j["files"] = e.files; break;
    case ExperimentKind::WhatIf:
        j["files"] = e.files;
        WriteWhatIf(j, e.whatIf);
        break;
    }
    WriteRunAndCluster(j, e);
    return j;
}

nlohmann::json ViewJson(const ViewSettings& v)
{
    return json{{"tab", std::string(Name(v.tab))},
                {"colorBy", v.colorBy == ColorMode::Category ? "category" : "micro-batch"},
                {"showPredicted", v.showPredicted},
                {"outlinesFromFit", v.outlinesFromFit},
                {"showFlows", v.showFlows},
                {"showBubbles", v.showBubbles},
                {"showCriticalPath", v.showCriticalPath},
                {"expandTracks", v.expandTracks},
                {"flowStep", v.flowStep},
                {"selected", v.selected},
                {"modelExperiment", v.modelExperiment},
                {"timelineShare", v.timelineShare}};
}

} // namespace paralens::app
