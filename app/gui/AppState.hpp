// The app's state as plain structs: what to run (Experiments, edited by the controls and set by
// scenarios) and how the views show it (ViewSettings). No ImGui, no GL: the scenario loader, the
// run builder and the tests use these without a window. Owned by the GUI thread; a job receives
// copies of the Experiments it runs.
#pragma once

#include "autopar/Autopar.hpp"
#include "planner/Planner.hpp"
#include "model/Collective.hpp"
#include "schedule/Schedule.hpp"
#include "sim/ClusterModel.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paralens::app {

enum class ExperimentKind { Collective, Pipeline, Training, Autopar, Plan, File, WhatIf };
std::string_view Name(ExperimentKind k);

// The modelled cluster: alpha in microseconds, bandwidths in GB/s (1e9 bytes/s), one optional
// straggler (rank < 0: none), and optionally two levels: nodes of ranksPerNode GPUs whose
// messages between nodes cost netAlphaUs and netBandwidthGBps (0: one level).
struct ClusterParams {
    double alphaUs = 5.0;
    double bandwidthGBps = 100.0;
    double gammaGBps = 0.0; // 0: free reductions
    int stragglerRank = -1;
    double stragglerSlowdown = 2.0;
    int ranksPerNode = 0;
    double netAlphaUs = 10.0;
    double netBandwidthGBps = 0.0;

    bool TwoLevel() const { return ranksPerNode > 0 && netBandwidthGBps > 0; }

    core::ClusterModel ToModel() const;
    bool operator==(const ClusterParams&) const = default;
};

struct CollectiveParams {
    core::Collective collective = core::Collective::AllReduce;
    core::Algorithm algorithm = core::Algorithm::Ring;
    int ranks = 8;
    uint64_t bytes = uint64_t{64} << 20; // n, the full vector
    int root = 0;

    bool operator==(const CollectiveParams&) const = default;
};

// A pipeline on the modelled cluster. FLOPs come from the GPU spec table: compute spans run at
// `kernelEfficiency` of the GPU's peak, so MFU = efficiency x (1 - bubble) when nothing else idles.
struct PipelineParams {
    core::ScheduleKind schedule = core::ScheduleKind::OneFOneB;
    int stages = 4;        // D
    int microBatches = 8;  // N
    int chunks = 2;        // v, interleaved only
    int batches = 2;       // pipedream only
    double forwardMs = 1.0;
    double backwardRatio = 2.0; // backward = ratio x forward
    double backwardMs = -1.0;   // >= 0: the backward's time, instead of the ratio
    double weightMs = -1.0;     // zb-h1's weight-gradient part of the backward (< 0: half of it)
    double optimizerMs = 0.0;   // after the flush
    std::vector<double> stageSlowdown; // per-stage time factors (empty: the cluster's straggler, when a stage)
    double forwardTflop = 0.0;  // > 0: a micro-batch's forward through a stage, in model TFLOP; else
                                // its time at kernelEfficiency of the GPU's peak
    bool recompute = false;
    bool communicate = false;   // false: free links (the lectures' setting)
    uint64_t activationBytes = uint64_t{16} << 20;
    std::string gpu = "h100-sxm";
    std::string dtype = "bf16";
    double kernelEfficiency = 0.6;

    bool operator==(const PipelineParams&) const = default;
};

// A training step from core/schedule's generators: data parallelism with allreduce ("dp") or
// parameter servers ("ps"), Megatron's tensor-parallel MLP ("tp"), Y = X.W1.W2 split between
// operators ("interop") or inside them ("intraop"), and mixture of experts ("moe"). Compute times
// come from FLOPs at `kernelEfficiency` of the GPU's peak (dp/ps: from forwardMs per layer).
struct TrainingParams {
    std::string workload = "dp";
    int devices = 4;               // workers (dp, ps) or devices; interop always uses 2
    int layers = 4;                // dp, ps, tp
    int iterations = 2;            // dp, ps
    double forwardMs = 1.0;        // dp, ps: per layer
    double backwardMs = -1.0;      // dp, ps: per layer (< 0: 2 x forward)
    double optimizerMs = 0.0;      // dp, ps: per iteration, after the gradients are summed
    uint64_t gradBytes = uint64_t{16} << 20; // dp, ps: per layer
    uint64_t bucketBytes = 0;      // dp: allreduce buckets of at least this (0: one per layer)
    bool overlap = true;           // dp: allreduce buckets during the backward
    int servers = 1;               // ps
    std::string consistency = "bsp"; // ps: bsp, ssp, async
    int staleness = 1;             // ps with ssp
    double tokens = 8192;          // tp, interop, intraop, moe (per device for moe)
    double hidden = 8192;
    double ffnMultiplier = 4;      // tp: the MLP's width / hidden
    bool backward = true;          // tp: the backward too
    double ffnHidden = 14336;      // moe: an expert's FFN width
    int inputs = 1;                // interop: micro-batches through the two devices
    core::Algorithm algorithm = core::Algorithm::Ring; // dp, tp, intraop: the allreduce
    int experts = 8;               // moe
    int topK = 2;
    double imbalance = 0.0;
    std::string gpu = "h100-sxm";
    std::string dtype = "bf16";
    double kernelEfficiency = 0.6;

    bool operator==(const TrainingParams&) const = default;
};

// Auto-parallelization (core/autopar): a graph's ops sharded on a device mesh by the lectures'
// solvers, compared; optionally the layers cut into pipeline stages. The timeline shows the
// strategy `show` names, simulated; the Auto-parallel tab draws the graph and the comparison.
struct AutoparParams {
    std::string graph = "mlp"; // mlp, transformer, convnet, or a graph .json file
    int layers = 1;            // transformer
    int64_t batch = 8;
    int64_t seq = 1024;
    int64_t hidden = 4096;
    int64_t heads = 32;
    int64_t ffn = 16384;
    core::MeshOptions mesh;
    std::string solvers = "ilp,dp,greedy,random,data-parallel,megatron";
    int microBatches = 0;      // > 0: the inter-op search too
    std::string show = "ilp";  // the strategy the timeline shows (the best when not among those run)

    core::AutoparRequest ToRequest() const; // throws Error naming the field
    bool operator==(const AutoparParams&) const = default;
};

// The training-configuration planner (core/planner): a transformer on a cluster, every DP x TP x
// PP (x EP) configuration ranked; the Planner tab shows the table, the explanation bar and the
// Pareto front; the timeline shows row `row`'s simulated step (one pipeline of TP groups).
struct PlanParams {
    std::string model = "llama3-70b"; // a preset (core/planner/TransformerModel.hpp)
    int layers = 0;                   // 0: the preset's
    int hidden = 0;                   // 0: the preset's (heads and FFN scale with it)
    std::string gpu = "h100-sxm";
    int gpus = 64;
    int gpusPerNode = 8;
    int globalBatch = 128;
    int seq = 0;                      // 0: the preset's
    int mtpLayers = 0;                // multi-token prediction modules (DeepSeek-V3 trains with 1)
    double nvlinkGBps = 0;            // 0: the spec table's
    double networkGBps = 50;
    double efficiency = 0.55;
    bool fp8 = false;                 // the layers' linear GEMMs in FP8 (core's PlanCluster::fp8)
    int cp = 0;                       // context parallelism: 0 searched, else fixed
    int tp = 0;                       // tensor-parallel degree: 0 searched, else fixed
    int pp = 0;                       // pipeline stages: 0 searched, else fixed
    int firstStageLayers = 0;         // the first stage's layers (the embedding's): 0 the search's splits
    int lastStageLayers = 0;          // the last stage's layers (the output layer's): 0 the search's splits
    std::string ppLayout;             // Megatron-Core's --pipeline-model-parallel-layout (needs pp; fixes v and every stage's layers)
    bool tpCommOverlap = false;       // TP collectives under the GEMMs (Transformer Engine's userbuffers)
    bool dpCommOverlap = false;       // gradient reduce and weight gather per model chunk under the work left
    bool epCommOverlap = false;       // MoE all-to-alls under another micro-batch's compute (MCore's batch-level EP overlap)
    bool flashAttention2 = false;     // attention through flash-attn 2 (on Hopper slower than cuDNN's or FlashAttention-3)
    bool bf16Gradients = false;       // gradient buffers held and reduced in bf16 (NeMo's recipes), else fp32
    core::RecomputeModules recomputeModules; // Megatron-Core's --recompute-modules, where a row does not recompute fully
    std::string calibrate;            // profiler trace files (comma-separated) whose GEMMs calibrate the efficiency by size
    // A run of the published set by its id ("R091", core/planner/PublishedSet.hpp): its model,
    // cluster, batch and techniques replace the fields above, and the table holds every
    // configuration the planner would choose with its techniques.
    std::string published;
    int row = 1;                      // the ranked row (1: the best) the timeline simulates; 0: a published run's own

    core::PlanRequest ToRequest() const; // throws Error naming the field; reads no file (`calibrate` is applied by the run)
    bool operator==(const PlanParams&) const = default;
};

// A what-if replay of a trace (core/sim/TraceReplay.hpp): the trace's ops re-timed along its
// dependencies under these changes; the timeline shows the replayed trace below the measured one.
// Factors of 1 change nothing.
struct WhatIfParams {
    double computeX = 1.0;       // GPU compute ops' time x this
    double commX = 1.0;          // communication ops' time x this (collectives, sends, receives)
    double cpuX = 1.0;           // host ops' time x this
    std::string scale;           // more rules, "PATTERN=FACTOR, ...": a category or a glob on op names ("*gemm*=0.8")
    double bandwidthX = 1.0;     // the network's bandwidth x this, priced by the cost model
    double alphaX = 1.0;         // its latency alpha x this
    double bandwidthGBps = 0.0;  // > 0: the network's bandwidth after the change (before bandwidthX)
    double alphaUs = -1.0;       // >= 0: its alpha after the change (before alphaX)
    std::string model;           // the network the trace ran on, as a fit file, for traces that do not say
    std::vector<int> noStragglers;                // ranks whose ops take the other ranks' median time
    std::vector<std::pair<int, double>> skewUs;   // ranks that start later, by microseconds

    bool ChangesNetwork() const { return bandwidthX != 1 || alphaX != 1 || bandwidthGBps > 0 || alphaUs >= 0; }
    bool Empty() const
    {
        return computeX == 1 && commX == 1 && cpuX == 1 && scale.empty() && !ChangesNetwork() && noStragglers.empty() && skewUs.empty();
    }
    bool operator==(const WhatIfParams&) const = default;
};

// Where an experiment runs: the modelled cluster, real messages between processes of this machine
// (an mpirun job of paralens itself), or this machine's GPUs. A real backend's run is started by
// the Run button (or `render`); until then the experiment shows the simulator's prediction.
enum class Backend { Simulated, Processes, Gpu };
std::string_view Name(Backend b); // "simulated", "processes", "gpu"
bool ParseBackend(std::string_view text, Backend& out);

// How a real run goes: warm-up and timed iterations, and how long a silent rank is waited for.
// A collective may run as a size sweep: sweepFromBytes, x4, ... up to the experiment's size, each
// size a run of its own; the measured points go on the model view as they come, with alpha and
// beta fitted to them.
struct LiveParams {
    int warmup = 1;
    int iterations = 20;
    double timeoutSec = 30.0;
    bool sweep = false;
    uint64_t sweepFromBytes = 4096;
    bool operator==(const LiveParams&) const = default;
};

struct Experiment {
    std::string label;
    ExperimentKind kind = ExperimentKind::Collective;
    Backend backend = Backend::Simulated;
    LiveParams live;
    CollectiveParams collective;
    PipelineParams pipeline;
    TrainingParams training;
    AutoparParams autopar;
    PlanParams plan;
    ClusterParams cluster;
    std::vector<std::string> files; // File and WhatIf: one trace, or the per-rank files of one job
    WhatIfParams whatIf;            // ExperimentKind::WhatIf

    bool operator==(const Experiment&) const = default;
};

enum class ViewTab { Flow, Model, Mfu, Stats, Autopar, Planner };
std::string_view Name(ViewTab t);
bool ParseViewTab(std::string_view text, ViewTab& out);

enum class ColorMode { Category, MicroBatch };

// How the views show the data; scenarios set it, the user changes it.
struct ViewSettings {
    ViewTab tab = ViewTab::Flow;
    ColorMode colorBy = ColorMode::MicroBatch;
    bool showPredicted = true;
    bool outlinesFromFit = false; // predicted outlines of measured runs: alpha, beta fitted to the run, else the lecture's
    bool showFlows = true;
    bool showBubbles = true;
    bool showCriticalPath = false; // each step's critical path outlined on the timeline
    bool expandTracks = true;
    int flowStep = 0;        // 0 = before the first step
    int selected = 0;        // the experiment the controls edit
    int modelExperiment = -1; // the collective the model view plots (-1: the first collective)
    float timelineShare = 0.58f; // of the window's height, above the tabs

    bool operator==(const ViewSettings&) const = default;
};

} // namespace paralens::app
