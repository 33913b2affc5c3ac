// paralens plan: the training-configuration planner. For a transformer (a preset or dimensions by
// hand), a cluster and a global batch: every DP x TP x PP x CP (x EP) configuration with its
// micro-batch size, schedule, recomputation, ZeRO stage and sequence parallelism, ranked by step
// time with memory per GPU, the Pareto front of time against memory, the published runs it is
// checked against (--validate), and one row's simulated step as a trace (--trace).
#include "CliCommon.hpp"
#include "Commands.hpp"
#include "PlanValidation.hpp"

#include "analysis/Extrapolation.hpp"
#include "analysis/Fitting.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/Fit.hpp"
#include "planner/Calibration.hpp"
#include "planner/PlannerTrace.hpp"
#include "planner/PublishedSet.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

namespace paralens::app {

namespace {

using Json = nlohmann::json;

struct PlanOptions {
    PlanOptions()
    {
        request.cluster.gpus = 64; // 8 nodes: the default model fits and every kind of parallelism shows
        request.globalBatch = 128;
    }
    std::string model = "llama3-70b";
    bool modelGiven = false; // --model on the command line (else the default, unless a model is described by hand)
    // The architecture's options as given (unset: not given; any value given, 0 and negatives
    // included, goes to the model, which refuses what it cannot be); --mlp and --dropout as typed,
    // read into it by ModelOf.
    core::ModelInput arch;
    std::string mlp, dropout;
    bool AnyArchitecture() const { return arch.AnyArchitecture() || !mlp.empty() || !dropout.empty(); }
    std::string gpu = "h100-sxm";
    core::PlanRequest request;
    // Fixed choices as given (unset: searched; any value given goes to the planner, which refuses
    // what cannot be: --tp 0 is an error, not "search").
    std::optional<int> dp, tp, pp, ep, cp, microBatch, chunks, zero, firstStageLayers, lastStageLayers;
    std::string ppLayout; // Megatron-Core's --pipeline-model-parallel-layout
    std::optional<double> nvlinkGBps, gemmTflops; // unset: the spec table's, peak x --efficiency
    std::string schedule, recompute, recomputeModules, sp, gradReduce = "fp32", networkFit, nvlinkFit;
    bool noFlash = false;
    int top = 10, traceRow = 1;
    std::string trace;
    std::vector<std::string> calibrate;
    bool json = false, validate = false;
    std::string published; // a run of the published set by its id
};

// The model: the preset --model names (the default one when no architecture option is given),
// changed by the options given; without --model, the options describe a model by hand.
core::ResolvedModel ModelOf(const PlanOptions& o)
{
    core::ModelInput in = o.arch;
    in.preset = o.modelGiven || !o.AnyArchitecture() ? o.model : std::string();
    if (!o.mlp.empty()) {
        in.mlp = core::ParseMlpKind(o.mlp);
        Require(in.mlp.has_value(), "--mlp must be gelu, swiglu or relu2 (got '" + o.mlp + "')");
    }
    if (!o.dropout.empty()) {
        Require(o.dropout == "on" || o.dropout == "off", "--dropout must be on or off (got '" + o.dropout + "')");
        in.dropout = o.dropout == "on";
    }
    return core::ResolveModel(in);
}

// --network-fit / --nvlink-fit: a fit file whose regimes price that level's collectives and sends
// by size (a network log across named hosts per NIC: analysis/Extrapolation.hpp
// NetworkLinkFromFit); the header shows its link at 1 GiB a NIC, else its 8-rank allreduce's line.
void ApplyLinkFit(const char* option, const std::string& path, bool insideNode, core::PlanCluster& c)
{
    auto file = std::make_shared<const core::FitFile>(core::LoadFitFile(path)); // or a log, fitted as paralens fit does
    RequireFitOfLevel(option, insideNode ? "--network-fit" : "--nvlink-fit", path, *file, insideNode);
    std::string why;
    std::optional<core::CostParams> p;
    if (!insideNode) p = core::NetworkLinkFromFit(*file, 1 << 30, c.nvlinkAlphaUs * 1e-6, &why);
    if (!p) p = core::ModelFromFit(*file, core::Collective::AllReduce, 8, &why);
    Require(p.has_value() && p->betaSecPerByte > 0, std::string(option) + ": " + path + " holds no fit with a bandwidth");
    (insideNode ? c.nvlinkAlphaUs : c.networkAlphaUs) = p->alphaSec * 1e6;
    (insideNode ? c.nvlinkGBps : c.networkGBps) = 1e-9 / p->betaSecPerByte;
    (insideNode ? c.nvlinkFit : c.networkFit) = std::move(file);
}

// --calibrate: the trace files of one step read as one job, their GEMMs' efficiency by size.
core::Calibration CalibrationOf(const std::vector<std::string>& paths, const core::GpuSpec& fallback, int gpusPerNode)
{
    std::string origin;
    for (const std::string& p : paths) origin += (origin.empty() ? "" : ", ") + p;
    const core::Trace trace = core::ReadTraceFiles(paths);
    return core::CalibrateFromTrace(trace, "--calibrate " + origin, fallback, gpusPerNode);
}

// The links' and the GEMMs' rates and latencies as given: each one that can be (a rate positive, a
// latency not negative), set into `c`.
void CheckLinkOptions(const PlanOptions& o, core::PlanCluster& c)
{
    auto text = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        return std::string(buf);
    };
    auto positive = [&](const char* flag, double v) { Require(v > 0, std::string(flag) + " must be positive (got " + text(v) + ")"); };
    positive("--network-GBps", c.networkGBps);
    if (o.nvlinkGBps) positive("--nvlink-GBps", *o.nvlinkGBps), c.nvlinkGBps = *o.nvlinkGBps;
    if (o.gemmTflops) positive("--gemm-tflops", *o.gemmTflops), c.gemmTflops = *o.gemmTflops;
    for (const auto& [flag, v] : {std::pair{"--network-alpha-us", c.networkAlphaUs}, std::pair{"--nvlink-alpha-us", c.nvlinkAlphaUs}})
        Require(v >= 0, std::string(flag) + " must not be negative (got " + text(v) + ")");
}

core::PlanRequest ToRequest(const PlanOptions& o, core::ResolvedModel* resolved = nullptr, core::Calibration* calibration = nullptr)
{
    core::PlanRequest r = o.request;
    core::ResolvedModel model = ModelOf(o);
    r.model = model.model;
    if (resolved) *resolved = std::move(model);
    const core::GpuSpec* gpu = core::FindGpu(o.gpu);
    Require(gpu != nullptr, "--gpu: unknown GPU '" + o.gpu + "' (one of " + core::GpuIdsList() + ")");
    r.cluster.gpu = *gpu;
    Require(r.cluster.PeakFlops() > 0, "--dtype: " + o.gpu + " has no " + r.cluster.dtype + " peak in the spec table");
    CheckLinkOptions(o, r.cluster);
    if (r.cluster.fp8 && gpu->PeakFlops("fp8") <= 0) {
        std::string with;
        for (const core::GpuSpec& g : core::HardwareTable())
            if (g.PeakFlops("fp8") > 0) with += (with.empty() ? "" : ", ") + g.id;
        throw Error("--fp8: " + o.gpu + " has no fp8 peak in the spec table (these have: " + with + ")");
    }
    if (!o.networkFit.empty()) ApplyLinkFit("--network-fit", o.networkFit, false, r.cluster);
    if (!o.nvlinkFit.empty()) ApplyLinkFit("--nvlink-fit", o.nvlinkFit, true, r.cluster);
    if (!o.calibrate.empty()) {
        const core::Calibration c = CalibrationOf(o.calibrate, *gpu, r.cluster.gpusPerNode);
        core::ApplyCalibration(c, r.cluster); // fits given by option win
        if (calibration) *calibration = c;
    }
    r.flashAttention = !o.noFlash;
    r.dp = o.dp, r.tp = o.tp, r.pp = o.pp, r.ep = o.ep, r.cp = o.cp;
    r.firstStageLayers = o.firstStageLayers, r.lastStageLayers = o.lastStageLayers;
    r.microBatch = o.microBatch, r.chunks = o.chunks, r.zero = o.zero;
    if (!o.ppLayout.empty()) r.layout = std::make_shared<const core::PipelineLayout>(core::ParsePipelineLayout(o.ppLayout, o.pp.value_or(0)));
    if (!o.schedule.empty()) {
        r.schedule = core::ParseScheduleKind(o.schedule);
        Require(r.schedule && *r.schedule != core::ScheduleKind::Naive && *r.schedule != core::ScheduleKind::PipeDream,
                "--schedule must be gpipe, 1f1b, interleaved or zb-h1 (got '" + o.schedule + "')");
    }
    if (!o.recompute.empty()) {
        r.recompute = core::ParseRecompute(o.recompute);
        Require(r.recompute.has_value(), "--recompute must be none, selective or full (got '" + o.recompute + "')");
    }
    if (!o.recomputeModules.empty()) r.recomputeModules = core::ParseRecomputeModules(o.recomputeModules, "--recompute-modules");
    Require(o.gradReduce == "fp32" || o.gradReduce == "bf16", "--grad-reduce must be fp32 or bf16 (got '" + o.gradReduce + "')");
    r.gradReduceFp32 = o.gradReduce == "fp32";
    if (!o.sp.empty()) {
        Require(o.sp == "on" || o.sp == "off", "--sp must be on or off (got '" + o.sp + "')");
        r.sequenceParallel = o.sp == "on";
    }
    return r;
}

Json RowJson(const core::PlanRow& row)
{
    const core::TrainingConfig& c = row.config;
    const core::MemoryBreakdown& m = row.memory;
    const core::StepBreakdown& t = row.time;
    Json j = {{"dp", c.dp}, {"tp", c.tp}, {"pp", c.pp}, {"cp", c.cp}, {"ep", c.ep}, {"firstStageLayers", c.firstStageLayers}, {"lastStageLayers", c.lastStageLayers},
              {"layout", c.layout ? Json(c.layout->text) : Json(nullptr)}, {"microBatch", c.microBatch}, {"microBatches", row.microBatches},
              {"schedule", c.pp > 1 ? std::string(core::Name(c.schedule)) : std::string("none")}, {"chunks", c.chunks},
              {"recompute", core::Name(c.recompute)}, {"zero", c.zero}, {"sequenceParallel", c.sequenceParallel},
              {"fits", row.fits}, {"memoryBytesPerGpu", m.Total()},
              {"memory", {{"weights", m.weights}, {"gradients", m.gradients}, {"optimizer", m.optimizer}, {"activations", m.activations},
                          {"stage", m.stage}, {"inFlightMicroBatches", m.inFlight}}}};
    if (!row.fits) j["rejected"] = row.rejected;
    if (row.timed) {
        j["stepSeconds"] = t.step;
        j["tokensPerSecond"] = row.tokensPerSecond;
        j["mfu"] = row.mfu;
        j["hfu"] = row.hfu;
        const core::ComputeParts& p = t.computeParts;
        j["computeParts"] = {{"gemms", p.gemms}, {"attention", p.attention}, {"memoryBound", p.memoryBound}, {"recompute", p.recompute}};
        j["time"] = {{"compute", t.compute}, {"tpComm", t.tpComm}, {"cpComm", t.cpComm}, {"epComm", t.epComm}, {"bubble", t.bubble}, {"ppComm", t.ppComm},
                     {"dpComm", t.dpComm}, {"optimizer", t.optimizer}, {"forwardPerMicroBatch", t.forwardSec},
                     {"backwardPerMicroBatch", t.backwardSec}, {"sendPerMicroBatch", t.sendSec}, {"dpSync", t.dpSyncSec}, {"dpExposed", t.dpExposedSec}};
    }
    return j;
}

Json CalibrationJson(const core::Calibration& c, const core::PlanCluster& planned)
{
    std::vector<std::string> notes = c.notes;
    if (const std::string other = core::CalibratedOnOtherGpu(planned); !other.empty()) notes.push_back(other);
    Json points = Json::array(), hbm = Json::array();
    for (const core::CalibrationPoint& p : c.points)
        points.push_back({{"flopsPerGemm", p.flops}, {"minFlops", p.minFlops}, {"maxFlops", p.maxFlops}, {"kernels", p.kernels},
                          {"seconds", p.seconds}, {"efficiency", p.efficiency}});
    for (const core::BandwidthPoint& p : c.hbmPoints)
        hbm.push_back({{"bytesPerKernel", p.bytes}, {"minBytes", p.minBytes}, {"maxBytes", p.maxBytes}, {"kernels", p.kernels},
                       {"seconds", p.seconds}, {"efficiency", p.efficiency}});
    return {{"gpu", c.gpu}, {"gpuFrom", c.gpuFrom}, {"gemmKernels", c.gemmKernels}, {"gemmKernelsWithFlops", c.gemmKernelsWithFlops},
            {"gemmFlops", c.gemmFlops}, {"gemmSeconds", c.gemmSeconds}, {"efficiency", c.efficiency}, {"points", points},
            {"attentionKernelsWithFlops", c.attentionKernelsWithFlops}, {"attentionEfficiency", c.attentionEfficiency},
            {"memoryKernelsWithBytes", c.memoryKernelsWithBytes}, {"memoryBytes", c.memoryBytes}, {"memorySeconds", c.memorySeconds},
            {"hbmEfficiency", c.hbmEfficiency}, {"hbmPoints", hbm},
            {"collectives", c.collectiveFits}, {"measuresNvlink", c.nvlinkFit != nullptr}, {"measuresNetwork", c.networkFit != nullptr},
            {"dtypes", c.dtypes}, {"shares", {{"gemm", c.gemmShare}, {"attention", c.attentionShare}, {"collectives", c.collectiveShare},
                                              {"other", c.otherShare}}},
            {"notes", notes}};
}

void PrintCalibration(const core::Calibration& c)
{
    std::string dtypes;
    for (const std::string& d : c.dtypes) dtypes += (dtypes.empty() ? "" : ", ") + d;
    std::printf("# calibrated: %zu of %zu GEMM kernels with FLOPs (%s), %.1f TFLOPS, %.1f%% of %s's peak (GPU from the %s)\n",
                c.gemmKernelsWithFlops, c.gemmKernels, dtypes.c_str(), c.gemmFlops / c.gemmSeconds * 1e-12, c.efficiency * 100,
                c.gpu.c_str(), c.gpuFrom.c_str());
    std::printf("#   efficiency by FLOPs per GEMM (the planner's GEMMs at their size's):");
    for (const core::CalibrationPoint& p : c.points) std::printf("  %.2g: %.3f (%zu)", p.flops, p.efficiency, p.kernels);
    if (c.attentionKernelsWithFlops > 0)
        std::printf("\n#   attention: %zu kernels with FLOPs, %.1f%% of %s's peak (the full square, as the planner counts it)",
                    c.attentionKernelsWithFlops, c.attentionEfficiency * 100, c.gpu.c_str());
    if (c.memoryKernelsWithBytes > 0) {
        std::printf("\n#   memory-bound kernels: %zu with bytes, %.1f GB/s, %.1f%% of %s's HBM bandwidth; by bytes per kernel (the planner's "
                    "memory-bound ops at their size's):",
                    c.memoryKernelsWithBytes, c.memoryBytes / c.memorySeconds * 1e-9, c.hbmEfficiency * 100, c.gpu.c_str());
        for (const core::BandwidthPoint& p : c.hbmPoints) std::printf("  %.2g: %.3f (%zu)", p.bytes, p.efficiency, p.kernels);
    }
    std::printf("\n#   GPU time: GEMMs %.0f%%, attention %.0f%%, collectives %.0f%%, other %.0f%%\n", c.gemmShare * 100,
                c.attentionShare * 100, c.collectiveShare * 100, c.otherShare * 100);
    for (const std::string& f : c.collectiveFits) std::printf("#   collectives: %s\n", f.c_str());
    for (const std::string& n : c.notes) std::printf("#   %s\n", n.c_str());
}

// The table's "split" cell: how a pipeline's layers are spread over its stages ("-" without one;
// "even"; the end stages' layers of an uneven split, "1+..+1"; "layout" for a --pp-layout).
std::string SplitCell(const core::TrainingConfig& c)
{
    if (c.pp == 1) return "-";
    if (c.layout) return "layout";
    return c.Uneven() ? core::EndStagesText(c) : "even";
}

void PrintRow(size_t rank, const core::PlanRow& row)
{
    const core::TrainingConfig& c = row.config;
    const core::StepBreakdown& t = row.time;
    auto pct = [&](double part) { return t.step > 0 ? 100.0 * part / t.step : 0.0; };
    std::printf("%4zu %5d %3d %4d %-8s %3d %3d %3d %5d  %-15s %-9s %4d %-3s %10s %11.0f %5.1f%% %5.1f%% %9s   %4.0f %4.0f %4.0f %4.0f %4.0f %4.0f\n",
                rank, c.dp, c.tp, c.pp, SplitCell(c).c_str(), c.cp, c.ep, c.microBatch, row.microBatches, core::ScheduleText(c).c_str(), std::string(core::Name(c.recompute)).c_str(),
                c.zero, c.sequenceParallel ? "on" : "off", core::FormatSeconds(t.step).c_str(), row.tokensPerSecond, row.mfu * 100, row.hfu * 100,
                core::GbText(row.memory.Total()).c_str(), pct(t.compute), pct(t.tpComm + t.cpComm + t.epComm), pct(t.bubble), pct(t.ppComm), pct(t.dpComm),
                pct(t.optimizer));
}

// What a row's compute runs, as shares of it: "# #3's compute, ...".
void PrintComputeParts(size_t rank, const core::PlanRow& row)
{
    const core::StepBreakdown& t = row.time;
    const core::ComputeParts& p = t.computeParts;
    auto pct = [&](double part) { return t.compute > 0 ? 100.0 * part / t.compute : 0.0; };
    std::printf("# #%zu's compute, %s of its %s step (%d micro-batches through its bounding stage): GEMMs %.0f%%, attention %.0f%%, "
                "memory-bound ops %.0f%%, recomputation %.0f%%\n",
                rank, core::FormatSeconds(t.compute).c_str(), core::FormatSeconds(t.step).c_str(), row.microBatches, pct(p.gemms),
                pct(p.attention), pct(p.memoryBound), pct(p.recompute));
}

// "# pipeline layout 'Et*4|(t*4|)*14tmL' (pp 2, v 8): stage 0 the embedding and 32 layers; stage 1 ..."
void PrintLayout(const core::PipelineLayout& layout)
{
    std::string stages;
    for (int stage = 0; stage < layout.pp; ++stage) {
        const core::PipelineLayout::Part p = layout.Stage(stage);
        std::string what = (p.embedding ? "the embedding, " : "") + std::to_string(p.layers) + " layers";
        if (p.mtp > 0) what += ", " + std::to_string(p.mtp) + " MTP module" + (p.mtp > 1 ? "s" : "");
        if (p.loss) what += ", the output layer and loss";
        stages += (stages.empty() ? "" : "; ") + ("stage " + std::to_string(stage) + " " + what);
    }
    std::printf("# pipeline layout '%s' (pp %d, v %d): %s\n", layout.text.c_str(), layout.pp, layout.chunks, stages.c_str());
}

void PrintHeader()
{
    std::printf("%4s %5s %3s %4s %-8s %3s %3s %3s %5s  %-15s %-9s %4s %-3s %10s %11s %6s %6s %9s   %% of step: comp tp/cp/ep bubl send dp opt\n",
                "rank", "dp", "tp", "pp", "split", "cp", "ep", "mb", "N", "schedule", "recompute", "zero", "sp", "step", "tokens/s", "MFU", "HFU", "mem/GPU");
}

std::string Joined(const std::vector<std::string>& parts)
{
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
    return out;
}

std::string Fixed(double v, int digits)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string Fixed2(double v) { return Fixed(v, 2); }

// "0.55", or "0.60 (0.55 x a100-sxm's measured matmul ceiling, 86.9% of peak, over an H100's BF16 80.3%)".
std::string EfficiencyText(const core::PlanCluster& k, const std::string& dtype)
{
    const double e = k.EfficiencyFor(dtype);
    if (std::abs(e - k.efficiency) < 1e-12) return Fixed2(e);
    char buf[200];
    const core::GpuSpec* h100 = core::FindGpu("h100-sxm");
    std::snprintf(buf, sizeof buf, "%.2f (%.2f x %s's measured %s matmul ceiling, %.1f%% of peak, over an H100's BF16 %.1f%%)", e, k.efficiency,
                  k.gpu.id.c_str(), dtype.c_str(), k.gpu.MatmulCeiling(dtype) * 100, h100 ? h100->MatmulCeiling("bf16") * 100 : 0.0);
    return buf;
}

void PrintTable(const core::PlanRequest& r, const core::ResolvedModel& model, const core::PlanResult& res, int top)
{
    const core::TransformerModel& m = r.model;
    std::string experts;
    if (m.IsMoe()) {
        experts = ", " + std::to_string(m.experts) + " experts top-" + std::to_string(m.topK);
        if (m.sharedExperts > 0) experts += " + " + std::to_string(m.sharedExperts) + " shared";
        if (m.DenseLayers() > 0) experts += ", the first " + std::to_string(m.denseLayers) + " layers dense (ffn " + std::to_string(m.denseFfn) + ")";
    }
    std::string attention = m.IsMla() ? " latent attention: q rank " + std::to_string(m.qLoraRank) + ", kv rank " +
                                            std::to_string(m.kvLoraRank) + "," : "";
    if (m.IsWindowed())
        attention += " a " + std::to_string(m.window) + "-token window on " + std::to_string(m.WindowedLayers()) + " of " +
                     std::to_string(m.layers) + " layers,";
    const std::string mtp = m.mtpLayers > 0 ? ", multi-token prediction " + std::to_string(m.mtpLayers) + (m.mtpLayers > 1 ? " modules" : " module") +
                                                  " (a layer, a 2h x h projection and the output layer again each, on the last stage)"
                                            : "";
    std::printf("# %s: %.1f B parameters (%.1f B active), %d layers, hidden %d, %d heads (%d KV),%s ffn %d %s%s%s\n", m.id.c_str(),
                m.TotalParams() * 1e-9, m.ActiveParams() * 1e-9, m.layers, m.hidden, m.heads, m.kvHeads, attention.c_str(), m.ffn,
                std::string(core::Name(m.mlp)).c_str(), experts.c_str(), mtp.c_str());
    if (m.id.back() == '*') // changed: say what still comes from the preset
        std::printf("# from the preset (%s): %s\n", m.source.c_str(), Joined(model.fromPreset).c_str());
    else if (!model.defaulted.empty())
        std::printf("# described by hand; not given, so assumed: %s\n", Joined(model.defaulted).c_str());
    else
        std::printf("# source: %s%s\n", m.source.c_str(), m.mtpLayers > 0 ? "; its multi-token prediction as the run trains it" : "");
    std::printf("# %d x %s (%d per node; NVLink %.0f GB/s, network %.0f GB/s per GPU), %.0f TFLOPS %s x %s; %s usable per GPU\n",
                r.cluster.gpus, r.cluster.gpu.id.c_str(), r.cluster.gpusPerNode, r.cluster.NvlinkGBps(), r.cluster.networkGBps,
                r.cluster.PeakFlops() * 1e-12, r.cluster.dtype.c_str(),
                (r.cluster.gemmCurve.empty() ? "efficiency " + EfficiencyText(r.cluster, r.cluster.dtype)
                                             : "the calibrated efficiency of each GEMM's size (attention " +
                                                   (r.cluster.attentionEfficiency > 0 ? Fixed2(r.cluster.attentionEfficiency) + ", calibrated"
                                                                                      : Fixed2(r.cluster.efficiency)) +
                                                   ")")
                    .c_str(),
                core::GbText(r.cluster.UsableBytes()).c_str());
    if (r.cluster.gemmCurve.empty()) {
        const std::string linear = r.cluster.fp8 ? "fp8" : r.cluster.dtype;
        std::printf("# GEMMs by size: one of F FLOPs at that x F / (F + F0), F0 = %.1f GFLOP%s (%.1f us at the matmul ceiling's rate, "
                    "fitted on OpenXLA's measured H100 table: docs/planning.md)\n",
                    r.cluster.GemmHalfFlops(linear) * 1e-9, r.cluster.fp8 ? " for the fp8 linear GEMMs" : "", core::kGemmFixedSec * 1e6);
    }
    if (r.cluster.nvlinkFit || r.cluster.networkFit)
        std::printf("# measured links: %s%s%s, each collective and send at the fit's line for its size\n",
                    !r.cluster.nvlinkFit ? "" : r.cluster.nvlinkFromProfile ? "inside a node the --calibrate profile's" : "inside a node the --nvlink-fit's",
                    r.cluster.nvlinkFit && r.cluster.networkFit ? ", " : "",
                    !r.cluster.networkFit ? "" : r.cluster.networkFromProfile ? "between nodes the --calibrate profile's" : "between nodes the --network-fit's");
    if (const std::string other = core::CalibratedOnOtherGpu(r.cluster); !other.empty())
        std::printf("# note: %s (--gpu %s plans the GPU it ran on)\n", other.c_str(), r.cluster.calibratedOn.c_str());
    if (!r.cluster.hbmCurve.empty())
        std::printf("# memory-bound ops at the calibrated share of %s's %.0f GB/s HBM bandwidth for their size (%.0f%% for the largest)\n",
                    r.cluster.gpu.id.c_str(), r.cluster.gpu.hbmGBps, r.cluster.hbmCurve.back().second * 100);
    if (r.cluster.gpu.AttentionVsGemm() != 1.0 && r.cluster.attentionEfficiency <= 0)
    {
        std::string runs;
        for (const std::string& id : r.cluster.gpu.attentionFittedOn) runs += (runs.empty() ? "" : ", ") + id;
        std::printf("# attention at %.2fx the GEMM rate on %s (fitted on the published runs %s: docs/planning.md; a calibrated attention efficiency replaces it)\n",
                    r.cluster.gpu.AttentionVsGemm(), r.cluster.gpu.id.c_str(), runs.c_str());
    }
    std::printf("# memory: %s usable of %.0f GiB (--memory-fraction %.2f; the rest an allowance for the CUDA context, NCCL's buffers, "
                "workspaces and the allocator's fragmentation)\n",
                core::GbText(r.cluster.UsableBytes()).c_str(), r.cluster.gpu.memoryGB, r.cluster.memoryFraction);
    if (r.flashAttention2 && r.cluster.gpu.arch == "Hopper")
        std::printf("# attention through flash-attn 2: on Hopper at %.2f of a Hopper kernel's rate (35%% of peak against "
                    "FlashAttention-3's 75%%, arXiv:2407.08608)\n", core::FlashAttention2OnHopper());
    else if (r.flashAttention2)
        std::printf("# attention through flash-attn 2: the rate is unchanged on this GPU (measured only on Hopper)\n");
    if (r.cluster.fp8)
        std::printf("# FP8: the layers' linear GEMMs at %.0f TFLOPS fp8 x %s; attention, the output layer and MFU in %s\n",
                    r.cluster.gpu.PeakFlops("fp8") * 1e-12, EfficiencyText(r.cluster, "fp8").c_str(), r.cluster.dtype.c_str());
    if (r.layout) PrintLayout(*r.layout);
    if (r.recomputeModules.Any())
        std::printf("# recomputed in the backward, without full recomputation: %s (Megatron-Core's --recompute-modules)\n",
                    core::RecomputeModulesText(r.recomputeModules).c_str());
    if (r.epCommOverlap && r.model.IsMoe())
        std::printf("# EP overlap: each forward's all-to-alls under another micro-batch's backward and back (Megatron-Core's "
                    "--overlap-moe-expert-parallel-comm --delay-wgrad-compute), where EP > 1, without full recomputation, and "
                    "interleaved with PP > 1\n");
    std::printf("# global batch %d x %d tokens; %zu configurations, %zu fit\n", r.globalBatch, r.Seq(), res.candidates, res.fitting);
    PrintHeader();
    const size_t shown = std::min(static_cast<size_t>(top), res.fitting);
    for (size_t i = 0; i < shown; ++i) PrintRow(i + 1, res.rows[i]);
    if (shown > 0) PrintComputeParts(1, res.rows[0]);
    if (const auto laid = shown > 0 ? core::BalancedLayoutRow(r, res.rows[0]) : std::nullopt)
        std::printf("# #1 with its layers laid out by hand to balance the output layer: --pp-layout '%s', %s a step (%+.1f%%), %s\n",
                    laid->config.layout->text.c_str(), core::FormatSeconds(laid->time.step).c_str(),
                    (laid->time.step / res.rows[0].time.step - 1) * 100, core::GbText(laid->memory.Total()).c_str());
    if (res.fitting > 0) {
        std::printf("\n# Pareto front (faster needs more memory):\n");
        for (size_t i : res.pareto)
            std::printf("  #%-5zu %10s  %9s  %s\n", i + 1, core::FormatSeconds(res.rows[i].time.step).c_str(), core::GbText(res.rows[i].memory.Total()).c_str(),
                        core::ConfigText(res.rows[i].config).c_str());
    }
    const size_t rejected = res.rows.size() - res.fitting;
    if (rejected > 0) {
        std::printf("\n# %zu do not fit; the closest:\n", rejected);
        for (size_t i = res.fitting; i < std::min(res.rows.size(), res.fitting + 3); ++i)
            std::printf("  %s: %s\n", core::ConfigText(res.rows[i].config).c_str(), res.rows[i].rejected.c_str());
    }
    for (const std::string& n : res.notes) std::printf("# %s\n", n.c_str());
}

// Row 1 laid out to balance the output layer (core::BalancedLayoutRow), or null.
Json BalancedLayoutJson(const core::PlanRequest& r, const core::PlanResult& res, size_t shown)
{
    const auto laid = shown > 0 ? core::BalancedLayoutRow(r, res.rows[0]) : std::nullopt;
    if (!laid) return nullptr;
    return {{"layout", laid->config.layout->text}, {"row", RowJson(*laid)}, {"vsRowPct", (laid->time.step / res.rows[0].time.step - 1) * 100}};
}

// The plan as `--json` gives it: the request's model and cluster, the rows shown and the Pareto front.
Json PlanJson(const core::PlanRequest& r, const core::ResolvedModel& model, const core::PlanResult& res, const PlanOptions& o,
              const core::Calibration& calibration)
{
    Json rows = Json::array(), pareto = Json::array();
    for (size_t i = 0; i < std::min(static_cast<size_t>(o.top), res.fitting); ++i) rows.push_back(RowJson(res.rows[i]));
    for (size_t i : res.pareto) pareto.push_back(RowJson(res.rows[i]));
    return {{"model", r.model.id}, {"modelSource", r.model.source}, {"mlp", core::Name(r.model.mlp)}, {"dropout", r.model.dropout},
            {"window", r.model.window}, {"windowedLayers", r.model.WindowedLayers()}, {"mtpLayers", r.model.mtpLayers},
            {"fromPreset", model.fromPreset}, {"assumed", model.defaulted}, {"fp8", r.cluster.fp8}, {"tpCommOverlap", r.tpCommOverlap},
            {"epCommOverlap", r.epCommOverlap}, {"recomputeModules", core::RecomputeModulesText(r.recomputeModules)}, {"ppLayout", r.layout ? Json(r.layout->text) : Json(nullptr)},
            {"dpCommOverlap", r.dpCommOverlap}, {"dpCommExposed", r.dpCommExposed}, {"flashAttention2", r.flashAttention2},
            {"gemmEfficiency", r.cluster.EfficiencyFor(r.cluster.dtype)},
            {"fp8GemmEfficiency", r.cluster.fp8 ? Json(r.cluster.EfficiencyFor("fp8")) : Json(nullptr)},
            {"gemmHalfFlops", r.cluster.gemmCurve.empty() ? Json(r.cluster.GemmHalfFlops(r.cluster.fp8 ? "fp8" : r.cluster.dtype)) : Json(nullptr)},
            {"gradReduce", r.gradReduceFp32 ? "fp32" : "bf16"},
            {"mfuPeakTflops", r.cluster.PeakFlops() * 1e-12},
            {"parameters", r.model.TotalParams()}, {"gpus", r.cluster.gpus}, {"gpu", r.cluster.gpu.id},
            {"globalBatch", r.globalBatch}, {"seq", r.Seq()}, {"candidates", res.candidates}, {"fitting", res.fitting},
            {"rows", rows}, {"pareto", pareto}, {"notes", res.notes}, {"balancedLayout", BalancedLayoutJson(r, res, rows.size())},
            {"calibration", o.calibrate.empty() ? Json(nullptr) : CalibrationJson(calibration, r.cluster)}};
}

// The simulated step of row `traceRow` (1-based) of `res`, written to `o.trace`.
void WriteRowTrace(const PlanOptions& o, const core::PlanRequest& r, const core::PlanResult& res)
{
    Require(o.traceRow >= 1 && static_cast<size_t>(o.traceRow) <= res.fitting,
            "--trace-row " + std::to_string(o.traceRow) + " is not a fitting row (1.." + std::to_string(res.fitting) + ")");
    const core::PlanStepSimulation sim = core::SimulatePlanStep(r, res.rows[static_cast<size_t>(o.traceRow - 1)].config);
    core::WriteTraceFile(*sim.trace, o.trace);
    std::fprintf(stderr, "wrote %s: row %d simulated, %s (planner %s)\n", o.trace.c_str(), o.traceRow,
                 core::FormatSeconds(sim.seconds).c_str(), core::FormatSeconds(sim.predictedSeconds).c_str());
}

// One run of the published set in the planner: what was published and what the planner predicts
// for its configuration, then every configuration the planner would choose with the run's
// techniques (the search its rank counts in), the run's own row named.
void RunPublished(const PlanOptions& o)
{
    const core::PublishedSetEntry entry = core::PublishedSetEntryById(core::PublishedSetCsv(), o.published);
    Require(entry.skipped.empty(), "--published " + entry.id + " is not modelled: " + entry.skipped);
    if (!o.trace.empty()) CheckWritable("--trace", o.trace);
    core::PublishedRunChoices c;
    const core::PublishedSetRun run = core::PublishedSetRunById(core::PublishedSetCsv(), o.published, &c);
    const core::PlanRequest& r = run.request;
    const core::ResolvedModel model{r.model, {}, {}};
    const std::optional<size_t> row = c.row;
    if (o.json) {
        Json j = PlanJson(r, model, c.choices, o, core::Calibration{});
        j["published"] = {{"id", run.id}, {"source", run.source}, {"citation", run.citation}, {"model", run.model}, {"gpu", run.gpu},
                          {"gpus", run.gpus}, {"precision", run.precision}, {"publishedStepSeconds", run.publishedSeconds},
                          {"publishedFrom", run.publishedFrom}, {"fits", run.fits}, {"config", run.config},
                          {"predictedStepSeconds", run.fits ? Json(run.predictedSeconds) : Json(nullptr)},
                          {"errorPct", run.fits ? Json(run.errorPct) : Json(nullptr)}, {"rank", run.rank}, {"vsBestPct", run.vsBestPct},
                          {"bestConfig", run.bestConfig}, {"row", row ? Json(*row + 1) : Json(nullptr)},
                          {"fittedOn", run.fittedOn}, {"microBatchInDoubt", run.microBatchInDoubt}};
        PrintJson(j);
    } else {
        std::printf("# published run %s (%s): %s, %d x %s, %s; %s\n", run.id.c_str(), run.source.c_str(), run.model.c_str(), run.gpus,
                    run.gpu.c_str(), run.precision.c_str(), run.citation.c_str());
        if (run.fits)
            std::printf("# published %s a step (from its %s); its configuration, %s, predicted %s (%+.1f%%)%s: #%zu of the planner's "
                        "choices with its techniques, %+.1f%% against their best\n",
                        core::FormatSeconds(run.publishedSeconds).c_str(), run.publishedFrom.c_str(), run.config.c_str(),
                        core::FormatSeconds(run.predictedSeconds).c_str(), run.errorPct,
                        run.fittedOn ? " (a number of the model was fitted on this run)" : "", run.rank, run.vsBestPct);
        else
            std::printf("# published %s a step; its configuration does not fit in the planner's memory model: %s, %s\n",
                        core::FormatSeconds(run.publishedSeconds).c_str(), run.config.c_str(), run.rejected.c_str());
        if (run.microBatchInDoubt)
            std::printf("# its printed micro-batch is in doubt (the global batch is not DP x micro-batch x the printed gradient "
                        "accumulation): the micro-batch is the planner's\n");
        PrintTable(r, model, c.choices, o.top);
        if (row && *row >= static_cast<size_t>(o.top)) {
            std::printf("\n# the published configuration, row %zu:\n", *row + 1);
            PrintHeader();
            PrintRow(*row + 1, c.choices.rows[*row]);
        } else if (row) {
            std::printf("# the published configuration is row %zu\n", *row + 1);
        }
        if (row && *row > 0) PrintComputeParts(*row + 1, c.choices.rows[*row]);
    }
    if (!o.trace.empty()) WriteRowTrace(o, r, c.choices);
}

void Run(const PlanOptions& o)
{
    Require(o.top >= 1, "--top must be at least 1 (got " + std::to_string(o.top) + ")");
    if (o.validate) {
        RunPlanValidate(o.json);
        return;
    }
    if (!o.published.empty()) {
        RunPublished(o);
        return;
    }
    core::ResolvedModel model;
    core::Calibration calibration;
    const core::PlanRequest r = ToRequest(o, &model, &calibration);
    if (!o.trace.empty()) CheckWritable("--trace", o.trace);
    const core::PlanResult res = core::PlanTraining(r);
    if (res.fitting == 0) throw Error(res.notes.empty() ? std::string("nothing fits") : res.notes.front());
    if (o.json) {
        PrintJson(PlanJson(r, model, res, o, calibration));
    } else {
        if (!o.calibrate.empty()) PrintCalibration(calibration);
        PrintTable(r, model, res, o.top);
    }
    if (!o.trace.empty()) WriteRowTrace(o, r, res);
}

} // namespace

void AddPlanCommand(CLI::App& root)
{
    auto o = std::make_shared<PlanOptions>();
    CLI::App* cmd = root.add_subcommand("plan", "Plan a training run: DP/TP/PP/CP/EP degrees, micro-batch, schedule, recomputation, ZeRO "
                                                "for a transformer on a cluster, ranked by step time with memory per GPU");
    CLI::Option* model = cmd->add_option("--model", o->model,
                                         "A preset (" + core::ModelPresetList() + "; also llama3.1-8b/70b/405b) that the options below change, "
                                         "or custom. Without it the options describe a model by hand: --layers, --hidden, --heads "
                                         "and --vocab needed, multi-head attention and a GeLU MLP of 4 x hidden unless given")
                             ->capture_default_str();
    cmd->add_option("--layers", o->arch.layers, "Transformer layers");
    cmd->add_option("--hidden", o->arch.hidden, "Hidden size");
    cmd->add_option("--heads", o->arch.heads, "Attention heads");
    cmd->add_option("--kv-heads", o->arch.kvHeads, "Key/value heads (grouped-query attention)");
    cmd->add_option("--head-dim", o->arch.headDim, "Each attention head's width (default: hidden / heads; Qwen3 and GPT-OSS set their own)");
    cmd->add_option("--ffn", o->arch.ffn, "MLP inner size (each expert's)");
    cmd->add_option("--vocab", o->arch.vocab, "Vocabulary size");
    cmd->add_option("--mlp", o->mlp, "gelu or relu2 (two matrices; relu2 is Nemotron-4's squared ReLU) or swiglu (three)");
    cmd->add_option("--dropout", o->dropout, "on: the model trains with dropout and keeps its masks (Megatron-LM's GPT default); "
                                             "off: without (Llama, Mixtral, Nemotron-4)");
    cmd->add_option("--experts", o->arch.experts, "Experts per layer (0: dense)");
    cmd->add_option("--top-k", o->arch.topK, "Experts per token (default 2)");
    cmd->add_option("--window", o->arch.window, "Sliding-window attention: each query of a windowed layer attends to this many keys "
                                           "before it (0: none; GPT-OSS: 128)");
    cmd->add_option("--full-attention-every", o->arch.fullAttentionEvery,
                    "With --window: every n-th layer attends to the whole sequence (GPT-OSS: 2, alternating; 0: every layer windowed)");
    cmd->add_option("--mtp-layers", o->arch.mtpLayers,
                    "Multi-token prediction modules (Megatron-Core's --mtp-num-layers; DeepSeek-V3 trains with 1): each a layer of "
                    "the model's kind, a 2h x h projection and the output layer and loss again, on the last stage (0: none)");
    cmd->add_option("--seq", o->arch.seq, "Sequence length (default: the model's)");
    cmd->add_option("--global-batch", o->request.globalBatch, "Sequences per step")->capture_default_str();
    cmd->add_option("--gpus", o->request.cluster.gpus, "GPUs in all")->capture_default_str();
    cmd->add_option("--gpu", o->gpu, "GPU of the spec table: " + core::GpuIdsList())->capture_default_str();
    cmd->add_option("--dtype", o->request.cluster.dtype, "Data type of the GEMMs' peak")->capture_default_str();
    cmd->add_flag("--fp8", o->request.cluster.fp8,
                  "The layers' linear GEMMs in FP8 at the fp8 peak x --efficiency (attention, the output layer and MFU stay in --dtype)");
    cmd->add_option("--efficiency", o->request.cluster.efficiency,
                    "Fraction of peak an H100's large BF16 GEMMs reach in training; other GPUs and dtypes at it x their measured matmul "
                    "ceiling over the H100's BF16 one where measured (" + core::MatmulCeilingsText() +
                        "); a GEMM of F FLOPs at it x F / (F + F0), F0 the FLOPs of " + Fixed(core::kGemmFixedSec * 1e6, 1) +
                        " us at the ceiling's rate (OpenXLA's measured H100 GEMM table); memory-bound ops go at HBM bandwidth")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 1.0));
    cmd->add_option("--gemm-tflops", o->gemmTflops,
                    "Measured GEMM TFLOP/s per GPU (paralens run --workload gemm) instead of peak x --efficiency");
    cmd->add_option("--gpus-per-node", o->request.cluster.gpusPerNode, "GPUs per node (NVLink inside; 72 for a GB200 or GB300 NVL72 rack)")->capture_default_str();
    cmd->add_option("--nvlink-GBps", o->nvlinkGBps, "NVLink bandwidth per GPU, one direction (default: the spec table's)");
    cmd->add_option("--network-GBps", o->request.cluster.networkGBps, "Network bandwidth per GPU between nodes, one direction")->capture_default_str();
    cmd->add_option("--nvlink-alpha-us", o->request.cluster.nvlinkAlphaUs, "Latency inside a node")->capture_default_str();
    cmd->add_option("--network-alpha-us", o->request.cluster.networkAlphaUs, "Latency between nodes")->capture_default_str();
    cmd->add_option("--calibrate", o->calibrate,
                    "Profiler traces of one step of your own model (PyTorch profiler with record_shapes, Nsight Systems, paralens): "
                    "the GEMMs' efficiency and the memory-bound kernels' share of HBM bandwidth by size, attention's efficiency and the collectives' links, used for every row")
        ->expected(1, -1);
    cmd->add_option("--network-fit", o->networkFit,
                    "A fit file of logs between nodes (paralens fit --out), or such an nccl-tests log itself: DP, PP, CP and EP traffic across nodes priced with the "
                    "fit's line for each message's size, per NIC where the log named its hosts");
    cmd->add_option("--nvlink-fit", o->nvlinkFit, "A fit file of a one-node log, or the nccl-tests log itself: traffic inside a node (TP, ...) priced by its line for each size");
    cmd->add_option("--memory-fraction", o->request.cluster.memoryFraction, "Fraction of HBM usable for the model")->capture_default_str()
        ->check(CLI::Range(0.1, 1.0));
    cmd->add_option("--dp", o->dp, "Fix the data-parallel degree");
    cmd->add_option("--tp", o->tp, "Fix the tensor-parallel degree");
    cmd->add_option("--pp", o->pp, "Fix the pipeline-parallel degree");
    cmd->add_option("--ep", o->ep, "Fix the expert-parallel degree");
    cmd->add_option("--cp", o->cp, "Fix the context-parallel degree (ring attention; searched while each GPU keeps >= 1024 tokens "
                                   "of a sequence cut into 2 x cp chunks)");
    cmd->add_option("--first-stage-layers", o->firstStageLayers,
                    "Fix the first pipeline stage's layers (Megatron-LM's --decoder-first-pipeline-num-layers); the other stages share "
                    "the rest. Unset, the search tries an even split and one counting the embedding as a layer");
    cmd->add_option("--last-stage-layers", o->lastStageLayers,
                    "Fix the last pipeline stage's layers (the output layer's stage). Unset, the search also tries it lightened by what "
                    "the output layer and MTP modules weigh in layers, where that saves half a layer of the heaviest stage");
    cmd->add_option("--pp-layout", o->ppLayout,
                    "Place the layers by hand, as Megatron-Core's --pipeline-model-parallel-layout: pp x v chunks split by '|', each of "
                    "E (embedding), t (transformer layer), m (MTP module), L (loss); t*4 and (tt|)*14 repeat; chunk i on stage i % pp "
                    "(DeepSeek-V3 on pp 2, v 8: 'Et*4|(t*4|)*14tmL'). Needs --pp; fixes v");
    cmd->add_option("--micro-batch", o->microBatch, "Fix the micro-batch size");
    cmd->add_option("--schedule", o->schedule, "Fix the schedule: gpipe, 1f1b, interleaved, zb-h1");
    cmd->add_option("--chunks", o->chunks, "Fix v, the interleaved schedule's model chunks per stage");
    cmd->add_option("--recompute", o->recompute, "Fix activation recomputation: none, selective, full");
    cmd->add_option("--recompute-modules", o->recomputeModules,
                    "Modules recomputed in the backward wherever recomputation is not full (Megatron-Core's --recompute-modules, "
                    "comma-separated): layernorm (the norms' outputs), moe_act (the experts' activation outputs; a mixture of "
                    "experts only), mla_up_proj (MLA's Q, K and V; a model with multi-head latent attention only)");
    cmd->add_option("--zero", o->zero, "Fix the ZeRO stage (0-3; 3 is FSDP)");
    cmd->add_option("--sp", o->sp, "Fix sequence parallelism: on or off");
    cmd->add_flag("--no-flash-attention", o->noFlash, "Attention stores its score matrices (5 a s^2 b bytes per layer)");
    cmd->add_flag("--flash-attention-2", o->request.flashAttention2,
                  "Attention through Dao's flash-attn 2 (PyTorch FSDP stacks such as MosaicML's Composer) instead of a Hopper "
                  "kernel (cuDNN, FlashAttention-3: Transformer Engine's): on Hopper at 35/75 of their rate (the FlashAttention-3 "
                  "paper's figures); other GPUs unchanged");
    cmd->add_flag("--tp-across-nodes", o->request.tpAcrossNodes, "Allow TP groups larger than a node");
    cmd->add_flag("--tp-comm-overlap", o->request.tpCommOverlap,
                  "TP collectives overlapped with the linear GEMMs (Megatron-LM's --tp-comm-overlap): only what outlasts them counts");
    cmd->add_flag("--ep-comm-overlap", o->request.epCommOverlap,
                  "MoE all-to-alls overlapped batch by batch (Megatron-Core's --overlap-moe-expert-parallel-comm "
                  "--delay-wgrad-compute): each micro-batch's forward beside another's backward, layer by layer, each one's "
                  "all-to-alls under the other's compute; where EP > 1, without full recomputation, and with PP > 1 only "
                  "interleaved");
    cmd->add_flag("--dp-comm-overlap", o->request.dpCommOverlap,
                  "Gradient reduce and weight gather overlapped per model chunk (Megatron-LM's --overlap-grad-reduce "
                  "--overlap-param-gather, on in NeMo's and Megatron-Bridge's recipes): only what outlasts the backward "
                  "and forward left shows");
    cmd->add_flag("--dp-comm-exposed", o->request.dpCommExposed,
                  "The whole gradient sync after the backward, none of it hidden (Megatron-LM's default local DDP in 2021, "
                  "before --overlap-grad-reduce); without it or --dp-comm-overlap the last micro-batch's backward hides what it "
                  "can, as PyTorch DDP's buckets do");
    cmd->add_option("--grad-reduce", o->gradReduce,
                    "The gradient buffers' type, held and reduced over DP: fp32 (Megatron-LM with --bf16) or bf16 (NeMo's and "
                    "Megatron-Bridge's performance recipes, grad_reduce_in_fp32 = False)")
        ->capture_default_str();
    cmd->add_option("--top", o->top, "Rows to show")->capture_default_str();
    cmd->add_option("--trace", o->trace, "Write the simulated step of one row (.json or .json.gz)");
    cmd->add_option("--trace-row", o->traceRow, "Which row --trace simulates (1: the best)")->capture_default_str();
    cmd->add_flag("--validate", o->validate, "Compare the planner with published training runs (sources in the table)");
    CLI::Option* published = cmd->add_option("--published", o->published,
                    "Plan a run of the published set by its id (R001 ..., as --validate lists them): its model, cluster, batch and "
                    "techniques from the set, its published and predicted step, then every configuration the planner would choose "
                    "with its techniques, its own row named (--top, --trace and --trace-row apply)");
    cmd->add_flag("--json", o->json, "Machine-readable output on stdout");
    cmd->callback([o, model, published, cmd] {
        o->modelGiven = model->count() > 0;
        if (published->count() > 0)
            for (const CLI::Option* opt : cmd->get_options())
                if (opt->count() > 0 && opt != published && opt->get_name() != "--top" && opt->get_name() != "--trace" &&
                    opt->get_name() != "--trace-row" && opt->get_name() != "--json")
                    throw Error("--published takes the run's model, cluster and techniques from the set: drop " + opt->get_name());
        Run(*o);
    });
}

} // namespace paralens::app
