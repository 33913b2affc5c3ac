#include "RunProcesses.hpp"

#include "CliCommon.hpp"

#include "gui/ExperimentRunner.hpp"
#include "gui/RunBuilder.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "trace/MetaTable.hpp"
#include "trace/TraceFile.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>
#include <unistd.h>

namespace paralens::app {

namespace {

std::atomic<bool> g_interrupted{false};
void OnInterrupt(int) { g_interrupted = true; }

Experiment ToExperiment(const ProcessesRunOptions& o)
{
    Experiment e;
    e.backend = Backend::Processes;
    e.cluster.alphaUs = o.alphaUs;
    if (o.bandwidthGBps > 0) e.cluster.bandwidthGBps = o.bandwidthGBps;
    e.live.timeoutSec = o.timeoutSec;
    e.live.warmup = o.warmup >= 0 ? o.warmup : 1;
    Require(o.timeoutSec > 0, "--timeout-s must be > 0");
    if (o.workload == "pipeline") {
        e.kind = ExperimentKind::Pipeline;
        auto kind = core::ParseScheduleKind(o.schedule);
        if (!kind) throw Error("--schedule: unknown schedule '" + o.schedule + "'; accepted: " + core::ScheduleNamesList());
        e.pipeline.schedule = *kind;
        e.pipeline.stages = o.stages;
        e.pipeline.microBatches = o.microbatches;
        e.pipeline.chunks = o.chunks;
        e.pipeline.recompute = o.recompute;
        e.pipeline.forwardMs = o.forwardMs;
        e.live.iterations = o.iters >= 0 ? o.iters : 2;
        Require(o.stages >= 1 && o.microbatches >= 1, "--stages and --microbatches must be at least 1");
        return e;
    }
    if (o.workload == "training") {
        e.kind = ExperimentKind::Training;
        TrainingParams& t = e.training;
        t.workload = o.training;
        t.devices = o.workers;
        t.layers = o.layers;
        t.iterations = o.iters >= 0 ? o.iters : 3;
        t.forwardMs = o.forwardMs;
        t.gradBytes = ParseSizeOption("--grad-bytes", o.gradBytes);
        if (!o.algorithm.empty()) t.algorithm = ParseAlgorithmOption(o.algorithm, core::Collective::AllReduce);
        t.servers = o.servers;
        t.overlap = false; // one task at a time per process
        e.cluster.stragglerRank = o.stragglerRank;
        e.cluster.stragglerSlowdown = o.slowdown;
        Require(o.workers >= 1 && o.layers >= 1 && t.iterations >= 1, "--ranks (workers), --layers and --iters must be at least 1");
        return e;
    }
    Require(o.workload.empty() || o.workload == "plan",
            "--workload: --backend processes runs plan (a collective, the default), pipeline or training, not " + o.workload);
    e.kind = ExperimentKind::Collective;
    e.collective.collective = ParseCollectiveOption(o.collective);
    e.collective.algorithm = ParseAlgorithmOption(o.algorithm, e.collective.collective);
    e.collective.ranks = o.ranks;
    e.collective.bytes = o.bytes.empty() ? (uint64_t{1} << 20) : ParseSizeOption("--bytes", o.bytes);
    e.collective.root = o.root;
    e.live.iterations = o.iters >= 0 ? o.iters : 20;
    Require(o.ranks >= 1, "--ranks must be at least 1");
    Require(o.root >= 0 && o.root < o.ranks, "--root must be a rank from 0 to ranks-1");
    return e;
}

// Waits for the job, printing its phase on stderr about once a second (not with --json); Ctrl-C cancels.
core::RunReport Follow(core::Job& job, bool quiet)
{
    g_interrupted = false;
    auto previous = std::signal(SIGINT, OnInterrupt);
    std::string shown;
    auto last = std::chrono::steady_clock::now();
    while (!job.Done()) {
        if (g_interrupted) job.Cancel();
        const core::JobProgress p = job.Progress();
        if (!quiet && p.phase != shown && std::chrono::steady_clock::now() - last > std::chrono::seconds(1)) {
            std::fprintf(stderr, "paralens run: %s (%.0f%%)\n", p.phase.c_str(), p.fraction * 100);
            shown = p.phase;
            last = std::chrono::steady_clock::now();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::signal(SIGINT, previous);
    try {
        return job.Wait();
    } catch (const core::Cancelled&) {
        throw Error("stopped (Ctrl-C); every process of the run has ended");
    }
}

nlohmann::ordered_json Numbers(const RunResult& r)
{
    nlohmann::ordered_json j;
    if (r.experiment.kind == ExperimentKind::Collective) {
        j["measuredSeconds"] = r.simulatedSeconds;
        j["modelSeconds"] = r.predictedSeconds;
        j["formula"] = r.formula;
        j["algbwGBps"] = r.algbwGBps;
        j["busbwGBps"] = r.busbwGBps;
    } else if (r.experiment.kind == ExperimentKind::Training) {
        j["measuredSeconds"] = r.simulatedSeconds;
        j["modelSeconds"] = r.predictedSeconds;
        j["iterations"] = r.experiment.training.iterations;
        if (r.mfu.available) j["mfu"] = r.mfu.report.mfu;
    } else {
        j["bubbleFraction"] = r.bubbleFraction;
        j["bubbleFormula"] = r.bubbleFormula >= 0 ? nlohmann::ordered_json(r.bubbleFormula) : nlohmann::ordered_json(nullptr);
        j["stepSeconds"] = static_cast<double>(r.windowEndNs - r.windowBeginNs) * 1e-9;
        if (r.mfu.available) {
            j["mfu"] = r.mfu.report.mfu;
            j["peakSource"] = r.mfu.peakSource;
        }
    }
    return j;
}

} // namespace

int RunOnProcesses(const ProcessesRunOptions& o)
{
    const Experiment e = ToExperiment(o);
    if (!o.out.empty()) CheckWritable("--out", o.out);
    std::unique_ptr<core::Job> job = StartExperiment(e); // Unavailable: no mpirun, ...
    const core::RunReport report = Follow(*job, o.json);
    Require(report.trace != nullptr, "the run ended without a trace");
    const auto run = MeasuredRun(e, report.trace, &report);
    if (!o.out.empty()) core::WriteTraceFile(*report.trace, o.out);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const core::MetaSection& row : report.rows) rows.push_back(core::ToJson(row));
    if (o.json) {
        nlohmann::ordered_json j{{"backend", "processes"}, {"experiment", Describe(e)}, {"ranks", run->trace->Devices().size()},
                                 {"measuredSpans", run->trace->SpanCount()}, {"checksPassed", report.checksPassed}};
        j["numbers"] = Numbers(*run);
        j["rows"] = rows;
        if (!o.out.empty()) j["out"] = o.out;
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        std::printf("# paralens run --backend processes: %s, %zu processes, %zu measured spans\n", Describe(e).c_str(),
                    run->trace->Devices().size(), run->trace->SpanCount());
        std::fputs(core::FormatTable(rows).c_str(), stdout);
        const nlohmann::ordered_json numbers = Numbers(*run); // named: items() of a temporary would dangle
        for (const auto& [key, value] : numbers.items()) std::printf("# %s: %s\n", key.c_str(), core::FormatCell(value).c_str());
        if (!o.out.empty()) std::printf("# trace: %s\n", o.out.c_str());
    }
    return report.checksPassed ? 0 : 1;
}

} // namespace paralens::app
