// The model beside a measured pipeline: the schedule a Trace ran (named by its metadata, each
// stage's order read from its spans), the op times it ran at (read from its forward, backward and
// weight-gradient spans), and that schedule simulated at those times with free communication, the
// lectures' setting. This gives every schedule a model bubble beside its measured one, closed
// form or not (zb-h1, pipedream), and a closed form's assumptions (B = 2F, equal stages) are
// replaced by what the run measured.
// Pure functions of the Trace; used by `paralens run` on GPUs, `paralens analyze` and the window.
#pragma once

#include "analysis/DeviceUsage.hpp"
#include "schedule/Schedule.hpp"
#include "trace/Trace.hpp"

#include <optional>
#include <vector>

namespace paralens::core {

// The schedule named by a pipeline Trace's workload metadata (simulated: "kind" = "pipeline";
// run on GPUs or processes: "workload" = "pipeline"): kind, D, N, v, mini-batches, recomputation
// and the op times it was simulated at (the defaults for a run). Empty when
// the Trace is no pipeline or names no schedule paralens knows.
std::optional<PipelineSpec> PipelineSpecOf(const Trace& trace);

// The op times of a measured pipeline, as a PipelineSpec holds them: per whole stage (an op of one
// of v chunks times v), averaged over the stages' ops inside `windows` (all ops when empty; only
// iteration ops, of a step >= 0, when the Trace holds any: the warm-up is left out). For a
// schedule that splits W out of B, backwardSec is B + W, as PipelineSpec counts it.
struct MeasuredOpTimes {
    double forwardSec = 0.0, backwardSec = 0.0, weightSec = 0.0;
    std::vector<double> stageSlowdown; // each stage's summed op time over the stages' mean
    size_t ops = 0;                    // spans measured
};
// Empty when a stage has no forward or backward, or the Trace's stages are not spec.stages.
std::optional<MeasuredOpTimes> MeasureOpTimes(const Trace& trace, const std::vector<UsageWindow>& windows,
                                              const PipelineSpec& spec);

struct PipelineModelCheck {
    PipelineSpec spec;       // the schedule, at the measured op times (its order as the Trace recorded it)
    MeasuredOpTimes times;
    double measured = 0.0;   // the Trace's bubble, over its iterations (IterationWindows)
    double model = 0.0;      // the schedule simulated at the measured times, free communication
    double formula = -1.0;   // the lectures' closed form; < 0: none
};
// Empty when the Trace is no pipeline of a known schedule, its ops cannot be measured, or its
// metadata names a schedule that cannot be built (a file edited by hand): never throws for that.
std::optional<PipelineModelCheck> CheckPipelineModel(const Trace& trace);

} // namespace paralens::core
