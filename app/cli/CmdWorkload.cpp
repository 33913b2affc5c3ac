// paralens workload: the training-step workloads of the lectures on the modelled cluster.
#include "CliCommon.hpp"
#include "Commands.hpp"
#include "gui/TrainingRuns.hpp"
#include "TextGantt.hpp"

#include "analysis/DeviceUsage.hpp"
#include "analysis/PipelineMetrics.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/Hardware.hpp"
#include "schedule/DataParallel.hpp"
#include "schedule/ExpertParallel.hpp"
#include "sim/DataParallelReport.hpp"
#include "sim/WorkloadSimulator.hpp"
#include "trace/TraceFile.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <set>

namespace paralens::app {

namespace {

struct WorkloadOptions {
    std::string kind = "dp";
    ClusterOptions cluster;
    std::string hardware = "h100-sxm", dtype = "bf16";
    double efficiency = 0.6;
    // dp / ps
    int workers = 4, layers = 8, iterations = 4, servers = 1, staleness = 0;
    double forwardMs = 1.0, backwardMs = -1.0, optimizerMs = 0.0;
    std::string gradBytes = "16MiB", bucketBytes = "0", consistency = "bsp", algorithm = "ring";
    bool noOverlap = false;
    // tp / interop / intraop / moe
    int devices = 0, inputs = 1, experts = 8, topK = 2;
    double tokens = 8192, hidden = 8192, ffnMultiplier = 4, ffnHidden = 14336, imbalance = 0.0;
    bool noBackward = false;
    std::string out;
    bool json = false;
};

// Which options belong to which kinds, so a misplaced one is an error, not silently ignored.
const std::map<std::string, std::set<std::string>> kOwners{
    {"--workers", {"dp", "ps"}},      {"--layers", {"dp", "ps", "tp"}}, {"--iterations", {"dp", "ps"}},
    {"--servers", {"ps"}},            {"--staleness", {"ps"}},          {"--consistency", {"ps"}},
    {"--t-forward-ms", {"dp", "ps"}}, {"--t-backward-ms", {"dp", "ps"}}, {"--grad-bytes", {"dp", "ps"}},
    {"--bucket-bytes", {"dp"}},       {"--no-overlap", {"dp"}},          {"--optimizer-ms", {"dp", "ps"}},
    {"--devices", {"tp", "interop", "intraop", "moe"}}, {"--inputs", {"interop"}}, {"--experts", {"moe"}},
    {"--top-k", {"moe"}},             {"--imbalance", {"moe"}},          {"--ffn-hidden", {"moe"}},
    {"--ffn-multiplier", {"tp"}},     {"--no-backward", {"tp"}},         {"--tokens", {"tp", "interop", "intraop", "moe"}},
    {"--hidden", {"tp", "interop", "intraop", "moe"}}, {"--algorithm", {"dp", "tp", "intraop"}},
};

core::Algorithm AllReduceAlgorithm(const WorkloadOptions& o) { return ParseAlgorithmOption(o.algorithm, core::Collective::AllReduce); }

// The command's options as the window's training-step parameters: one mapping to the generators
// (gui/TrainingRuns: BuildTrainingWorkload).
TrainingParams ToParams(const WorkloadOptions& o)
{
    TrainingParams t;
    t.workload = o.kind;
    const bool dataParallel = o.kind == "dp" || o.kind == "ps";
    if (o.kind == "interop" && o.devices > 0 && o.devices != 2)
        throw Error("--devices: inter-op parallelism puts W1 on one device and W2 on the other: --devices must be 2");
    t.devices = dataParallel ? o.workers : o.devices > 0 ? o.devices : (o.kind == "intraop" ? 2 : 4);
    t.layers = o.layers;
    t.iterations = o.iterations;
    t.forwardMs = o.forwardMs;
    t.backwardMs = o.backwardMs;
    t.optimizerMs = o.optimizerMs;
    t.gradBytes = ParseSizeOption("--grad-bytes", o.gradBytes);
    t.bucketBytes = ParseSizeOption("--bucket-bytes", o.bucketBytes);
    t.overlap = !o.noOverlap;
    t.servers = o.servers;
    t.consistency = o.consistency;
    t.staleness = o.staleness;
    t.tokens = o.tokens;
    t.hidden = o.hidden;
    t.inputs = o.inputs;
    t.algorithm = AllReduceAlgorithm(o);
    t.experts = o.experts;
    t.topK = o.topK;
    t.imbalance = o.imbalance;
    t.ffnMultiplier = o.ffnMultiplier;
    t.ffnHidden = o.ffnHidden;
    t.backward = !o.noBackward;
    t.gpu = o.hardware;
    t.dtype = o.dtype;
    t.kernelEfficiency = o.efficiency;
    return t;
}

nlohmann::json UsageJson(const core::Trace& t)
{
    nlohmann::json devices = nlohmann::json::array();
    for (const core::DeviceUsage& u : core::ComputeDeviceUsage(t, core::WholeTrace(t))) {
        devices.push_back({{"name", t.Str(t.Devices()[u.device].name)}, {"busySeconds", u.busyNs * 1e-9},
                           {"idleSeconds", u.idleNs * 1e-9}, {"computeSeconds", u.computeNs * 1e-9},
                           {"commSeconds", u.commNs * 1e-9}, {"overlapSeconds", u.overlapNs * 1e-9},
                           {"exposedCommSeconds", u.exposedCommNs * 1e-9}});
    }
    return devices;
}

// The lectures' comparison: the same Y = X.W1.W2 run both ways, side by side.
nlohmann::json CompareInterIntra(TrainingParams t, const core::DeviceSpeed& speed, const core::ClusterModel& cluster)
{
    nlohmann::json out;
    const int intraDevices = t.workload == "intraop" ? t.devices : 2;
    for (const char* kind : {"interop", "intraop"}) {
        t.workload = kind;
        t.devices = intraDevices; // inter-op runs on 2 whatever this says
        const core::WorkloadResult r = core::SimulateWorkload(BuildTrainingWorkload(t, speed).workload, cluster);
        int64_t idle = 0;
        for (const core::DeviceUsage& u : core::ComputeDeviceUsage(*r.trace, core::WholeTrace(*r.trace))) idle += u.idleNs;
        out[kind] = {{"wireBytes", r.wireBytes}, {"idleSeconds", idle * 1e-9}, {"makespanSeconds", r.seconds}};
    }
    return out;
}

void RunWorkload(const WorkloadOptions& o, const CLI::App& cmd)
{
    static const std::set<std::string> kinds{"dp", "ps", "tp", "interop", "intraop", "moe"};
    Require(kinds.count(o.kind) > 0, "--kind: unknown kind '" + o.kind + "'; accepted: dp, ps, tp, interop, intraop, moe");
    for (const auto& [option, owners] : kOwners)
        if (cmd.count(option) > 0 && owners.count(o.kind) == 0)
            throw Error(option + " does not apply to --kind " + o.kind);
    const core::ClusterModel cluster = o.cluster.ToModel();
    if (!o.out.empty()) CheckWritable("--out", o.out);
    const TrainingParams params = ToParams(o);
    const core::DeviceSpeed speed = TrainingSpeed(params);
    const TrainingWorkload built = BuildTrainingWorkload(params, speed);
    const core::Workload& w = built.workload;
    const std::optional<core::DataParallelWorkload>& dp = built.dataParallel;
    const std::optional<core::MoeWorkload>& moe = built.moe;
    core::WorkloadOptions simOptions;
    simOptions.meta.source = core::TraceSource::Simulated;
    simOptions.meta.title = o.kind + " workload";
    simOptions.meta.workload.Set("kind", o.kind);
    simOptions.meta.model.Set("alphaUs", o.cluster.alphaUs);
    simOptions.meta.model.Set("bandwidthGBps", o.cluster.bandwidthGBps);
    simOptions.meta.model.Set("gammaGBps", o.cluster.gammaGBps);
    simOptions.meta.hardware.Set("gpu", o.hardware);
    simOptions.meta.hardware.Set("dtype", o.dtype);
    simOptions.finishMeta = [](core::Metadata& m, const core::WorkloadResult& r) {
        m.results.Set("makespanSeconds", r.seconds);
        m.results.Set("wireBytes", static_cast<int64_t>(r.wireBytes));
    };
    const core::WorkloadResult r = core::SimulateWorkload(w, cluster, simOptions);
    const core::Trace& t = *r.trace;
    if (!o.out.empty()) core::WriteTraceFile(t, o.out);
    const auto usage = core::ComputeDeviceUsage(t, core::WholeTrace(t));
    const core::MfuReport mfu = core::ComputeMfu(t, speed.peakFlops, core::WholeTrace(t));

    nlohmann::json j{{"kind", o.kind}, {"devices", w.Devices()}, {"makespanSeconds", r.seconds}, {"wireBytes", r.wireBytes},
                     {"idleFraction", core::IdleFraction(usage)}, {"usage", UsageJson(t)}};
    if (mfu.modelFlops > 0) j["mfu"] = {{"mfu", mfu.mfu}, {"hfu", mfu.hfu}, {"modelFlops", mfu.modelFlops}};
    if (dp) {
        core::DataParallelReport rep = core::SummarizeDataParallel(*dp, r);
        j["secondsPerIteration"] = rep.secondsPerIteration;
        j["workerSecondsPerIteration"] = rep.workerSecondsPerIteration;
        if (o.kind == "ps") {
            j["maxStaleness"] = rep.maxStaleness;
            j["meanStaleness"] = rep.meanStaleness;
            j["consistency"] = o.consistency;
        }
    }
    if (moe) {
        j["tokensPerDevice"] = moe->tokensPerExpertDevice;
        j["allToAllBytes"] = moe->allToAllBytes;
    }
    if (o.kind == "interop" || o.kind == "intraop") j["comparison"] = CompareInterIntra(params, speed, cluster);
    if (!o.out.empty()) j["out"] = o.out;
    if (o.json) {
        PrintJson(j);
        return;
    }
    std::printf("%s workload on %d devices (%s)\n", o.kind.c_str(), w.Devices(), o.cluster.Describe().c_str());
    std::printf("  step time %s, %s between devices, idle %.1f%% of device time\n", core::FormatSeconds(r.seconds).c_str(),
                core::FormatBytes(r.wireBytes).c_str(), core::IdleFraction(usage) * 100);
    if (j.contains("secondsPerIteration")) std::printf("  per iteration %s\n", core::FormatSeconds(j["secondsPerIteration"]).c_str());
    if (j.contains("maxStaleness"))
        std::printf("  staleness seen by pulls: max %d, mean %.2f (%s)\n", j["maxStaleness"].get<int>(), j["meanStaleness"].get<double>(),
                    o.consistency.c_str());
    if (mfu.modelFlops > 0) std::printf("  MFU %.1f%% (peak %.0f TFLOPS x %zu devices)\n", mfu.mfu * 100, speed.peakFlops / 1e12, usage.size());
    std::printf("  %-16s %10s %10s %10s %10s %10s\n", "device", "busy", "idle", "compute", "comm", "exposed");
    for (const core::DeviceUsage& u : usage)
        std::printf("  %-16s %10s %10s %10s %10s %10s\n", std::string(t.Str(t.Devices()[u.device].name)).c_str(),
                    core::FormatSeconds(u.busyNs * 1e-9).c_str(), core::FormatSeconds(u.idleNs * 1e-9).c_str(),
                    core::FormatSeconds(u.computeNs * 1e-9).c_str(), core::FormatSeconds(u.commNs * 1e-9).c_str(),
                    core::FormatSeconds(u.exposedCommNs * 1e-9).c_str());
    if (j.contains("comparison")) {
        std::printf("\n  Y = X.W1.W2 both ways      %14s %14s %12s\n", "between devices", "idle time", "step time");
        for (const char* k : {"interop", "intraop"}) {
            const auto& c = j["comparison"][k];
            std::printf("  %-26s %14s %14s %12s\n", k, core::FormatBytes(c["wireBytes"].get<uint64_t>()).c_str(),
                        core::FormatSeconds(c["idleSeconds"].get<double>()).c_str(),
                        core::FormatSeconds(c["makespanSeconds"].get<double>()).c_str());
        }
        std::printf("  inter-op: less communication, more idle; intra-op: more communication, less idle\n");
    }
    if (!o.out.empty()) std::printf("trace: %s\n", o.out.c_str());
}

} // namespace

void AddWorkloadCommand(CLI::App& root)
{
    auto o = std::make_shared<WorkloadOptions>();
    CLI::App* cmd = root.add_subcommand("workload", "Run a training-step workload: dp, ps, tp, interop, intraop or moe");
    cmd->add_option("--kind,-k", o->kind,
                    "dp: data parallel with allreduce; ps: parameter servers; tp: Megatron MLP; interop / intraop: "
                    "Y = X.W1.W2 both ways; moe: expert parallelism")->capture_default_str();
    o->cluster.AddTo(*cmd);
    cmd->add_option("--hardware", o->hardware, "GPU whose peak sets compute times and MFU: " + core::GpuIdsList())->capture_default_str();
    cmd->add_option("--dtype", o->dtype, "bf16, fp16, fp32, tf32, fp8")->capture_default_str();
    cmd->add_option("--efficiency", o->efficiency, "Achieved fraction of peak in GEMMs")->capture_default_str();
    cmd->add_option("--workers", o->workers, "[dp, ps] data-parallel workers")->capture_default_str();
    cmd->add_option("--layers", o->layers, "[dp, ps, tp] layers")->capture_default_str();
    cmd->add_option("--iterations", o->iterations, "[dp, ps] training iterations")->capture_default_str();
    cmd->add_option("--t-forward-ms", o->forwardMs, "[dp, ps] forward time per layer")->capture_default_str();
    cmd->add_option("--t-backward-ms", o->backwardMs, "[dp, ps] backward time per layer (default 2 x forward)");
    cmd->add_option("--grad-bytes", o->gradBytes, "[dp, ps] gradient bytes per layer")->capture_default_str();
    cmd->add_option("--bucket-bytes", o->bucketBytes, "[dp] allreduce bucket size (0: one bucket per layer)")->capture_default_str();
    cmd->add_flag("--no-overlap", o->noOverlap, "[dp] allreduce only after the whole backward");
    cmd->add_option("--optimizer-ms", o->optimizerMs, "[dp, ps] optimizer step per iteration")->capture_default_str();
    cmd->add_option("--servers", o->servers, "[ps] parameter servers (> 1: sharded)")->capture_default_str();
    cmd->add_option("--consistency", o->consistency, "[ps] bsp, ssp or async")->capture_default_str();
    cmd->add_option("--staleness", o->staleness, "[ps] SSP staleness bound s")->capture_default_str();
    cmd->add_option("--algorithm", o->algorithm, "[dp, tp, intraop] allreduce algorithm")->capture_default_str();
    cmd->add_option("--devices", o->devices, "[tp, interop, intraop, moe] devices (default 4; 2 for interop/intraop)");
    cmd->add_option("--tokens", o->tokens, "[tp, interop, intraop, moe] tokens (rows of X; per device for moe)")->capture_default_str();
    cmd->add_option("--hidden", o->hidden, "[tp, interop, intraop, moe] hidden size")->capture_default_str();
    cmd->add_option("--ffn-multiplier", o->ffnMultiplier, "[tp] MLP width / hidden")->capture_default_str();
    cmd->add_flag("--no-backward", o->noBackward, "[tp] forward only");
    cmd->add_option("--inputs", o->inputs, "[interop] inputs pipelined through the two devices")->capture_default_str();
    cmd->add_option("--experts", o->experts, "[moe] experts (a multiple of --devices)")->capture_default_str();
    cmd->add_option("--top-k", o->topK, "[moe] experts per token")->capture_default_str();
    cmd->add_option("--ffn-hidden", o->ffnHidden, "[moe] expert FFN width")->capture_default_str();
    cmd->add_option("--imbalance", o->imbalance, "[moe] routing skew: expert e gets 1/(e+1)^imbalance (0: uniform)")->capture_default_str();
    cmd->add_option("--out,-o", o->out, "Write the simulated trace (.json or .json.gz)");
    cmd->add_flag("--json", o->json, "Machine-readable output on stdout");
    cmd->callback([o, cmd] { RunWorkload(*o, *cmd); });
}

} // namespace paralens::app
