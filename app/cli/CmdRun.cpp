// paralens run: a workload for real. --backend gpu (default): on this machine's GPUs, timed by
// CUPTI or CUDA events, checked against the CPU reference, written as a Trace; arguments are
// checked the same way with or without the GPU backend; without it, or without a GPU, the command
// says so and exits 3 (paralens::Unavailable). --backend mpi: core Plans between the processes of
// an mpirun job (app/mpi), checked, timed next to MPI's own collectives, traced on aligned clocks;
// with --workload collective or gemm, one GPU per process instead (NCCL across the processes).
#include "CliCommon.hpp"
#include "Commands.hpp"
#include "RunProcesses.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "gpu/GpuBackend.hpp"
#include "schedule/Schedule.hpp"
#include "trace/MetaTable.hpp"
#include "trace/TraceFile.hpp"

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <tuple>

#if PARALENS_HAVE_MPI
#include "mpi/MpiGpuRun.hpp"
#include "mpi/MpiPipeline.hpp"
#include "mpi/MpiRun.hpp"
#include "mpi/MpiTraining.hpp"
#endif

namespace paralens::app {

namespace {

struct RunOptions {
    std::string backend = "gpu";
    std::string workload;
    std::string profile = "auto";
    std::string gpus = "all";
    int warmup = -1; // -1: the workload's default
    int iters = -1;
    bool noCheck = false;
    uint64_t seed = 1;
    bool apiSpans = false;
    double alphaUs = 5.0;
    double bandwidthGBps = 0.0;
    double peakTflops = 0.0;
    // collective and plan
    std::string collective = "allreduce";
    std::string algorithm;
    std::string bytes;
    std::string minBytes, maxBytes;
    int stepFactor = 2;
    std::string dtype;
    int root = 0;
    std::string ncclAlgo, ncclProto;
    bool ncclProfiler = false;
    int ranks = 0;
    bool virtualRanks = false;
    bool graph = false;
    std::string transport = "auto";
    // pipeline
    std::string schedule = "1f1b";
    int stages = 4, microbatches = 8, chunks = 1, layers = 2, hidden = 4096, ffn = 16384, tokens = 4096;
    double forwardMs = 20.0; // mpi pipeline: a forward's target time on this CPU
    std::string smPartition = "auto";
    std::string copyOn = "receiver";
    bool recompute = false;
    // gemm
    std::vector<std::string> shapes;
    // training (mpi, processes)
    std::string training = "dp";
    std::string gradBytes = "4MiB";
    int servers = 1;
    std::string straggler; // RANK:SLOWDOWN
    // mpi
    double timeoutSec = 30.0;
    int traceIterations = 20;
    bool noMpiCompare = false;
    std::string out;
    bool json = false;
};

// The options the MPI backend reads; any other given with --backend mpi is named as a mistake.
const std::vector<std::string> kMpiOptions{"--backend", "--workload", "--collective", "--algorithm", "--bytes", "--root",
                                           "--warmup", "--iters", "--no-check", "--seed", "--timeout-s", "--trace-iterations",
                                           "--no-mpi-compare", "--out", "--json"};
const std::vector<std::string> kMpiOnly{"--timeout-s", "--trace-iterations", "--no-mpi-compare", "--forward-ms"};

// Options that only one workload reads: given with another, they are a mistake worth naming.
struct OnlyFor {
    const char* option;
    std::vector<gpu::Workload> workloads;
};

const std::vector<OnlyFor>& WorkloadOptions()
{
    using W = gpu::Workload;
    static const std::vector<OnlyFor> table{
        {"--collective", {W::Collective, W::Plan}}, {"--bytes", {W::Collective, W::Plan}},
        {"--min-bytes", {W::Collective, W::Plan}},  {"--max-bytes", {W::Collective, W::Plan}},
        {"--step-factor", {W::Collective, W::Plan}}, {"--root", {W::Collective, W::Plan}},
        {"--algorithm", {W::Plan}},                 {"--ranks", {W::Plan}},
        {"--graph", {W::Plan}},
        {"--nccl-algo", {W::Collective}},           {"--nccl-proto", {W::Collective}},
        {"--nccl-profiler", {W::Collective}},       {"--virtual", {W::Plan, W::Pipeline}},
        {"--transport", {W::Plan, W::Pipeline}},    {"--schedule", {W::Pipeline}},
        {"--stages", {W::Pipeline}},                {"--microbatches", {W::Pipeline}},
        {"--chunks", {W::Pipeline}},                {"--layers", {W::Pipeline}},
        {"--hidden", {W::Pipeline}},                {"--ffn", {W::Pipeline}},
        {"--tokens", {W::Pipeline}},                {"--sm-partition", {W::Pipeline}},
        {"--copy-on", {W::Pipeline}},
        {"--recompute", {W::Pipeline}},             {"--shapes", {W::Gemm}},
        {"--peak-tflops", {W::Pipeline}},
    };
    return table;
}

template <class E, class Parse>
E ParseChoice(const char* option, const std::string& text, Parse&& parse, const char* accepted)
{
    auto v = parse(text);
    if (!v) throw Error(std::string(option) + ": unknown value '" + text + "'; accepted: " + accepted);
    return *v;
}

std::vector<std::string> SplitList(const std::string& text)
{
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string part; std::getline(ss, part, ',');)
        if (!part.empty()) out.push_back(part);
    return out;
}

gpu::DType ParseOneDType(const std::string& text)
{
    return ParseChoice<gpu::DType>("--dtype", text, gpu::ParseDType, "float, half, bfloat16, double, int32 (or fp32, fp16, bf16, fp64)");
}

std::vector<uint64_t> Sizes(const RunOptions& o)
{
    if (!o.bytes.empty()) {
        if (!o.minBytes.empty() || !o.maxBytes.empty()) throw Error("--bytes: give either --bytes or --min-bytes/--max-bytes, not both");
        return {ParseSizeOption("--bytes", o.bytes)};
    }
    if (o.minBytes.empty() && o.maxBytes.empty()) return {64ull << 20}; // one size: 64 MiB
    const uint64_t lo = ParseSizeOption("--min-bytes", o.minBytes.empty() ? "8" : o.minBytes);
    const uint64_t hi = ParseSizeOption("--max-bytes", o.maxBytes.empty() ? o.minBytes : o.maxBytes);
    if (o.stepFactor < 2) throw Error("--step-factor must be at least 2 (got " + std::to_string(o.stepFactor) + ")");
    return gpu::SizeSweep(lo, hi, static_cast<uint64_t>(o.stepFactor), 1);
}

gpu::RunRequest ToRequest(const RunOptions& o, const CLI::App& cmd)
{
    gpu::RunRequest r;
    r.workload = ParseChoice<gpu::Workload>("--workload", o.workload, gpu::ParseWorkload, "collective, plan, pipeline, gemm");
    for (const OnlyFor& rule : WorkloadOptions()) {
        if (cmd.count(rule.option) == 0) continue;
        bool ok = false;
        for (gpu::Workload w : rule.workloads) ok |= w == r.workload;
        if (!ok) {
            std::string names;
            for (gpu::Workload w : rule.workloads) names += (names.empty() ? "" : " or ") + std::string(gpu::Name(w));
            throw Error(std::string(rule.option) + " applies to --workload " + names + ", not " + std::string(gpu::Name(r.workload)));
        }
    }
    r.timing = ParseChoice<gpu::Timing>("--profile", o.profile, gpu::ParseTiming, "auto, cupti, events");
    r.gpus = gpu::ParseGpuList("--gpus", o.gpus);
    const bool pipeline = r.workload == gpu::Workload::Pipeline;
    r.warmupIters = o.warmup >= 0 ? o.warmup : (pipeline ? 1 : r.workload == gpu::Workload::Plan ? 2 : 5);
    r.iters = o.iters >= 0 ? o.iters : (pipeline ? 3 : 20);
    r.check = !o.noCheck;
    r.seed = o.seed;
    r.apiSpans = o.apiSpans;
    r.alphaUs = o.alphaUs;
    r.bandwidthGBps = o.bandwidthGBps;
    r.peakTflops = o.peakTflops;
    switch (r.workload) {
    case gpu::Workload::Collective:
        r.sizes = Sizes(o);
        r.collective.collective = ParseCollectiveOption(o.collective);
        r.collective.dtype = ParseOneDType(o.dtype.empty() ? "float" : o.dtype);
        r.collective.root = o.root;
        r.collective.ncclAlgo = o.ncclAlgo;
        r.collective.ncclProto = o.ncclProto;
        r.collective.ncclProfiler = o.ncclProfiler;
        break;
    case gpu::Workload::Plan:
        if (!o.dtype.empty()) throw Error("--dtype: the Plan executor moves bytes (the CPU reference's arithmetic); it takes no --dtype");
        r.sizes = Sizes(o);
        r.plan.collective = ParseCollectiveOption(o.collective);
        r.plan.algorithm = ParseAlgorithmOption(o.algorithm, r.plan.collective);
        r.plan.ranks = o.ranks;
        r.plan.virtualRanks = o.virtualRanks;
        r.plan.graph = o.graph;
        r.plan.transport = ParseChoice<gpu::Transport>("--transport", o.transport, gpu::ParseTransport, "auto, peer, nccl");
        r.plan.root = o.root;
        break;
    case gpu::Workload::Pipeline: {
        auto kind = core::ParseScheduleKind(o.schedule);
        if (!kind) throw Error("--schedule: unknown schedule '" + o.schedule + "'; accepted: " + core::ScheduleNamesList());
        r.pipeline.schedule = *kind;
        r.pipeline.stages = o.stages;
        r.pipeline.microBatches = o.microbatches;
        r.pipeline.chunks = o.chunks;
        r.pipeline.layersPerStage = o.layers;
        r.pipeline.hidden = o.hidden;
        r.pipeline.ffn = o.ffn;
        r.pipeline.tokens = o.tokens;
        r.pipeline.dtype = ParseOneDType(o.dtype.empty() ? "bf16" : o.dtype);
        r.pipeline.virtualStages = o.virtualRanks;
        r.pipeline.transport = ParseChoice<gpu::Transport>("--transport", o.transport, gpu::ParseTransport, "auto, peer, nccl");
        r.pipeline.smPartition = ParseChoice<gpu::SmPartition>("--sm-partition", o.smPartition, gpu::ParseSmPartition, "auto, green, none");
        r.pipeline.copyOn = ParseChoice<gpu::CopyOn>("--copy-on", o.copyOn, gpu::ParseCopyOn, "sender, receiver");
        r.pipeline.recompute = o.recompute;
        break;
    }
    case gpu::Workload::Gemm:
        if (!o.dtype.empty()) {
            r.gemm.dtypes.clear();
            for (const std::string& d : SplitList(o.dtype)) r.gemm.dtypes.push_back(ParseOneDType(d));
        }
        if (!o.shapes.empty()) {
            r.gemm.shapes.clear();
            for (const std::string& s : o.shapes)
                for (const std::string& one : SplitList(s)) r.gemm.shapes.push_back(gpu::ParseGemmShape("--shapes", one));
        }
        break;
    }
    gpu::ValidateRunRequest(r);
    return r;
}

int RunOnGpu(const RunOptions& o, const gpu::RunRequest& request)
{
    if (!o.out.empty()) CheckWritable("--out", o.out);
    std::unique_ptr<gpu::GpuJob> job = gpu::StartGpuJob(request); // Unavailable: not built, no GPU
    gpu::RunReport report = job->Wait();
    if (!o.out.empty() && report.trace) core::WriteTraceFile(*report.trace, o.out);
    if (o.json) {
        nlohmann::json j{{"backend", "gpu"}, {"workload", gpu::Name(request.workload)}, {"summary", core::ToJson(report.summary)},
                         {"checksPassed", report.checksPassed}, {"notes", report.notes}};
        j["rows"] = nlohmann::json::array();
        for (const core::MetaSection& row : report.rows) j["rows"].push_back(nlohmann::json(core::ToJson(row)));
        if (report.trace) j["spans"] = report.trace->SpanCount();
        if (!o.out.empty()) j["out"] = o.out;
        PrintJson(j);
    } else {
        std::printf("# paralens run --workload %s: %s\n", std::string(gpu::Name(request.workload)).c_str(),
                    report.summary.GetString("gpu").c_str());
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        for (const core::MetaSection& row : report.rows) rows.push_back(core::ToJson(row));
        std::fputs(core::FormatTable(rows).c_str(), stdout);
        std::printf("#\n");
        const nlohmann::ordered_json summary = core::ToJson(report.summary);
        for (const auto& [key, value] : summary.items())
            std::printf("# %s: %s\n", key.c_str(), core::FormatCell(value).c_str());
        for (const std::string& n : report.notes) std::printf("# note: %s\n", n.c_str());
        if (!o.out.empty()) std::printf("# trace: %s (%zu spans)\n", o.out.c_str(), report.trace ? report.trace->SpanCount() : 0);
    }
    if (!report.checksPassed) {
        std::fflush(stdout);
        std::fprintf(stderr, "paralens run: results differ from the CPU reference (see the 'wrong' column)\n");
        return 1;
    }
    return 0;
}

#if PARALENS_HAVE_MPI
std::vector<std::pair<core::Collective, core::Algorithm>> MpiCases(const RunOptions& o)
{
    std::vector<core::Collective> collectives;
    if (o.collective == "all") collectives.assign(core::AllCollectives().begin(), core::AllCollectives().end());
    else collectives.push_back(ParseCollectiveOption(o.collective));
    std::vector<std::pair<core::Collective, core::Algorithm>> cases;
    for (core::Collective c : collectives) {
        if (o.algorithm == "all") {
            for (core::Algorithm a : core::AlgorithmsFor(c)) cases.emplace_back(c, a);
        } else if (o.collective == "all" && !o.algorithm.empty()) {
            auto a = core::ParseAlgorithm(o.algorithm);
            if (!a) throw Error("--algorithm: unknown algorithm '" + o.algorithm + "'");
            if (core::Supports(c, *a)) cases.emplace_back(c, *a);
        } else {
            cases.emplace_back(c, ParseAlgorithmOption(o.algorithm, c));
        }
    }
    return cases;
}
#endif

// --backend mpi --workload collective|gemm: one GPU per process of an mpirun job.
int RunGpusOnMpi(const RunOptions& o, const CLI::App& cmd)
{
    for (const char* name : {"--trace-iterations", "--no-mpi-compare"})
        if (cmd.count(name) > 0) throw Error(std::string(name) + " applies to --backend mpi --workload plan");
    if (cmd.count("--virtual") > 0) throw Error("--virtual does not apply to --backend mpi: each process drives its own GPU");
    const gpu::RunRequest request = ToRequest(o, cmd);
    Require(o.timeoutSec > 0, "--timeout-s must be > 0");
#if PARALENS_HAVE_MPI
    if (!o.out.empty()) CheckWritable("--out", o.out);
    return mpi::RunMpiGpuBackend({request, o.timeoutSec, o.out, o.json});
#else
    throw Unavailable("--backend mpi: this paralens was built without MPI (install openmpi-bin and libopenmpi-dev, then rebuild)");
#endif
}

// Names the first option given that `accepted` does not list: "NAME does not apply to WHERE".
void RequireOnly(const CLI::App& cmd, const std::vector<std::string>& accepted, const std::string& where)
{
    for (const CLI::Option* opt : cmd.get_options())
        if (opt->count() > 0 && std::find(accepted.begin(), accepted.end(), opt->get_name()) == accepted.end())
            throw Error(opt->get_name() + " does not apply to " + where);
}

// --backend mpi --workload pipeline: one stage per process, real CPU GEMMs, real activations.
int RunPipelineOnMpi(const RunOptions& o, const CLI::App& cmd)
{
    static const std::vector<std::string> accepted{"--backend", "--workload", "--schedule", "--microbatches", "--chunks", "--recompute",
                                                   "--tokens", "--hidden", "--forward-ms", "--iters", "--warmup", "--timeout-s", "--out", "--json"};
    RequireOnly(cmd, accepted, "--backend mpi --workload pipeline (the stages are the mpirun processes)");
    auto kind = core::ParseScheduleKind(o.schedule);
    if (!kind) throw Error("--schedule: unknown schedule '" + o.schedule + "'; accepted: " + core::ScheduleNamesList());
    Require(o.iters != 0 && o.warmup >= -1, "--iters must be at least 1 and --warmup at least 0");
    Require(o.timeoutSec > 0, "--timeout-s must be > 0");
    Require(o.forwardMs > 0 && o.forwardMs <= 10000, "--forward-ms must be in (0, 10000]");
    Require(cmd.count("--tokens") == 0 || (o.tokens >= 16 && o.tokens <= 65536), "--tokens must be from 16 to 65536");
    Require(cmd.count("--hidden") == 0 || (o.hidden >= 16 && o.hidden <= 65536), "--hidden must be from 16 to 65536");
#if PARALENS_HAVE_MPI
    mpi::MpiPipelineOptions m;
    m.schedule = *kind;
    m.microBatches = o.microbatches;
    m.chunks = o.chunks;
    m.recompute = o.recompute;
    m.tokens = cmd.count("--tokens") > 0 ? o.tokens : 256;
    m.hidden = cmd.count("--hidden") > 0 ? o.hidden : 0;
    m.forwardMs = o.forwardMs;
    m.iterations = o.iters >= 0 ? o.iters : 3;
    m.warmup = o.warmup >= 0 ? o.warmup : 1;
    m.timeoutSec = o.timeoutSec;
    m.out = o.out;
    m.json = o.json;
    if (!o.out.empty()) CheckWritable("--out", o.out);
    return mpi::RunMpiPipeline(m);
#else
    throw Unavailable("--backend mpi: this paralens was built without MPI (install openmpi-bin and libopenmpi-dev, then rebuild)");
#endif
}

// --straggler RANK:SLOWDOWN -> {rank, slowdown}; "" -> {-1, 1}.
std::pair<int, double> ParseStraggler(const std::string& text)
{
    if (text.empty()) return {-1, 1.0};
    const size_t colon = text.find(':');
    try {
        const int rank = std::stoi(text.substr(0, colon));
        const double slowdown = colon == std::string::npos ? 2.0 : std::stod(text.substr(colon + 1));
        if (rank >= 0 && slowdown >= 1.0 && slowdown <= 100.0) return {rank, slowdown};
    } catch (const std::exception&) {
    }
    throw Error("--straggler: expected RANK:SLOWDOWN, a rank >= 0 and a slowdown from 1 to 100 (got '" + text + "')");
}

// --backend mpi --workload training: a data-parallel training step, one worker (or server) per process.
int RunTrainingOnMpi(const RunOptions& o, const CLI::App& cmd)
{
    static const std::vector<std::string> accepted{"--backend", "--workload", "--training", "--layers", "--forward-ms", "--grad-bytes",
                                                   "--algorithm", "--servers", "--straggler", "--alpha-us", "--bandwidth-GBps", "--iters",
                                                   "--warmup", "--seed", "--timeout-s", "--out", "--json"};
    RequireOnly(cmd, accepted, "--backend mpi --workload training (the workers are the mpirun processes)");
    Require(o.training == "dp" || o.training == "ps", "--training: dp (allreduce) or ps (parameter servers), not '" + o.training + "'");
    Require(o.timeoutSec > 0, "--timeout-s must be > 0");
    Require(cmd.count("--servers") == 0 || o.training == "ps", "--servers applies to --training ps");
    Require(cmd.count("--algorithm") == 0 || o.training == "dp", "--algorithm applies to --training dp (the gradients' allreduce)");
    Require(o.servers >= 1, "--servers must be at least 1");
#if PARALENS_HAVE_MPI
    mpi::MpiTrainingOptions m;
    m.workload = o.training;
    m.layers = cmd.count("--layers") > 0 ? o.layers : 4;
    m.iterations = o.iters >= 0 ? o.iters : 3;
    m.warmup = o.warmup >= 0 ? o.warmup : 1;
    m.forwardMs = cmd.count("--forward-ms") > 0 ? o.forwardMs : 5.0;
    m.gradBytes = ParseSizeOption("--grad-bytes", o.gradBytes);
    if (!o.algorithm.empty()) m.algorithm = ParseAlgorithmOption(o.algorithm, core::Collective::AllReduce);
    m.servers = o.servers;
    std::tie(m.stragglerRank, m.slowdown) = ParseStraggler(o.straggler);
    m.alphaUs = o.alphaUs;
    m.bandwidthGBps = o.bandwidthGBps > 0 ? o.bandwidthGBps : m.bandwidthGBps;
    m.timeoutSec = o.timeoutSec;
    m.seed = o.seed;
    m.out = o.out;
    m.json = o.json;
    if (!o.out.empty()) CheckWritable("--out", o.out);
    return mpi::RunMpiTraining(m);
#else
    throw Unavailable("--backend mpi: this paralens was built without MPI (install openmpi-bin and libopenmpi-dev, then rebuild)");
#endif
}

// --backend mpi: Plans between the processes of an mpirun job.
int RunOnMpi(const RunOptions& o, const CLI::App& cmd)
{
    if (o.workload == "collective" || o.workload == "gemm") return RunGpusOnMpi(o, cmd);
    if (o.workload == "pipeline") return RunPipelineOnMpi(o, cmd);
    if (o.workload == "training") return RunTrainingOnMpi(o, cmd);
    RequireOnly(cmd, kMpiOptions, "--backend mpi");
    if (!o.workload.empty() && o.workload != "plan")
        throw Error("--workload: --backend mpi runs core Plans between processes (plan, the default), a pipeline schedule "
                    "with one stage per process (pipeline), a data-parallel training step with one worker per process "
                    "(training), or one GPU per process (collective, gemm), not " + o.workload);
#if PARALENS_HAVE_MPI
    Require(o.iters != 0 && o.warmup >= -1, "--iters must be at least 1 and --warmup at least 0");
    Require(o.timeoutSec > 0, "--timeout-s must be > 0");
    mpi::MpiRunOptions m;
    m.cases = MpiCases(o);
    m.bytes = o.bytes.empty() ? (1ull << 20) : ParseSizeOption("--bytes", o.bytes);
    m.root = o.root;
    m.iterations = o.iters >= 0 ? o.iters : 5;
    m.warmup = o.warmup >= 0 ? o.warmup : 1;
    m.traceIterations = o.traceIterations;
    m.timeoutSec = o.timeoutSec;
    m.compareMpi = !o.noMpiCompare;
    m.check = !o.noCheck;
    m.seed = o.seed;
    m.out = o.out;
    m.json = o.json;
    if (!o.out.empty()) CheckWritable("--out", o.out);
    return mpi::RunMpiBackend(m);
#else
    throw Unavailable("--backend mpi: this paralens was built without MPI (install openmpi-bin and libopenmpi-dev, then rebuild)");
#endif
}

// --backend processes: paralens starts the mpirun job itself (the window's runner).
int RunProcessesBackend(const RunOptions& o, const CLI::App& cmd)
{
    static const std::vector<std::string> accepted{"--backend", "--workload", "--collective", "--algorithm", "--bytes", "--ranks", "--root",
                                                   "--schedule", "--stages", "--microbatches", "--chunks", "--recompute", "--forward-ms",
                                                   "--iters", "--warmup", "--timeout-s", "--alpha-us", "--bandwidth-GBps", "--out", "--json",
                                                   "--training", "--layers", "--grad-bytes", "--servers", "--straggler"};
    RequireOnly(cmd, accepted, "--backend processes");
    ProcessesRunOptions p;
    p.workload = o.workload;
    p.collective = o.collective;
    p.algorithm = o.algorithm;
    p.bytes = o.bytes;
    p.ranks = cmd.count("--ranks") > 0 ? o.ranks : 4;
    p.root = o.root;
    p.schedule = o.schedule;
    p.stages = o.stages;
    p.microbatches = o.microbatches;
    p.chunks = o.chunks;
    p.recompute = o.recompute;
    p.forwardMs = cmd.count("--forward-ms") > 0 || o.workload != "training" ? o.forwardMs : 5.0;
    p.training = o.training;
    p.gradBytes = o.gradBytes;
    p.workers = p.ranks;
    p.layers = cmd.count("--layers") > 0 ? o.layers : 4;
    p.servers = o.servers;
    std::tie(p.stragglerRank, p.slowdown) = ParseStraggler(o.straggler);
    p.iters = o.iters;
    p.warmup = o.warmup;
    p.timeoutSec = o.timeoutSec;
    p.alphaUs = o.alphaUs;
    p.bandwidthGBps = o.bandwidthGBps;
    p.out = o.out;
    p.json = o.json;
    return RunOnProcesses(p);
}

int Run(const RunOptions& o, const CLI::App& cmd)
{
    if (o.backend == "mpi") return RunOnMpi(o, cmd);
    if (o.backend == "processes") return RunProcessesBackend(o, cmd);
    if (o.backend != "gpu") throw Error("--backend: unknown backend '" + o.backend + "'; accepted: gpu, mpi, processes");
    for (const std::string& name : kMpiOnly)
        if (cmd.count(name) > 0) throw Error(name + " applies to --backend mpi");
    if (o.workload.empty()) throw Error("--workload: required with --backend gpu (collective, plan, pipeline, gemm)");
    const gpu::RunRequest request = ToRequest(o, cmd);
    return RunOnGpu(o, request);
}

void AddOptions(CLI::App* cmd, RunOptions& o)
{
    cmd->add_option("--backend", o.backend, "Where the workload runs: gpu (this machine's GPUs), processes (paralens starts "
                                            "an mpirun job of itself and follows it live, as the window does), mpi (one process "
                                            "of mpirun -np N paralens run --backend mpi ...)")->capture_default_str();
    cmd->add_option("--workload,-w", o.workload, "gpu: collective (NCCL), plan (a core Plan step by step), pipeline, gemm; "
                                                 "mpi: plan (the default; CPU processes), pipeline (one stage per CPU process, OpenBLAS GEMMs), training (one data-parallel worker or server per CPU process), collective or gemm (one GPU per process)");
    cmd->add_option("--profile", o.profile, "GPU timeline: auto (CUPTI, else CUDA events), cupti, events")->capture_default_str();
    cmd->add_option("--gpus", o.gpus, "GPU indices (0,1,...) or all")->capture_default_str();
    cmd->add_option("--warmup", o.warmup, "Warm-up iterations (default 5; plan 2; pipeline 1)");
    cmd->add_option("--iters", o.iters, "Timed iterations (default 20; pipeline 3)");
    cmd->add_flag("--no-check", o.noCheck, "Skip comparing results with the CPU reference");
    cmd->add_option("--seed", o.seed, "Seed of the data")->capture_default_str();
    cmd->add_flag("--api-spans", o.apiSpans, "Keep CUDA runtime/driver API calls as host spans (CUPTI)");
    cmd->add_option("--alpha-us", o.alphaUs, "Model: latency of one message in microseconds")->capture_default_str();
    cmd->add_option("--bandwidth-GBps", o.bandwidthGBps, "Model: link bandwidth (0: from the GPU's spec)")->capture_default_str();
    cmd->add_option("--peak-tflops", o.peakTflops, "Pipeline: MFU denominator per GPU (0: spec sheet; a GEMM probe's result fits)");
    cmd->add_option("--collective,-c", o.collective, "Collective: " + core::CollectiveNamesList())->capture_default_str();
    cmd->add_option("--algorithm,-a", o.algorithm, "Plan: the algorithm (default: the collective's first)");
    cmd->add_option("--bytes,-n", o.bytes, "Size n of the full vector (default 64MiB, or a sweep with -b/-e)");
    cmd->add_option("--min-bytes,-b", o.minBytes, "Sweep from this size");
    cmd->add_option("--max-bytes,-e", o.maxBytes, "Sweep to this size");
    cmd->add_option("--step-factor,-f", o.stepFactor, "Sweep factor between sizes")->capture_default_str();
    cmd->add_option("--dtype", o.dtype, "collective: float, half, bfloat16, double, int32; pipeline: bf16, fp16, fp32; gemm: a list");
    cmd->add_option("--root", o.root, "Root rank (broadcast, reduce, scatter, gather)")->capture_default_str();
    cmd->add_option("--nccl-algo", o.ncclAlgo, "NCCL_ALGO for this run (Ring, Tree, NVLS, ...; ^ excludes)");
    cmd->add_option("--nccl-proto", o.ncclProto, "NCCL_PROTO for this run (LL, LL128, Simple)");
    cmd->add_flag("--nccl-profiler", o.ncclProfiler, "Load paralens's NCCL profiler plugin and merge NCCL's own events");
    cmd->add_option("--ranks,-p", o.ranks, "Plan: ranks (default: one per GPU; more than the GPUs makes them virtual); processes: "
                                           "the processes (4), or the workers of --workload training");
    cmd->add_flag("--virtual", o.virtualRanks, "All ranks (plan) or stages (pipeline) share the first GPU");
    cmd->add_flag("--graph", o.graph, "Plan: also time each size as one CUDA graph of the whole step (graphTimeUs): the GPU's "
                                      "time without the host issuing every transfer; its result is checked too");
    cmd->add_option("--transport", o.transport, "auto, peer (copies), nccl (send/recv)")->capture_default_str();
    cmd->add_option("--schedule,-s", o.schedule, "Pipeline schedule: " + core::ScheduleNamesList())->capture_default_str();
    cmd->add_option("--stages,-D", o.stages, "Pipeline stages D")->capture_default_str();
    cmd->add_option("--microbatches,-N", o.microbatches, "Micro-batches N")->capture_default_str();
    cmd->add_option("--chunks,-v", o.chunks, "Model chunks per stage (interleaved)")->capture_default_str();
    cmd->add_option("--layers", o.layers, "MLP blocks per stage")->capture_default_str();
    cmd->add_option("--hidden", o.hidden, "Hidden size h")->capture_default_str();
    cmd->add_option("--ffn", o.ffn, "MLP inner size f")->capture_default_str();
    cmd->add_option("--tokens", o.tokens, "Rows of one micro-batch (batch x sequence)")->capture_default_str();
    cmd->add_option("--sm-partition", o.smPartition, "Virtual stages: auto, green (green contexts), none")->capture_default_str();
    cmd->add_option("--copy-on", o.copyOn, "Virtual stages: whose stream (and SMs) runs a copy between two stages: "
                                           "receiver (idle while it waits for the copy) or sender (busy with its next GEMM)")->capture_default_str();
    cmd->add_flag("--recompute", o.recompute, "Full activation recomputation before each backward");
    cmd->add_option("--forward-ms", o.forwardMs, "mpi pipeline: a forward's target time; the GEMMs are sized from the CPU's probed "
                                                 "sgemm peak (unless --hidden is given)")->capture_default_str();
    cmd->add_option("--training", o.training, "mpi/processes --workload training: dp (gradients allreduced) or ps (parameter "
                                              "servers, BSP)")->capture_default_str();
    cmd->add_option("--grad-bytes", o.gradBytes, "Training: gradient bytes per layer")->capture_default_str();
    cmd->add_option("--servers", o.servers, "Training ps: parameter servers (the last processes)")->capture_default_str();
    cmd->add_option("--straggler", o.straggler, "Training: RANK:SLOWDOWN, that worker's compute takes SLOWDOWN times longer");
    cmd->add_option("--shapes", o.shapes, "GEMM shapes MxNxK (or one size), comma-separated or repeated");
    cmd->add_option("--timeout-s", o.timeoutSec, "mpi: a rank silent this long is declared dead or hung")->capture_default_str();
    cmd->add_option("--trace-iterations", o.traceIterations, "mpi: timed iterations recorded in the traces (the first ones)")
        ->capture_default_str();
    cmd->add_flag("--no-mpi-compare", o.noMpiCompare, "mpi: do not time MPI's own collective");
    cmd->add_option("--out,-o", o.out, "Write the Trace here (.json, .json.gz); mpi: rank 0 merges, each rank writes FILE.rankN");
    cmd->add_flag("--json", o.json, "Machine-readable output");
}

} // namespace

void AddRunCommand(CLI::App& root, int& exitCode)
{
    auto o = std::make_shared<RunOptions>();
    CLI::App* cmd = root.add_subcommand("run", "Run a workload for real: on this machine's GPUs (NCCL collectives, a Plan step "
                                               "by step, a pipeline schedule or a GEMM probe, timed by CUPTI or CUDA events), "
                                               "between processes of this machine that paralens starts and follows live (--backend processes), "
                                               "or as one process of an mpirun job (--backend mpi)");
    AddOptions(cmd, *o);
    cmd->callback([o, cmd, &exitCode] { exitCode = Run(*o, *cmd); });
}

} // namespace paralens::app
