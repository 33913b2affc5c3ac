#include "planner/PlannerComm.hpp"

#include "planner/PlannerInternal.hpp"

#include "analysis/Extrapolation.hpp"
#include "model/Fit.hpp"

#include <algorithm>

namespace paralens::core {

int PerNode(const PlanCluster& k, long stride, int ranks)
{
    return static_cast<int>(std::clamp<long>(k.gpusPerNode / std::max(stride, 1L), 1, std::max(ranks, 1)));
}

namespace {

// alpha and beta of `c` of `bytes` on `ranks` ranks over `link`: between nodes, a network fit of a
// log across nodes read per NIC as NCCL runs it (analysis/Extrapolation.hpp NetworkLinkFromFit:
// each GPU of the group moves busbw factor x bytes through its NIC); else a measured fit's regime
// of that size (PlanCluster::nvlinkFit / networkFit, as simulate --model prices it); else the
// cluster's alpha and bandwidth. `perNic`: whether they are one NIC's between nodes (the cluster's
// --network-GBps, a fit read per NIC), or a fit's reading of its whole group's path (a log or a
// trace without hosts: its bus bandwidth already has all the NICs its group used).
struct LinkParams {
    CostParams params;
    bool perNic = false;
};

LinkParams ParamsFor(const LinkModel& link, Collective c, int ranks, double bytes)
{
    const PlanCluster& k = link.cluster;
    const std::shared_ptr<const FitFile>& fit = link.insideNode ? k.nvlinkFit : k.networkFit;
    if (fit && !link.insideNode)
        if (auto p = NetworkLinkFromFit(*fit, BusBwFactor(c, ranks) * bytes, k.nvlinkAlphaUs * 1e-6)) return {*p, true};
    if (fit)
        if (auto p = ModelFromFit(*fit, c, ranks, static_cast<uint64_t>(std::max(bytes, 1.0)), nullptr)) return {*p, false};
    const double gbps = link.insideNode ? k.NvlinkGBps() : k.networkGBps;
    return {CostParams{(link.insideNode ? k.nvlinkAlphaUs : k.networkAlphaUs) * 1e-6, gbps > 0 ? 1e-9 / gbps : 0.0, 0.0}, !link.insideNode};
}

// Context parallelism's ring per layer: what the cp - 1 steps' sends of `bytes` each add beyond
// the attention compute (`attentionSec` for the layer, 1 / cp of it per step) they overlap with.
double RingExposedSec(int cp, double bytes, double attentionSec, const LinkModel& link)
{
    if (cp <= 1) return 0.0;
    return (cp - 1) * std::max(0.0, SendSec(bytes, link) - attentionSec / cp);
}

} // namespace

// A collective on one level. Across nodes with q > 1 members of the group in each, NCCL's ring
// runs q channels, one through each member's NIC, each with 1/q of the bytes, while every GPU's
// NVLink carries all of them; the slower sets the pace (analysis/Extrapolation.hpp, its ring).
// A fit that already stands for its group's whole path takes all the bytes; an all-to-all's GPUs
// each send their own bytes through their own NIC.
double CollectiveSec(Collective c, int ranks, double bytes, const LinkModel& link)
{
    if (ranks <= 1 || bytes <= 0) return 0.0;
    const Algorithm a = c == Collective::AllToAll ? Algorithm::Pairwise : Algorithm::Ring;
    auto on = [&](const CostParams& p, double n) {
        return PredictSeconds(CollectiveSpec{c, a, ranks, static_cast<uint64_t>(n), 0, 1}, p).seconds;
    };
    const int q = link.perNode;
    if (!link.insideNode && q > 1 && c != Collective::AllToAll) {
        const LinkParams nic = ParamsFor(link, c, ranks, bytes / q);
        if (nic.perNic) {
            const LinkModel nvlink{link.cluster, true};
            return std::max(on(nic.params, bytes / q), on(ParamsFor(nvlink, c, ranks, bytes).params, bytes));
        }
    }
    return on(ParamsFor(link, c, ranks, bytes).params, bytes);
}

double SendSec(double bytes, const LinkModel& link, CostParams* used)
{
    const CostParams p = ParamsFor(link, Collective::SendRecv, 2, bytes).params;
    if (used) *used = p;
    return MessageSeconds(bytes, p);
}

double ReduceSec(bool split, int ranks, double bytes, const LinkModel& link)
{
    return split ? CollectiveSec(Collective::ReduceScatter, ranks, bytes, link) + CollectiveSec(Collective::AllGather, ranks, bytes, link)
                 : CollectiveSec(Collective::AllReduce, ranks, bytes, link);
}

// How much longer compute takes while a collective runs beside it: the collective's kernels hold
// 16 SMs (Transformer Engine's userbuffers take 16; NCCL's kernels one per channel, 16 or more
// between nodes), and the compute runs on the SMs left. Charged on the overlapped part of TP's
// (TpOverlapSec), DP's and ZeRO's collectives.
double CommSlowdown(const GpuSpec& gpu)
{
    constexpr double kCommSms = 16;
    const double sms = gpu.sms > kCommSms ? gpu.sms : 132.0;
    return sms / (sms - kCommSms) - 1.0;
}

// Transformer Engine's userbuffers overlap (Megatron-LM's --tp-comm-overlap) with its defaults
// (transformer_engine/pytorch/module/base.py, initialize_ub): the all-gathers before the QKV and
// MLP-in GEMMs (and in the backward before the out-projection's and MLP-out's dgrad) go by ring
// exchange, tp steps each under one tp-th of the GEMM, on copy engines; the reduce-scatters after
// the out-projection and MLP-out GEMMs are pipelined in 4 splits on 16 SMs taken from the GEMM (the
// last split shows); the QKV's and MLP-in's backward collectives run in bulk beside their dgrad and
// wgrad GEMMs, again on 16 SMs (the input's re-gather beside the dgrad is hidden, as Megatron-LM
// hides it without userbuffers too; the dgrad's reduce-scatter beside the wgrad). What a layer
// loses: the collectives' time its GEMMs do not cover, and those GEMMs slowed by the SMs given to
// communication. `one`: one all-gather or reduce-scatter of the layer's activations; `linear`:
// the layer's linear GEMMs, forward.
TpOverlap TpOverlapSec(const TransformerModel& m, const GpuSpec& gpu, int tp, double one, double linear)
{
    constexpr double kSplits = 4;
    const double slow = CommSlowdown(gpu); // a GEMM on the SMs left
    const double mlpOut = m.MlpParams() / (m.Gated() ? 3.0 : 2.0) * m.MlpsPerToken();
    const double rsShare = (m.hidden * m.OutputWidth() + mlpOut) / m.LayerActiveParams(); // out-projection + MLP-out
    const double gRs = rsShare * linear, gAg = linear - gRs;
    const double ring = (tp - 1.0) / tp;
    TpOverlap t;
    t.forward = std::max(0.0, 2.0 * one - ring * gAg)                                   // QKV, MLP-in: ring exchange
                + 2.0 * one / kSplits + std::max(0.0, 2.0 * one * (1 - 1 / kSplits) - gRs * (1 + slow)) // pipelined RS
                + gRs * slow;
    t.backward = std::max(0.0, 2.0 * one - ring * gRs)          // dgrad of out-projection, MLP-out: ring exchange
                 + std::max(0.0, 2.0 * one - gAg * (1 + slow))  // QKV, MLP-in: their dgrad's reduce-scatter beside the wgrad
                 + 2.0 * gAg * slow;                            // (the input's re-gather beside the dgrad, hidden as without)
    return t;
}

// Megatron-Core's batch-level EP overlap (--overlap-moe-expert-parallel-comm with
// --delay-wgrad-compute; megatron/core/pipeline_parallel/combined_1f1b.py and
// models/common/model_chunk_schedule_plan.py): a micro-batch's forward runs beside another's
// backward, layer by layer, the all-to-alls on a communication stream, each under the other's
// compute: the backward's combine under the attention forward; the forward's dispatch under the
// experts' data gradients; the backward's dispatch (after those) under the experts' delayed weight
// gradients and their forward; the forward's combine under the attention backward. Each of the
// four phases takes the longer of its all-to-all and its compute, and the compute beside an
// all-to-all runs on the SMs it leaves (CommSlowdown). What one layer of such a pair loses beyond
// its compute: without the overlap, all four all-to-alls.
double EpOverlapPairSec(double a2a, const MoeLayerCompute& layer, const GpuSpec& gpu)
{
    const double slow = CommSlowdown(gpu);
    const double beside[] = {layer.attentionF, layer.expertsB / 2.0, layer.expertsB / 2.0 + layer.expertsF, layer.attentionB};
    double lost = 0.0;
    for (double compute : beside) lost += std::max(0.0, a2a - compute) + std::min(a2a, compute) * slow;
    return lost;
}

// The parallel dimensions' communication of one micro-batch through the stage: the CP ring, the TP
// collectives (or what Transformer Engine's overlap leaves of them) and the EP all-to-alls, forward
// and backward (again for full recomputation). `linearSec` and `attentionSec`: one layer's linear
// GEMMs and attention products on this GPU, forward.
void ParallelComm(const PlanRequest& r, const TrainingConfig& c, const Shape& s, double linearSec, double attentionSec, OpCosts& o)
{
    const TransformerModel& m = r.model;
    const PlanCluster& k = r.cluster;
    const int recomputed = c.recompute == Recompute::Full ? 1 : 0;
    if (c.cp > 1) { // K and V of this GPU's tokens round the CP ring (TP splits the heads)
        const double kvBytes = 2.0 * s.tokens * (m.KeyWidth() + m.ValueWidth()) / c.tp;
        const LinkModel cpLink{k, static_cast<long>(c.tp) * c.cp <= k.gpusPerNode};
        const double ringF = s.layers * RingExposedSec(c.cp, kvBytes, attentionSec, cpLink);
        const double ringB = s.layers * RingExposedSec(c.cp, 2.0 * kvBytes, 2.0 * attentionSec, cpLink);
        o.cpF = ringF;
        o.cpB = ringB + (c.recompute == Recompute::None ? 0.0 : ringF);
    }
    const bool tpInNode = c.tp <= k.gpusPerNode;
    const double tpOne = ReduceSec(c.sequenceParallel, c.tp, 2.0 * s.tokens * s.h, LinkModel{k, tpInNode});
    o.tpF = s.layers * 2.0 * tpOne;
    o.tpB = s.layers * 2.0 * tpOne * (1 + recomputed);
    if (r.tpCommOverlap && c.tp > 1) {
        const TpOverlap ov = TpOverlapSec(m, k.gpu, c.tp, tpOne / 2.0, linearSec);
        o.tpF = s.layers * ov.forward;
        o.tpB = s.layers * (ov.backward + recomputed * ov.forward);
    }
    if (m.IsMoe() && c.ep > 1) {
        const double bytes = 2.0 * s.tokens * m.topK * s.h / (c.sequenceParallel ? c.tp : 1);
        const double a2a = CollectiveSec(Collective::AllToAll, c.ep, bytes, LinkModel{k, static_cast<long>(c.ep) * c.tp * c.cp <= k.gpusPerNode});
        o.epF = s.layers * 2.0 * a2a;
        o.epB = s.layers * 2.0 * a2a * (1 + recomputed);
    }
}

// Under the batch-level EP overlap (PlanRequest::epCommOverlap) a stage's forwards and backwards
// pair up but for those its schedule runs alone: without a pipeline the first forward and the last
// backward; interleaved, the warm-up forwards and cool-down backwards, (pp - 1 - rank) 2 + (v - 1) pp
// of each on stage `rank` (Megatron-LM's schedules.py), pp - 1 + (v - 1) pp on average. An op alone
// pays its two all-to-alls, a paired one half its pair's loss (EpOverlapPairSec). Memory is as
// without: the backward frees a layer's activations as the forward beside it stores one.
void OverlapEp(const PlanRequest& r, const TrainingConfig& c, const Shape& s, const MoeLayerCompute& layer, OpCosts& o)
{
    const bool allowed = c.ep > 1 && c.recompute != Recompute::Full && (c.pp == 1 || c.schedule == ScheduleKind::Interleaved);
    if (!r.epCommOverlap || !allowed || s.layers <= 0 || o.epF <= 0) return;
    const double a2a = o.epF / (2.0 * s.layers);
    const double ops = static_cast<double>(s.microBatches) * (c.pp > 1 ? c.chunks : 1);
    const double alone = std::min(ops, c.pp == 1 ? 1.0 : (c.pp - 1.0) + (c.chunks - 1.0) * c.pp) / ops;
    o.epF = o.epB = s.layers * (alone * 2.0 * a2a + (1.0 - alone) * EpOverlapPairSec(a2a, layer, r.cluster.gpu) / 2.0);
}

} // namespace paralens::core
