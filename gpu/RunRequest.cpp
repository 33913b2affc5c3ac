#include "RunRequest.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <sstream>

namespace paralens::gpu {

namespace {

std::string Lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::vector<std::string> Split(const std::string& text, char sep)
{
    std::vector<std::string> parts;
    std::stringstream ss(text);
    for (std::string part; std::getline(ss, part, sep);) parts.push_back(part);
    return parts;
}

template <class E, size_t N>
std::optional<E> ParseEnum(std::string_view name, const std::array<std::string_view, N>& names)
{
    const std::string lower = Lower(name);
    for (size_t i = 0; i < N; ++i)
        if (names[i] == lower) return static_cast<E>(i);
    return std::nullopt;
}

constexpr std::array<std::string_view, 4> kWorkloads{"collective", "plan", "pipeline", "gemm"};
constexpr std::array<std::string_view, 3> kTimings{"auto", "cupti", "events"};
constexpr std::array<std::string_view, 3> kTransports{"auto", "peer", "nccl"};
constexpr std::array<std::string_view, 3> kPartitions{"auto", "green", "none"};
constexpr std::array<std::string_view, 2> kCopyOn{"sender", "receiver"};
constexpr std::array<std::string_view, 5> kDTypes{"float", "half", "bfloat16", "double", "int32"};
constexpr std::array<std::string_view, 5> kDTypeShort{"fp32", "fp16", "bf16", "fp64", "int32"};

// A list as NCCL reads NCCL_ALGO / NCCL_PROTO: [^]name[,name...], or per collective
// "coll:list;coll:list" (NCCL 2.24+).
void ValidateNcclList(const char* option, const std::string& value, std::initializer_list<std::string_view> known)
{
    if (value.empty()) return;
    auto checkList = [&](std::string list) {
        if (!list.empty() && list[0] == '^') list.erase(0, 1);
        for (const std::string& item : Split(list, ',')) {
            const std::string l = Lower(item);
            bool ok = false;
            for (std::string_view k : known) ok = ok || Lower(k) == l;
            if (!ok) {
                std::string names;
                for (std::string_view k : known) names += (names.empty() ? "" : ", ") + std::string(k);
                throw Error(std::string(option) + ": unknown name '" + item + "' in '" + value + "'; accepted: " + names +
                            " (comma-separated, '^' to exclude, or per collective as allreduce:tree;allgather:ring)");
            }
        }
    };
    for (const std::string& part : Split(value, ';')) {
        const size_t colon = part.find(':');
        if (colon == std::string::npos) {
            checkList(part);
            continue;
        }
        const std::string coll = Lower(part.substr(0, colon));
        static const std::set<std::string> kColls{"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                                                  "sendrecv", "alltoall", "gather", "scatter"};
        if (!kColls.count(coll))
            throw Error(std::string(option) + ": unknown collective '" + part.substr(0, colon) + "' in '" + value +
                        "' (expected allreduce, allgather, reducescatter, broadcast, reduce)");
        checkList(part.substr(colon + 1));
    }
}

} // namespace

std::string_view Name(Workload w) { return kWorkloads[static_cast<size_t>(w)]; }
std::optional<Workload> ParseWorkload(std::string_view n) { return ParseEnum<Workload>(n, kWorkloads); }
std::string_view Name(Timing t) { return kTimings[static_cast<size_t>(t)]; }
std::optional<Timing> ParseTiming(std::string_view n) { return ParseEnum<Timing>(n, kTimings); }
std::string_view Name(Transport t) { return kTransports[static_cast<size_t>(t)]; }
std::optional<Transport> ParseTransport(std::string_view n) { return ParseEnum<Transport>(n, kTransports); }
std::string_view Name(SmPartition p) { return kPartitions[static_cast<size_t>(p)]; }
std::optional<SmPartition> ParseSmPartition(std::string_view n) { return ParseEnum<SmPartition>(n, kPartitions); }
std::string_view Name(CopyOn c) { return kCopyOn[static_cast<size_t>(c)]; }
std::optional<CopyOn> ParseCopyOn(std::string_view n) { return ParseEnum<CopyOn>(n, kCopyOn); }
std::string_view Name(DType d) { return kDTypes[static_cast<size_t>(d)]; }
std::string_view ShortName(DType d) { return kDTypeShort[static_cast<size_t>(d)]; }

std::optional<DType> ParseDType(std::string_view name)
{
    if (auto d = ParseEnum<DType>(name, kDTypes)) return d;
    if (auto d = ParseEnum<DType>(name, kDTypeShort)) return d;
    const std::string l = Lower(name);
    if (l == "f32") return DType::Float;
    if (l == "f16") return DType::Half;
    if (l == "bfloat" || l == "bf") return DType::BFloat16;
    if (l == "f64") return DType::Double;
    if (l == "int") return DType::Int32;
    return std::nullopt;
}

uint64_t SizeOf(DType d)
{
    switch (d) {
    case DType::Half:
    case DType::BFloat16: return 2;
    case DType::Double: return 8;
    case DType::Float:
    case DType::Int32: return 4;
    }
    return 4;
}

void ValidateNcclAlgo(const std::string& value)
{
    ValidateNcclList("--nccl-algo", value, {"Ring", "Tree", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"});
}

void ValidateNcclProto(const std::string& value) { ValidateNcclList("--nccl-proto", value, {"LL", "LL128", "Simple"}); }

std::vector<uint64_t> SizeSweep(uint64_t minBytes, uint64_t maxBytes, uint64_t factor, uint64_t align)
{
    Require(align >= 1, "size sweep: the alignment must be at least 1 byte");
    Require(minBytes >= 1, "--min-bytes must be at least 1 byte");
    Require(minBytes <= maxBytes, "--min-bytes (" + std::to_string(minBytes) + ") must not exceed --max-bytes (" +
                                      std::to_string(maxBytes) + ")");
    Require(factor >= 2, "--step-factor must be at least 2 (got " + std::to_string(factor) + ")");
    std::vector<uint64_t> sizes;
    for (uint64_t s = minBytes;; ) {
        const uint64_t rounded = std::max(align, s / align * align);
        if (sizes.empty() || sizes.back() != rounded) sizes.push_back(rounded);
        if (s > maxBytes / factor) break;
        s *= factor;
        if (s > maxBytes) break;
    }
    return sizes;
}

GemmShape ParseGemmShape(const char* option, const std::string& text)
{
    std::vector<std::string> parts = Split(Lower(text), 'x');
    if (parts.size() == 1) parts = {parts[0], parts[0], parts[0]};
    if (parts.size() != 3)
        throw Error(std::string(option) + ": cannot read '" + text + "' as a GEMM shape (expected MxNxK, e.g. 8192x8192x8192, or one size for a square GEMM)");
    int v[3];
    for (int i = 0; i < 3; ++i) {
        try {
            size_t used = 0;
            const long value = std::stol(parts[static_cast<size_t>(i)], &used);
            if (used != parts[static_cast<size_t>(i)].size() || value < 1 || value > (1L << 20)) throw std::out_of_range("");
            v[i] = static_cast<int>(value);
        } catch (const std::exception&) {
            throw Error(std::string(option) + ": '" + text + "': each of M, N, K must be a whole number from 1 to 1048576");
        }
    }
    return GemmShape{v[0], v[1], v[2]};
}

std::vector<int> ParseGpuList(const char* option, const std::string& text)
{
    if (text.empty() || Lower(text) == "all") return {};
    std::vector<int> gpus;
    for (const std::string& part : Split(text, ',')) {
        try {
            size_t used = 0;
            const int g = std::stoi(part, &used);
            if (used != part.size() || g < 0) throw std::out_of_range("");
            if (std::find(gpus.begin(), gpus.end(), g) != gpus.end())
                throw Error(std::string(option) + ": GPU " + part + " is listed twice in '" + text + "'");
            gpus.push_back(g);
        } catch (const Error&) {
            throw;
        } catch (const std::exception&) {
            throw Error(std::string(option) + ": cannot read '" + part + "' in '" + text +
                        "' as a GPU index (expected e.g. 0,1,2,3 or all)");
        }
    }
    return gpus;
}

namespace {

void ValidatePipeline(const PipelineRun& p)
{
    core::PipelineSpec spec;
    spec.kind = p.schedule;
    spec.stages = p.stages;
    spec.microBatches = p.microBatches;
    spec.chunks = p.chunks;
    spec.recompute = p.recompute;
    core::BuildSchedule(spec); // throws Error naming D, N or v
    Require(p.hidden >= 1 && p.ffn >= 1 && p.tokens >= 1, "--hidden, --ffn and --tokens must be at least 1");
    Require(p.layersPerStage >= 1, "--layers must be at least 1 (MLP blocks per stage)");
    Require(p.layersPerStage % p.chunks == 0, "--layers (" + std::to_string(p.layersPerStage) +
                                                  ") must be a multiple of --chunks (" + std::to_string(p.chunks) +
                                                  "): each model chunk holds the same number of MLP blocks");
    Require(p.dtype == DType::BFloat16 || p.dtype == DType::Half || p.dtype == DType::Float,
            "--dtype: the pipeline runs bf16, fp16 or fp32 GEMMs (got " + std::string(Name(p.dtype)) + ")");
}

void ValidateProcessGroup(const RunRequest& r)
{
    const ProcessGroup& g = r.processGroup;
    if (!g.Active()) return;
    Require(r.workload == Workload::Collective || r.workload == Workload::Gemm,
            "--workload: across processes (--backend mpi) the GPU workloads are collective and gemm, not " +
                std::string(Name(r.workload)));
    Require(g.rank >= 0 && g.rank < g.size,
            "process group: rank " + std::to_string(g.rank) + " is not in 0.." + std::to_string(g.size - 1));
    Require(r.gpus.size() == 1, "process group: each process drives exactly one GPU (got " + std::to_string(r.gpus.size()) + ")");
    if (r.workload == Workload::Collective)
        Require(r.collective.root < g.size, "--root must be a rank (0 to " + std::to_string(g.size - 1) + ")");
}

} // namespace

void ValidateRunRequest(const RunRequest& r)
{
    Require(r.iters >= 1, "--iters must be at least 1");
    Require(r.warmupIters >= 0, "--warmup must not be negative");
    Require(r.alphaUs >= 0, "--alpha-us must not be negative");
    Require(r.bandwidthGBps >= 0, "--bandwidth-GBps must not be negative (0: from the GPU's spec)");
    Require(r.peakTflops >= 0, "--peak-tflops must not be negative (0: the spec sheet's peak)");
    for (int g : r.gpus) Require(g >= 0, "--gpus: GPU indices are 0 or more");
    ValidateProcessGroup(r);
    switch (r.workload) {
    case Workload::Collective:
        Require(!r.sizes.empty(), "--bytes (or --min-bytes/--max-bytes): give at least one size");
        for (uint64_t s : r.sizes)
            Require(s >= SizeOf(r.collective.dtype), "--bytes: " + std::to_string(s) + " B is less than one " +
                                                         std::string(Name(r.collective.dtype)) + " element");
        Require(r.collective.root >= 0, "--root must not be negative");
        ValidateNcclAlgo(r.collective.ncclAlgo);
        ValidateNcclProto(r.collective.ncclProto);
        break;
    case Workload::Plan:
        Require(!r.sizes.empty(), "--bytes (or --min-bytes/--max-bytes): give at least one size");
        Require(core::Supports(r.plan.collective, r.plan.algorithm),
                "--algorithm: " + std::string(core::Name(r.plan.algorithm)) + " does not implement " +
                    std::string(core::Name(r.plan.collective)) + "; accepted: " + core::AlgorithmNamesList(r.plan.collective));
        Require(r.plan.ranks >= 0 && r.plan.ranks <= 64, "--ranks must be between 1 and 64 (0: one per GPU)");
        Require(r.plan.root >= 0 && (r.plan.ranks == 0 || r.plan.root < r.plan.ranks),
                "--root must be a rank (0 to " + std::to_string(std::max(0, r.plan.ranks - 1)) + ")");
        Require(!r.plan.graph || r.plan.transport != Transport::Nccl,
                "--graph: the Plan's graph is of peer copies and reductions; it does not capture --transport nccl");
        break;
    case Workload::Pipeline: ValidatePipeline(r.pipeline); break;
    case Workload::Gemm:
        Require(!r.gemm.dtypes.empty() && !r.gemm.shapes.empty(), "--dtype and --shapes: give at least one of each");
        for (DType d : r.gemm.dtypes)
            Require(d == DType::BFloat16 || d == DType::Half || d == DType::Float,
                    "--dtype: the GEMM probe measures bf16, fp16 and fp32 (got " + std::string(Name(d)) + ")");
        break;
    }
}

} // namespace paralens::gpu
