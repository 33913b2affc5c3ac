// Pipeline schedules as data: for each stage (device), the ordered list of its F, B and W ops,
// each tagged with its micro-batch and model chunk. A device with v chunks holds virtual stages
// c*D + d (Megatron's interleaving); F of (m, virtual stage k) needs F of (m, k-1), B of (m, k)
// needs B of (m, k+1) and F of (m, k), W of (m, k) needs B of (m, k).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

enum class ScheduleKind {
    Naive,        // layers split over devices, one micro-batch in flight at a time
    GPipe,        // all forwards, then all backwards
    OneFOneB,     // PipeDream-flush: warm-up forwards, then one forward one backward
    Interleaved,  // Megatron's interleaved 1F1B with v model chunks per device
    ZeroBubbleH1, // ZB-H1: 1F1B with the weight gradient (W) split from B, stage d running its first d Ws late
    PipeDream,    // asynchronous 1F1B with weight stashing: several mini-batches, no flush
};

std::string_view Name(ScheduleKind k);
std::optional<ScheduleKind> ParseScheduleKind(std::string_view name);
std::span<const ScheduleKind> AllScheduleKinds();
std::string ScheduleNamesList();

enum class PipeOpKind : uint8_t { Forward, Backward, WeightGrad };

struct PipeOp {
    PipeOpKind kind = PipeOpKind::Forward;
    int32_t microBatch = 0; // across mini-batches for pipedream: batch = microBatch / microBatches
    int32_t chunk = 0;      // model chunk on this device (0 .. v-1)
};

// Times are for one micro-batch through one whole stage (all of a device's chunks); an op of one
// chunk takes 1/v of it. Seconds; FLOPs per micro-batch per stage.
struct PipelineSpec {
    ScheduleKind kind = ScheduleKind::OneFOneB;
    int stages = 4;               // D
    int microBatches = 8;         // N per mini-batch
    int chunks = 1;               // v (interleaved only)
    int batches = 1;              // mini-batches in flight (pipedream only)
    double forwardSec = 1e-3;
    double backwardSec = -1.0;    // < 0: 2 x forward
    double weightSec = -1.0;      // the weight-gradient part of backward; < 0: half of backward
    uint64_t activationBytes = 0; // sent between consecutive stages per micro-batch (and gradients back)
    std::vector<double> stageSlowdown; // per stage time factor (empty: all 1)
    double forwardFlops = 0.0;    // model FLOPs of one micro-batch's forward through one stage (0: unknown)
    bool recompute = false;       // full activation recomputation: B re-runs F first
    double optimizerSec = 0.0;    // optimizer step after the flush (sync schedules)

    double BackwardSec() const { return backwardSec >= 0 ? backwardSec : 2.0 * forwardSec; }
    double WeightSec() const { return weightSec >= 0 ? weightSec : BackwardSec() / 2.0; }
    double Slowdown(int stage) const;
    int VirtualStages() const { return stages * chunks; }
    int TotalMicroBatches() const { return microBatches * (kind == ScheduleKind::PipeDream ? batches : 1); }
    bool SplitsWeightGrad() const { return kind == ScheduleKind::ZeroBubbleH1; }
};

struct Schedule {
    PipelineSpec spec;
    std::vector<std::vector<PipeOp>> stages; // per device, in execution order
};

// Builds the schedule. Throws Error naming the parameter for D < 1, N < 1, v < 1 with a schedule
// other than interleaved, interleaved with N not a multiple of D, negative times, ...
Schedule BuildSchedule(const PipelineSpec& spec);

// Stage slowdowns as text, "1,1,2,1" (--stage-slowdown, and a simulated trace's metadata): read
// (throws Error naming the part that is no number) and written back exactly.
std::vector<double> ParseStageSlowdown(std::string_view text);
std::string StageSlowdownText(const std::vector<double>& factors);

struct ScheduleCheck {
    bool ok = false;
    std::string message; // what is missing, doubled, out of order or deadlocked
};

// Proves the schedule runs every op exactly once on the right device, respects every dependency
// and cannot deadlock (executes it abstractly: each device runs its next op once its inputs are
// done, until all are done or none can move).
// When `order` is given and the schedule is valid, it receives ExecutionOrder's result.
ScheduleCheck ValidateSchedule(const Schedule& schedule, std::vector<std::pair<int, int>>* order = nullptr);
// The same, handing each op to `onRun(device, index)` as soon as it can run, in that order (so a
// simulation times the ops in the same pass, while each is at hand). Ops are handed only once the
// schedule's ops are known to be its own, each once; when it then deadlocks, those that could run
// have been handed.
ScheduleCheck ValidateSchedule(const Schedule& schedule, const std::function<void(int device, int index)>& onRun);

// The order in which (device, op index) pairs can run given the dependencies: a topological order
// consistent with each device's program order. Empty when the schedule deadlocks.
std::vector<std::pair<int, int>> ExecutionOrder(const Schedule& schedule);

// The lectures' bubble fraction for the schedule: (D-1)/D naive, (D-1)/(D-1+N) GPipe and 1F1B,
// (D-1)/(D-1+vN) interleaved; zb-h1 (N >= D) idles (D-1)(F + B - min(F, B, W)) per stage beside
// N(F + B + W) of work, B the input backward (ZB-H1's (D-1)(F + B - W) where W is the shortest;
// (D-1)/(D-1+3N) at equal times), at the spec's times and with stages alike. Negative where
// there is none (pipedream; zb-h1 with N < D).
double BubbleFractionFormula(const PipelineSpec& spec);

} // namespace paralens::core
