// What a job hands the views: for each Experiment, its Trace (shared, immutable) and everything
// the views show about it, computed once on the worker thread (usage, bubbles, MFU, model curves,
// per-step costs). Views only read it. A RunResult is immutable once published and shared as
// std::shared_ptr<const RunResult>; a Snapshot is the list the GUI thread swaps in atomically.
#pragma once

#include "AppState.hpp"
#include "FlowReplay.hpp"
#include "TimelineFold.hpp"

#include "analysis/CriticalPath.hpp"
#include "analysis/DeviceUsage.hpp"
#include "analysis/TraceDiff.hpp"
#include "autopar/Autopar.hpp"
#include "planner/Planner.hpp"
#include "analysis/PipelineMetrics.hpp"
#include "analysis/TraceReport.hpp"
#include "model/Fit.hpp"
#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "sim/WhatIf.hpp"
#include "trace/Trace.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace paralens::app {

// One step of a collective's Plan, as the flow view explains it. Seconds.
struct StepInfo {
    std::string phase;
    int transfers = 0;             // messages on the wire (local copies excluded)
    uint64_t maxBytes = 0;         // the largest message: single-port, the step lasts alpha + m beta
    bool reduces = false;
    double modelSeconds = 0.0;     // alpha + m beta (+ m gamma when it reduces) of its slowest message
    double alphaSec = 0.0, betaSecPerByte = 0.0, gammaSecPerByte = 0.0; // that message's link (core::LinkBetween)
    bool network = false;          // that message goes between nodes
    double simulatedEndSeconds = 0.0; // when the step's last message ended in the simulation
    // Virtual ranks on one GPU (RunResult::sharedMemoryGBps > 0): the step as core/plan/
    // SharedMemoryCost prices it, alpha plus the bytes it reads and writes over the memory's bandwidth.
    double sharedMemorySeconds = 0.0;
    uint64_t sharedMemoryBytes = 0;
};

// The model view's data for one collective on p ranks: closed-form curves per algorithm,
// simulated points, the ring/tree crossover and a fit of alpha and beta.
struct ModelCurve {
    core::Algorithm algorithm = core::Algorithm::Ring;
    std::string formula;
    std::vector<double> seconds;          // the model (sim/TwoLevelCost.hpp ModelOnTwoLevels) at ModelData::sizes
    std::vector<double> netSeconds;       // on two levels: its share between nodes at sizes (else empty)
    std::vector<double> simulatedSeconds; // Simulate at ModelData::pointSizes
};

struct ModelData {
    core::Collective collective = core::Collective::AllReduce;
    int ranks = 0;
    core::CostParams params;
    // Two levels (ClusterParams::TwoLevel): nodes of ranksPerNode GPUs on a network.
    bool twoLevel = false;
    int ranksPerNode = 0;
    double netAlphaUs = 0.0, netBandwidthGBps = 0.0;
    // Measured across nodes: the network per NIC as NCCL ran the log (core/analysis/Extrapolation.hpp
    // NetworkLinkFromFit, as `plan --network-fit` and `extrapolate` read it), which every algorithm
    // but the ring runs on; the ring keeps the fit's reading (NCCL's rings, one per NIC, together).
    // 0: the same link for every algorithm.
    double nicAlphaUs = 0.0, nicBandwidthGBps = 0.0;
    std::string twoLevelNote; // where the levels' parameters came from, for measurements on several nodes
    double busBwFactor = 1.0;
    std::vector<double> sizes;      // bytes, log-spaced samples of the curves
    std::vector<double> pointSizes; // bytes at which each algorithm was simulated
    std::vector<ModelCurve> curves;
    double crossoverBytes = -1.0;   // where the ring overtakes the tree (-1: no crossover in range)
    // The run being shown, as a highlighted point.
    core::Algorithm currentAlgorithm = core::Algorithm::Ring;
    double currentBytes = 0.0;
    double currentSeconds = 0.0;
    // Measurements of this collective (an nccl-tests log, a profiler trace's collectives), when
    // the data has them; the curves then use the alpha and beta fitted to them.
    std::vector<double> measuredBytes;
    std::vector<double> measuredSeconds;
    std::string measuredLabel; // "nccl-tests log, out-of-place", ...
    // alpha and beta fitted (core/model/Fit.hpp) to the measurements, else to the current
    // algorithm's simulated points, through its formula.
    bool fitted = false;
    bool fittedToMeasurements = false;
    double fitAlphaUs = 0.0;
    double fitBandwidthGBps = 0.0;
    double fitMapePct = 0.0;   // mean absolute percentage error of the fit
    std::string fitNote;       // why a parameter could not be fitted, when one could not
    // The measurements' regimes (core/model/RegimeFit.hpp): a line per size range where NCCL
    // changes protocol or algorithm; empty without measurements.
    std::vector<core::FitSegment> regimes;
    std::vector<double> regimeSeconds;     // their prediction at `sizes`
    std::vector<double> regimeSwitchBytes; // where one gives way to the next (between their sizes)
    double regimesMapePct = 0.0, regimesHeldOutPct = 0.0, noisePct = 0.0;
    // NCCL's protocols as a mechanism (core/model/ProtocolFit.hpp): the lowest of a few lines,
    // NCCL switching where two cross; empty without measurements.
    std::vector<core::ProtocolLine> protocols;
    std::vector<double> protocolSeconds;     // their envelope at `sizes`
    std::vector<double> protocolSwitchBytes; // where consecutive lines cross
    double protocolMapePct = 0.0, protocolHeldOutPct = 0.0;
};

// The model view's data for a pipeline: its bubble fraction against the number of micro-batches N,
// from the lectures' formula and from the simulator.
struct PipelineModelData {
    core::ScheduleKind schedule = core::ScheduleKind::OneFOneB;
    int stages = 0;
    int chunks = 1;
    std::vector<double> n;         // micro-batches at which the formula is drawn (valid N only)
    std::vector<double> formula;   // BubbleFractionFormula at n; empty when the lectures give none
    std::vector<double> pointN;    // micro-batches simulated
    std::vector<double> simulated; // the simulated bubble fraction at pointN
    double currentN = 0.0;
    double currentBubble = 0.0;
};

struct MfuData {
    bool available = false;  // the trace has FLOPs and a peak is known
    double peakFlops = 0.0;  // per device
    std::string peakSource;  // "NVIDIA H100 SXM5 80GB, bf16 dense: spec table (assets/hardware.json)"
    core::MfuReport report;      // over the run's iterations when it has several (core::IterationWindows)
    int iterations = 0;          // how many iterations `report` covers (0: the whole window)
    double seriesSeconds = 0.0;  // the window the series below cover (the whole run)
    std::vector<std::vector<core::CounterSample>> mfuPerDevice;
    std::vector<core::CounterSample> mfuOverall; // mean over devices
    std::vector<core::CounterSample> hfuOverall;
};

// The timeline's acceleration structures (TimelineFold.hpp), built with the run on the worker:
// a FoldIndex per lane (spans[track][depth]) and per device's idle intervals; empty for lanes too
// short to need one.
struct TimelineIndex {
    std::vector<std::vector<FoldIndex>> spans;
    std::vector<FoldIndex> idle;
};

// Each step's critical path (core/analysis/CriticalPath.hpp) of a run's trace, as the timeline
// outlines it and the Stats view breaks it down.
struct CriticalPathData {
    std::vector<core::StepPath> steps;
    std::vector<core::PathSegment> segments; // every step's, by start: what the timeline draws
    size_t ops = 0, dependencies = 0;        // the dependency graph's size
    bool stepsFromProfiler = false;          // steps are ProfilerStep#N annotations (else the whole trace)
};

struct RunResult {
    Experiment experiment;
    std::string title;                          // headline for the timeline and the views
    bool measured = false;                      // a real backend's run (simulatedSeconds then holds the measured time)
    const char* measuredAs = "measured (median)"; // how: the iterations' median, or the run's own mean (CUDA events)
    std::shared_ptr<const core::Trace> trace;
    std::shared_ptr<const core::Plan> plan;     // collectives: what the flow view replays
    int64_t windowBeginNs = 0;                  // the analysis window (absolute, trace clock)
    int64_t windowEndNs = 0;
    std::vector<core::DeviceUsage> usage;       // per device, in the window; idle = the bubbles
    std::shared_ptr<const TimelineIndex> index;

    // Pipelines (negative when not a pipeline or the lectures give no formula).
    double bubbleFraction = -1.0;
    double bubbleFormula = -1.0;
    double bubbleModel = -1.0;    // measured pipelines: their order simulated at their measured op times
    double pipelineSeconds = 0.0; // simulated pipelines: until the last stage's flush (the window's end)
    std::vector<int> peakActivations;
    std::vector<int> peakActivationsFormula;    // GPipe N, 1F1B min(D-s, N); empty when unknown
    std::shared_ptr<const PipelineModelData> pipelineModel;

    // Collectives.
    double simulatedSeconds = 0.0;
    double predictedSeconds = 0.0;
    bool predictionExact = false;
    std::string formula;
    double algbwGBps = 0.0;
    double busbwGBps = 0.0;
    std::vector<StepInfo> steps;
    double collectiveModelSeconds = 0.0;        // the model of the collective alone (for a training step: its collective's)
    double sharedMemoryGBps = 0.0;              // a Plan run on one GPU's virtual ranks: its memory (0: not one)
    // A measured run with alpha and beta fitted to it (a live sweep): the outlines can use them.
    std::shared_ptr<const core::CostParams> fitCost;
    std::shared_ptr<const FlowHoldings> holdings; // what each rank holds after each step (p <= 64)
    std::shared_ptr<const FlowLayout> layout;     // where the flow view puts the ranks

    // Auto-parallelization: the search's answer, the strategy the timeline shows (an index into
    // autopar->solutions) and, when the inter-op search ran, its pipeline simulated with the sends.
    std::shared_ptr<const core::AutoparResult> autopar;
    int autoparShown = -1;

    // The planner: its ranked rows and the request (the Planner tab), and which row the timeline
    // shows simulated (-1: none fits; planTraceNote says why a row's step was not drawn).
    std::shared_ptr<const core::PlanResult> trainingPlan;
    std::shared_ptr<const core::PlanRequest> trainingPlanRequest;
    int trainingPlanShown = -1;
    int trainingPlanPublished = -1; // a published run's own configuration among the rows (-1: none)
    double trainingPlanPublishedSeconds = 0; // and its published step
    std::string trainingPlanNote;
    std::optional<core::PlanRow> trainingPlanLaidOut; // the shown row laid out to balance its output layer, where faster (core::BalancedLayoutRow)
    double interOpSimulatedSeconds = 0.0;

    MfuData mfu;
    std::shared_ptr<const ModelData> model;     // collectives (simulated, or measured in a file)
    std::shared_ptr<const core::TraceReport> report; // trace files and training steps: collectives
                                                     // matched across ranks (busbw, skew)
    std::shared_ptr<const CriticalPathData> critical; // finished runs: each step's critical path
    // A what-if replay: the analysis (each step measured and replayed, their critical paths,
    // what changed), and a line of what was asked; the run's trace is the replayed one.
    std::shared_ptr<const core::WhatIfAnalysis> whatIf;
    std::string whatIfChanges;
};

// Two runs compared op by op (core/analysis/TraceDiff.hpp): a what-if against the trace it
// replays, or an opened trace against the first one opened.
struct RunComparison {
    int first = -1, second = -1; // indices into Snapshot::runs
    std::shared_ptr<const core::TraceDiffResult> diff;
};

struct Snapshot {
    std::vector<std::shared_ptr<const RunResult>> runs;
    std::vector<RunComparison> comparisons;

    // The run at `selected` when `has` holds for it, else the first run for which it does; null
    // when none (a tab that shows one kind of run picks its run this way).
    template <class Has>
    const RunResult* SelectedOrFirst(int selected, Has has) const
    {
        if (selected >= 0 && static_cast<size_t>(selected) < runs.size() && has(*runs[static_cast<size_t>(selected)]))
            return runs[static_cast<size_t>(selected)].get();
        for (const auto& r : runs)
            if (has(*r)) return r.get();
        return nullptr;
    }
};

} // namespace paralens::app
