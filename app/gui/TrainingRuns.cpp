// Training-step experiments: core/schedule's generators (data parallelism, parameter servers,
// tensor parallelism, inter-op vs intra-op, mixture of experts) run by SimulateWorkload.
#include "TrainingRuns.hpp"

#include "RunBuilder.hpp"

#include "analysis/TraceReport.hpp"
#include "common/Error.hpp"
#include "model/Hardware.hpp"
#include "schedule/DataParallel.hpp"
#include "schedule/ExpertParallel.hpp"
#include "schedule/ModelParallel.hpp"
#include "sim/WorkloadSimulator.hpp"

#include <cmath>

namespace paralens::app {

namespace {

int DtypeBytes(const std::string& dtype)
{
    if (dtype == "fp64") return 8;
    if (dtype == "fp32" || dtype == "tf32") return 4;
    if (dtype == "fp8" || dtype == "int8") return 1;
    return 2; // bf16, fp16
}

} // namespace

core::DataParallelSpec DataParallelSpecOf(const TrainingParams& t, double peak)
{
    core::DataParallelSpec s;
    s.workers = t.devices;
    s.layers = t.layers;
    s.iterations = t.iterations;
    s.forwardSecPerLayer = t.forwardMs * 1e-3;
    s.backwardSecPerLayer = t.backwardMs >= 0 ? t.backwardMs * 1e-3 : -1.0;
    s.optimizerSec = t.optimizerMs * 1e-3;
    s.gradBytesPerLayer = t.gradBytes;
    s.bucketBytes = t.bucketBytes;
    s.forwardFlopsPerLayer = s.forwardSecPerLayer * t.kernelEfficiency * peak;
    s.overlap = t.overlap;
    s.algorithm = t.algorithm;
    if (t.workload == "ps") {
        s.sync = core::GradientSync::ParameterServer;
        s.servers = t.servers;
        s.staleness = t.staleness;
        if (t.consistency == "bsp") s.consistency = core::Consistency::Bsp;
        else if (t.consistency == "ssp") s.consistency = core::Consistency::Ssp;
        else if (t.consistency == "async") s.consistency = core::Consistency::Async;
        else throw Error("--consistency: unknown '" + t.consistency + "'; accepted: bsp, ssp, async");
    }
    return s;
}

core::DeviceSpeed TrainingSpeed(const TrainingParams& t)
{
    const core::GpuSpec* gpu = core::FindGpu(t.gpu);
    Require(gpu != nullptr, "GPU (--hardware) '" + t.gpu + "' is not in the spec table; known: " + core::GpuIdsList());
    core::DeviceSpeed speed;
    speed.peakFlops = gpu->PeakFlops(t.dtype);
    Require(speed.peakFlops > 0, "--dtype: " + gpu->id + " has no " + t.dtype + " figure in the spec table");
    Require(t.kernelEfficiency > 0 && t.kernelEfficiency <= 1, "kernel efficiency (--efficiency) must be in (0, 1]");
    speed.efficiency = t.kernelEfficiency;
    speed.dtypeBytes = DtypeBytes(t.dtype);
    return speed;
}

TrainingWorkload BuildTrainingWorkload(const TrainingParams& t, const core::DeviceSpeed& speed)
{
    TrainingWorkload out;
    if (t.workload == "dp" || t.workload == "ps") {
        out.dataParallel = core::BuildDataParallel(DataParallelSpecOf(t, speed.peakFlops));
        out.workload = out.dataParallel->workload;
    } else if (t.workload == "tp") {
        core::MegatronMlpSpec s;
        s.devices = t.devices;
        s.layers = t.layers;
        s.tokens = t.tokens;
        s.hidden = t.hidden;
        s.ffnMultiplier = t.ffnMultiplier;
        s.backward = t.backward;
        s.algorithm = t.algorithm;
        s.speed = speed;
        out.workload = core::BuildMegatronMlp(s);
    } else if (t.workload == "interop" || t.workload == "intraop") {
        core::TwoMatmulSpec s;
        s.devices = t.workload == "interop" ? 2 : t.devices; // inter-op: W1 on one device, W2 on the other
        s.tokens = t.tokens;
        s.hidden = t.hidden;
        s.inputs = t.inputs;
        s.algorithm = t.algorithm;
        s.speed = speed;
        out.workload = t.workload == "interop" ? core::BuildInterOp(s) : core::BuildIntraOp(s);
    } else if (t.workload == "moe") {
        core::MoeSpec s;
        s.devices = t.devices;
        s.experts = t.experts;
        s.topK = t.topK;
        s.tokensPerDevice = t.tokens;
        s.hidden = t.hidden;
        s.ffnHidden = t.ffnHidden;
        s.imbalance = t.imbalance;
        s.speed = speed;
        out.moe = core::BuildMoe(s);
        out.workload = out.moe->workload;
    } else {
        throw Error("--kind: unknown kind '" + t.workload + "'; accepted: dp, ps, tp, interop, intraop, moe");
    }
    return out;
}

const std::vector<std::string>& TrainingWorkloadNames()
{
    static const std::vector<std::string> names{"dp", "ps", "tp", "interop", "intraop", "moe"};
    return names;
}

std::string TrainingTitle(const TrainingParams& t)
{
    const std::string devices = std::to_string(t.workload == "interop" ? 2 : t.devices);
    if (t.workload == "dp")
        return "data parallel, " + devices + " workers, " + std::string(core::Name(t.algorithm)) + " allreduce" +
               (t.overlap ? " overlapped" : "");
    if (t.workload == "ps")
        return "parameter server" + std::string(t.servers > 1 ? "s (" + std::to_string(t.servers) + ")" : "") + ", " + devices +
               " workers, " + t.consistency;
    if (t.workload == "tp") return "Megatron MLP, tensor parallel on " + devices + " devices, " + std::to_string(t.layers) + " layers";
    if (t.workload == "interop") return "Y = X W1 W2, inter-op (W1 and W2 on two devices)";
    if (t.workload == "intraop") return "Y = X W1 W2, intra-op (each split over " + devices + " devices)";
    if (t.workload == "moe") return "mixture of experts, " + std::to_string(t.experts) + " experts on " + devices + " devices";
    return t.workload;
}

// The collective a training step is built around, for the flow view: data parallelism's gradient
// allreduce (one layer's bucket), the parameter server's star (the naive allreduce: every worker
// to the server and back), tensor parallelism's activation allreduce. Others have none.
void AttachStepCollective(RunResult& r, const Experiment& e)
{
    const TrainingParams& t = e.training;
    const int devices = t.devices;
    const uint64_t element = static_cast<uint64_t>(DtypeBytes(t.dtype));
    const uint64_t activation = static_cast<uint64_t>(t.tokens * t.hidden) * element;
    core::CollectiveSpec spec{core::Collective::AllReduce, t.algorithm, devices, t.gradBytes, 0, 1};
    if (t.workload == "ps") spec.algorithm = core::Algorithm::Naive;
    else if (t.workload == "tp" || t.workload == "intraop") spec.bytes = activation, spec.alignBytes = element;
    else if (t.workload != "dp") return;
    if (devices < 2) return;
    AttachPlan(r, spec, e.cluster);
}

std::shared_ptr<RunResult> BuildTraining(const Experiment& e)
{
    const TrainingParams& t = e.training;
    const core::DeviceSpeed speed = TrainingSpeed(t);
    const core::Workload w = BuildTrainingWorkload(t, speed).workload;
    core::WorkloadOptions options;
    options.meta.source = core::TraceSource::Simulated;
    options.meta.title = TrainingTitle(t);
    options.meta.workload.Set("kind", t.workload);
    options.meta.hardware.Set("gpu", t.gpu);
    options.meta.hardware.Set("dtype", t.dtype);
    const core::ClusterModel cluster = e.cluster.ToModel();
    core::WorkloadResult sim = core::SimulateWorkload(w, cluster, options);
    auto r = std::make_shared<RunResult>();
    r->trace = std::make_shared<const core::Trace>(std::move(*sim.trace));
    r->windowBeginNs = r->trace->BeginNs();
    r->windowEndNs = r->trace->EndNs();
    FillUsage(*r);
    r->report = std::make_shared<const core::TraceReport>(core::AnalyzeTrace(*r->trace));
    r->simulatedSeconds = sim.seconds;
    FillMfu(*r, speed.peakFlops, core::FindGpu(t.gpu)->name + ", " + t.dtype + " dense peak: spec table (assets/hardware.json)");
    AttachStepCollective(*r, e);
    return r;
}

} // namespace paralens::app
