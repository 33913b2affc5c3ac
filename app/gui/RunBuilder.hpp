// Turns Experiments into RunResults: runs core (BuildPlan + Simulate, BuildSchedule +
// SimulatePipeline, ReadTraceFile) and the analysis the views show. Runs on a worker thread (or
// synchronously in `paralens render`); pure functions of their inputs apart from reading files.
// Errors are paralens::Error with a message naming the experiment's parameter or file.
#pragma once

#include "AppState.hpp"
#include "JobRunner.hpp"
#include "RunResult.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace paralens::app {

// `context` may be null (synchronous use); when it is cancelled the build stops early and returns
// null.
std::shared_ptr<const RunResult> BuildRun(const Experiment& experiment, JobContext* context = nullptr);
// The same, within a snapshot being built: a what-if finds the trace it replays among the runs
// `built` so far or in `previous` (else it reads the files).
std::shared_ptr<const RunResult> BuildRun(const Experiment& experiment, const Snapshot& built, const Snapshot* previous,
                                          JobContext* context);

// Runs every experiment, reusing the results in `previous` whose experiment did not change (so a
// slider re-simulates only what it touches), then the comparisons the Stats view shows
// (WhatIfRuns.hpp). Every finished run carries its critical path. Progress goes to `context`.
// Returns null when cancelled.
std::shared_ptr<const Snapshot> BuildSnapshot(const std::vector<Experiment>& experiments, const Snapshot* previous,
                                              JobContext* context = nullptr);

// The analysis of an already built Trace (a loaded file): usage, MFU when the trace has FLOPs.
std::shared_ptr<const RunResult> AnalyzeTrace(const Experiment& experiment, std::shared_ptr<const core::Trace> trace);

// The schedule's parameters of a pipeline experiment (times from forwardMs, the straggler as a slow
// stage, links only when it communicates); core builds the Schedule from it.
core::PipelineSpec PipelineSpecOf(const Experiment& e);

// The flow view's data for one collective (its Plan, the ranks' holdings after each step, their
// layout, each step's model time and end): timed by `timing` (a trace of that very Plan) or, when
// null, by simulating the Plan on `cluster`. Throws Error when the spec makes no Plan.
void AttachPlan(RunResult& r, const core::CollectiveSpec& spec, const ClusterParams& cluster, const core::Trace* timing = nullptr);

// The collective's spec on the cluster's placement (ranks per node).
core::CollectiveSpec SpecOf(const CollectiveParams& c, const ClusterParams& cluster);

// The algorithms the controls offer for `c`: the collective's own, and on nodes of a two-level
// cluster (or when `c` already has one) the algorithms of two levels (the hierarchical allreduces).
std::vector<core::Algorithm> AlgorithmChoices(const CollectiveParams& c, const ClusterParams& cluster);

// The model view's curves, simulated points, crossover and fit for a collective on p ranks with
// the current run highlighted (currentSeconds <= 0: none). With `measured`, the measurements are
// shown too and alpha and beta are fitted to them (the curves then use the fit). Cheap (tens of
// small simulations).
// `nodes`: measurements made on several nodes (their placement, and the GPU's NVLink from the spec
// table): a ring across nodes is paced by the network, so the fit is the network's; within a node
// the curves take the NVLink bandwidth and the fit's alpha, as stated on the view.
struct MeasuredNodes {
    int ranksPerNode = 0;
    double nvlinkGBps = 0; // one direction
    std::string gpu;
};
std::shared_ptr<const ModelData> BuildModelData(const CollectiveParams& params, const ClusterParams& cluster,
                                                double currentSeconds, const core::FitGroup* measured = nullptr,
                                                const MeasuredNodes* nodes = nullptr);
// The placement of a trace's GPUs when they span several hosts (GPU spec from its metadata);
// nullopt on one host, with uneven hosts, or for a GPU the spec table does not know.
std::optional<MeasuredNodes> NodesOf(const core::Trace& trace);

// The timeline's FoldIndex for every long lane of the trace and every device's idle intervals.
std::shared_ptr<const TimelineIndex> BuildTimelineIndex(const core::Trace& trace, const std::vector<core::DeviceUsage>& usage);

// The experiments that open these files: each file on its own, except the PyTorch profiler
// (Kineto) traces among several files, which are the ranks of one job and open together on one
// timeline. Reads the first bytes of each file (worker thread); throws Error naming a file that
// cannot be read.
std::vector<Experiment> FileExperiments(const std::vector<std::string>& files);

// A short description of an experiment: "allreduce / ring, 8 ranks, 64 MiB".
std::string Describe(const Experiment& e);

} // namespace paralens::app
