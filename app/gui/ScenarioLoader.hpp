// Lecture scenarios: assets/scenarios/*.json, one file each, compiled into the binary (so the app
// works wherever it is copied) and listed under Scenarios. A scenario is a list of Experiments
// and the view settings that make the point of the lecture slide visible at once.
//
// Format (every key optional except "experiments"; unknown keys are errors, to catch typos):
//   {"title": "...", "order": 1, "description": "...",
//    "experiments": [{"label": "ring", "kind": "collective", "collective": "allreduce",
//                     "algorithm": "ring", "ranks": 8, "bytes": "64MiB", "alphaUs": 5,
//                     "bandwidthGBps": 100, "gammaGBps": 0, "straggler": {"rank": 3, "slowdown": 2}},
//                    {"kind": "pipeline", "schedule": "gpipe", "stages": 4, "microBatches": 8,
//                     "chunks": 2, "forwardMs": 1, "backwardRatio": 2, "recompute": false,
//                     "communicate": false, "activationBytes": "16MiB", "gpu": "h100-sxm",
//                     "dtype": "bf16", "kernelEfficiency": 0.6},
//                    {"kind": "training", "workload": "dp|ps|tp|interop|intraop|moe", "devices": 4,
//                     "layers": 4, "iterations": 2, "forwardMs": 1, "gradBytes": "16MiB", "overlap": true,
//                     "servers": 1, "consistency": "bsp|ssp|async", "staleness": 1, "tokens": 8192,
//                     "hidden": 8192, "inputs": 1, "algorithm": "ring", "experts": 8, "topK": 2,
//                     "imbalance": 0, "gpu": "h100-sxm", "dtype": "bf16", "kernelEfficiency": 0.6},
//                    {"kind": "autopar", "graph": "mlp|transformer|convnet|graph.json", "layers": 1, "batch": 8,
//                     "seq": 1024, "hidden": 4096, "heads": 32, "ffn": 16384, "mesh": "1x4", "fastAlphaUs": 5,
//                     "fastGBps": 300, "slowAlphaUs": 10, "slowGBps": 25, "gpu": "h100-sxm", "dtype": "bf16",
//                     "efficiency": 0.5, "solvers": "ilp,dp,greedy,random,data-parallel,megatron",
//                     "microBatches": 0, "show": "ilp"},
//                    {"kind": "plan", "model": "llama3-70b", "layers": 0, "hidden": 0, "gpu": "h100-sxm",
//                     "gpus": 64, "gpusPerNode": 8, "globalBatch": 128, "seq": 0, "nvlinkGBps": 0,
//                     "networkGBps": 50, "efficiency": 0.55, "fp8": false, "cp": 0, "tp": 0, "pp": 0,
//                     "firstStageLayers": 0, "lastStageLayers": 0, "ppLayout": "", "tpCommOverlap": false,
//                     "dpCommOverlap": false, "epCommOverlap": false, "mtpLayers": 0, "flashAttention2": false,
//                     "bf16Gradients": false, "recomputeModules": "",
//                     "calibrate": "", "publishedRun": "", "row": 1} (0 means "the preset's" or "searched";
//                     "ppLayout" is Megatron-Core's --pipeline-model-parallel-layout, "Et*4|(t*4|)*14tmL", with "pp";
//                     "recomputeModules" its --recompute-modules, of layernorm, moe_act and mla_up_proj;
//                     "publishedRun": "R091", a run of tests/data/published-runs.csv, replaces the others and
//                     makes "row" 0, the run's own configuration, unless given: see AppState.hpp's PlanParams),
//                    any of them (not files) may add "backend": "simulated|processes|gpu",
//                    "warmup": 1, "iterations": 20, "timeoutS": 30, "sweep": false, "sweepFrom": "4KiB"
//                    (a real run: see AppState.hpp),
//                    {"kind": "file", "file": "traces/x.json"}, {"kind": "file", "files": ["rank0.json", ...]}],
//    "view": {"tab": "flow|model|mfu|stats|autopar|planner", "colorBy": "micro-batch|category", "showPredicted": true, "outlinesFromFit": false,
//             "showFlows": true, "showBubbles": true, "expandTracks": true, "flowStep": 0,
//             "selected": 0, "modelExperiment": -1, "timelineShare": 0.58}}
// Thread-safety: the built-in list is parsed once, on first use, under a static initialiser.
#pragma once

#include "AppState.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::app {

struct Scenario {
    std::string name;        // the file's stem: "ring-vs-tree"
    std::string title;       // what the Scenarios menu shows
    std::string description; // one or two sentences: what to look at
    int order = 100;         // menu position
    std::vector<Experiment> experiments;
    ViewSettings view;
};

// Throws Error naming `origin` and the key when the text is not a valid scenario.
Scenario ParseScenario(const std::string& jsonText, const std::string& origin);

// One experiment / the view settings of a scenario (ParseScenario reads them so); `where` names the
// place in errors ("link: experiment 1"). Throw Error naming `where` and the key.
Experiment ParseExperiment(const nlohmann::json& object, const std::string& where);
ViewSettings ParseView(const nlohmann::json& object, const std::string& where);

// The other way (ScenarioWriter.cpp): every key of the experiment's kind, so that ParseExperiment
// of the result gives `e` back.
nlohmann::json ExperimentJson(const Experiment& e);
nlohmann::json ViewJson(const ViewSettings& v);

// The scenarios compiled in from assets/scenarios, sorted by order.
const std::vector<Scenario>& BuiltinScenarios();
const Scenario* FindScenario(std::string_view name);
std::string ScenarioNamesList(); // "default, ring-vs-tree, ..."

// The built-in scenario a name refers to, or a scenario file read from disk when `nameOrPath`
// ends in .json. Throws Error naming the scenario (and listing the known ones) otherwise.
Scenario ResolveScenario(const std::string& nameOrPath);

} // namespace paralens::app
