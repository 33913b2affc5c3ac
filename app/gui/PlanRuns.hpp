// Training-plan experiments for RunBuilder: core/planner's search (Plan, as `paralens plan` runs
// it) and one ranked row's step simulated into a Trace (SimulatePlanStep), so the timeline, Stats
// and MFU views show it like any other run and the Planner tab shows the ranking. Pure functions of
// their inputs; thread-safe.
#pragma once

#include "RunResult.hpp"

#include "planner/PublishedSet.hpp"

#include <memory>
#include <string>
#include <vector>

namespace paralens::app {

// "plan: llama3-70b on 64 x h100-sxm, batch 128, row 1".
std::string PlanTitle(const PlanParams& p);
// Throws Error naming the parameter.
std::shared_ptr<RunResult> BuildTrainingPlan(const Experiment& e);
// The runs of the published set (core/planner/PublishedSet.hpp) the controls list, read once.
const std::vector<core::PublishedSetEntry>& PublishedRunList();
// Throws Error when `id` names no run of the set, or one the planner does not model (and why).
void CheckPublishedRun(const std::string& id);

} // namespace paralens::app
