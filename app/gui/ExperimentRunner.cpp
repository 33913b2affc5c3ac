#include "ExperimentRunner.hpp"

#include "RunBuilder.hpp"
#include "TrainingRuns.hpp"
#include "WhatIfRuns.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "gpu/GpuBackend.hpp"
#include "live/ProcessJob.hpp"
#include "model/CostModel.hpp"

#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#ifndef PARALENS_RUNNER_HAVE_MPI
#define PARALENS_RUNNER_HAVE_MPI 0
#endif
#ifndef PARALENS_RUNNER_HAVE_BLAS
#define PARALENS_RUNNER_HAVE_BLAS 0
#endif

namespace paralens::app {

namespace {

constexpr int kMaxProcesses = 64;
// A long run records its first iterations only (the rest are timed, not traced), so that its
// trace, the window's memory and each snapshot's cost stay bounded.
constexpr int kMaxTracedIterations = 200;

bool SweepGroup(const core::Trace& t, const Experiment& e, core::FitGroup& group); // below

// A data-parallel step on processes: one per worker, and one per parameter server.
int TrainingProcesses(const TrainingParams& t) { return t.devices + (t.workload == "ps" ? t.servers : 0); }

// What of a training step the processes backend cannot run (app/mpi/MpiTraining: one worker or
// server per process, one task at a time per process).
std::string TrainingRefusal(const Experiment& e, const std::string& where)
{
    const TrainingParams& t = e.training;
    if (e.backend != Backend::Processes) return "training steps run on the simulator and on processes; " + where + " runs collectives and pipelines";
    if (t.workload != "dp" && t.workload != "ps")
        return "the processes backend runs data-parallel steps (dp, ps); " + t.workload + " runs on the simulator";
    if (!PARALENS_RUNNER_HAVE_BLAS) return "this paralens was built without OpenBLAS (install libopenblas-dev, then rebuild): workers need real GEMMs";
    if (TrainingProcesses(t) > kMaxProcesses) return where + " starts at most " + std::to_string(kMaxProcesses) + " processes on this machine";
    if (t.workload == "dp" && t.overlap)
        return "a process runs one task at a time, so its allreduce cannot overlap the backward: untick overlap to run it on processes";
    if (t.workload == "ps" && t.consistency != "bsp")
        return "a server process takes the pushes of one iteration before the next: only BSP runs on processes (" + t.consistency +
               " runs on the simulator)";
    if (t.gradBytes > (uint64_t{1} << 30)) return where + " moves at most 1 GiB of gradients per layer";
    return {};
}

// The GPU list is asked for once (CUDA's start-up is slow and the answer does not change).
const gpu::DeviceReport& Gpus()
{
    static std::once_flag once;
    static gpu::DeviceReport report;
    std::call_once(once, [] { report = gpu::DiscoverDevices(); });
    return report;
}

core::CostParams CostOf(const ClusterParams& c)
{
    const core::ClusterModel m = c.ToModel();
    return {m.alphaSec, m.betaSecPerByte, m.gammaSecPerByte};
}

std::string Text(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

live::ProcessRunRequest ProcessRequest(const Experiment& e)
{
    live::ProcessRunRequest r;
    r.timeoutSec = e.live.timeoutSec + 10; // the ranks' own timeouts name the culprit first
    r.predict = true;
    r.model = CostOf(e.cluster);
    const std::string iters = std::to_string(e.live.iterations), warmup = std::to_string(e.live.warmup);
    if (e.kind == ExperimentKind::Collective) {
        const CollectiveParams& c = e.collective;
        r.ranks = c.ranks;
        r.title = "measured on " + std::to_string(c.ranks) + " processes: " + Describe(e);
        r.args = {"run", "--backend", "mpi", "--collective", std::string(core::Name(c.collective)), "--algorithm",
                  std::string(core::Name(c.algorithm)), "--bytes", std::to_string(c.bytes), "--root", std::to_string(c.root),
                  "--iters", iters, "--warmup", warmup, "--trace-iterations", std::to_string(std::min(e.live.iterations, kMaxTracedIterations)),
                  "--timeout-s", Text(e.live.timeoutSec),
                  "--no-mpi-compare"};
        return r;
    }
    if (e.kind == ExperimentKind::Training) {
        const TrainingParams& t = e.training;
        r.ranks = TrainingProcesses(t);
        r.title = "measured on " + std::to_string(r.ranks) + " processes: " + Describe(e);
        r.args = {"run", "--backend", "mpi", "--workload", "training", "--training", t.workload, "--layers", std::to_string(t.layers),
                  "--forward-ms", Text(t.forwardMs), "--grad-bytes", std::to_string(t.gradBytes), "--iters", std::to_string(t.iterations),
                  "--warmup", warmup, "--timeout-s", Text(e.live.timeoutSec), "--alpha-us", Text(e.cluster.alphaUs),
                  "--bandwidth-GBps", Text(e.cluster.bandwidthGBps)};
        if (t.workload == "dp") r.args.insert(r.args.end(), {"--algorithm", std::string(core::Name(t.algorithm))});
        if (t.workload == "ps") r.args.insert(r.args.end(), {"--servers", std::to_string(t.servers)});
        if (e.cluster.stragglerRank >= 0)
            r.args.insert(r.args.end(), {"--straggler", std::to_string(e.cluster.stragglerRank) + ":" + Text(e.cluster.stragglerSlowdown)});
        return r;
    }
    const PipelineParams& p = e.pipeline;
    r.ranks = p.stages;
    r.title = "measured on " + std::to_string(p.stages) + " processes: " + Describe(e);
    r.args = {"run", "--backend", "mpi", "--workload", "pipeline", "--schedule", std::string(core::Name(p.schedule)),
              "--microbatches", std::to_string(p.microBatches), "--chunks", std::to_string(p.schedule == core::ScheduleKind::Interleaved ? p.chunks : 1),
              "--forward-ms", Text(p.forwardMs), "--iters", iters, "--warmup", warmup, "--timeout-s", Text(e.live.timeoutSec)};
    if (p.recompute) r.args.push_back("--recompute");
    return r;
}

} // namespace

gpu::RunRequest GpuRunRequest(const Experiment& e, int gpus)
{
    gpu::RunRequest r;
    r.warmupIters = e.live.warmup;
    r.iters = e.live.iterations;
    r.alphaUs = e.cluster.alphaUs;
    if (e.kind == ExperimentKind::Collective) {
        r.workload = gpu::Workload::Plan;
        r.sizes = {e.collective.bytes};
        r.plan.collective = e.collective.collective;
        r.plan.algorithm = e.collective.algorithm;
        r.plan.ranks = e.collective.ranks;
        r.plan.root = e.collective.root;
        r.plan.virtualRanks = e.collective.ranks > gpus;
        return r;
    }
    r.workload = gpu::Workload::Pipeline;
    r.pipeline.schedule = e.pipeline.schedule;
    r.pipeline.stages = e.pipeline.stages;
    r.pipeline.microBatches = e.pipeline.microBatches;
    r.pipeline.chunks = e.pipeline.schedule == core::ScheduleKind::Interleaved ? e.pipeline.chunks : 1;
    r.pipeline.recompute = e.pipeline.recompute;
    r.pipeline.virtualStages = e.pipeline.stages > gpus;
    return r;
}

namespace {

// Per iteration (span step) of the collective spans: the first start to the last end over the
// ranks; the median of those, in seconds (0 when there are none).
double MeasuredCollectiveSeconds(const core::Trace& t)
{
    std::map<int32_t, std::pair<int64_t, int64_t>> steps;
    for (const core::Track& track : t.Tracks())
        for (const core::Span& s : track.spans) {
            if (s.category != core::SpanCategory::Collective) continue;
            auto [it, fresh] = steps.try_emplace(s.step, s.startNs, s.endNs);
            if (!fresh) it->second = {std::min(it->second.first, s.startNs), std::max(it->second.second, s.endNs)};
        }
    std::vector<double> d;
    for (const auto& [step, range] : steps) d.push_back(static_cast<double>(range.second - range.first) * 1e-9);
    if (d.empty()) return 0.0;
    std::nth_element(d.begin(), d.begin() + static_cast<ptrdiff_t>(d.size() / 2), d.end());
    return d[d.size() / 2];
}

// The run's own time for `bytes` from its report's table (the GPU's Plan executor times each size
// with CUDA events; its Trace holds the transfers, not one span per collective); 0 when absent.
double ReportedSeconds(const core::RunReport* report, uint64_t bytes)
{
    if (!report) return 0.0;
    for (const core::MetaSection& row : report->rows)
        if (row.GetNumber("bytes", -1.0) == static_cast<double>(bytes) && row.GetNumber("timeUs", 0.0) > 0)
            return row.GetNumber("timeUs", 0.0) * 1e-6;
    return 0.0;
}

void MeasuredCollective(RunResult& r, const Experiment& e, const core::RunReport* report)
{
    CollectiveParams c = e.collective;
    // A sweep shows each size's run as it goes: its numbers are that size's.
    c.bytes = static_cast<uint64_t>(r.trace->Meta().workload.GetNumber("bytes", static_cast<double>(c.bytes)));
    double measured = MeasuredCollectiveSeconds(*r.trace);
    if (measured <= 0) { // a Plan run's trace holds transfers, not the collective: the run's own time
        measured = ReportedSeconds(report, c.bytes);
        if (measured > 0) r.measuredAs = "measured (mean, CUDA events)";
    }
    const core::Prediction pred = core::PredictSeconds({c.collective, c.algorithm, c.ranks, c.bytes, c.root, 1}, CostOf(e.cluster));
    r.simulatedSeconds = measured;
    r.predictedSeconds = pred.seconds;
    r.predictionExact = pred.exact;
    r.formula = core::FormulaText(c.collective, c.algorithm);
    r.algbwGBps = core::AlgBwGBps(c.bytes, measured);
    r.busbwGBps = r.algbwGBps * core::BusBwFactor(c.collective, c.ranks);
    core::FitGroup sweep;
    if (SweepGroup(*r.trace, e, sweep)) r.model = BuildModelData(c, e.cluster, measured, &sweep); // alpha, beta fitted to it
    else if (measured > 0) r.model = BuildModelData(c, e.cluster, measured);
    if (r.model && r.model->fittedToMeasurements && r.model->fitBandwidthGBps > 0)
        r.fitCost = std::make_shared<const core::CostParams>(
            core::CostParams{r.model->fitAlphaUs * 1e-6, 1.0 / (r.model->fitBandwidthGBps * 1e9), CostOf(e.cluster).gammaSecPerByte});
}

} // namespace

namespace {

// The sizes of a live sweep: from, x4, ... and the experiment's own size last.
std::vector<uint64_t> SweepSizes(const Experiment& e)
{
    std::vector<uint64_t> sizes;
    for (uint64_t n = std::max<uint64_t>(e.live.sweepFromBytes, 1); n < e.collective.bytes; n *= 4) sizes.push_back(n);
    sizes.push_back(e.collective.bytes);
    return sizes;
}

// `trace` with the sweep's measured points so far in its results ("sweepBytes", "sweepSeconds":
// comma-separated), which MeasuredRun puts on the model view.
std::shared_ptr<const core::Trace> WithSweep(const core::Trace& trace, const std::vector<core::FitSample>& points)
{
    core::Metadata meta = trace.Meta();
    std::string bytes, seconds;
    for (const core::FitSample& p : points) {
        bytes += (bytes.empty() ? "" : ",") + std::to_string(p.bytes);
        char s[32];
        std::snprintf(s, sizeof s, "%.9g", p.seconds);
        seconds += (seconds.empty() ? "" : ",") + std::string(s);
    }
    meta.results.Set("sweepBytes", bytes);
    meta.results.Set("sweepSeconds", seconds);
    return std::make_shared<const core::Trace>(core::TraceBuilder::WithMetadata(core::Trace(trace), std::move(meta)));
}

// One size of a sweep: its processes job followed to the end, its snapshots re-published.
core::RunReport SweepStep(core::JobContext& ctx, const Experiment& one, const std::vector<core::FitSample>& points, size_t index, size_t count)
{
    std::unique_ptr<core::Job> job = live::StartProcessJob(ProcessRequest(one));
    uint64_t version = 0;
    while (!job->Done()) {
        if (ctx.CancelRequested()) job->Cancel();
        if (auto t = job->Latest(&version)) ctx.Publish(WithSweep(*t, points));
        const core::JobProgress p = job->Progress();
        ctx.SetProgress(core::FormatBytes(one.collective.bytes) + " (" + std::to_string(index + 1) + " of " + std::to_string(count) + "): " + p.phase,
                        (static_cast<double>(index) + p.fraction) / static_cast<double>(count));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (auto t = job->Latest(&version)) ctx.Publish(WithSweep(*t, points));
    return job->Wait(); // a failure or Stop ends the sweep with what was measured so far shown
}

std::unique_ptr<core::Job> StartSweep(const Experiment& e)
{
    return std::make_unique<core::Job>([e](core::JobContext& ctx) {
        const std::vector<uint64_t> sizes = SweepSizes(e);
        std::vector<core::FitSample> points;
        core::RunReport all;
        for (size_t i = 0; i < sizes.size(); ++i) {
            Experiment one = e;
            one.collective.bytes = sizes[i];
            core::RunReport r = SweepStep(ctx, one, points, i, sizes.size());
            if (!r.rows.empty() && r.rows[0].GetNumber("seconds") > 0) points.push_back({sizes[i], r.rows[0].GetNumber("seconds"), 0});
            all.rows.insert(all.rows.end(), r.rows.begin(), r.rows.end());
            all.checksPassed = all.checksPassed && r.checksPassed;
            if (r.trace) all.trace = WithSweep(*r.trace, points);
            if (all.trace) ctx.Publish(all.trace);
        }
        all.summary.Set("sweepSizes", static_cast<int64_t>(sizes.size()));
        return all;
    });
}

// The sweep's points in a trace's results, as a group the model view fits alpha and beta to.
bool SweepGroup(const core::Trace& t, const Experiment& e, core::FitGroup& group)
{
    const std::string bytes = t.Meta().results.GetString("sweepBytes"), seconds = t.Meta().results.GetString("sweepSeconds");
    if (bytes.empty()) return false;
    group.collective = e.collective.collective;
    group.algorithm = e.collective.algorithm;
    group.ranks = e.collective.ranks;
    group.source = "measured on processes";
    group.label = "live sweep";
    size_t a = 0, b = 0;
    while (a < bytes.size() && b < seconds.size()) {
        size_t ea = bytes.find(',', a), eb = seconds.find(',', b);
        if (ea == std::string::npos) ea = bytes.size();
        if (eb == std::string::npos) eb = seconds.size();
        group.samples.push_back({std::stoull(bytes.substr(a, ea - a)), std::stod(seconds.substr(b, eb - b)), 0});
        a = ea + 1, b = eb + 1;
    }
    return !group.samples.empty();
}

} // namespace

std::string BackendAvailability(Backend b)
{
    if (PARALENS_RUNNER_IN_BROWSER && b != Backend::Simulated)
        return "desktop app only: a web page cannot start processes or reach GPUs (the README builds the desktop app)";
    switch (b) {
    case Backend::Simulated: return {};
    case Backend::Processes: {
        if (!PARALENS_RUNNER_HAVE_MPI) return "this paralens was built without MPI (install openmpi-bin and libopenmpi-dev, then rebuild)";
        // Looked up once: the controls ask every frame, and PATH does not change under a running app.
        static const bool haveMpirun = !live::FindMpirun("").empty();
        if (!haveMpirun) return "mpirun is not on PATH (Debian: apt-get install openmpi-bin; or set PARALENS_MPIRUN)";
        return {};
    }
    case Backend::Gpu:
        if (!gpu::BackendBuilt()) return "this build has no GPU backend (it needs CUDA and NCCL when it is built)";
        return Gpus().devices.empty() ? "no usable GPU: " + Gpus().problem : std::string();
    }
    return "unknown backend";
}

std::string BackendRefusal(const Experiment& e)
{
    if (e.backend == Backend::Simulated) return {};
    if (std::string why = BackendAvailability(e.backend); !why.empty()) return why;
    const std::string where = e.backend == Backend::Processes ? "the processes backend" : "the GPU backend";
    if (e.kind == ExperimentKind::File) return "a trace file is read, not run";
    if (e.kind == ExperimentKind::WhatIf) return "a what-if replays a trace, it is not run";
    if (e.kind == ExperimentKind::Autopar) return "an auto-parallel strategy runs on the modelled mesh only";
    if (e.kind == ExperimentKind::Plan) return "a training plan is modelled, not run";
    if (e.live.iterations < 1 || e.live.warmup < 0) return "iterations must be at least 1 and warm-up at least 0";
    if (e.kind == ExperimentKind::Training) return TrainingRefusal(e, where);
    if (e.backend == Backend::Processes) {
        const int ranks = e.kind == ExperimentKind::Collective ? e.collective.ranks : e.pipeline.stages;
        // (training steps: TrainingRefusal above)
        if (ranks > kMaxProcesses) return where + " starts at most " + std::to_string(kMaxProcesses) + " processes on this machine";
        if (e.kind == ExperimentKind::Collective && e.collective.bytes > (uint64_t{1} << 30))
            return where + " moves at most 1 GiB per collective (each process holds the whole vector)";
        if (e.kind == ExperimentKind::Pipeline && !PARALENS_RUNNER_HAVE_BLAS)
            return "this paralens was built without OpenBLAS (install libopenblas-dev, then rebuild): pipeline stages need real GEMMs";
        if (e.kind == ExperimentKind::Pipeline && e.pipeline.schedule == core::ScheduleKind::PipeDream)
            return "pipedream runs several mini-batches without a flush; run it on the simulator";
    }
    return {};
}

std::unique_ptr<core::Job> StartExperiment(const Experiment& e)
{
    const std::string why = BackendRefusal(e);
    if (!why.empty()) {
        if (!BackendAvailability(e.backend).empty()) throw Unavailable(why);
        throw Error(why);
    }
    Require(e.backend != Backend::Simulated, "the simulator runs on the window's own worker, not as a real backend's job");
    if (e.backend == Backend::Processes && e.kind == ExperimentKind::Collective && e.live.sweep) return StartSweep(e);
    if (e.backend == Backend::Processes) return live::StartProcessJob(ProcessRequest(e));
    return gpu::StartGpuJob(GpuRunRequest(e, static_cast<int>(Gpus().devices.size())));
}

std::shared_ptr<const RunResult> MeasuredRun(const Experiment& e, std::shared_ptr<const core::Trace> trace, const core::RunReport* report)
{
    auto r = std::make_shared<RunResult>(*AnalyzeTrace(e, std::move(trace)));
    const core::TraceSource source = r->trace->Meta().source;
    const std::string where = e.backend != Backend::Gpu ? "processes"
                              : source == core::TraceSource::Cupti ? "GPU, timed by CUPTI" : "GPU, timed by CUDA events";
    r->measured = true;
    r->title = (e.label.empty() ? "" : e.label + ": ") + Describe(e) + (report ? "  (measured on " : "  (measuring on ") + where +
               (report ? ")" : "...)");
    if (e.kind == ExperimentKind::Collective) MeasuredCollective(*r, e, report);
    if (e.kind == ExperimentKind::Pipeline) r->bubbleFormula = core::BubbleFractionFormula(PipelineSpecOf(e));
    if (e.kind == ExperimentKind::Training) AttachStepCollective(*r, e); // the flow view's allreduce or star
    const double peak = r->trace->Meta().hardware.GetNumber("cpuPeakFlops", 0.0);
    if (e.kind != ExperimentKind::Collective && peak > 0)
        FillMfu(*r, peak, "this CPU's single-thread sgemm peak, probed: " + Text(peak * 1e-9) + " GFLOP/s");
    if (report) r->critical = BuildCriticalPath(*r->trace); // the final trace only: snapshots stay cheap
    return r;
}

std::shared_ptr<const RunResult> RunToEnd(const Experiment& e)
{
    std::unique_ptr<core::Job> job = StartExperiment(e);
    const core::RunReport report = job->Wait();
    Require(report.trace != nullptr, "the run ended without a trace");
    return MeasuredRun(e, report.trace, &report);
}

} // namespace paralens::app
