// The training-configuration planner: for a transformer, a cluster and a global batch, every
// DP x TP x PP x CP (x EP) factorisation with its micro-batch size, pipeline schedule, activation
// recomputation, ZeRO stage and sequence parallelism; each one's memory per GPU (weights,
// gradients, optimizer states, activations as the schedule really holds them) and step time
// (GEMMs at an efficiency, TP/EP collectives and DP gradient sync priced by the cost model, the
// pipeline timed on the real schedule with its sends); ranked, with the Pareto front of time
// against memory. The model's assumptions are documented beside each formula in Planner*.cpp and
// in docs/planning.md. Pure functions; thread-safe.
#pragma once

#include "model/Fit.hpp"
#include "model/Hardware.hpp"
#include "planner/PipelineLayout.hpp"
#include "planner/TransformerModel.hpp"
#include "schedule/Schedule.hpp"

#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

enum class Recompute { None, Selective, Full };
std::string_view Name(Recompute r);
std::optional<Recompute> ParseRecompute(std::string_view name);

// The share of a Hopper kernel's attention rate that flash-attn 2 reaches on an H100: 35% of the
// peak against FlashAttention-3's 75% (Shah et al. 2024, FlashAttention-3, arXiv:2407.08608,
// abstract): 0.467.
double FlashAttention2OnHopper();

// The time a GEMM takes beyond its FLOPs at the GPU's matmul ceiling (launch, the first and last
// waves of tiles): a GEMM of F FLOPs reaches F / (F + F0) of the ceiling's rate, F0 = this x that
// rate. Fitted on OpenXLA's measured H100 BF16 table (tests/data/gemm-h100-bf16-xla.csv, 125 shapes
// of 256 to 4096: F0 4.84 GFLOP at a plateau of 778 TFLOP/s, mean |log error| 8.6%); docs/planning.md.
inline constexpr double kGemmFixedSec = 6.2e-6;

// The measured matmul ceilings PlanCluster::EfficiencyFor scales the efficiency by, as help texts
// name them: "a100-sxm bf16 86.9%, ..., against h100-sxm bf16 80.3%" (assets/hardware.json).
std::string MatmulCeilingsText();

struct PlanCluster {
    GpuSpec gpu;                 // peak FLOPS, HBM size and bandwidth
    std::string dtype = "bf16";  // the GEMMs' data type (peak from the spec table)
    int gpus = 8;
    int gpusPerNode = 8;
    double nvlinkGBps = 0;       // one direction, per GPU, inside a node (0: the spec table's)
    double networkGBps = 50;     // one direction, per GPU, between nodes (400 Gb/s NICs)
    double nvlinkAlphaUs = 5;
    double networkAlphaUs = 10;
    // The fraction of peak an H100's BF16 GEMMs reach in training (memory-bound ops go at HBM
    // bandwidth); other GPUs and dtypes at it x their measured matmul ceiling over an H100's BF16
    // one (EfficiencyFor).
    double efficiency = 0.55;
    double memoryFraction = 0.95; // of HBM usable for the model (the rest: CUDA context, NCCL, allocator)
    double gemmTflops = 0;       // measured GEMM throughput (the GEMM probe's); 0: peak x efficiency
    // Calibrated (plan --calibrate, Calibration.hpp): the efficiency by FLOPs per GEMM, ascending.
    // Non-empty: each of a layer's linear GEMMs (QKV, attention output, MLP in, MLP out) and the
    // output layer at the efficiency of its size; attention's products keep `efficiency`.
    std::vector<std::pair<double, double>> gemmCurve;
    double attentionEfficiency = 0; // calibrated: attention's products at peak x this (0: `efficiency`)
    // Calibrated: the fraction of HBM bandwidth memory-bound kernels reached by bytes per kernel,
    // ascending; each memory-bound op runs at the fraction of its size. Empty: at HBM bandwidth.
    std::vector<std::pair<double, double>> hbmCurve;
    // Measured links (plan --nvlink-fit / --network-fit: fits of nccl-tests logs, paralens fit
    // --out): each collective and send priced with the regime of its size, as simulate --model
    // prices it, instead of the alpha and bandwidth above. Null: those.
    std::shared_ptr<const FitFile> nvlinkFit, networkFit;
    // Set by ApplyCalibration: the GPU the profile ran on (its efficiencies are fractions of that
    // GPU's peaks and HBM bandwidth), and which of the fits above its collectives measured.
    std::string calibratedOn;
    bool nvlinkFromProfile = false, networkFromProfile = false;

    // FP8 training (Transformer Engine's recipe): the transformer layers' linear GEMMs run at the fp8
    // peak x the same efficiency; attention's score and value products, the output layer and the
    // memory-bound ops stay as they were, and MFU stays against `dtype`'s peak. Weights, gradients
    // and optimizer states are unchanged (Megatron-LM's default FP8 recipe keeps bf16 weights); of the
    // activations, the inputs the linear layers keep for their weight gradients (QKV, attention
    // output, MLP in and MLP out) are stored in fp8, 1 byte, as Transformer Engine keeps them.
    bool fp8 = false;

    double PeakFlops() const { return gpu.PeakFlops(dtype); } // MFU is against this, the spec sheet's
    // `efficiency` x this GPU's measured matmul ceiling for `dt` (GpuSpec::MatmulCeiling) over an
    // H100's for BF16, the GPU and dtype `efficiency` describes; x 1 where either is unmeasured.
    double EfficiencyFor(std::string_view dt) const;
    double GemmFlops() const { return gemmTflops > 0 ? gemmTflops * 1e12 : PeakFlops() * EfficiencyFor(dtype); }
    // F0 of a GEMM in `dt` (kGemmFixedSec): the FLOPs a GEMM loses to its fixed time at the
    // measured ceiling's rate (an H100's BF16 ceiling share where `dt` has none measured; a
    // measured --gemm-tflops as it is). A GEMM of F FLOPs runs at its rate x F / (F + F0).
    double GemmHalfFlops(std::string_view dt) const;
    // The rate of the layers' linear GEMMs: GemmFlops(), or with fp8 the fp8 peak x EfficiencyFor
    // fp8 (a measured --gemm-tflops scaled by the peaks' ratio; 0: the GPU has no fp8).
    double LinearFlops() const
    {
        if (!fp8) return GemmFlops();
        return gemmTflops > 0 ? GemmFlops() * gpu.PeakFlops("fp8") / PeakFlops() : gpu.PeakFlops("fp8") * EfficiencyFor("fp8");
    }
    double NvlinkGBps() const { return nvlinkGBps > 0 ? nvlinkGBps : gpu.nvlinkUniGBps; }
    double UsableBytes() const { return gpu.MemoryBytes() * memoryFraction; }
};

struct TrainingConfig {
    int dp = 1, tp = 1, pp = 1, ep = 1;
    int microBatch = 1;
    ScheduleKind schedule = ScheduleKind::OneFOneB;
    int chunks = 1;               // v, interleaved only
    Recompute recompute = Recompute::None;
    int zero = 0;                 // 0..3; 3 is FSDP
    bool sequenceParallel = false;
    // Context parallelism: each sequence split over `cp` GPUs (Megatron-LM's ring attention, the
    // sequence in 2 cp chunks so causal work balances). dp x tp x pp x cp = GPUs; gradients are
    // reduced and optimizer states sharded over dp x cp, as Megatron-LM does.
    int cp = 1;
    // Uneven stages (Megatron-LM's --decoder-first/last-pipeline-num-layers): the first and the
    // last stage's layer counts, the other stages sharing the rest; 0 each: an even split
    // (ceil(L / pp) on the heaviest stage).
    int firstStageLayers = 0, lastStageLayers = 0;
    // Layers placed by hand (the request's --pp-layout; pp and v are its own): each stage holds what
    // its chunks do, the embedding, the loss and the MTP modules where the layout puts them.
    std::shared_ptr<const PipelineLayout> layout;

    int GradientGroup() const { return dp * cp; } // the ranks holding the same weights
    bool Uneven() const { return firstStageLayers > 0 || lastStageLayers > 0 || layout; }
};

// What pipeline stage `stage` holds: its transformer layers and multi-token prediction modules,
// and whether the embedding and the output layer with the loss (an even or first/last split: the
// embedding on the first stage, the loss and the MTP modules on the last; a layout: where it says).
// Inline: the search asks it several times a candidate, and a call's return of the packed struct
// stalls on its byte stores.
inline PipelineLayout::Part StageContent(const TransformerModel& m, const TrainingConfig& c, int stage);

// Layers on pipeline stage `stage` of `layers` (the heaviest middle stage's count for a middle one).
int StageLayers(int layers, const TrainingConfig& c, int stage);

inline PipelineLayout::Part StageContent(const TransformerModel& m, const TrainingConfig& c, int stage)
{
    if (c.layout) return c.layout->Stage(stage);
    const bool last = stage == c.pp - 1;
    return PipelineLayout::Part{StageLayers(m.layers, c, stage), last ? m.mtpLayers : 0, stage == 0, last};
}

// The layer count each of a pipeline's stages is a multiple of where Megatron-LM's standard flags
// cut it into v model chunks of equal layers (v must divide it; the search offers those v); 0
// where no v > 1 can (megatron/core/transformer/transformer_config.py). An even split needs the
// layers divisible by pp; the search's lighter ends, where the embedding and the output layer each
// count as a layer and the split of L + 2 is even (--account-for-embedding-in-pipeline-split,
// --account-for-loss-in-pipeline-split), that count; other uneven splits
// (--decoder-first/last-pipeline-num-layers) the first, the last and each middle stage's layers.
// Other v need a pipeline layout (--pipeline-model-parallel-layout, chunks of unequal layers),
// which a fixed --chunks may give; which layout is not known, so each stage's work is spread evenly over them.
int ChunkableLayers(int layers, const TrainingConfig& c);
// Whether the first and last stages' counts are Megatron-Core's split counting the embedding and
// the loss as a layer each (--account-for-embedding/loss-in-pipeline-split: L + 2 units in equal
// stages, the ends one layer lighter), as Megatron-Bridge's Llama 3.1 405B recipe runs it.
bool EndsCountedAsLayers(int layers, const TrainingConfig& c);

// "dp 6 tp 8 pp 64 cp 2 mb 1 interleaved v2 full zero1 sp"; uneven stages as "pp 16 layers 7+..+7"
// (the first and last stages' layers, the others sharing the rest), a layout by its text
std::string ConfigText(const TrainingConfig& c);
// The stage split as ConfigText names it ("layers 15+..+15", "layers ..+7", "layout Et*4|..."); empty for an even one.
std::string StageSplitText(const TrainingConfig& c);
// An uneven split's end stages alone ("15+..+15", "..+7"); empty for an even split or a layout.
std::string EndStagesText(const TrainingConfig& c);
// "interleaved v2", "1f1b", "-" without a pipeline.
std::string ScheduleText(const TrainingConfig& c);
// "69.4 GB" (decimal gigabytes, as HBM sizes are quoted).
std::string GbText(double bytes);
// An amount over the memory: GbText, or whole MB (rounded up) below 0.05 GB ("38 MB").
std::string OverText(double bytes);

// Megatron-Core's fine-grained recomputation (--recompute-granularity selective with
// --recompute-modules, MCore 0.13): each module's outputs are dropped after the forward and
// recomputed in the backward. layernorm: the two norms' outputs (the QKV and MLP or router inputs);
// moe_act: the experts' activation outputs (their second GEMM's input); mla_up_proj: MLA's Q, K
// and V from its up-projections.
struct RecomputeModules {
    bool layernorm = false, moeAct = false, mlaUpProj = false;
    bool Any() const { return layernorm || moeAct || mlaUpProj; }
    bool operator==(const RecomputeModules&) const = default;
};
// "layernorm,moe_act" (Megatron's names; empty: none). Throws Error naming `option` and the
// modules the planner models for any other name.
RecomputeModules ParseRecomputeModules(std::string_view text, std::string_view option);
std::string RecomputeModulesText(const RecomputeModules& m); // "layernorm, moe_act"; "" for none

struct PlanRequest {
    TransformerModel model;
    PlanCluster cluster;
    int globalBatch = 512;        // sequences per step
    int seq = 0;                  // 0: the model's
    bool flashAttention = true;   // attention scores are never stored (else 5 a s^2 b bytes per layer)
    // Attention through Dao's flash-attn 2 (as PyTorch FSDP stacks such as MosaicML's Composer run
    // it) rather than a Hopper kernel (cuDNN's fused attention or FlashAttention-3, Transformer
    // Engine's choice): on Hopper its products run at FlashAttention2OnHopper() of the rate the
    // planner gives attention; elsewhere unchanged (Ampere has no other; Blackwell unmeasured).
    bool flashAttention2 = false;
    bool tpAcrossNodes = false;   // allow TP groups larger than a node
    // Megatron-LM's --tp-comm-overlap: the TP collectives run under the linear GEMMs they feed or
    // follow, chunk by chunk; what outlasts those GEMMs shows, and the GEMMs run slower on the SMs
    // the collectives take.
    bool tpCommOverlap = false;
    // Megatron-Core's batch-level EP overlap (--overlap-moe-expert-parallel-comm with
    // --delay-wgrad-compute, MCore 0.14): one micro-batch's forward runs beside another's backward,
    // layer by layer, each one's all-to-alls under the other's compute (EpOverlapPairSec). Megatron
    // allows it with EP > 1, without full recomputation, and with PP > 1 only interleaved; other
    // configurations are timed without it.
    bool epCommOverlap = false;
    // The gradient buffers' type (Megatron-LM's --accumulate-allreduce-grads-in-fp32, forced on with
    // --bf16; NeMo's and Megatron-Bridge's performance recipes set grad_reduce_in_fp32 = False):
    // 4 or 2 bytes a parameter held, and reduced over the data-parallel ranks.
    bool gradReduceFp32 = true;
    double GradBytes() const { return gradReduceFp32 ? 4.0 : 2.0; }
    // Megatron-LM's --overlap-grad-reduce and --overlap-param-gather (on in NeMo's and
    // Megatron-Bridge's recipes): each model chunk's gradients are reduced as soon as its last
    // backward ends, under the backward still to run, and its weights (ZeRO 1-2) gathered under the
    // next step's forward. Off: the whole sync runs after the backward, its last micro-batch's
    // backward aside. Either way the compute beside a collective runs on the SMs it leaves.
    bool dpCommOverlap = false;
    // The whole gradient sync after the backward, none of it hidden: Megatron-LM's default local
    // DDP before --overlap-grad-reduce (megatron/training.py train_step, 2021: "backward-params-
    // all-reduce" after forward_backward_func). Off (and dpCommOverlap off): the last micro-batch's
    // backward hides what it can, as PyTorch DDP's buckets do.
    bool dpCommExposed = false;
    // Fixed choices (unset: searched).
    std::optional<int> dp, tp, pp, ep, cp, microBatch, chunks, zero;
    // Uneven stages fixed (unset: the search tries an even split and, where it differs, one
    // counting the embedding and the output layer as a layer each on the first and last stages).
    std::optional<int> firstStageLayers, lastStageLayers;
    // Megatron-Core's --pipeline-model-parallel-layout fixed (it fixes pp and v; null: none).
    std::shared_ptr<const PipelineLayout> layout;
    // The search also tries the last stage lightened by what the output layer and the MTP modules
    // weigh (--decoder-last-pipeline-num-layers), where that saves half a layer or more of the
    // heaviest stage. Off to time a published recipe's own split, which does not set it.
    bool lightenLastStage = true;
    std::optional<ScheduleKind> schedule;
    std::optional<Recompute> recompute;
    std::optional<bool> sequenceParallel;
    // Fine-grained recomputation, for every configuration the search times without full
    // recomputation (not searched: a recipe's choice).
    RecomputeModules recomputeModules;

    int Seq() const { return seq > 0 ? seq : model.seq; }
};

struct MemoryBreakdown { // bytes per GPU, on the most loaded pipeline stage
    double weights = 0, gradients = 0, optimizer = 0, activations = 0;
    int stage = 0;                // which stage that is
    double inFlight = 0;          // micro-batches whose activations that stage holds at its peak
    double Total() const { return weights + gradients + optimizer + activations; }
};

// What a step's compute runs (seconds, N micro-batches through the bounding stage, forward and
// backward); the four sum to StepBreakdown::compute.
struct ComputeParts {
    double gemms = 0;       // the linear GEMMs: QKV, attention output, MLP or experts, router, output layer, MTP projections
    double attention = 0;   // attention's products (the flash kernels, or the scores' GEMMs)
    double memoryBound = 0; // norms, dropouts, residual adds, activations, token dispatch, the scores' softmax without flash attention, FP8 casts, the loss
    double recompute = 0;   // what full or selective recomputation runs again in the backward
    double Total() const { return gemms + attention + memoryBound + recompute; }
};

struct StepBreakdown { // seconds of one training step
    double compute = 0;    // GEMMs and the rest of the layers, recomputation included (N micro-batches on a stage)
    ComputeParts computeParts; // the same, by what it runs
    double tpComm = 0;     // tensor-parallel collectives (not overlapped unless tpCommOverlap)
    double cpComm = 0;     // context parallelism's ring-attention sends not hidden under attention
    double epComm = 0;     // expert-parallel all-to-alls
    double bubble = 0;     // pipeline idle with free sends
    double ppComm = 0;     // what the stage-to-stage sends add to the pipeline
    double dpComm = 0;     // gradient sync not hidden (dpExposedSec) + ZeRO 3's per-op gathers
    double optimizer = 0;
    double step = 0;
    // Per micro-batch on the heaviest stage (what the pipeline is timed with).
    double forwardSec = 0, backwardSec = 0, weightSec = 0, sendSec = 0;
    double dpSyncSec = 0;  // the whole gradient sync, before overlap
    double dpExposedSec = 0; // the part of it the step waits for
};

struct PlanRow {
    TrainingConfig config;
    int microBatches = 1;          // N per pipeline per step
    MemoryBreakdown memory;
    StepBreakdown time;            // valid when timed
    bool fits = false;
    bool timed = false;
    double tokensPerSecond = 0, mfu = 0, hfu = 0;
    std::string rejected;          // why it does not fit ("needs 93.1 GB of 72.0 GB: 21.1 GB over")
};

struct PlanResult {
    std::vector<PlanRow> rows;     // fitting rows best first (timed), then rows that do not fit, least over first
    std::vector<size_t> pareto;    // indices into rows: fastest to smallest, each faster than every smaller one
    size_t candidates = 0;         // configurations looked at
    size_t fitting = 0;
    std::vector<std::string> notes;
};

// Throws Error naming the option for a request that cannot work whatever the search finds: the
// model's fields, a fixed degree the GPUs, heads or batch do not divide, a stage split or pipeline
// layout that does not fit the model or the fixed degrees. PlanTraining runs it first; callers
// that take a request from a form (the window's controls, a scenario) run it to name the field.
void CheckPlanRequest(const PlanRequest& request);

// Throws Error naming the constraint for impossible requests: the GPU count not a multiple of a
// fixed degree, the sequence not divisible by 2 x a fixed CP, heads (or KV heads, or FFN) not divisible by a fixed TP, layers fewer than PP,
// the global batch not divisible, no configuration at all, ... When configurations exist but none
// fits, the result has no fitting row and its first note says by how much the closest misses.
PlanResult PlanTraining(const PlanRequest& request);

// One configuration's memory and time (whether it fits or not). Throws Error naming what makes it
// impossible (degrees not multiplying to the GPU count, ...).
PlanRow Evaluate(const PlanRequest& request, const TrainingConfig& config);

// A Megatron-Core layout (--pipeline-model-parallel-layout) for pp stages of v chunks that balances
// them: the last chunk holds the output layer, the MTP modules and as many layers as make it weigh
// about what one chunk's share of the whole does (by forward FLOPs a token, none if the output
// layer alone outweighs it), the other chunks share the rest, a layer more first on the chunks of
// the stages before the last. Null where there are fewer layers than chunks to fill.
std::shared_ptr<const PipelineLayout> BalancedLayout(const PlanRequest& request, int pp, int v);
// `row`'s configuration with BalancedLayout in place of its stage split, where it is faster (by
// 0.5% or more) and fits: what laying the layers out by hand would buy. Null otherwise, and for
// pp 1 or a row already laid out.
std::optional<PlanRow> BalancedLayoutRow(const PlanRequest& request, const PlanRow& row);

// Model FLOPs of one step (3 x forward x tokens) and what the hardware runs (recomputation added).
double ModelFlopsPerStep(const PlanRequest& request);
double HardwareFlopsPerStep(const PlanRequest& request, Recompute r);

} // namespace paralens::core
