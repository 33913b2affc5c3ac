// paralens pipeline: a pipeline schedule on the modelled cluster, measured against the lectures.
#include "CliCommon.hpp"
#include "Commands.hpp"
#include "gui/RunBuilder.hpp"
#include "TextGantt.hpp"

#include "analysis/PipelineMetrics.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/Hardware.hpp"
#include "schedule/Schedule.hpp"
#include "trace/TraceFile.hpp"

#include <cmath>
#include <cstdio>
#include <memory>

namespace paralens::app {

namespace {

struct PipelineOptions {
    std::string schedule = "1f1b";
    int stages = 4;
    int microbatches = 8;
    int chunks = 1;
    int batches = 1;
    double forwardMs = 1.0;
    double backwardMs = -1.0;
    double weightMs = -1.0;
    std::string activationBytes = "0";
    double alphaUs = 0.0;
    double bandwidthGBps = 100.0;
    std::string stageSlowdown;
    bool recompute = false;
    double optimizerMs = 0.0;
    double forwardTflop = 0.0;
    std::string hardware = "h100-sxm";
    std::string dtype = "bf16";
    std::string out;
    bool json = false;
};

// The command's options as the window's pipeline experiment (gui/RunBuilder builds and analyses
// both): the links always modelled, with this command's alpha and bandwidth.
Experiment ToExperiment(const PipelineOptions& o)
{
    auto kind = core::ParseScheduleKind(o.schedule);
    if (!kind) throw Error("--schedule: unknown schedule '" + o.schedule + "'; accepted: " + core::ScheduleNamesList());
    Require(o.alphaUs >= 0 && o.bandwidthGBps > 0, "--alpha-us must be >= 0 and --bandwidth-GBps > 0");
    Experiment e;
    e.kind = ExperimentKind::Pipeline;
    PipelineParams& p = e.pipeline;
    p.schedule = *kind;
    p.stages = o.stages;
    p.microBatches = o.microbatches;
    p.chunks = o.chunks;
    p.batches = o.batches;
    p.forwardMs = o.forwardMs;
    p.backwardMs = o.backwardMs;
    p.weightMs = o.weightMs;
    p.optimizerMs = o.optimizerMs;
    p.activationBytes = ParseSizeOption("--activation-bytes", o.activationBytes);
    p.communicate = true;
    if (!o.stageSlowdown.empty()) p.stageSlowdown = core::ParseStageSlowdown(o.stageSlowdown);
    p.recompute = o.recompute;
    p.forwardTflop = o.forwardTflop;
    p.gpu = o.hardware;
    p.dtype = o.dtype;
    e.cluster.alphaUs = o.alphaUs;
    e.cluster.bandwidthGBps = o.bandwidthGBps;
    e.cluster.gammaGBps = 0.0;
    return e;
}

void RunPipeline(const PipelineOptions& o)
{
    const Experiment e = ToExperiment(o);
    const core::PipelineSpec spec = PipelineSpecOf(e);
    const core::Schedule schedule = core::BuildSchedule(spec); // validates: the message names the option
    if (!o.out.empty()) CheckWritable("--out", o.out);
    const std::shared_ptr<const RunResult> run = BuildRun(e);
    const core::Trace& trace = *run->trace;
    const double pipelineSeconds = run->pipelineSeconds;
    const double bubble = run->bubbleFraction;
    const double formula = run->bubbleFormula;
    const std::vector<int>& peakActs = run->peakActivations;
    const core::MfuReport& mfu = run->mfu.report;
    const double peak = run->mfu.peakFlops;
    if (!o.out.empty()) core::WriteTraceFile(trace, o.out);
    size_t ops = 0;
    for (const auto& st : schedule.stages) ops += st.size();

    if (o.json) {
        nlohmann::json j{{"schedule", core::Name(spec.kind)}, {"stages", spec.stages}, {"microbatches", spec.microBatches},
                         {"chunks", spec.chunks}, {"ops", ops}, {"makespanSeconds", run->simulatedSeconds},
                         {"pipelineSeconds", pipelineSeconds}, {"bubbleFraction", bubble}, {"peakActivations", peakActs}};
        j["bubbleFractionFormula"] = formula >= 0 ? nlohmann::json(formula) : nlohmann::json(nullptr);
        if (spec.kind == core::ScheduleKind::PipeDream) {
            j["batches"] = spec.batches;
            j["weightVersions"] = peakActs; // each in-flight micro-batch keeps its weight version
        }
        if (run->mfu.available)
            j["mfu"] = {{"modelFlops", mfu.modelFlops}, {"hardwareFlops", mfu.hardwareFlops}, {"mfu", mfu.mfu},
                        {"hfu", mfu.hfu}, {"peakFlopsPerDevice", peak}, {"hardware", o.hardware}, {"dtype", o.dtype},
                        {"flopsFrom", o.forwardTflop > 0 ? "--forward-tflop" : "--t-forward-ms at the kernel efficiency of the peak"},
                        {"kernelEfficiency", e.pipeline.kernelEfficiency}};
        if (!o.out.empty()) j["out"] = o.out;
        PrintJson(j);
        return;
    }
    char weight[48] = "";
    if (spec.SplitsWeightGrad()) std::snprintf(weight, sizeof weight, " (W %.3g ms)", spec.WeightSec() * 1e3);
    std::printf("%s pipeline: D = %d stages, N = %d micro-batches%s; F %.3g ms, B %.3g ms%s per micro-batch and stage\n",
                std::string(core::Name(spec.kind)).c_str(), spec.stages, spec.microBatches,
                spec.chunks > 1 ? (", v = " + std::to_string(spec.chunks) + " chunks").c_str() : "", spec.forwardSec * 1e3,
                spec.BackwardSec() * 1e3, weight);
    std::printf("  step time  %s  (%zu ops, schedule validated: every op once, dependencies kept, no deadlock)\n",
                core::FormatSeconds(run->simulatedSeconds).c_str(), ops);
    const bool zb = spec.kind == core::ScheduleKind::ZeroBubbleH1;
    if (formula >= 0)
        std::printf("  bubble     %.4f measured, %.4f by %s\n", bubble, formula, zb ? "ZB-H1's closed form" : "the lectures' formula");
    else if (zb) std::printf("  bubble     %.4f measured (ZB-H1's closed form holds from N = D)\n", bubble);
    else std::printf("  bubble     %.4f measured (the lectures give no closed form for %s)\n", bubble, std::string(core::Name(spec.kind)).c_str());
    std::printf("  peak activations per stage (micro-batches held):");
    for (int a : peakActs) std::printf(" %d", a);
    std::printf("\n");
    if (run->mfu.available)
        std::printf("  MFU %.1f%%  HFU %.1f%%  (peak %s %s = %.0f TFLOPS per device, from the spec table; FLOPs from %s)\n", mfu.mfu * 100,
                    mfu.hfu * 100, o.hardware.c_str(), o.dtype.c_str(), peak / 1e12,
                    o.forwardTflop > 0 ? "--forward-tflop"
                                       : ("the forward time at " + std::to_string(std::lround(e.pipeline.kernelEfficiency * 100)) + "% of the peak").c_str());
    std::printf("\n%s", TextGantt(trace, 96, run->windowEndNs).c_str());
    if (!o.out.empty()) std::printf("\ntrace: %s\n", o.out.c_str());
}

} // namespace

void AddPipelineCommand(CLI::App& root)
{
    auto o = std::make_shared<PipelineOptions>();
    CLI::App* cmd = root.add_subcommand("pipeline", "Run a pipeline schedule on the modelled cluster: bubbles, activations, MFU");
    cmd->add_option("--schedule,-s", o->schedule, "One of: " + core::ScheduleNamesList())->capture_default_str();
    cmd->add_option("--stages,-D", o->stages, "Pipeline stages (devices) D")->capture_default_str();
    cmd->add_option("--microbatches,-N", o->microbatches, "Micro-batches N per mini-batch")->capture_default_str();
    cmd->add_option("--chunks,-v", o->chunks, "Model chunks per device (interleaved)")->capture_default_str();
    cmd->add_option("--batches", o->batches, "Mini-batches in flight (pipedream)")->capture_default_str();
    cmd->add_option("--t-forward-ms", o->forwardMs, "Forward time of one micro-batch through one stage")->capture_default_str();
    cmd->add_option("--t-backward-ms", o->backwardMs, "Backward time (default: 2 x forward)");
    cmd->add_option("--t-weight-ms", o->weightMs, "The weight-gradient part of backward, split out by zb-h1 (default: half)");
    cmd->add_option("--activation-bytes", o->activationBytes, "Bytes sent between stages per micro-batch")->capture_default_str();
    cmd->add_option("--alpha-us", o->alphaUs, "Latency of a stage-to-stage message")->capture_default_str();
    cmd->add_option("--bandwidth-GBps", o->bandwidthGBps, "Stage-to-stage bandwidth")->capture_default_str();
    cmd->add_option("--stage-slowdown", o->stageSlowdown, "Per-stage time factors, e.g. 1,1,2,1");
    cmd->add_flag("--recompute", o->recompute, "Full activation recomputation (B re-runs F first)");
    cmd->add_option("--optimizer-ms", o->optimizerMs, "Optimizer step after the flush")->capture_default_str();
    cmd->add_option("--forward-tflop", o->forwardTflop, "Model TFLOP of one micro-batch's forward through one stage (default: "
                                                        "its time at 60% of the GPU's peak, as the window assumes)");
    cmd->add_option("--hardware", o->hardware, "GPU for the MFU peak: " + core::GpuIdsList())->capture_default_str();
    cmd->add_option("--dtype", o->dtype, "Data type for the MFU peak (bf16, fp16, fp32, tf32, fp8)")->capture_default_str();
    cmd->add_option("--out,-o", o->out, "Write the simulated trace (.json or .json.gz)");
    cmd->add_flag("--json", o->json, "Machine-readable output on stdout");
    cmd->callback([o] { RunPipeline(*o); });
}

} // namespace paralens::app
