// A planner row's training step simulated into a Trace: one pipeline of its TP groups at full
// detail (pp x tp devices, "stage s / tp t"): each op's compute and then its tensor-parallel (and
// expert-parallel) communication on the GPU's stream, the activations and gradients sent between
// stages as messages on the modelled network, then the part of the data-parallel gradient sync the
// last backward does not hide, and the optimizer step. The schedule is core's (BuildSchedule); op
// times and costs are the planner's (one model), so the simulated makespan is the planner's step
// time (tests hold them within 1%). Data-parallel replicas are identical and not drawn.
#pragma once

#include "planner/Planner.hpp"
#include "trace/Trace.hpp"

#include <optional>

namespace paralens::core {

struct PlanStepSimulation {
    double seconds = 0.0;         // the simulated step
    double predictedSeconds = 0.0; // the planner's
    std::optional<Trace> trace;
};

// Throws Error (Evaluate's) for an impossible configuration.
PlanStepSimulation SimulatePlanStep(const PlanRequest& request, const TrainingConfig& config, bool buildTrace = true);

} // namespace paralens::core
