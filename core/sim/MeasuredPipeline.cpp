#include "sim/MeasuredPipeline.hpp"

#include "analysis/PipelineMetrics.hpp"
#include "sim/PipelineSimulator.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <climits>

namespace paralens::core {

namespace {

bool IsPipelineOp(SpanCategory c)
{
    return c == SpanCategory::Forward || c == SpanCategory::Backward || c == SpanCategory::WeightGrad;
}

bool Inside(const std::vector<UsageWindow>& windows, const Span& s)
{
    if (windows.empty()) return true;
    for (const UsageWindow& w : windows)
        if (s.startNs >= w.beginNs && s.endNs <= w.endNs) return true;
    return false;
}

bool IsRecompute(const Trace& trace, const Span& s) { return s.detail != 0 && trace.Str(s.detail) == "recompute"; }

PipeOpKind OpKindOf(SpanCategory c)
{
    return c == SpanCategory::Forward ? PipeOpKind::Forward : c == SpanCategory::Backward ? PipeOpKind::Backward : PipeOpKind::WeightGrad;
}

// The order each stage ran one iteration's ops in (the first iteration inside `windows`, or the
// whole Trace where its spans carry no step), read from the spans' starts. Empty where that is
// not `spec`'s whole schedule (an op missing or doubled, a stage too many): built as the run was.
std::optional<Schedule> RecordedSchedule(const Trace& trace, const std::vector<UsageWindow>& windows, const PipelineSpec& spec)
{
    int step = INT_MAX;
    for (const Track& tr : trace.Tracks())
        for (const Span& s : tr.spans)
            if (IsPipelineOp(s.category) && s.step >= 0 && Inside(windows, s)) step = std::min(step, s.step);
    Schedule out;
    out.spec = spec;
    for (const Device& d : trace.Devices()) {
        if (d.kind == DeviceKind::Cpu) continue;
        std::vector<const Span*> spans;
        for (uint32_t tr : d.tracks)
            for (const Span& s : trace.Tracks()[tr].spans)
                if (IsPipelineOp(s.category) && !IsRecompute(trace, s) && (step == INT_MAX || s.step == step)) spans.push_back(&s);
        if (spans.empty()) continue;
        std::stable_sort(spans.begin(), spans.end(), [](const Span* a, const Span* b) { return a->startNs < b->startNs; });
        std::vector<PipeOp>& ops = out.stages.emplace_back();
        for (const Span* s : spans) ops.push_back({OpKindOf(s->category), s->microBatch, std::max(0, s->chunk)});
    }
    if (!ValidateSchedule(out).ok) return std::nullopt;
    return out;
}

struct StageSums {
    double sec[3] = {0, 0, 0}; // forward, backward, weight gradient
    size_t count[3] = {0, 0, 0};
};

} // namespace

std::optional<PipelineSpec> PipelineSpecOf(const Trace& trace)
{
    const MetaSection& w = trace.Meta().workload;
    if (w.GetString("kind") != "pipeline" && w.GetString("workload") != "pipeline") return std::nullopt;
    const auto kind = ParseScheduleKind(w.GetString("schedule"));
    if (!kind) return std::nullopt;
    PipelineSpec spec;
    spec.kind = *kind;
    spec.stages = static_cast<int>(w.GetNumber("stages", 0));
    spec.microBatches = static_cast<int>(w.GetNumber("microbatches", 0));
    spec.chunks = std::max(1, static_cast<int>(w.GetNumber("chunks", 1)));
    spec.batches = std::max(1, static_cast<int>(w.GetNumber("batches", 1)));
    spec.recompute = w.GetNumber("recompute", 0) != 0; // a bool, or 0/1
    // The op times it was simulated at (a run on GPUs or processes records the defaults).
    spec.forwardSec = w.GetNumber("forwardMs", spec.forwardSec * 1e3) * 1e-3;
    spec.backwardSec = w.GetNumber("backwardMs", spec.backwardSec * 1e3) * 1e-3;
    spec.weightSec = w.GetNumber("weightMs", spec.weightSec * 1e3) * 1e-3;
    try {
        spec.stageSlowdown = ParseStageSlowdown(w.GetString("stageSlowdown"));
    } catch (const Error&) {
        spec.stageSlowdown.clear(); // none recorded (a run), or not numbers: all stages alike
    }
    if (static_cast<int>(spec.stageSlowdown.size()) != spec.stages) spec.stageSlowdown.clear();
    if (spec.stages < 1 || spec.microBatches < 1) return std::nullopt;
    return spec;
}

std::optional<MeasuredOpTimes> MeasureOpTimes(const Trace& trace, const std::vector<UsageWindow>& windows,
                                              const PipelineSpec& spec)
{
    bool anyStep = false;
    for (const Track& tr : trace.Tracks())
        for (const Span& s : tr.spans) anyStep = anyStep || (IsPipelineOp(s.category) && s.step >= 0);
    std::vector<StageSums> stages;
    MeasuredOpTimes out;
    for (const Device& d : trace.Devices()) {
        if (d.kind == DeviceKind::Cpu) continue;
        StageSums sums;
        for (uint32_t tr : d.tracks)
            for (const Span& s : trace.Tracks()[tr].spans) {
                if (!IsPipelineOp(s.category) || (anyStep && s.step < 0) || !Inside(windows, s)) continue;
                if (IsRecompute(trace, s)) continue; // counted in its backward's model
                const int k = static_cast<int>(OpKindOf(s.category)); // forward, backward, weight gradient
                sums.sec[k] += static_cast<double>(s.DurationNs()) * 1e-9;
                ++sums.count[k];
                ++out.ops;
            }
        if (sums.count[0] + sums.count[1] + sums.count[2] > 0) stages.push_back(sums);
    }
    if (static_cast<int>(stages.size()) != spec.stages) return std::nullopt;
    double sec[3] = {0, 0, 0}, total = 0;
    size_t count[3] = {0, 0, 0};
    for (const StageSums& s : stages) {
        if (s.count[0] == 0 || s.count[1] == 0) return std::nullopt;
        for (int k = 0; k < 3; ++k) {
            sec[k] += s.sec[k];
            count[k] += s.count[k];
            total += s.sec[k];
        }
    }
    const double v = spec.chunks;
    out.forwardSec = sec[0] / static_cast<double>(count[0]) * v;
    const double b = sec[1] / static_cast<double>(count[1]) * v;
    out.weightSec = count[2] > 0 ? sec[2] / static_cast<double>(count[2]) * v : 0.0;
    out.backwardSec = b + out.weightSec;
    const double mean = total / static_cast<double>(stages.size());
    for (const StageSums& s : stages) out.stageSlowdown.push_back(mean > 0 ? (s.sec[0] + s.sec[1] + s.sec[2]) / mean : 1.0);
    return out;
}

std::optional<PipelineModelCheck> CheckPipelineModel(const Trace& trace)
{
    const std::optional<PipelineSpec> spec = PipelineSpecOf(trace);
    if (!spec) return std::nullopt;
    const std::vector<UsageWindow> windows = IterationWindows(trace);
    const std::optional<MeasuredOpTimes> times = MeasureOpTimes(trace, windows, *spec);
    if (!times) return std::nullopt;
    // The order the run followed (as recorded; else built as the run built it), then timed at
    // what the run measured.
    Schedule schedule;
    if (std::optional<Schedule> recorded = RecordedSchedule(trace, windows, *spec)) {
        schedule = std::move(*recorded);
    } else {
        try {
            schedule = BuildSchedule(*spec);
        } catch (const Error&) {
            return std::nullopt; // e.g. interleaved with N not a multiple of D: the file's, not ours
        }
    }
    PipelineModelCheck c;
    c.spec = *spec;
    c.times = *times;
    c.spec.forwardSec = times->forwardSec;
    c.spec.backwardSec = times->backwardSec;
    // A schedule that keeps W inside B measured no W spans: its B is the whole backward.
    c.spec.weightSec = c.spec.SplitsWeightGrad() ? times->weightSec : -1.0;
    c.spec.stageSlowdown = times->stageSlowdown;
    c.spec.optimizerSec = 0.0;
    c.spec.activationBytes = 0;
    c.measured = ComputeBubbleFraction(trace, windows, PipelineWindow(trace));
    schedule.spec = c.spec;
    const PipelineSimResult sim = SimulatePipeline(schedule, FreeLinks(), true);
    c.model = sim.trace ? ComputeBubbleFraction(*sim.trace, PipelineWindow(*sim.trace)) : 0.0;
    c.formula = BubbleFractionFormula(c.spec);
    return c;
}

} // namespace paralens::core
