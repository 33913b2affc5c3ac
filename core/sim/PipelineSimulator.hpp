// A pipeline schedule simulated on the modelled cluster: the schedule's workload (see
// schedule/PipelineWorkload.hpp) run by SimulateWorkload, with the pipeline's metadata in the Trace
// (with free communication, the same tasks timed straight from the schedule: see below).
// Activations and gradients between stages cost alpha + bytes * beta of `link` (free by default).
#pragma once

#include "schedule/Schedule.hpp"
#include "sim/ClusterModel.hpp"
#include "trace/Trace.hpp"

#include <optional>

namespace paralens::core {

struct PipelineSimResult {
    double seconds = 0.0;         // makespan, the optimizer step included
    double pipelineSeconds = 0.0; // end of the last F/B/W: the window the bubbles are measured in
    std::optional<Trace> trace;   // one device per stage; F/B/W spans with micro-batch and chunk
};

// Validates the schedule first; throws Error with the reason when it is invalid or deadlocks.
// When communication is free (the lectures' setting, and the window's default) the ops are timed
// straight from the schedule; otherwise, and always in SimulatePipelineAsWorkload, through the
// schedule's PipelineWorkload and SimulateWorkload. Both give the same Trace (tested).
PipelineSimResult SimulatePipeline(const Schedule& schedule, const ClusterModel& link, bool buildTrace = true);
PipelineSimResult SimulatePipelineAsWorkload(const Schedule& schedule, const ClusterModel& link, bool buildTrace = true);

// A link model with free communication (alpha = 0, infinite bandwidth): the lectures' setting.
ClusterModel FreeLinks();

} // namespace paralens::core
