#include "planner/PlannerComm.hpp"

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

} // namespace paralens::core
