// The one runner of an Experiment on a real backend, for the window, `render` and the tests:
// what a backend can run (and why not), the backend's job (a core::Job: Trace snapshots while it
// runs, progress, Cancel, the report), and the RunResult the views show for a measured Trace,
// beside what the model predicts for the same parameters.
//   processes: an mpirun job of paralens itself on this machine (app/live/ProcessJob): a
//              collective's Plan as real messages between the processes, or a pipeline schedule
//              as stage processes passing real activations, each op a real CPU GEMM (OpenBLAS), or
//              a data-parallel training step with one worker (or parameter server) per process.
//   gpu:       this machine's GPUs (gpu/, StartGpuJob): the Plan executor on virtual ranks, the
//              pipeline runner on virtual stages; CUPTI or CUDA events.
// No ImGui or GL: the tests use it without a window. Thread-safe (free functions of their inputs).
#pragma once

#include "AppState.hpp"
#include "RunResult.hpp"

#include "gpu/RunRequest.hpp"
#include "run/Job.hpp"

#include <memory>
#include <string>

namespace paralens::app {

// Why `e` cannot run on its backend here ("" when it can): the backend is not built, no GPU, a
// kind of experiment the backend does not run, too many ranks. The controls grey the Run button
// out with this as the tooltip.
std::string BackendRefusal(const Experiment& e);
// Whether a backend exists in this build and on this machine at all ("" when it does).
std::string BackendAvailability(Backend b);

// Starts `e` on its backend (never the simulator). Throws Error for a refused experiment (the
// message is BackendRefusal's) and Unavailable when the backend cannot run here.
std::unique_ptr<core::Job> StartExperiment(const Experiment& e);

// The views' data for a measured Trace of `e` (a snapshot while it runs, or the final one with
// `report`): usage and bubbles, measured step time, bubble fraction, algbw/busbw and MFU next to
// the model's figures for the same parameters (alpha and beta of the experiment's cluster, the
// lectures' bubble formula), the model view with the measurement on it.
std::shared_ptr<const RunResult> MeasuredRun(const Experiment& e, std::shared_ptr<const core::Trace> trace,
                                             const core::RunReport* report = nullptr);

// What the GPU backend is asked for `e`: the Plan executor for a collective (virtual ranks when
// they outnumber the GPUs), the pipeline runner for a pipeline (virtual stages likewise).
gpu::RunRequest GpuRunRequest(const Experiment& e, int gpus);

// Runs `e` to its end on its backend and returns MeasuredRun of the final trace (for `render`).
// Throws what the job threw.
std::shared_ptr<const RunResult> RunToEnd(const Experiment& e);

} // namespace paralens::app
