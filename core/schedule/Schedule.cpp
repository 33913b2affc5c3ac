// The schedules' op orders, their validation and execution order.
#include "schedule/Schedule.hpp"

#include "common/CharConv.hpp"
#include "common/Error.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace paralens::core {

namespace {

constexpr std::array<ScheduleKind, 6> kKinds{ScheduleKind::Naive,       ScheduleKind::GPipe,        ScheduleKind::OneFOneB,
                                             ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1, ScheduleKind::PipeDream};

PipeOp F(int mb, int chunk = 0) { return {PipeOpKind::Forward, mb, chunk}; }
PipeOp B(int mb, int chunk = 0) { return {PipeOpKind::Backward, mb, chunk}; }

// Megatron's interleaved order: the k-th forward (or backward) of a device.
PipeOp InterleavedOp(int k, int D, int v, bool forward)
{
    const int group = k / (D * v);
    const int inGroup = k % (D * v);
    const int chunk = inGroup / D;
    const int mb = group * D + inGroup % D;
    return forward ? F(mb, chunk) : B(mb, v - 1 - chunk);
}

// Warm-up forwards, then one forward one backward, then cool-down backwards.
std::vector<PipeOp> OneFOneBOrder(int total, int warmup, const auto& forwardOp, const auto& backwardOp)
{
    std::vector<PipeOp> ops;
    ops.reserve(static_cast<size_t>(2 * total));
    for (int i = 0; i < warmup; ++i) ops.push_back(forwardOp(i));
    for (int i = 0; i < total - warmup; ++i) {
        ops.push_back(forwardOp(warmup + i));
        ops.push_back(backwardOp(i));
    }
    for (int i = total - warmup; i < total; ++i) ops.push_back(backwardOp(i));
    return ops;
}

// ZB-H1 (Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, section 3.1; PyTorch's
// ScheduleInterleavedZeroBubble with one chunk): 1F1B's forwards and input backwards with the
// weight gradient (W) split off; the device `lag` hops from the first runs its first `lag` Ws late,
// then a W after each B (oldest first), the `lag` left at the end. Its activations, held from F to
// W, peak at D on every device (the first's under 1F1B). For N >= D each device idles
// (D - 1)(F + B - min(F, B, W)) (BubbleFractionFormula; (D - 1) / (D - 1 + 3N) at equal times).
// The order does not depend on the times.
std::vector<PipeOp> ZeroBubbleH1Order(int total, int warmup, int lag)
{
    std::vector<PipeOp> ops;
    ops.reserve(static_cast<size_t>(3 * total));
    int weights = 0;
    for (int i = 0; i < warmup; ++i) ops.push_back(F(i));
    for (int k = 0; k < total; ++k) { // the k-th backward, after the forward 1F1B pairs it with
        if (warmup + k < total) ops.push_back(F(warmup + k));
        ops.push_back(B(k));
        if (k >= lag) ops.push_back({PipeOpKind::WeightGrad, weights++, 0});
    }
    while (weights < total) ops.push_back({PipeOpKind::WeightGrad, weights++, 0});
    return ops;
}

void CheckSpec(const PipelineSpec& s)
{
    Require(s.stages >= 1, "--stages must be at least 1 (got " + std::to_string(s.stages) + ")");
    Require(s.microBatches >= 1, "--microbatches must be at least 1 (got " + std::to_string(s.microBatches) + ")");
    Require(s.chunks >= 1, "--chunks must be at least 1 (got " + std::to_string(s.chunks) + ")");
    Require(s.chunks == 1 || s.kind == ScheduleKind::Interleaved,
            "--chunks applies to the interleaved schedule only (got " + std::to_string(s.chunks) + " chunks with " +
                std::string(Name(s.kind)) + ")");
    Require(s.batches >= 1, "--batches must be at least 1");
    Require(s.kind != ScheduleKind::Interleaved || s.microBatches % s.stages == 0,
            "interleaved 1F1B needs --microbatches to be a multiple of --stages (got N=" + std::to_string(s.microBatches) +
                ", D=" + std::to_string(s.stages) + ")");
    Require(std::isfinite(s.forwardSec) && s.forwardSec >= 0, "--t-forward-ms must be >= 0");
    Require(std::isfinite(s.BackwardSec()) && s.BackwardSec() >= 0, "--t-backward-ms must be >= 0");
    Require(s.WeightSec() <= s.BackwardSec(), "--t-weight-ms (the weight-gradient part of backward) must not exceed --t-backward-ms");
    Require(s.stageSlowdown.empty() || static_cast<int>(s.stageSlowdown.size()) == s.stages,
            "--stage-slowdown needs one factor per stage (" + std::to_string(s.stages) + ")");
    for (double f : s.stageSlowdown) Require(f > 0 && std::isfinite(f), "--stage-slowdown factors must be > 0");
    Require(static_cast<double>(s.TotalMicroBatches()) * s.VirtualStages() <= 5e7,
            "the schedule would have more than 50 million ops; use fewer stages, micro-batches or chunks");
}

} // namespace

std::string_view Name(ScheduleKind k)
{
    switch (k) {
    case ScheduleKind::Naive: return "naive";
    case ScheduleKind::GPipe: return "gpipe";
    case ScheduleKind::OneFOneB: return "1f1b";
    case ScheduleKind::Interleaved: return "interleaved";
    case ScheduleKind::ZeroBubbleH1: return "zb-h1";
    case ScheduleKind::PipeDream: return "pipedream";
    }
    return "?";
}

std::optional<ScheduleKind> ParseScheduleKind(std::string_view name)
{
    for (ScheduleKind k : kKinds)
        if (Name(k) == name) return k;
    if (name == "1F1B" || name == "pipedream-flush") return ScheduleKind::OneFOneB;
    if (name == "interleaved-1f1b") return ScheduleKind::Interleaved;
    if (name == "zb" || name == "zero-bubble") return ScheduleKind::ZeroBubbleH1;
    return std::nullopt;
}

std::span<const ScheduleKind> AllScheduleKinds() { return kKinds; }

std::string ScheduleNamesList()
{
    std::string out;
    for (ScheduleKind k : kKinds) out += (out.empty() ? "" : ", ") + std::string(Name(k));
    return out;
}

std::vector<double> ParseStageSlowdown(std::string_view text)
{
    std::vector<double> out;
    for (size_t at = 0; at <= text.size();) {
        const size_t comma = std::min(text.find(',', at), text.size());
        const std::string_view part = text.substr(at, comma - at);
        double f = 0;
        const auto r = FromChars(part.data(), part.data() + part.size(), f);
        Require(!part.empty() && r.ec == std::errc() && r.ptr == part.data() + part.size(),
                "--stage-slowdown: cannot read '" + std::string(part) + "' as a number (expected e.g. 1,1,2,1)");
        out.push_back(f);
        at = comma + 1;
    }
    return out;
}

std::string StageSlowdownText(const std::vector<double>& factors)
{
    std::string text;
    char buf[32];
    for (double f : factors) {
        if (!text.empty()) text += ',';
        text.append(buf, ToChars(buf, buf + sizeof buf, f).ptr);
    }
    return text;
}

double PipelineSpec::Slowdown(int stage) const
{
    return stageSlowdown.empty() ? 1.0 : stageSlowdown[static_cast<size_t>(stage)];
}

Schedule BuildSchedule(const PipelineSpec& spec)
{
    CheckSpec(spec);
    Schedule s;
    s.spec = spec;
    const int D = spec.stages, N = spec.microBatches, v = spec.chunks;
    s.stages.resize(static_cast<size_t>(D));
    for (int d = 0; d < D; ++d) {
        auto& ops = s.stages[static_cast<size_t>(d)];
        switch (spec.kind) {
        case ScheduleKind::Naive:
            for (int m = 0; m < N; ++m) ops.insert(ops.end(), {F(m), B(m)});
            break;
        case ScheduleKind::GPipe:
            for (int m = 0; m < N; ++m) ops.push_back(F(m));
            for (int m = 0; m < N; ++m) ops.push_back(B(m));
            break;
        case ScheduleKind::OneFOneB:
        case ScheduleKind::PipeDream: {
            const int total = spec.TotalMicroBatches();
            ops = OneFOneBOrder(total, std::min(D - d - 1, total), [](int i) { return F(i); }, [](int i) { return B(i); });
            break;
        }
        case ScheduleKind::Interleaved: {
            const int total = N * v;
            const int warmup = std::min((D - d - 1) * 2 + (v - 1) * D, total);
            ops = OneFOneBOrder(total, warmup, [&](int k) { return InterleavedOp(k, D, v, true); },
                                [&](int k) { return InterleavedOp(k, D, v, false); });
            break;
        }
        case ScheduleKind::ZeroBubbleH1: ops = ZeroBubbleH1Order(N, std::min(D - d - 1, N), d); break;
        }
    }
    return s;
}

double BubbleFractionFormula(const PipelineSpec& s)
{
    const double D = s.stages, N = s.microBatches, v = s.chunks;
    switch (s.kind) {
    case ScheduleKind::Naive: return (D - 1) / D;
    case ScheduleKind::GPipe:
    case ScheduleKind::OneFOneB: return (D - 1) / (D - 1 + N);
    case ScheduleKind::Interleaved: return (D - 1) / (D - 1 + v * N);
    case ScheduleKind::ZeroBubbleH1: {
        if (N < D) return -1.0; // the lagged Ws outnumber the backwards that would place them
        const double f = s.forwardSec, w = s.WeightSec(), b = s.BackwardSec() - w;
        const double idle = (D - 1) * (f + b - std::min({f, b, w})), work = N * (f + b + w);
        return idle + work > 0 ? idle / (idle + work) : 0.0;
    }
    default: return -1.0;
    }
}

} // namespace paralens::core
