// A pipeline Schedule as a Workload: one compute task per op (F, B, W; plus a recompute forward
// before each B when the spec asks for full activation recomputation), a message for every
// activation (forward) and gradient (backward) crossing devices, and an optimizer step after the
// flush. Tasks are added in a valid execution order, so each device's lane runs its schedule order.
#pragma once

#include "schedule/Schedule.hpp"
#include "schedule/Workload.hpp"

#include <vector>

namespace paralens::core {

// One op's time on `stage` (its share of the stage's time for its chunk, slowed as the spec says)
// and its model FLOPs; the span category it is drawn with.
struct PipeOpCost {
    double seconds;
    double flops;
};
PipeOpCost CostOf(const PipelineSpec& s, PipeOpKind kind, int stage);
SpanCategory CategoryOf(PipeOpKind kind);

struct PipelineWorkload {
    Workload workload{1};
    std::vector<TaskId> pipelineTasks; // the F/B/W (and recompute) tasks, for the bubble window
};

// Throws Error with ValidateSchedule's message when the schedule is invalid or deadlocks.
// `freeComm`: communication costs nothing, so no message tasks are made; an op then depends on its
// producer on the other device directly (the simulator draws that dependency as an arrow).
PipelineWorkload BuildPipelineWorkload(const Schedule& schedule, bool freeComm = false);

} // namespace paralens::core
