#include "ExperimentRunner.hpp"

#include "RunBuilder.hpp"
#include "TrainingRuns.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "gpu/GpuBackend.hpp"
#include "live/ProcessJob.hpp"
#include "model/CostModel.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#ifndef PARALENS_RUNNER_HAVE_MPI
#define PARALENS_RUNNER_HAVE_MPI 0
#endif
#ifndef PARALENS_RUNNER_HAVE_BLAS
#define PARALENS_RUNNER_HAVE_BLAS 0
#endif

namespace paralens::app {

namespace {

constexpr int kMaxProcesses = 64;

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
                  "--iters", iters, "--warmup", warmup, "--trace-iterations", iters, "--timeout-s", Text(e.live.timeoutSec),
                  "--no-mpi-compare"};
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

void MeasuredCollective(RunResult& r, const Experiment& e)
{
    const CollectiveParams& c = e.collective;
    const double measured = MeasuredCollectiveSeconds(*r.trace);
    const core::Prediction pred = core::PredictSeconds({c.collective, c.algorithm, c.ranks, c.bytes, c.root, 1}, CostOf(e.cluster));
    r.simulatedSeconds = measured;
    r.predictedSeconds = pred.seconds;
    r.predictionExact = pred.exact;
    r.formula = core::FormulaText(c.collective, c.algorithm);
    r.algbwGBps = core::AlgBwGBps(c.bytes, measured);
    r.busbwGBps = r.algbwGBps * core::BusBwFactor(c.collective, c.ranks);
    if (measured > 0) r.model = BuildModelData(c, e.cluster, measured);
}

} // namespace

std::string BackendAvailability(Backend b)
{
    switch (b) {
    case Backend::Simulated: return {};
    case Backend::Processes:
        if (!PARALENS_RUNNER_HAVE_MPI) return "this paralens was built without MPI (install openmpi-bin and libopenmpi-dev, then rebuild)";
        if (live::FindMpirun("").empty()) return "mpirun is not on PATH (Debian: apt-get install openmpi-bin)";
        return {};
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
    if (e.kind == ExperimentKind::Training) return "training steps run on the simulator only; " + where + " runs collectives and pipelines";
    if (e.live.iterations < 1 || e.live.warmup < 0) return "iterations must be at least 1 and warm-up at least 0";
    if (e.backend == Backend::Processes) {
        const int ranks = e.kind == ExperimentKind::Collective ? e.collective.ranks : e.pipeline.stages;
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
    if (e.kind == ExperimentKind::Collective) MeasuredCollective(*r, e);
    if (e.kind == ExperimentKind::Pipeline) {
        core::PipelineSpec spec;
        spec.kind = e.pipeline.schedule;
        spec.stages = e.pipeline.stages;
        spec.microBatches = e.pipeline.microBatches;
        spec.chunks = e.pipeline.schedule == core::ScheduleKind::Interleaved ? e.pipeline.chunks : 1;
        r->bubbleFormula = core::BubbleFractionFormula(spec);
        const double peak = r->trace->Meta().hardware.GetNumber("cpuPeakFlops", 0.0);
        if (peak > 0) FillMfu(*r, peak, "this CPU's single-thread sgemm peak, probed: " + Text(peak * 1e-9) + " GFLOP/s");
    }
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
