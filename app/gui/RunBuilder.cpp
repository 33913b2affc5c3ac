#include "RunBuilder.hpp"

#include "AutoparRuns.hpp"
#include "PlanRuns.hpp"
#include "TrainingRuns.hpp"
#include "WhatIfRuns.hpp"

#include "common/Error.hpp"
#include "analysis/Fitting.hpp"
#include "analysis/TraceReport.hpp"
#include "common/Units.hpp"
#include "model/Hardware.hpp"
#include "plan/SharedMemoryCost.hpp"
#include "sim/MeasuredPipeline.hpp"
#include "sim/PipelineSimulator.hpp"
#include "sim/Simulator.hpp"
#include "sim/TwoLevelCost.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace paralens::app {

namespace {

constexpr int kMfuBins = 160;

// The trace of a file experiment: one file, or the per-rank files of one job on one timeline.
// Progress goes to `context`; cancelling stops the read between blocks.
core::Trace ReadFiles(const std::vector<std::string>& files, JobContext* context)
{
    Require(!files.empty(), "no trace file to open");
    core::ReadOptions options;
    if (context)
        options.progress = [context](uint64_t done, uint64_t total) {
            if (total > 0) context->SetProgress(static_cast<double>(done) / static_cast<double>(total));
            if (context->Cancelled()) throw Error("loading cancelled");
        };
    return files.size() == 1 ? core::ReadTraceFile(files[0], options) : core::ReadTraceFiles(files, options);
}

std::string ScheduleTitle(const PipelineParams& p)
{
    switch (p.schedule) {
    case core::ScheduleKind::Naive: return "naive model parallelism";
    case core::ScheduleKind::GPipe: return "GPipe";
    case core::ScheduleKind::OneFOneB: return "1F1B";
    case core::ScheduleKind::Interleaved: return "interleaved 1F1B (v=" + std::to_string(p.chunks) + ")";
    case core::ScheduleKind::ZeroBubbleH1: return "zero-bubble H1";
    case core::ScheduleKind::PipeDream: return "PipeDream (" + std::to_string(p.batches) + " mini-batches)";
    }
    return "pipeline";
}


std::vector<StepInfo> StepInfos(const core::Plan& plan, const core::Trace& trace, const core::ClusterModel& cluster)
{
    std::vector<StepInfo> steps(plan.steps.size());
    for (size_t k = 0; k < plan.steps.size(); ++k) {
        StepInfo& s = steps[k];
        s.phase = plan.phases[plan.steps[k].phase];
        s.gammaSecPerByte = cluster.gammaSecPerByte;
        for (const core::Transfer& t : plan.TransfersOf(plan.steps[k])) {
            if (t.src == t.dst) continue;
            ++s.transfers;
            s.reduces = s.reduces || t.op == core::TransferOp::Reduce;
            // Single-port: the step lasts as long as its slowest message, on that message's link.
            const core::LinkCost link = core::LinkBetween(cluster, plan.spec, t.src, t.dst);
            const double m = static_cast<double>(t.bytes);
            const double sec = link.alphaSec + m * link.betaSecPerByte + (t.op == core::TransferOp::Reduce ? m * cluster.gammaSecPerByte : 0.0);
            if (sec > s.modelSeconds || s.transfers == 1) {
                s.modelSeconds = sec;
                s.maxBytes = t.bytes;
                s.alphaSec = link.alphaSec;
                s.betaSecPerByte = link.betaSecPerByte;
                s.network = link.network;
            }
        }
    }
    // The simulated end of each step: the last message (or reduction) tagged with it.
    for (const core::Track& track : trace.Tracks())
        for (const core::Span& sp : track.spans)
            if (sp.step >= 0 && static_cast<size_t>(sp.step) < steps.size())
                steps[static_cast<size_t>(sp.step)].simulatedEndSeconds =
                    std::max(steps[static_cast<size_t>(sp.step)].simulatedEndSeconds, (sp.endNs - trace.BeginNs()) * 1e-9);
    // A step without messages (local copies) ends with the one before it.
    for (size_t k = 1; k < steps.size(); ++k)
        steps[k].simulatedEndSeconds = std::max(steps[k].simulatedEndSeconds, steps[k - 1].simulatedEndSeconds);
    return steps;
}

} // namespace

core::PipelineSpec PipelineSpecOf(const Experiment& e)
{
    const PipelineParams& p = e.pipeline;
    core::PipelineSpec spec;
    spec.kind = p.schedule;
    spec.stages = p.stages;
    spec.microBatches = p.microBatches;
    spec.chunks = p.schedule == core::ScheduleKind::Interleaved ? p.chunks : 1;
    spec.batches = p.schedule == core::ScheduleKind::PipeDream ? p.batches : 1;
    spec.forwardSec = p.forwardMs * 1e-3;
    spec.backwardSec = p.backwardMs >= 0 ? p.backwardMs * 1e-3 : spec.forwardSec * p.backwardRatio;
    spec.weightSec = p.weightMs >= 0 ? p.weightMs * 1e-3 : -1.0;
    spec.optimizerSec = p.optimizerMs * 1e-3;
    spec.recompute = p.recompute;
    spec.activationBytes = p.communicate ? p.activationBytes : 0;
    if (!p.stageSlowdown.empty()) {
        spec.stageSlowdown = p.stageSlowdown;
    } else if (e.cluster.stragglerRank >= 0 && e.cluster.stragglerRank < p.stages) {
        spec.stageSlowdown.assign(static_cast<size_t>(p.stages), 1.0);
        spec.stageSlowdown[static_cast<size_t>(e.cluster.stragglerRank)] = e.cluster.stragglerSlowdown;
    }
    return spec;
}

void AttachPlan(RunResult& r, const core::CollectiveSpec& spec, const ClusterParams& cluster, const core::Trace* timing)
{
    auto plan = std::make_shared<core::Plan>(core::BuildPlan(spec));
    const core::ClusterModel model = cluster.ToModel();
    if (timing) {
        r.steps = StepInfos(*plan, *timing, model);
    } else {
        const core::SimResult sim = core::Simulate(plan, model, {true});
        r.steps = StepInfos(*plan, *sim.trace, model);
    }
    if (spec.ranks <= kFlowMaxRanks) {
        r.holdings = std::make_shared<const FlowHoldings>(ReplayHoldings(*plan));
        r.layout = std::make_shared<const FlowLayout>(LayoutRanks(*plan));
    }
    r.plan = plan;
    r.formula = core::FormulaText(spec.collective, spec.algorithm);
    r.collectiveModelSeconds = core::ModelOnTwoLevels(spec, model, plan.get()).seconds;
    if (r.predictedSeconds <= 0) r.predictedSeconds = r.collectiveModelSeconds;
}

namespace {

// A trace of one collective made by paralens (its metadata names the collective, the algorithm,
// p, n and the cluster): the Plan is built again by core so the flow and model views can show it.
// A Plan run on GPUs (`paralens run --workload plan` of one size) holds several runs of it (the
// check, warm-ups, iterations): its steps are timed by the model, the timeline shows the measured.
void AttachCollective(RunResult& r)
{
    const core::Metadata& m = r.trace->Meta();
    const bool gpuPlan = m.workload.GetString("workload") == "plan";
    if (m.workload.GetString("kind") != "collective" && !gpuPlan) return;
    const auto collective = core::ParseCollective(m.workload.GetString("collective"));
    const auto algorithm = core::ParseAlgorithm(m.workload.GetString("algorithm"));
    const double ranks = m.workload.GetNumber("ranks", 0), bytes = m.workload.GetNumber("bytes", -1);
    if (!collective || !algorithm || !core::Supports(*collective, *algorithm) || ranks < 1 || bytes < 0 ||
        static_cast<size_t>(ranks) != r.trace->Devices().size())
        return;
    CollectiveParams c;
    c.collective = *collective;
    c.algorithm = *algorithm;
    c.ranks = static_cast<int>(ranks);
    c.bytes = static_cast<uint64_t>(bytes);
    c.root = static_cast<int>(m.workload.GetNumber("root", 0));
    ClusterParams k;
    k.alphaUs = m.model.GetNumber("alphaUs", k.alphaUs);
    k.bandwidthGBps = m.model.GetNumber("bandwidthGBps", k.bandwidthGBps);
    k.gammaGBps = m.model.GetNumber("gammaGBps", 0.0);
    try {
        AttachPlan(r, {c.collective, c.algorithm, c.ranks, c.bytes, c.root, 1}, k, gpuPlan ? nullptr : r.trace.get());
        // Virtual ranks share one GPU's memory: the run's own model (paralens run's prediction).
        const double memoryGBps = m.model.GetNumber("sharedMemoryGBps", 0.0);
        if (gpuPlan && m.workload.GetNumber("virtualRanks", 0) != 0 && memoryGBps > 0) {
            r.sharedMemoryGBps = memoryGBps;
            r.predictedSeconds = 0; // the steps' sum, as core::SharedMemoryPlanCost adds them
            for (size_t i = 0; i < r.steps.size(); ++i) {
                const core::SharedMemoryCost s = core::SharedMemoryStepCost(*r.plan, r.plan->steps[i], k.alphaUs * 1e-6, memoryGBps * 1e9);
                r.steps[i].sharedMemorySeconds = s.seconds;
                r.steps[i].sharedMemoryBytes = s.memoryBytes;
                r.predictedSeconds += s.seconds;
            }
        }
        r.algbwGBps = core::AlgBwGBps(c.bytes, r.simulatedSeconds);
        r.busbwGBps = r.algbwGBps * core::BusBwFactor(c.collective, c.ranks);
        r.model = BuildModelData(c, k, r.simulatedSeconds);
    } catch (const Error&) {
        // Metadata that does not make a Plan: the trace is shown without the flow and model views.
    }
}

// What a trace measured: its collectives matched across ranks (core::AnalyzeTrace: busbw, skew,
// slowest rank) and, for a trace without a paralens Plan, the model fitted to its collectives.
void AttachMeasurements(RunResult& r, const std::string& source)
{
    r.report = std::make_shared<const core::TraceReport>(core::AnalyzeTrace(*r.trace));
    if (r.model) return;
    const std::vector<core::FitGroup> groups = core::FitGroupsFromTrace(*r.trace, source);
    const core::FitGroup* best = nullptr;
    for (const core::FitGroup& g : groups)
        if (g.samples.size() >= 2 && (!best || g.samples.size() > best->samples.size())) best = &g;
    if (!best) return;
    CollectiveParams c;
    c.collective = best->collective;
    c.algorithm = best->algorithm;
    c.ranks = std::max(best->ranks, 1);
    for (const core::FitSample& s : best->samples) c.bytes = std::max(c.bytes, s.bytes);
    try {
        const std::optional<MeasuredNodes> nodes = NodesOf(*r.trace);
        r.model = BuildModelData(c, ClusterParams{}, 0.0, best, nodes ? &*nodes : nullptr);
    } catch (const Error&) {
        // A group the model cannot take (a rank count or size it refuses): no model view for it.
    }
}

std::shared_ptr<RunResult> BuildCollective(const Experiment& e)
{
    auto r = std::make_shared<RunResult>();
    const CollectiveParams& c = e.collective;
    const core::CollectiveSpec spec = SpecOf(c, e.cluster);
    const core::ClusterModel cluster = e.cluster.ToModel();
    auto plan = std::make_shared<core::Plan>(core::BuildPlan(spec));
    core::SimResult sim = core::Simulate(plan, cluster, {true});
    r->trace = std::make_shared<const core::Trace>(std::move(*sim.trace));
    r->plan = plan;
    r->windowBeginNs = r->trace->BeginNs();
    r->windowEndNs = r->trace->EndNs();
    FillUsage(*r);
    const core::TwoLevelModel pred = core::ModelOnTwoLevels(spec, cluster, plan.get());
    r->simulatedSeconds = sim.seconds;
    r->predictedSeconds = r->collectiveModelSeconds = pred.seconds;
    r->predictionExact = pred.exact;
    r->formula = core::FormulaText(spec.collective, spec.algorithm);
    r->algbwGBps = core::AlgBwGBps(spec.bytes, sim.seconds);
    r->busbwGBps = r->algbwGBps * core::BusBwFactor(spec.collective, spec.ranks);
    r->steps = StepInfos(*plan, *r->trace, cluster);
    if (spec.ranks <= kFlowMaxRanks) {
        r->holdings = std::make_shared<const FlowHoldings>(ReplayHoldings(*plan));
        r->layout = std::make_shared<const FlowLayout>(LayoutRanks(*plan));
    }
    r->model = BuildModelData(c, e.cluster, sim.seconds);
    return r;
}


core::ClusterModel PipelineLinks(const Experiment& e)
{
    core::ClusterModel link = e.pipeline.communicate ? e.cluster.ToModel() : core::FreeLinks();
    link.stragglers.clear(); // the straggler is a slow stage (stageSlowdown), not a slow link
    return link;
}

// The bubble fraction against N: the formula at every valid N up to 64 (or 4x the run's), the
// simulator at powers of two and at the run's N.
std::shared_ptr<const PipelineModelData> PipelineModel(const core::PipelineSpec& run, const core::ClusterModel& link,
                                                       double bubble)
{
    auto m = std::make_shared<PipelineModelData>();
    m->schedule = run.kind;
    m->stages = run.stages;
    m->chunks = run.chunks;
    m->currentN = run.microBatches;
    m->currentBubble = bubble;
    const int step = run.kind == core::ScheduleKind::Interleaved ? run.stages : 1;
    const int maxN = std::max(64, 4 * run.microBatches);
    core::PipelineSpec spec = run;
    spec.forwardFlops = 0;
    for (int n = step; n <= maxN; n += step) {
        spec.microBatches = n;
        const double f = core::BubbleFractionFormula(spec);
        if (f < 0) continue; // none (pipedream), or not at this N (zb-h1 below N = D)
        m->n.push_back(n);
        m->formula.push_back(f);
    }
    for (int n = step; n <= maxN; n *= 2) {
        spec.microBatches = n;
        core::PipelineSimResult sim = core::SimulatePipeline(core::BuildSchedule(spec), link, true);
        const int64_t end = sim.trace->BeginNs() + static_cast<int64_t>(std::llround(sim.pipelineSeconds * 1e9));
        m->pointN.push_back(n);
        m->simulated.push_back(core::ComputeBubbleFraction(*sim.trace, {sim.trace->BeginNs(), end}));
    }
    return m;
}

std::shared_ptr<RunResult> BuildPipeline(const Experiment& e)
{
    auto r = std::make_shared<RunResult>();
    const PipelineParams& p = e.pipeline;
    core::PipelineSpec spec = PipelineSpecOf(e);
    const core::GpuSpec* gpu = core::FindGpu(p.gpu);
    Require(gpu != nullptr, "GPU (--hardware) '" + p.gpu + "' is not in the spec table; known: " + core::GpuIdsList());
    const double peak = gpu->PeakFlops(p.dtype);
    Require(peak > 0, "--dtype: " + gpu->id + " has no " + p.dtype + " figure in the spec table");
    spec.forwardFlops = p.forwardTflop > 0 ? p.forwardTflop * 1e12 : spec.forwardSec * p.kernelEfficiency * peak;
    const core::Schedule schedule = core::BuildSchedule(spec);
    const core::ClusterModel link = PipelineLinks(e);
    core::PipelineSimResult sim = core::SimulatePipeline(schedule, link, true);
    r->trace = std::make_shared<const core::Trace>(std::move(*sim.trace));
    r->windowBeginNs = r->trace->BeginNs();
    r->windowEndNs = r->trace->BeginNs() + static_cast<int64_t>(std::llround(sim.pipelineSeconds * 1e9));
    r->pipelineSeconds = sim.pipelineSeconds;
    FillUsage(*r);
    r->bubbleFraction = core::ComputeBubbleFraction(*r->trace, {r->windowBeginNs, r->windowEndNs});
    r->bubbleFormula = core::BubbleFractionFormula(spec);
    r->peakActivations = core::PeakActivations(*r->trace);
    if (p.schedule == core::ScheduleKind::GPipe || p.schedule == core::ScheduleKind::OneFOneB) {
        for (int s = 0; s < p.stages; ++s)
            r->peakActivationsFormula.push_back(p.schedule == core::ScheduleKind::GPipe ? p.microBatches
                                                                                        : std::min(p.stages - s, p.microBatches));
    }
    r->simulatedSeconds = sim.seconds;
    FillMfu(*r, peak, gpu->name + ", " + p.dtype + " dense peak: spec table (assets/hardware.json)");
    r->pipelineModel = PipelineModel(spec, link, r->bubbleFraction);
    return r;
}

} // namespace

// MFU gauges and series for any trace with FLOPs, given the peak of one device.
void FillMfu(RunResult& r, double peakFlops, std::string source)
{
    const core::Trace& t = *r.trace;
    const core::UsageWindow window{r.windowBeginNs, r.windowEndNs};
    MfuData& m = r.mfu;
    m.peakFlops = peakFlops;
    m.peakSource = std::move(source);
    const std::vector<core::UsageWindow> iterations = core::IterationWindows(t); // a measured run: per iteration
    m.report = core::ComputeMfu(t, peakFlops, iterations, window);
    m.iterations = static_cast<int>(iterations.size());
    m.seriesSeconds = static_cast<double>(window.endNs - window.beginNs) * 1e-9;
    m.available = peakFlops > 0 && m.report.modelFlops > 0;
    if (!m.available) return;
    int devices = 0;
    for (uint32_t d = 0; d < t.Devices().size(); ++d) {
        if (t.Devices()[d].kind == core::DeviceKind::Cpu) continue;
        auto mfu = core::MfuSeries(t, d, peakFlops, window, kMfuBins);
        auto hfu = core::MfuSeries(t, d, peakFlops, window, kMfuBins, true);
        if (m.mfuOverall.empty()) {
            m.mfuOverall = mfu;
            m.hfuOverall = hfu;
            for (auto& s : m.mfuOverall) s.value = 0;
            for (auto& s : m.hfuOverall) s.value = 0;
        }
        for (size_t i = 0; i < mfu.size() && i < m.mfuOverall.size(); ++i) {
            m.mfuOverall[i].value += mfu[i].value;
            m.hfuOverall[i].value += hfu[i].value;
        }
        m.mfuPerDevice.push_back(std::move(mfu));
        ++devices;
    }
    for (auto& s : m.mfuOverall) s.value /= std::max(devices, 1);
    for (auto& s : m.hfuOverall) s.value /= std::max(devices, 1);
}

void FillUsage(RunResult& r)
{
    r.usage = core::ComputeDeviceUsage(*r.trace, {r.windowBeginNs, r.windowEndNs});
    r.index = BuildTimelineIndex(*r.trace, r.usage);
}

std::shared_ptr<const TimelineIndex> BuildTimelineIndex(const core::Trace& trace, const std::vector<core::DeviceUsage>& usage)
{
    constexpr size_t kMinItems = 512; // shorter lanes fold fast enough by binary search
    auto index = std::make_shared<TimelineIndex>();
    index->spans.resize(trace.Tracks().size());
    for (size_t t = 0; t < trace.Tracks().size(); ++t) {
        const core::Track& track = trace.Tracks()[t];
        index->spans[t].resize(static_cast<size_t>(track.DepthCount()));
        for (int d = 0; d < track.DepthCount(); ++d)
            if (track.Lane(d).size() >= kMinItems)
                index->spans[t][static_cast<size_t>(d)].Build(
                    track.Lane(d), [](const core::Span& s) { return s.startNs; }, [](const core::Span& s) { return s.endNs; });
    }
    index->idle.resize(usage.size());
    for (size_t d = 0; d < usage.size(); ++d)
        if (usage[d].idle.size() >= kMinItems)
            index->idle[d].Build(std::span<const core::Interval>(usage[d].idle), [](const core::Interval& i) { return i.begin; },
                                 [](const core::Interval& i) { return i.end; });
    return index;
}

core::ClusterModel ClusterParams::ToModel() const
{
    Require(alphaUs >= 0 && std::isfinite(alphaUs), "alpha must be >= 0 us");
    Require(bandwidthGBps > 0 && std::isfinite(bandwidthGBps), "bandwidth must be > 0 GB/s");
    Require(gammaGBps >= 0 && std::isfinite(gammaGBps), "gamma bandwidth must be >= 0 GB/s (0: free reductions)");
    core::ClusterModel m = core::ClusterModel::FromUnits(alphaUs, bandwidthGBps, gammaGBps);
    if (stragglerRank >= 0) {
        Require(stragglerSlowdown > 0, "straggler slowdown must be > 0");
        m.stragglers.push_back({stragglerRank, stragglerSlowdown});
    }
    Require(ranksPerNode >= 0, "GPUs per node must be at least 0");
    if (netBandwidthGBps > 0) {
        Require(netAlphaUs >= 0 && std::isfinite(netAlphaUs), "the network's alpha must be >= 0 us");
        m.netAlphaSec = netAlphaUs * 1e-6;
        m.netBetaSecPerByte = 1.0 / (netBandwidthGBps * 1e9);
    }
    return m;
}

std::vector<core::Algorithm> AlgorithmChoices(const CollectiveParams& c, const ClusterParams& cluster)
{
    std::vector<core::Algorithm> out(core::AlgorithmsFor(c.collective).begin(), core::AlgorithmsFor(c.collective).end());
    const auto twoLevel = core::TwoLevelAlgorithmsFor(c.collective);
    if (cluster.TwoLevel() || std::find(twoLevel.begin(), twoLevel.end(), c.algorithm) != twoLevel.end())
        out.insert(out.end(), twoLevel.begin(), twoLevel.end());
    return out;
}

core::CollectiveSpec SpecOf(const CollectiveParams& c, const ClusterParams& cluster)
{
    core::CollectiveSpec spec{c.collective, c.algorithm, c.ranks, c.bytes, c.root, 1};
    spec.ranksPerNode = cluster.ranksPerNode;
    return spec;
}

std::string Describe(const Experiment& e)
{
    switch (e.kind) {
    case ExperimentKind::Collective: {
        const CollectiveParams& c = e.collective;
        return std::string(core::Name(c.collective)) + " / " + std::string(core::Name(c.algorithm)) + ", " +
               std::to_string(c.ranks) + " ranks, " + core::FormatBytes(c.bytes);
    }
    case ExperimentKind::Pipeline: {
        const PipelineParams& p = e.pipeline;
        return ScheduleTitle(p) + ", D=" + std::to_string(p.stages) + " stages, N=" + std::to_string(p.microBatches) +
               " micro-batches" + (p.recompute ? ", recomputation" : "");
    }
    case ExperimentKind::Training: return TrainingTitle(e.training);
    case ExperimentKind::Autopar: return AutoparTitle(e.autopar);
    case ExperimentKind::Plan: return PlanTitle(e.plan);
    case ExperimentKind::File:
        return e.files.size() == 1 ? e.files[0] : e.files.empty() ? std::string() : e.files[0] + " and " + std::to_string(e.files.size() - 1) + " more";
    case ExperimentKind::WhatIf: {
        const std::string of = e.files.empty() ? std::string() : std::filesystem::path(e.files[0]).filename().string() +
                                                                    (e.files.size() > 1 ? " and " + std::to_string(e.files.size() - 1) + " more" : "");
        return "what-if of " + of + ": " + DescribeWhatIf(e.whatIf);
    }
    }
    return {};
}

std::shared_ptr<const RunResult> AnalyzeTrace(const Experiment& experiment, std::shared_ptr<const core::Trace> trace)
{
    auto r = std::make_shared<RunResult>();
    r->experiment = experiment;
    r->trace = std::move(trace);
    const core::Trace& t = *r->trace;
    r->title = t.Meta().title.empty() ? Describe(experiment) : t.Meta().title;
    const core::UsageWindow window = core::PipelineWindow(t); // the whole Trace unless a simulated schedule's
    r->windowBeginNs = window.beginNs;
    r->windowEndNs = window.endNs;
    FillUsage(*r);
    const core::MetaSection& w = t.Meta().workload;
    if (w.GetString("kind") == "pipeline" || w.GetString("workload") == "pipeline") { // simulated, or run on GPUs
        // A measured run of several iterations: each one's bubble (as `paralens run` reports it).
        r->bubbleFraction = core::ComputeBubbleFraction(t, core::IterationWindows(t), {r->windowBeginNs, r->windowEndNs});
        r->bubbleFormula = t.Meta().results.GetNumber("bubbleFractionFormula", -1.0);
        const std::optional<core::PipelineSpec> spec = core::PipelineSpecOf(t);
        if (r->bubbleFormula < 0 && spec) r->bubbleFormula = core::BubbleFractionFormula(*spec);
        // A measured run beside its model (a simulated one is its own model).
        if (t.Meta().source != core::TraceSource::Simulated)
            if (const auto model = core::CheckPipelineModel(t)) r->bubbleModel = model->model;
        r->peakActivations = core::PeakActivations(t);
    }
    r->simulatedSeconds = (t.EndNs() - t.BeginNs()) * 1e-9;
    r->predictedSeconds = t.Meta().results.GetNumber("predictedSeconds", 0.0);
    AttachCollective(*r);
    AttachMeasurements(*r, experiment.label.empty() ? Describe(experiment) : experiment.label);
    // The run's own peak per device (paralens run: virtual stages of one GPU share its peak), else a
    // GPU named in the trace's hardware metadata gives the peak for MFU.
    const double runPeak = t.Meta().model.GetNumber("peakFlopsPerStage", 0.0);
    const std::string gpuName = t.Meta().hardware.GetString("gpu", t.Meta().hardware.GetString("device"));
    const core::GpuSpec* gpu = gpuName.empty() ? nullptr : core::FindGpu(gpuName);
    if (runPeak > 0) {
        const bool shared = t.Meta().workload.GetNumber("virtualStages", 0) != 0;
        FillMfu(*r, runPeak, "the run's peak per stage (" + t.Meta().model.GetString("peakSource", "spec sheet") +
                                 (shared ? "; the virtual stages share one GPU's" : "") + ")");
    } else if (gpu) {
        FillMfu(*r, gpu->PeakFlops("bf16"), gpu->name + ", bf16 dense peak: spec table (assets/hardware.json)");
    }
    return r;
}

std::vector<Experiment> FileExperiments(const std::vector<std::string>& files)
{
    std::vector<Experiment> out;
    Experiment job;
    job.kind = ExperimentKind::File;
    for (const std::string& f : files) {
        const bool kineto = core::DetectFileFormat(f) == core::TraceFormat::Kineto;
        if (kineto && files.size() > 1) {
            job.files.push_back(f);
            continue;
        }
        Experiment e;
        e.kind = ExperimentKind::File;
        e.files = {f};
        e.label = std::filesystem::path(f).filename().string();
        out.push_back(std::move(e));
    }
    if (job.files.size() == 1) { // a single profiler trace among other files: on its own
        job.label = std::filesystem::path(job.files[0]).filename().string();
        out.push_back(std::move(job));
    } else if (!job.files.empty()) {
        job.label = "job of " + std::to_string(job.files.size()) + " ranks";
        out.insert(out.begin(), std::move(job));
    }
    return out;
}

namespace {

// A run with its critical path (a copy of the run; the rest is shared).
std::shared_ptr<const RunResult> WithCriticalPath(std::shared_ptr<const RunResult> run)
{
    if (!run || !run->trace || run->critical) return run;
    auto copy = std::make_shared<RunResult>(*run);
    copy->critical = BuildCriticalPath(*copy->trace);
    return copy;
}

// The trace a what-if replays: an open trace of the same files, else read now.
std::shared_ptr<const core::Trace> SourceTrace(const Experiment& e, const Snapshot& built, const Snapshot* previous, JobContext* context)
{
    for (const Snapshot* s : {&built, previous})
        if (s)
            for (const auto& run : s->runs)
                if (run && run->trace && run->experiment.kind == ExperimentKind::File && run->experiment.files == e.files) return run->trace;
    return std::make_shared<const core::Trace>(ReadFiles(e.files, context));
}

} // namespace

std::shared_ptr<const RunResult> BuildRun(const Experiment& e, JobContext* context)
{
    return BuildRun(e, Snapshot{}, nullptr, context);
}

std::shared_ptr<const RunResult> BuildRun(const Experiment& e, const Snapshot& built, const Snapshot* previous, JobContext* context)
{
    if (context && context->Cancelled()) return nullptr;
    std::shared_ptr<RunResult> r;
    switch (e.kind) {
    case ExperimentKind::Collective: r = BuildCollective(e); break;
    case ExperimentKind::Pipeline: r = BuildPipeline(e); break;
    case ExperimentKind::Training: r = BuildTraining(e); break;
    case ExperimentKind::Autopar: r = BuildAutopar(e); break;
    case ExperimentKind::Plan: r = BuildTrainingPlan(e); break;
    case ExperimentKind::File: {
        auto trace = std::make_shared<const core::Trace>(ReadFiles(e.files, context));
        if (context && context->Cancelled()) return nullptr;
        return WithCriticalPath(AnalyzeTrace(e, std::move(trace)));
    }
    case ExperimentKind::WhatIf: {
        Require(!e.files.empty(), "a what-if needs the trace it replays");
        auto source = SourceTrace(e, built, previous, context);
        if (context && context->Cancelled()) return nullptr;
        return BuildWhatIfRun(e, std::move(source));
    }
    }
    r->experiment = e;
    r->title = (e.label.empty() ? "" : e.label + ": ") + Describe(e);
    if (e.backend != Backend::Simulated)
        r->title += e.backend == Backend::Gpu ? "  (simulated; press Run on the GPU to measure)" : "  (simulated; press Run for real to measure)";
    if (r->trace) r->critical = BuildCriticalPath(*r->trace);
    return r;
}

std::shared_ptr<const Snapshot> BuildSnapshot(const std::vector<Experiment>& experiments, const Snapshot* previous,
                                              JobContext* context)
{
    auto snap = std::make_shared<Snapshot>();
    for (size_t i = 0; i < experiments.size(); ++i) {
        if (context) context->SetProgress(static_cast<double>(i) / static_cast<double>(experiments.size()));
        std::shared_ptr<const RunResult> reuse;
        if (previous)
            for (const auto& run : previous->runs) {
                if (!run) continue;
                if (run->experiment == experiments[i]) reuse = run;
                Experiment relabelled = run->experiment;
                relabelled.label = experiments[i].label;
                if (!reuse && relabelled == experiments[i]) {
                    // Only the label changed: the same run under its new name (no re-simulation, no re-read).
                    auto copy = std::make_shared<RunResult>(*run);
                    copy->experiment = experiments[i];
                    if (experiments[i].kind != ExperimentKind::File)
                        copy->title = (experiments[i].label.empty() ? "" : experiments[i].label + ": ") + Describe(experiments[i]);
                    reuse = std::move(copy);
                }
            }
        if (!reuse) {
            try {
                reuse = BuildRun(experiments[i], *snap, previous, context);
            } catch (const Error& err) {
                const std::string what = experiments[i].label.empty() ? Describe(experiments[i]) : experiments[i].label;
                throw Error(what + ": " + err.what());
            }
        }
        if (!reuse) return nullptr; // cancelled
        snap->runs.push_back(std::move(reuse));
    }
    snap->comparisons = BuildComparisons(*snap, previous);
    if (context) context->SetProgress(1.0);
    return snap;
}

} // namespace paralens::app
