// BuildPlan: each collective x algorithm as the lectures compose it (see FORMULAS.md).
#include "common/Error.hpp"
#include "plan/PlanAlgorithms.hpp"

#include <algorithm>

namespace paralens::core {

std::vector<uint64_t> SplitIntoBlocks(uint64_t bytes, int parts, uint64_t align)
{
    const uint64_t units = bytes / align;
    const uint64_t base = units / static_cast<uint64_t>(parts);
    const uint64_t extra = units % static_cast<uint64_t>(parts);
    std::vector<uint64_t> offsets(static_cast<size_t>(parts) + 1, 0);
    for (int i = 0; i < parts; ++i)
        offsets[i + 1] = offsets[i] + (base + (static_cast<uint64_t>(i) < extra ? 1 : 0)) * align;
    return offsets;
}

uint64_t Plan::WireBytes() const
{
    uint64_t total = 0;
    for (const Transfer& t : transfers)
        if (t.src != t.dst) total += t.bytes;
    return total;
}

namespace {

void Validate(const CollectiveSpec& s)
{
    Require(s.ranks >= 1, "ranks must be at least 1 (got " + std::to_string(s.ranks) + ")");
    Require(s.ranks <= 1 << 20, "ranks must be at most 1048576 (got " + std::to_string(s.ranks) + ")");
    Require(Supports(s.collective, s.algorithm),
            "algorithm '" + std::string(Name(s.algorithm)) + "' does not apply to " + std::string(Name(s.collective)) +
                "; accepted: " + AlgorithmNamesList(s.collective));
    Require(s.alignBytes >= 1, "alignBytes must be at least 1");
    Require(s.bytes % s.alignBytes == 0, std::to_string(s.bytes) + " bytes is not a whole number of " +
                                             std::to_string(s.alignBytes) + "-byte elements");
    if (HasRoot(s.collective))
        Require(s.root >= 0 && s.root < s.ranks, "root must be a rank from 0 to " + std::to_string(s.ranks - 1) +
                                                     " (got " + std::to_string(s.root) + ")");
    Require(s.ranksPerNode >= 0, "ranks per node must be at least 0 (got " + std::to_string(s.ranksPerNode) + ")");
    if (s.algorithm == Algorithm::Hierarchical || s.algorithm == Algorithm::HierarchicalTree)
        Require(s.ranksPerNode == 0 || s.ranks % s.ranksPerNode == 0,
                "the " + std::string(Name(s.algorithm)) + " algorithm needs whole nodes: " + std::to_string(s.ranks) + " ranks are not a multiple of " +
                    std::to_string(s.ranksPerNode) + " per node");
}

void AppendAllToAll(PlanWriter& w)
{
    Plan& plan = w.Target();
    const int p = w.Ranks();
    const uint64_t n = w.Bytes();
    // Rank j receives p pieces of BlockBytes(j): piece i (from rank i) at n + i * BlockBytes(j).
    auto slot = [&](int receiver, int sender) { return n + static_cast<uint64_t>(sender) * plan.BlockBytes(receiver); };
    w.BeginStep("local copy");
    for (int r = 0; r < p; ++r) {
        Segment s{plan.blockOffsets[r], slot(r, r), plan.BlockBytes(r)};
        w.Send(r, r, TransferOp::Copy, std::span<const Segment>(&s, 1), r);
    }
    for (int k = 1; k < p; ++k) {
        w.BeginStep("exchange");
        for (int r = 0; r < p; ++r) {
            int dst = (r + k) % p;
            Segment s{plan.blockOffsets[dst], slot(dst, r), plan.BlockBytes(dst)};
            w.Send(r, dst, TransferOp::Copy, std::span<const Segment>(&s, 1), dst);
        }
    }
}

void AppendSendRecv(PlanWriter& w)
{
    const int p = w.Ranks();
    const uint64_t n = w.Bytes();
    w.BeginStep("send/recv");
    for (int r = 0; r < p; ++r) {
        Segment s{0, n, n};
        w.Send(r, (r + 1) % p, TransferOp::Copy, std::span<const Segment>(&s, 1), -1);
    }
}

void AppendRooted(PlanWriter& w, Collective c, Algorithm a, int root)
{
    switch (c) {
    case Collective::Broadcast:
        if (a == Algorithm::Tree) AppendTreeBroadcast(w, root, "broadcast");
        else if (a == Algorithm::Naive) AppendNaiveBroadcast(w, root, "broadcast");
        else {
            AppendTreeScatter(w, root, "scatter");
            if (a == Algorithm::Ring) AppendRingAllGather(w);
            else AppendDoublingAllGather(w);
        }
        break;
    case Collective::Reduce:
        if (a == Algorithm::Tree) AppendTreeReduce(w, root, "reduce");
        else if (a == Algorithm::Naive) AppendNaiveReduce(w, root, "reduce");
        else {
            if (a == Algorithm::Ring) AppendRingReduceScatter(w);
            else AppendHalvingReduceScatter(w);
            AppendTreeGather(w, root, "gather");
        }
        break;
    case Collective::Scatter:
        if (a == Algorithm::Naive) AppendNaiveScatter(w, root, "scatter");
        else AppendTreeScatter(w, root, "scatter"); // ring: the tree is already bandwidth-optimal
        break;
    case Collective::Gather:
        if (a == Algorithm::Naive) AppendNaiveGather(w, root, "gather");
        else AppendTreeGather(w, root, "gather");
        break;
    default: break;
    }
}

void AppendUnrooted(PlanWriter& w, Collective c, Algorithm a)
{
    switch (c) {
    case Collective::AllGather:
        if (a == Algorithm::Ring) AppendRingAllGather(w);
        else if (a == Algorithm::HalvingDoubling) AppendDoublingAllGather(w);
        else if (a == Algorithm::Tree) { AppendTreeGather(w, 0, "gather"); AppendTreeBroadcast(w, 0, "broadcast"); }
        else { AppendNaiveGather(w, 0, "gather"); AppendNaiveBroadcast(w, 0, "broadcast"); }
        break;
    case Collective::ReduceScatter:
        if (a == Algorithm::Ring) AppendRingReduceScatter(w);
        else if (a == Algorithm::HalvingDoubling) AppendHalvingReduceScatter(w);
        else if (a == Algorithm::Tree) { AppendTreeReduce(w, 0, "reduce"); AppendTreeScatter(w, 0, "scatter"); }
        else { AppendNaiveReduce(w, 0, "reduce"); AppendNaiveScatter(w, 0, "scatter"); }
        break;
    case Collective::AllReduce:
        if (a == Algorithm::Ring) { AppendRingReduceScatter(w); AppendRingAllGather(w); }
        else if (a == Algorithm::Hierarchical || a == Algorithm::HierarchicalTree) AppendHierarchicalAllReduce(w, a == Algorithm::HierarchicalTree);
        else if (a == Algorithm::HalvingDoubling) AppendHalvingDoublingAllReduce(w);
        else if (a == Algorithm::RecursiveDoubling) AppendRecursiveDoublingAllReduce(w);
        else if (a == Algorithm::Tree) { AppendTreeReduce(w, 0, "reduce"); AppendTreeBroadcast(w, 0, "broadcast"); }
        else { AppendNaiveReduce(w, 0, "reduce"); AppendNaiveBroadcast(w, 0, "broadcast"); }
        break;
    case Collective::AllToAll: AppendAllToAll(w); break;
    case Collective::SendRecv: AppendSendRecv(w); break;
    default: break;
    }
}

} // namespace

Plan BuildPlan(const CollectiveSpec& spec)
{
    Validate(spec);
    Plan plan;
    plan.spec = spec;
    if (!HasRoot(spec.collective)) plan.spec.root = 0;
    plan.blockOffsets = SplitIntoBlocks(spec.bytes, spec.ranks, spec.alignBytes);
    plan.bufferBytes = spec.bytes;
    if (spec.collective == Collective::AllToAll) {
        uint64_t maxBlock = 0;
        for (int i = 0; i < spec.ranks; ++i) maxBlock = std::max(maxBlock, plan.BlockBytes(i));
        plan.bufferBytes = spec.bytes + maxBlock * static_cast<uint64_t>(spec.ranks);
    } else if (spec.collective == Collective::SendRecv) {
        plan.bufferBytes = 2 * spec.bytes;
    }
    // Reserve for the largest families (ring: 2p(p-1) messages; pairwise: p^2) to avoid regrowth.
    const size_t p = static_cast<size_t>(spec.ranks);
    const bool quadratic = spec.algorithm == Algorithm::Ring || spec.algorithm == Algorithm::Pairwise ||
                           spec.algorithm == Algorithm::Hierarchical || spec.algorithm == Algorithm::HierarchicalTree;
    const size_t estimate = quadratic ? 2 * p * p : 4 * p * 24;
    plan.transfers.reserve(estimate);
    plan.segments.reserve(estimate + estimate / 8);
    PlanWriter w(plan);
    if (HasRoot(spec.collective)) AppendRooted(w, spec.collective, spec.algorithm, plan.spec.root);
    else AppendUnrooted(w, spec.collective, spec.algorithm);
    w.Finish();
    return plan;
}

} // namespace paralens::core
