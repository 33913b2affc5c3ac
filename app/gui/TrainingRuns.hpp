// Training-step experiments for RunBuilder: the Workload generators of core/schedule run on the
// modelled cluster. Pure functions of their inputs; thread-safe.
#pragma once

#include "RunResult.hpp"

#include "schedule/DataParallel.hpp"
#include "schedule/ExpertParallel.hpp"
#include "schedule/Workload.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace paralens::app {

// "dp", "ps", "tp", "interop", "intraop", "moe".
const std::vector<std::string>& TrainingWorkloadNames();
// "data parallel, 4 workers, ring allreduce overlapped".
std::string TrainingTitle(const TrainingParams& t);
// A training step's task graph, with what its generator says beside it (data parallelism's
// iterations, the experts' token counts): the one mapping of TrainingParams to core/schedule's
// generators, for the window, `paralens workload` and the processes backend.
struct TrainingWorkload {
    core::Workload workload{1};
    std::optional<core::DataParallelWorkload> dataParallel;
    std::optional<core::MoeWorkload> moe;
};

// The speed of `t`'s GEMMs: its GPU's dense peak for its dtype (the spec table) times the kernel
// efficiency. Throws Error naming the parameter.
core::DeviceSpeed TrainingSpeed(const TrainingParams& t);
// The data-parallel spec of a dp or ps step (`forwardFlopsPerLayer` from `peakFlops`).
core::DataParallelSpec DataParallelSpecOf(const TrainingParams& t, double peakFlops);
// Throws Error naming the parameter.
TrainingWorkload BuildTrainingWorkload(const TrainingParams& t, const core::DeviceSpeed& speed);

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
