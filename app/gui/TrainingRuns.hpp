// Training-step experiments for RunBuilder: the Workload generators of core/schedule run on the
// modelled cluster. Pure functions of their inputs; thread-safe.
#pragma once

#include "RunResult.hpp"

#include <memory>
#include <string>
#include <vector>

namespace paralens::app {

// "dp", "ps", "tp", "interop", "intraop", "moe".
const std::vector<std::string>& TrainingWorkloadNames();
// "data parallel, 4 workers, ring allreduce overlapped".
std::string TrainingTitle(const TrainingParams& t);
// The collective a training step is built around, for the flow view (dp's gradient allreduce,
// the parameter server's star, tp's activation allreduce); none for the others.
void AttachStepCollective(RunResult& r, const Experiment& e);
// Simulates the training step; throws Error naming the parameter.
std::shared_ptr<RunResult> BuildTraining(const Experiment& e);

// RunBuilder.cpp: MFU gauges and series of a run whose trace has FLOPs; the device usage in the
// run's window with the timeline's index.
void FillMfu(RunResult& r, double peakFlops, std::string source);
void FillUsage(RunResult& r);

} // namespace paralens::app
