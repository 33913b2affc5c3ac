// One configuration's memory per GPU and step time. The formulas, and what they assume:
//
// Memory (bytes per GPU; the heaviest stage holds ceil(L / pp) layers):
//   weights 2 (bf16), gradients 4 (fp32 main gradients, accumulated over micro-batches; 2 with
//   --grad-reduce bf16),
//   optimizer 12 (Adam: fp32 master weights, m, v) per parameter, as Megatron-LM keeps them.
//   ZeRO-1 divides the optimizer states by the data-parallel degree, ZeRO-2 the gradients too,
//   ZeRO-3 the weights too (experts by the expert-data-parallel degree dp / ep), plus two layers'
//   weights gathered whole (the running one and the prefetched next).
//   The first stage holds the input embedding, the last the output head (one copy when tied and
//   pp = 1), each split over TP.
//   Activations per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation
//   Recomputation in Large Transformer Models", generalised to GQA and gated MLPs): 10 s b h kept
//   whole on every TP rank (norm inputs, the two linear inputs they feed, dropout masks; 8 for a
//   model without dropout) and, split over TP, attention sbh (4 + 4 kv/a) plus 5 a s^2 b for the
//   scores (4 without dropout) unless flash attention or selective recomputation, and the MLP
//   4 s b f (6 s b f gated: gate and up outputs, their product; x top-k for experts), and for a
//   mixture of experts the routed copies the expert GEMMs keep as their input, 2 k s b h. With FP8 the
//   four linear inputs are kept in fp8: 2 s b h less whole, s b h + s b f less split. Sequence
//   parallelism splits the whole-kept part too. Full recomputation keeps 2 s b h per layer (the
//   layer's input) plus one layer's activations while it is recomputed. A stage holds them for as
//   many micro-batches as its schedule has in flight at its peak (PipelineTiming); the last stage
//   adds the fp32 logits of one micro-batch (4 s b V / tp).
//
// Time (one micro-batch through the heaviest stage; then the real schedule times the pipeline, each
// stage's and chunk's ops at their share of it by forward FLOPs, OpShares):
//   compute = forward FLOPs / (peak x efficiency), FLOPs as TransformerModel counts them (the
//   output layer on the stage that holds it), plus the memory-bound ops (norms, dropouts,
//   residual adds, the MLP activation, and without flash attention the softmax over the scores)
//   at HBM bandwidth: a roofline per op class, so small layers run further from peak than large
//   ones, as measured; backward = 2 x forward (of which the weight gradient, W, is the GEMMs); full recomputation adds a forward to the backward, selective
//   the attention scores. TP: 2 collectives of 2 s b h bytes per layer forward and 2 backward (+2
//   recomputed), allreduce or with sequence parallelism allgather + reduce-scatter, on NVLink
//   inside a node; with --tp-comm-overlap, Transformer Engine's userbuffers (TpOverlapSec: what
//   the GEMMs do not cover, and the GEMMs slowed by the SMs the collectives take). EP: dispatch
//   and combine all-to-alls per layer forward and backward. Sends
//   between stages: 2 s b h / tp bytes per TP rank. ZeRO-3 gathers each stage's weights before
//   each forward and backward, and ZeRO-2 and 3 reduce-scatter each backward's gradients,
//   overlapped with that op's compute. DP: the gradients (fp32, or bf16
//   with --grad-reduce bf16) of the stage's parameters, allreduce, or with ZeRO-1 reduce-scatter
//   + allgather of the bf16 weights (ZeRO-2: the allgather), hidden under the last
//   micro-batch's backward as far as it lasts; across nodes through the NICs of the group's
//   members in a node, 1/q of the bytes each (CollectiveSec). The compute beside a hidden
//   collective runs on the SMs its kernels leave (CommSlowdown). Optimizer: 32 bytes of HBM traffic per local
//   parameter. Ranks are laid out TP fastest, then DP (experts' EP inside DP), then PP, so a group
//   is inside a node when its span fits one.
//
// Context parallelism (cp > 1; Megatron-LM's ring attention): each GPU holds b x s / cp of every
// micro-batch's tokens, so every per-token term above (activations, linear FLOPs, memory-bound ops,
// TP collectives, stage sends) is for those; attention's scores are its queries against the whole
// sequence (4 (s / cp) s h per layer, the full square as Megatron counts it: with the causal mask
// flash attention does half of it at about half the GEMM rate). The K and V blocks (2 (s / cp) b
// kv-heads x head-dim bf16, over TP) go round the CP ring in cp - 1 steps per layer, each step's
// send overlapped with the attention of the block before it; only the part of a send longer than
// one block's attention (1 / cp of the layer's) shows. The backward sends K, V and their gradients
// (twice the bytes) against twice the compute; recomputation (full or selective) runs the ring
// again. Gradients are reduced, and ZeRO shards, over dp x cp (the ranks with the same weights).
// Ranks are laid out TP fastest, then CP, then DP (EP inside it), then PP, as Megatron-LM's
// default order tp-cp-ep-dp-pp.
#include "planner/Planner.hpp"

#include "common/Error.hpp"
#include "model/CostModel.hpp"
#include "model/Fit.hpp"
#include "planner/Calibration.hpp"
#include "planner/PlannerComm.hpp"
#include "planner/PlannerInternal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace paralens::core {

double FlashAttention2OnHopper() { return 35.0 / 75.0; }

namespace {

// The H100's measured BF16 matmul ceiling (a share of its peak): the GPU and dtype `efficiency`
// describes (0: unmeasured).
double ReferenceCeiling()
{
    static const double reference = [] {
        const GpuSpec* h100 = FindGpu("h100-sxm");
        return h100 ? h100->MatmulCeiling("bf16") : 0.0;
    }();
    return reference;
}

} // namespace

double PlanCluster::EfficiencyFor(std::string_view dt) const
{
    const double ceiling = gpu.MatmulCeiling(dt), reference = ReferenceCeiling();
    return ceiling > 0 && reference > 0 ? efficiency * ceiling / reference : efficiency;
}

double PlanCluster::GemmHalfFlops(std::string_view dt) const
{
    if (gemmTflops > 0) return kGemmFixedSec * gemmTflops * 1e12 * gpu.PeakFlops(dt) / PeakFlops();
    const double measured = gpu.MatmulCeiling(dt), reference = ReferenceCeiling();
    return kGemmFixedSec * gpu.PeakFlops(dt) * (measured > 0 ? measured : reference > 0 ? reference : 1.0);
}

std::string MatmulCeilingsText()
{
    std::string out;
    char buf[64];
    for (const GpuSpec& g : HardwareTable())
        for (const auto& [dt, tflops] : g.mamfTflops) {
            if (g.id == "h100-sxm" && dt == "bf16") continue;
            std::snprintf(buf, sizeof buf, "%s%s %s %.1f%%", out.empty() ? "" : ", ", g.id.c_str(), dt.c_str(), g.MatmulCeiling(dt) * 100);
            out += buf;
        }
    std::snprintf(buf, sizeof buf, "; against h100-sxm bf16 %.1f%%", ReferenceCeiling() * 100);
    return out + buf;
}

double FlashAttentionBlockFactor(double blockTokens)
{
    // FlashAttention-3 on an H100, head dim 128, BF16, forward, 16K tokens a batch (pytorch/benchmark
    // commit ff65cb675209d2308f7d27c6920af8a32de9aa90, PR #2391): 430, 517, 566, 590, 614 and 621
    // TFLOPS at 512 to 16K tokens; as a fraction of the 16K rate, interpolated in log2 of the length,
    // flat beyond the ends.
    static constexpr double kLog2[] = {9, 10, 11, 12, 13, 14};
    static constexpr double kRate[] = {430.32, 517.099, 565.544, 590.233, 614.234, 620.73};
    const double x = std::log2(std::max(blockTokens, 1.0));
    if (x <= kLog2[0]) return kRate[0] / kRate[5];
    for (int i = 1; i < 6; ++i)
        if (x <= kLog2[i]) {
            const double t = (x - kLog2[i - 1]) / (kLog2[i] - kLog2[i - 1]);
            return (kRate[i - 1] + t * (kRate[i] - kRate[i - 1])) / kRate[5];
        }
    return 1.0;
}

namespace {

// Uneven stages: a pipeline, every stage at least one layer per model chunk, the counts adding up.
void CheckStages(const TransformerModel& m, const TrainingConfig& c)
{
    Require(c.pp >= 2, "--first-stage-layers and --last-stage-layers need a pipeline (pp >= 2)");
    Require(c.firstStageLayers >= 0 && c.lastStageLayers >= 0, "stage layer counts must not be negative");
    const int others = c.pp - (c.firstStageLayers > 0) - (c.lastStageLayers > 0);
    const int rest = m.layers - c.firstStageLayers - c.lastStageLayers;
    const std::string given = (c.firstStageLayers > 0 ? "--first-stage-layers " + Num(c.firstStageLayers) : std::string()) +
                              (c.firstStageLayers > 0 && c.lastStageLayers > 0 ? " and " : "") +
                              (c.lastStageLayers > 0 ? "--last-stage-layers " + Num(c.lastStageLayers) : std::string());
    if (others == 0)
        Require(rest == 0, given + " must add up to --layers " + Num(m.layers) + " on 2 stages");
    else
        Require(rest >= others * c.chunks, given + " leave " + Num(rest) + " of --layers " + Num(m.layers) + " for " + Num(others) +
                                               " other stages of " + Num(c.chunks) + " chunks (at least one layer each)");
    for (int v : {c.firstStageLayers, c.lastStageLayers})
        Require(v == 0 || v >= c.chunks, given + ": each stage needs at least v " + Num(c.chunks) + " layers (one per chunk)");
}

void CheckConfig(const PlanRequest& r, const TrainingConfig& c)
{
    const TransformerModel& m = r.model;
    Require(c.dp >= 1 && c.tp >= 1 && c.pp >= 1 && c.ep >= 1 && c.microBatch >= 1, "degrees and the micro-batch size must be at least 1");
    Require(c.cp >= 1, "cp must be at least 1");
    Require(c.dp * c.tp * c.pp * c.cp == r.cluster.gpus, "dp " + Num(c.dp) + " x tp " + Num(c.tp) + " x pp " + Num(c.pp) +
                                                             (c.cp > 1 ? " x cp " + Num(c.cp) : "") + " = " + Num(c.dp * c.tp * c.pp * c.cp) +
                                                             " GPUs, not --gpus " + Num(r.cluster.gpus));
    if (c.cp > 1) {
        Require(r.Seq() % (2 * c.cp) == 0, "--seq " + Num(r.Seq()) + " is not divisible by 2 x cp " + Num(c.cp) +
                                               " (context parallelism cuts each sequence into 2 cp chunks)");
        Require(r.flashAttention, "cp " + Num(c.cp) + " needs flash attention (ring attention never stores the scores): drop --no-flash-attention");
    }
    Require(m.heads % c.tp == 0, "--heads " + Num(m.heads) + " is not divisible by tp " + Num(c.tp));
    Require(m.kvHeads % c.tp == 0, "--kv-heads " + Num(m.kvHeads) + " is not divisible by tp " + Num(c.tp));
    Require(m.ffn % c.tp == 0, "--ffn " + Num(m.ffn) + " is not divisible by tp " + Num(c.tp));
    Require(c.layout || c.pp * c.chunks <= m.layers, "pp " + Num(c.pp) + " x v " + Num(c.chunks) + " stages exceed --layers " + Num(m.layers));
    Require(r.globalBatch % (c.dp * c.microBatch) == 0, "--global-batch " + Num(r.globalBatch) + " is not divisible by dp " +
                                                             Num(c.dp) + " x micro-batch " + Num(c.microBatch));
    Require(c.zero >= 0 && c.zero <= 3, "--zero must be 0, 1, 2 or 3 (got " + Num(c.zero) + ")");
    if (m.IsMoe()) {
        Require(m.experts % c.ep == 0, "--experts " + Num(m.experts) + " is not divisible by ep " + Num(c.ep));
        Require(c.dp % c.ep == 0, "ep " + Num(c.ep) + " must divide dp " + Num(c.dp) + " (experts are spread over data-parallel ranks)");
    } else {
        Require(c.ep == 1, "ep " + Num(c.ep) + " needs a mixture-of-experts model (--experts)");
    }
    Require(c.chunks == 1 || c.schedule == ScheduleKind::Interleaved, "v (--chunks) > 1 needs the interleaved schedule");
    if (c.layout) {
        Require(c.pp == c.layout->pp && c.chunks == c.layout->chunks,
                "--pp-layout '" + c.layout->text + "' lays out pp " + Num(c.layout->pp) + " x v " + Num(c.layout->chunks) + ", not pp " + Num(c.pp) +
                    " x v " + Num(c.chunks));
        CheckPipelineLayout(*c.layout, m);
    } else if (c.Uneven()) {
        CheckStages(m, c);
    }
    Require(c.schedule != ScheduleKind::PipeDream && c.schedule != ScheduleKind::Naive,
            "the planner times synchronous pipelines: gpipe, 1f1b, interleaved, zb-h1");
}

} // namespace

Shape ShapeOf(const PlanRequest& r, const TrainingConfig& c)
{
    Shape s;
    s.seq = r.Seq();
    // The stage whose layers weigh most by forward FLOPs a token bounds the pipeline: the last holds
    // the output layer and the loss too (and the multi-token prediction modules, each a layer, a
    // projection and the output layer again, as Megatron-Core places them), a layout wherever it
    // puts them. An even or first/last split's middle stages are alike, so stages 0 and 1 stand for
    // them; on a tie the last stage bounds.
    const TransformerModel& m = r.model;
    double heaviest = -1.0;
    auto weigh = [&](int stage) {
        const PipelineLayout::Part p = StageContent(m, c, stage);
        const double flops = PartFlops(m, r.Seq(), p);
        if (flops <= heaviest) return;
        heaviest = flops;
        s.layers = p.layers + p.mtp, s.head = (p.loss ? 1.0 : 0.0) + p.mtp, s.mtp = p.mtp;
    };
    weigh(c.pp - 1);
    for (int stage = 0; stage < (c.layout ? c.pp - 1 : std::min(c.pp - 1, 2)); ++stage) weigh(stage);
    s.h = r.model.hidden;
    s.tokens = static_cast<double>(c.microBatch) * s.seq / c.cp;
    s.microBatches = r.globalBatch / (c.dp * c.microBatch);
    return s;
}

StageParams ParamsOn(const PlanRequest& r, const TrainingConfig& c, const Shape& s, int stage)
{
    const TransformerModel& m = r.model;
    StageParams p;
    // Every layer as a MoE layer (a mixture of experts' dense first layers hold fewer weights).
    const double denseLayer = m.AttentionParams() + (m.IsMoe() ? s.h * m.experts + m.sharedExperts * m.MlpParams() : m.MlpParams());
    // The multi-token prediction modules (on the last stage, or where a layout puts them): a layer
    // and a 2h x h projection each, and the input embedding again unless the stage holds it or it
    // is the output layer's (Megatron-Core keeps a copy beside them).
    const PipelineLayout::Part here = StageContent(m, c, stage);
    const double mtp = here.mtp;
    const double layers = here.layers + mtp;
    p.dense = (layers * denseLayer + mtp * m.MtpProjectionParams()) / c.tp;
    p.expert = m.IsMoe() ? layers * m.experts * m.MlpParams() / (static_cast<double>(c.ep) * c.tp) : 0.0;
    const double table = static_cast<double>(m.vocab) * m.hidden / c.tp;
    if (here.embedding) p.dense += table;
    if (here.loss && (!here.embedding || !m.tiedEmbeddings)) p.dense += table;
    if (mtp > 0 && !here.embedding && !m.tiedEmbeddings) p.dense += table;
    return p;
}

// Bytes a mixture of experts' token dispatch moves through HBM in one layer's forward per GPU, as
// Megatron-LM's all-to-all dispatcher does it (megatron/core/transformer/moe/token_dispatcher.py):
// the tokens permuted into top-k copies (k s b h read and written), sorted by local expert after
// the all-to-all and back before it (each k s b h read and written, with more than one expert on
// the GPU), and unpermuted into their weighted sum (k s b h read, s b h written); bf16. The
// all-to-alls themselves are communication (epComm).
double DispatchBytes(const TransformerModel& m, const TrainingConfig& c, double sbh)
{
    if (!m.IsMoe()) return 0.0;
    const double k = m.topK, passes = m.experts / c.ep > 1 ? 3.0 : 1.0; // permute (+ sort, unsort): read and write each
    return 2.0 * (2.0 * passes * k * sbh + k * sbh + sbh);
}

namespace {

// Activation bytes one micro-batch leaves stored per layer, and the working set of one layer.
double LayerActivationBytes(const PlanRequest& r, const TrainingConfig& c, const Shape& s)
{
    const TransformerModel& m = r.model;
    const double sbh = s.tokens * s.h, sbf = s.tokens * m.ffn * m.MlpsPerToken();
    // The linear layers' inputs (QKV and MLP-in among the whole-kept, attention output and MLP-out
    // among the split) take 1 byte instead of 2 with FP8; dropout masks 1 byte each, or none.
    const double fp8Saved = r.cluster.fp8 ? 1.0 : 0.0;
    double whole = (m.dropout ? 10.0 : 8.0) * sbh - 2.0 * fp8Saved * sbh;
    // MLA: the query and key-value latents and their normalized copies, each GPU all of them (the
    // down-projections are not split over TP).
    if (m.IsMla()) whole += 4.0 * s.tokens * (m.qLoraRank + m.kvLoraRank + m.ropeDim);
    // Q and the attention output (heads x head-dim wide), K and V (kv-heads x head-dim): 4 sbh + 4 sbh kv/a
    // when the heads span the hidden width.
    const double sbq = s.tokens * m.QueryWidth(), sbo = s.tokens * m.OutputWidth();
    const double sbkv = s.tokens * (m.KeyWidth() + m.ValueWidth()) / 2.0;
    double split = 2.0 * sbq + (2.0 - fp8Saved) * sbo + 4.0 * sbkv;
    if (!r.flashAttention && c.recompute == Recompute::None) split += (m.dropout ? 5.0 : 4.0) * m.heads * s.seq * s.tokens;
    split += ((m.Gated() ? 6.0 : 4.0) - fp8Saved) * sbf;
    // A mixture of experts' expert GEMMs read the routed copies, not the norm's output: each keeps
    // its input, top-k copies of every token (Transformer Engine's GroupedLinear saves it for the
    // weight gradient; fp8 with FP8).
    if (m.IsMoe()) split += (2.0 - fp8Saved) * m.topK * sbh;
    // Fine-grained recomputation drops what its modules output: the norms' outputs (the linear
    // inputs they feed), the experts' activation outputs, MLA's Q, K and V.
    const RecomputeModules& rm = r.recomputeModules;
    if (c.recompute != Recompute::Full) {
        if (rm.layernorm) whole -= (4.0 - 2.0 * fp8Saved) * sbh;
        if (rm.moeAct && m.IsMoe()) split -= (2.0 - fp8Saved) * s.tokens * m.ffn * m.topK;
        if (rm.mlaUpProj && m.IsMla()) split -= 2.0 * sbq + 4.0 * sbkv;
    }
    return c.sequenceParallel ? (whole + split) / c.tp : whole + split / c.tp;
}

} // namespace

MemoryBreakdown MemoryOn(const PlanRequest& r, const TrainingConfig& c, const Shape& s, int stage, double inFlight)
{
    MemoryBreakdown mb;
    const StageParams p = ParamsOn(r, c, s, stage);
    const double edp = static_cast<double>(c.GradientGroup()) / c.ep;
    auto sharded = [&](double bytesPerParam, int fromStage) {
        const bool on = c.zero >= fromStage;
        return bytesPerParam * (p.dense / (on ? c.GradientGroup() : 1.0) + p.expert / (on ? edp : 1.0));
    };
    mb.weights = sharded(2.0, 3);
    if (c.zero == 3 && c.GradientGroup() > 1) // two layers gathered whole at a time (the one running, the next prefetched)
        mb.weights += 2.0 * 2.0 * (r.model.LayerParams() - r.model.LayerExpertParams() + r.model.LayerExpertParams() / c.ep) / c.tp;
    mb.gradients = sharded(r.GradBytes(), 2);
    mb.optimizer = sharded(12.0, 1);
    const double layer = LayerActivationBytes(r, c, s);
    const PipelineLayout::Part here = StageContent(r.model, c, stage);
    const double layers = here.layers + here.mtp;
    double perMicroBatch = layers * layer, working = 0.0;
    if (c.recompute == Recompute::Full) {
        perMicroBatch = layers * 2.0 * s.tokens * s.h / (c.sequenceParallel ? c.tp : 1);
        working = layer;
    }
    mb.activations = inFlight * perMicroBatch + working;
    // The embedding's input ids (8 bytes a token) and dropout mask (1 byte an element) for each
    // micro-batch in flight on the first stage; the output layer's input and fp32 logits on the
    // last (both over TP, as Megatron-LM's theoretical memory counts them).
    if (here.embedding) mb.activations += inFlight * (8.0 * s.tokens + s.tokens * s.h) / c.tp;
    mb.activations += 4.0 * s.tokens * (s.h + r.model.vocab) * ((here.loss ? 1.0 : 0.0) + here.mtp) / c.tp;
    mb.stage = stage;
    mb.inFlight = inFlight;
    return mb;
}

namespace {

// Seconds memory-bound ops moving `bytes` in all take, each about `opBytes`: at the GPU's HBM
// bandwidth, or the calibrated fraction of it for kernels of that size (PlanCluster::hbmCurve).
double HbmSec(const PlanCluster& k, double bytes, double opBytes)
{
    const double hbm = k.gpu.hbmGBps * 1e9;
    if (hbm <= 0 || bytes <= 0) return 0.0;
    return bytes / (hbm * (k.hbmCurve.empty() ? 1.0 : EfficiencyAt(k.hbmCurve, opBytes)));
}

// The MLP activation's read and write per GPU over `mlps` MLPs a token (4 s b f, 6 gated), split over TP.
double ActivationOpBytes(const TransformerModel& m, const TrainingConfig& c, const Shape& s, double mlps)
{
    return (m.Gated() ? 6.0 : 4.0) * s.tokens * m.ffn * mlps / c.tp;
}

// Seconds the memory-bound ops of one layer's forward take per GPU (read + write, bf16): the two
// norms (8 s b h), the two dropout + residual adds (14 s b h), split over TP only with sequence
// parallelism, each op about 4 s b h; the MLP activation (4 s b f, 6 gated; x top-k for experts)
// split over TP, one op; a mixture of experts' token dispatch (DispatchBytes), each pass about
// 4 k s b h.
double ElementwiseSec(const PlanRequest& r, const TrainingConfig& c, const Shape& s)
{
    const TransformerModel& m = r.model;
    const double sbh = s.tokens * s.h / (c.sequenceParallel ? c.tp : 1);
    const double activation = ActivationOpBytes(m, c, s, m.MlpsPerToken());
    return HbmSec(r.cluster, 22.0 * sbh, 4.0 * sbh) + HbmSec(r.cluster, activation, activation) +
           HbmSec(r.cluster, DispatchBytes(m, c, sbh), 4.0 * m.topK * sbh);
}

// FP8 (Transformer Engine): each linear GEMM's input is cast to fp8 with a transposed copy for its
// weight gradient (read 2 bytes, write 1 + 1) in the forward, and each output's gradient in the
// backward: the QKV and MLP-in inputs (h wide, split over TP with sequence parallelism, cast
// before the fp8 all-gather), the out-projection's and MLP-out's (query width, ffn); backward the
// gradients of QKV's output (query + 2 kv width), MLP-in's (ffn, twice gated) and the two h-wide
// outputs. A mixture of experts casts each routed copy's MLP-in input and MLP-out output gradient.
// Weights are cast once a step (cached over micro-batches) and left out.
double Fp8CastBytes(const PlanRequest& r, const TrainingConfig& c, const Shape& s, bool backward)
{
    if (!r.cluster.fp8) return 0.0;
    const TransformerModel& m = r.model;
    const double f = static_cast<double>(m.ffn) * m.MlpsPerToken();
    const double qkv = m.QueryWidth() + m.KeyWidth() + m.ValueWidth(); // MLA: its up-projections' outputs, roughly
    const double whole = (1.0 + m.MlpsPerToken()) * s.h / (c.sequenceParallel ? c.tp : 1);
    const double split = backward ? (qkv + (m.Gated() ? 2.0 : 1.0) * f) / c.tp : (m.OutputWidth() + f) / c.tp;
    return 4.0 * s.tokens * (whole + split);
}

// Without flash attention: the fused scale-mask-softmax and dropout over the a s^2 b scores
// (read 2, write 2, dropout read 2, write 2 per element), split over TP by heads.
double ScoreBytes(const PlanRequest& r, const TrainingConfig& c, const Shape& s)
{
    return 8.0 * r.model.heads / c.tp * s.seq * s.tokens;
}

// GEMMs of one dtype: each of F FLOPs at the calibrated efficiency of its size (of the dtype's
// peak), or at `rate` x F / (F + F0) (PlanCluster::GemmHalfFlops).
struct GemmTimer {
    const PlanCluster& k;
    double peak, rate, f0;
    GemmTimer(const PlanCluster& cluster, std::string_view dt, double r)
        : k(cluster), peak(cluster.gpu.PeakFlops(dt)), rate(r), f0(cluster.GemmHalfFlops(dt)) {}
    double operator()(double flops) const
    {
        if (flops <= 0) return 0.0;
        return k.gemmCurve.empty() ? (flops + f0) / rate : flops / (peak * EfficiencyAt(k.gemmCurve, flops));
    }
};

// The output layer's GEMM of `flops` on one GPU, in the GEMMs' dtype.
double HeadSec(const PlanCluster& k, double flops) { return GemmTimer(k, k.dtype, k.GemmFlops())(flops); }

// One MLP's two (gated: three) GEMMs over `tokens` on one GPU, split over TP.
double MlpGemmsSec(const TransformerModel& m, const TrainingConfig& c, double h, double tokens, const GemmTimer& at)
{
    const double f = m.ffn;
    return at(2.0 * tokens * h * f * (m.Gated() ? 2.0 : 1.0) / c.tp) + at(2.0 * tokens * f * h / c.tp);
}

// The linear GEMMs' timer: fp8 or the GEMMs' dtype.
GemmTimer LinearTimer(const PlanCluster& k) { return GemmTimer(k, k.fp8 ? "fp8" : std::string_view(k.dtype), k.LinearFlops()); }

// One layer's experts' GEMMs for one micro-batch (0 for a dense model): the tokens routed to each
// of the GPU's experts, one GEMM per expert; the shared experts see every token.
double ExpertGemmsSec(const PlanRequest& r, const TrainingConfig& c, const Shape& s)
{
    const TransformerModel& m = r.model;
    if (!m.IsMoe()) return 0.0;
    const GemmTimer at = LinearTimer(r.cluster);
    const double expertsHere = static_cast<double>(m.experts) / c.ep;
    return expertsHere * MlpGemmsSec(m, c, s.h, s.tokens * m.topK / m.experts * c.ep, at) + m.sharedExperts * MlpGemmsSec(m, c, s.h, s.tokens, at);
}

// The linear GEMMs of the bounding stage's layers for one micro-batch, each at the efficiency of
// its size (GemmTimer): QKV, attention output, MLP in and out (or `expertsSec`, a layer's
// ExpertGemmsSec), the router.
double LinearGemmsSec(const PlanRequest& r, const TrainingConfig& c, const Shape& s, double expertsSec)
{
    const TransformerModel& m = r.model;
    const GemmTimer at = LinearTimer(r.cluster);
    const double t = s.tokens, h = s.h, out = m.OutputWidth() * h;
    const double router = m.IsMoe() ? at(2.0 * t * h * m.experts / c.tp) : 0.0; // h x experts, as LayerActiveParams counts it
    const double mlp = m.IsMoe() ? expertsSec : MlpGemmsSec(m, c, h, t, at);
    return s.layers * (at(2.0 * t * (m.AttentionParams() - out) / c.tp) + at(2.0 * t * out / c.tp) + router + mlp);
}

// What fine-grained recomputation runs again in one micro-batch's backward (s.layers layers): the
// two norms (read and write, 8 s b h), the experts' activation (as ElementwiseSec counts it), MLA's
// up-projection GEMMs (the latents to the heads' query, key and value widths).
double ModulesRecomputeSec(const PlanRequest& r, const TrainingConfig& c, const Shape& s)
{
    const RecomputeModules& rm = r.recomputeModules;
    if (!rm.Any() || c.recompute == Recompute::Full) return 0.0;
    const TransformerModel& m = r.model;
    const double sbh = s.tokens * s.h / (c.sequenceParallel ? c.tp : 1);
    double layer = 0.0;
    if (rm.layernorm) layer += HbmSec(r.cluster, 8.0 * sbh, 4.0 * sbh);
    if (rm.moeAct && m.IsMoe()) {
        const double act = ActivationOpBytes(m, c, s, m.topK); // the routed experts', not the shared ones'
        layer += HbmSec(r.cluster, act, act);
    }
    if (rm.mlaUpProj && m.IsMla()) {
        const GemmTimer at = LinearTimer(r.cluster);
        layer += at(2.0 * s.tokens * m.MlaQueryUpParams() / c.tp) + at(2.0 * s.tokens * m.MlaKeyValueUpParams() / c.tp);
    }
    return s.layers * layer;
}

// One layer's compute as the EP overlap pairs it (OverlapEp): its experts' GEMMs (`expertsSec`)
// and the rest, of the stage's layers' `forward` and `backward` (all of them, one micro-batch).
MoeLayerCompute MoeLayerOf(const Shape& s, double expertsSec, double forward, double backward)
{
    MoeLayerCompute l;
    l.expertsF = expertsSec;
    l.expertsB = 2.0 * l.expertsF;
    l.attentionF = forward / s.layers - l.expertsF;
    l.attentionB = backward / s.layers - l.expertsB;
    return l;
}

constexpr double kLossForwardBytes = 24, kLossBackwardBytes = 12; // per fp32 logit (see OpCostsOf)

// One collective of `bytesPerParam` x the stage's parameters over the ranks holding the same
// weights: the dense ones over dp x cp (TP apart), the experts' over dp x cp / ep (TP x EP apart).
double WeightGroupSec(const PlanRequest& r, const TrainingConfig& c, const Shape& s, Collective collective, double bytesPerParam)
{
    const StageParams p = ParamsOn(r, c, s, 0);
    const int group = c.GradientGroup();
    const bool inNode = static_cast<long>(c.tp) * group <= r.cluster.gpusPerNode;
    const long tp = c.tp, tpEp = static_cast<long>(c.tp) * c.ep;
    return CollectiveSec(collective, group, bytesPerParam * p.dense, LinkModel{r.cluster, inNode, PerNode(r.cluster, tp, group)}) +
           CollectiveSec(collective, group / c.ep, bytesPerParam * p.expert,
                         LinkModel{r.cluster, inNode, PerNode(r.cluster, tpEp, group / c.ep)});
}

// One layer's attention products on this GPU, forward, averaged over the model's layers. A
// calibrated attention efficiency is what the profile's blocks reached; otherwise the GEMM rate,
// scaled by how FlashAttention's rate falls with the keys a query visits (FlashAttentionBlockFactor
// of the sequence, or its 1 / cp under ring attention). A windowed layer's kernel visits the
// window's keys and the rest of the 128-key tile the window starts in (FlashAttention skips whole
// tiles only), every product of them computed, where a causal full layer computes half its square:
// 2 (window + 128) / seq of the full square's time, at the rate of a sequence that long.
double AttentionLayerSec(const PlanRequest& r, const TrainingConfig& c, const Shape& s)
{
    const TransformerModel& m = r.model;
    const PlanCluster& k = r.cluster;
    // flash-attn 2 on Hopper: a calibrated efficiency already measured the kernel the run had.
    const double fa2 = r.flashAttention2 && k.gpu.arch == "Hopper" ? FlashAttention2OnHopper() : 1.0;
    auto rate = [&](double keys) {
        return k.attentionEfficiency > 0 ? k.PeakFlops() * k.attentionEfficiency
                                         : k.GemmFlops() * k.gpu.AttentionVsGemm() * fa2 * FlashAttentionBlockFactor(keys);
    };
    const double fullSquare = 2.0 * s.tokens * s.seq * (m.QueryWidth() + m.OutputWidth()) / c.tp;
    const double full = fullSquare / rate(s.seq / c.cp);
    if (!m.IsWindowed()) return full;
    const double visited = std::min(s.seq / c.cp, 2.0 * (m.window + 128.0));
    const double windowed = fullSquare * std::min(1.0, 2.0 * (m.window + 128.0) / s.seq) / rate(visited);
    const double share = static_cast<double>(m.WindowedLayers()) / m.layers;
    return (1.0 - share) * full + share * windowed;
}

} // namespace

OpCosts OpCostsOf(const PlanRequest& r, const TrainingConfig& c, const Shape& s)
{
    const TransformerModel& m = r.model;
    const PlanCluster& k = r.cluster;
    const double rate = k.GemmFlops(), linearRate = k.LinearFlops();
    Require(rate > 0, "the GPU " + k.gpu.id + " has no " + k.dtype + " peak in the spec table");
    Require(linearRate > 0, "--fp8: the GPU " + k.gpu.id + " has no fp8 peak in the spec table");
    OpCosts o;
    const double linearFlops = 2.0 * s.tokens * m.LayerActiveParams();
    const double attentionFlops = s.tokens * m.AttentionScoreFlopsPerToken(r.Seq()) / m.layers; // a layer's, on average
    const double attentionSec = AttentionLayerSec(r, c, s); // a layer's on this GPU, on average
    const double headFlops = s.head * 2.0 * s.tokens * static_cast<double>(m.vocab) * m.hidden; // the last stage's
    // The output layer, and each multi-token prediction module's 2h x h projection (a linear GEMM).
    const double mtpProjection = s.mtp * 2.0 * s.tokens * m.MtpProjectionParams() / c.tp;
    const double headSec = HeadSec(k, headFlops / c.tp) + (s.mtp > 0 ? s.mtp * LinearTimer(k)(mtpProjection / s.mtp) : 0.0);
    // Without flash attention the scores' softmax and dropout run through HBM in every forward
    // (and, at the memory-bound ops' 2 x, backward), as the layers' other memory-bound ops do.
    const double softmaxSec = r.flashAttention ? 0.0 : s.layers * HbmSec(k, ScoreBytes(r, c, s), ScoreBytes(r, c, s) / 2.0);
    const double memoryBound = s.layers * ElementwiseSec(r, c, s) + softmaxSec;
    const double castOp = 4.0 * s.tokens * s.h / (c.sequenceParallel ? c.tp : 1); // one h-wide cast
    const double castF = s.layers * HbmSec(k, Fp8CastBytes(r, c, s, false), castOp),
                 castB = s.layers * HbmSec(k, Fp8CastBytes(r, c, s, true), castOp);
    const double expertsSec = ExpertGemmsSec(r, c, s); // a layer's
    const double linearSec = LinearGemmsSec(r, c, s, expertsSec), layersSec = linearSec + s.layers * attentionSec;
    const double gemmSec = layersSec + headSec;
    // The loss: Megatron-LM's vocabulary-parallel cross entropy over the fp32 logits (each GPU its
    // V / tp of them), memory-bound: the forward writes the bf16 logits, upcasts them, finds the
    // max, exponentiates and sums (24 bytes a logit), the backward reads the softmax and writes the
    // gradient (12); on the last stage, with the output layer.
    const double logits = s.tokens * static_cast<double>(m.vocab) / c.tp;
    const double lossF = s.head * HbmSec(k, kLossForwardBytes * logits, 12.0 * logits), // about two kernels each way
                 lossB = s.head * HbmSec(k, kLossBackwardBytes * logits, 6.0 * logits);
    o.computeF = gemmSec + memoryBound + castF + lossF;
    o.computeB = 2.0 * (gemmSec + memoryBound) + castB + lossB;
    const double scores = s.layers * attentionSec + softmaxSec; // what selective recomputation runs again
    const double modules = ModulesRecomputeSec(r, c, s);
    const double recomputed = c.recompute == Recompute::Full        ? layersSec + memoryBound + castF // the layers again, not the output layer or the loss
                              : c.recompute == Recompute::Selective ? scores + modules
                                                                    : modules;
    o.computeB += recomputed;
    o.parts.attention = 3.0 * s.layers * attentionSec;
    o.parts.gemms = 3.0 * gemmSec - o.parts.attention;
    o.parts.memoryBound = 3.0 * memoryBound + castF + castB + lossF + lossB;
    o.parts.recompute = recomputed;
    ParallelComm(r, c, s, s.layers > 0 ? linearSec / s.layers : 0.0, attentionSec, o);
    if (s.layers > 0 && r.epCommOverlap)
        OverlapEp(r, c, s, MoeLayerOf(s, expertsSec, layersSec + memoryBound + castF,
                                      2.0 * (layersSec + memoryBound) + castB + recomputed), o);
    const int group = c.GradientGroup();
    if (c.zero >= 2 && group > 1) {
        // ZeRO-3 gathers the stage's weights before each forward and backward. ZeRO-2 and 3 hold
        // only their shard of the gradients, so each micro-batch's backward reduce-scatters its
        // gradients (PyTorch FSDP and DeepSpeed without no_sync), on the links the gathers take.
        const double g = c.zero == 3 ? WeightGroupSec(r, c, s, Collective::AllGather, 2.0) : 0.0;
        const double rs = WeightGroupSec(r, c, s, Collective::ReduceScatter, r.GradBytes());
        const double slow = CommSlowdown(k.gpu); // the compute beside them on the SMs left
        o.gatherF = std::max(0.0, g - o.computeF) + std::min(g, o.computeF) * slow;
        o.gatherB = std::max(0.0, g + rs - o.computeB) + std::min(g + rs, o.computeB) * slow;
    }
    o.times.forward = o.computeF + o.tpF + o.cpF + o.epF + o.gatherF;
    o.times.backward = o.computeB + o.tpB + o.cpB + o.epB + o.gatherB;
    o.times.weight = gemmSec; // the weight-gradient GEMMs: the forward's FLOPs
    const bool ppInNode = static_cast<long>(c.tp) * group * 2 <= k.gpusPerNode;
    o.sendBytes = 2.0 * s.tokens * s.h / c.tp;
    o.times.send = SendSec(o.sendBytes, LinkModel{k, ppInNode}, &o.sendLink);
    o.flopsF = (s.layers * (linearFlops + attentionFlops) + headFlops) / c.tp + mtpProjection;
    return o;
}

namespace {

struct DpSync {
    double reduce = 0; // the gradients' all-reduce (ZeRO 0) or reduce-scatter
    double gather = 0; // ZeRO 1-2: the updated weights' all-gather
};

// ZeRO 0 all-reduces the gradients, ZeRO 1 reduce-scatters them, once a step; ZeRO 2 and 3
// reduce-scatter them in each backward (OpCosts' gathers). ZeRO 1 and 2 gather the updated
// weights after the step; ZeRO 3 gathers them per op.
DpSync DpSyncOf(const PlanRequest& r, const TrainingConfig& c, const Shape& s)
{
    DpSync out;
    if (c.zero <= 1) out.reduce = WeightGroupSec(r, c, s, c.zero == 0 ? Collective::AllReduce : Collective::ReduceScatter, r.GradBytes());
    if (c.zero == 1 || c.zero == 2) out.gather = WeightGroupSec(r, c, s, Collective::AllGather, 2.0);
    return out;
}

// What the step waits for of the sync. Without overlap: all of it but what hides under the last
// micro-batch's backward. With Megatron-LM's overlap, per model chunk (1 / v of each): a chunk's
// reduce starts as its last backward runs (bucket by bucket), so only what outlasts that backward
// shows, unless the v reduces queued on the link outlast the backward left after the first chunk
// finishes: (v - 1) rounds of min(pp, N) chunk backwards, and its own. The gathers mirror it under
// the next step's first forwards. What hides slows the compute beside it by `slow` (CommSlowdown).
double DpExposedSec(const DpSync& sync, const TrainingConfig& c, double forward, double backward, int microBatches, double slow)
{
    const double v = c.chunks, window = (v - 1.0) * std::min(c.pp, microBatches) + 1.0;
    auto hidden = [&](double comm, double compute) { // what shows, and the compute slowed beside the rest
        const double exposed = std::max({0.0, (comm - compute) / v, comm - window * compute / v});
        return exposed + (comm - exposed) * slow;
    };
    return hidden(sync.reduce, backward) + hidden(sync.gather, forward);
}

} // namespace

double ModelFlopsPerStep(const PlanRequest& r)
{
    return 3.0 * r.model.ForwardFlopsPerToken(r.Seq()) * static_cast<double>(r.globalBatch) * r.Seq();
}

double HardwareFlopsPerStep(const PlanRequest& r, Recompute rc)
{
    const double tokens = static_cast<double>(r.globalBatch) * r.Seq();
    const double f = r.model.ForwardFlopsPerToken(r.Seq()) * tokens;
    if (rc == Recompute::Full) return 4.0 * f;
    const TransformerModel& m = r.model;
    const double upProjections = r.recomputeModules.mlaUpProj && m.IsMla() // run again by fine-grained recomputation
                                     ? 2.0 * tokens * m.layers * (m.MlaQueryUpParams() + m.MlaKeyValueUpParams())
                                     : 0.0;
    if (rc == Recompute::Selective) return 3.0 * f + m.AttentionScoreFlopsPerToken(r.Seq()) * tokens + upProjections;
    return 3.0 * f + upProjections;
}

// Internal to the planner (PlannerSearch.cpp): memory with a given structure, and the timing.
MemoryBreakdown PlannerMemory(const PlanRequest& r, const TrainingConfig& c, const PipelineStructure* pipe)
{
    const Shape s = ShapeOf(r, c);
    // Without the schedule: a lower bound of what its first stage holds (GPipe all N, the others
    // at least 1F1B's min(pp, N); tests hold the built schedules to it), the last stage one (a
    // middle stage of uneven ones 1F1B's min(pp - stage, N)).
    auto inFlightOn = [&](int stage) {
        if (pipe) return pipe->peakInFlight[static_cast<size_t>(stage)];
        const int behind = c.Uneven() ? c.pp - stage : stage == 0 ? c.pp : 1;
        const double bound = c.schedule == ScheduleKind::GPipe ? s.microBatches : std::min(behind, s.microBatches);
        return c.pp > 1 && (stage == 0 || c.Uneven()) ? bound : 1.0;
    };
    // Evenly split, the middle stages hold no more than the first. A first/last split's middle
    // stages hold the same layers and differ only in their micro-batches in flight, so the first
    // of them with the most stands for them all (a layout's stages each count).
    MemoryBreakdown worst = MemoryOn(r, c, s, 0, inFlightOn(0));
    auto consider = [&](int stage) {
        const MemoryBreakdown m = MemoryOn(r, c, s, stage, inFlightOn(stage));
        if (m.Total() > worst.Total()) worst = m;
    };
    if (c.layout)
        for (int stage = 1; stage < c.pp - 1; ++stage) consider(stage);
    else if (c.Uneven() && c.pp > 2) {
        int most = 1;
        for (int stage = 2; stage < c.pp - 1; ++stage)
            if (inFlightOn(stage) > inFlightOn(most)) most = stage;
        consider(most);
    }
    if (c.pp > 1) consider(c.pp - 1);
    return worst;
}

void CheckPlannerConfig(const PlanRequest& r, const TrainingConfig& c) { CheckConfig(r, c); }

PipelineShape PipelineShapeOf(const PlanRequest& r, const TrainingConfig& c)
{
    return {c.schedule, c.pp, ShapeOf(r, c).microBatches, c.chunks};
}

PipelineOpTimes PipelineTimesOf(const PlanRequest& r, const TrainingConfig& c, const OpCosts& o, PipelineMemo& memo)
{
    PipelineOpTimes times = o.times;
    times.share = memo.Shares(r, c);
    return times;
}

StepBreakdown PlannerTime(const PlanRequest& r, const TrainingConfig& c, const PipelineStructure* pipe, bool breakdown, PipelineMemo* memo)
{
    const Shape s = ShapeOf(r, c);
    const OpCosts o = OpCostsOf(r, c, s);
    StepBreakdown t;
    t.forwardSec = o.times.forward;
    t.backwardSec = o.times.backward;
    t.weightSec = o.times.weight;
    t.sendSec = c.pp > 1 ? o.times.send : 0.0;
    const double N = s.microBatches, work = N * (o.times.forward + o.times.backward);
    double pipeline = work, freeSends = work;
    if (c.pp > 1 && pipe) {
        const std::vector<double> own = memo ? std::vector<double>{} : OpShares(r, c);
        PipelineOpTimes times = o.times;
        if (memo) times = PipelineTimesOf(r, c, o, *memo);
        else times.share = &own;
        pipeline = memo ? memo->Seconds(*pipe, times) : PipelineSeconds(*pipe, times);
        PipelineOpTimes free = times;
        free.send = 0.0;
        freeSends = !breakdown ? pipeline : memo ? memo->Seconds(*pipe, free) : PipelineSeconds(*pipe, free);
    }
    t.compute = N * (o.computeF + o.computeB);
    t.computeParts = {N * o.parts.gemms, N * o.parts.attention, N * o.parts.memoryBound, N * o.parts.recompute};
    t.tpComm = N * (o.tpF + o.tpB);
    t.cpComm = N * (o.cpF + o.cpB);
    t.epComm = N * (o.epF + o.epB);
    t.bubble = freeSends - work;
    t.ppComm = pipeline - freeSends;
    const DpSync sync = DpSyncOf(r, c, s);
    t.dpSyncSec = sync.reduce + sync.gather;
    t.dpExposedSec = r.dpCommOverlap   ? DpExposedSec(sync, c, o.times.forward, o.times.backward, s.microBatches, CommSlowdown(r.cluster.gpu))
                     : r.dpCommExposed ? t.dpSyncSec
                                       : std::max(0.0, t.dpSyncSec - o.times.backward) +
                                             std::min(t.dpSyncSec, o.times.backward) * CommSlowdown(r.cluster.gpu);
    t.dpComm = t.dpExposedSec + N * (o.gatherF + o.gatherB);
    const StageParams p = ParamsOn(r, c, s, 0);
    const double group = c.GradientGroup();
    const double local = p.dense / (c.zero >= 1 ? group : 1.0) + p.expert / (c.zero >= 1 ? group / c.ep : 1.0);
    t.optimizer = HbmSec(r.cluster, 32.0 * local, 32.0 * local / std::max(1.0, s.layers)); // a layer's parameters a launch
    t.step = pipeline + t.dpExposedSec + t.optimizer;
    return t;
}

void FinishRow(const PlanRequest& r, PlanRow& row, bool lowerBound)
{
    const double usable = r.cluster.UsableBytes();
    row.fits = row.memory.Total() <= usable;
    if (!row.fits) { // built in place: a search writes this for each of its tens of thousands of candidates that do not fit
        const std::string need = GbText(row.memory.Total()), have = GbText(usable), over = OverText(row.memory.Total() - usable);
        std::string& why = row.rejected;
        why.clear();
        why.reserve(48 + need.size() + have.size() + over.size());
        why.append(lowerBound ? "needs at least " : "needs ").append(need).append(" of ").append(have).append(": ").append(over).append(" over");
    }
    if (row.timed && row.time.step > 0) {
        const double peak = r.cluster.PeakFlops() * r.cluster.gpus * row.time.step;
        row.tokensPerSecond = static_cast<double>(r.globalBatch) * r.Seq() / row.time.step;
        row.mfu = ModelFlopsPerStep(r) / peak;
        row.hfu = HardwareFlopsPerStep(r, row.config.recompute) / peak;
    }
}

PlanRow Evaluate(const PlanRequest& r, const TrainingConfig& c)
{
    CheckModel(r.model);
    CheckConfig(r, c);
    PlanRow row;
    row.config = c;
    row.microBatches = ShapeOf(r, c).microBatches;
    std::shared_ptr<const PipelineStructure> pipe;
    if (c.pp > 1) {
        try {
            pipe = PipelineStructureOf(PipelineShapeOf(r, c));
        } catch (const Error& e) {
            throw Error(ConfigText(c) + ": " + e.what());
        }
    }
    row.memory = PlannerMemory(r, c, pipe.get());
    row.time = PlannerTime(r, c, pipe.get(), true);
    row.timed = true;
    FinishRow(r, row);
    return row;
}

} // namespace paralens::core
