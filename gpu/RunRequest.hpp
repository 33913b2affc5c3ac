// What `paralens run` (and the app's GPU backend controls) ask the GPU backend to run, and its
// validation. Plain C++ (no CUDA type): built in every configuration, so a build without CUDA
// still checks arguments the same way before it says that the GPU backend is not built.
// Sizes are bytes, times seconds unless named otherwise. Value types; thread-safe to copy.
#pragma once

#include "model/Collective.hpp"
#include "schedule/Schedule.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::gpu {

enum class Workload { Collective, Plan, Pipeline, Gemm };
std::string_view Name(Workload w);
std::optional<Workload> ParseWorkload(std::string_view name);

// How the GPU timeline is taken: CUPTI (the GPU's own clock) or CUDA events around each op.
// Auto uses CUPTI when it was built and is permitted, else events, and says which in the Trace.
enum class Timing { Auto, Cupti, Events };
std::string_view Name(Timing t);
std::optional<Timing> ParseTiming(std::string_view name);

// How a rank's data reaches another rank.
enum class Transport { Auto, Peer, Nccl }; // Auto: NCCL between real GPUs, peer copies otherwise
std::string_view Name(Transport t);
std::optional<Transport> ParseTransport(std::string_view name);

// SM partitioning of virtual pipeline stages on one GPU.
enum class SmPartition { Auto, Green, None }; // Auto: green contexts when the driver offers them
std::string_view Name(SmPartition p);
std::optional<SmPartition> ParseSmPartition(std::string_view name);
// Which virtual stage's stream runs a copy between two of them (one GPU). cudaMemcpyAsync within a
// GPU is a kernel on that stream's SMs (its green context's), so it starts when the kernel running
// there frees some. Sender: the producing stage's, whose next GEMM is usually running by then (on
// an H200 a tenth of the copies started 1.6 ms and more after their data was ready); Receiver (the
// default): the consuming stage's, idle when it waits for the copy. Receiver gives each stage two
// more streams, which needs more hardware queues than CUDA's default 8 (PrepareCudaEnvironment).
enum class CopyOn { Sender, Receiver };
std::string_view Name(CopyOn c);
std::optional<CopyOn> ParseCopyOn(std::string_view name);

// Element types. The collective workload uses nccl-tests' names, the GEMMs the lectures' ones.
enum class DType { Float, Half, BFloat16, Double, Int32 };
std::string_view Name(DType d);                 // "float", "half", "bfloat16", "double", "int32"
std::string_view ShortName(DType d);            // "fp32", "fp16", "bf16", "fp64", "int32"
std::optional<DType> ParseDType(std::string_view name); // either spelling, and "f32", "bf16", "fp16"
uint64_t SizeOf(DType d);

// NCCL_ALGO / NCCL_PROTO as NCCL reads them: "Ring", "Tree,Ring", "^NVLS", "allreduce:tree;allgather:ring"
// (algorithms Ring, Tree, CollnetDirect, CollnetChain, NVLS, NVLSTree, PAT; protocols LL, LL128,
// Simple; case-insensitive). Empty: NCCL chooses. Throws Error naming the option and the
// unknown name.
void ValidateNcclAlgo(const std::string& value);
void ValidateNcclProto(const std::string& value);

// nccl-tests' -b/-e/-f: minBytes, minBytes*factor, ... up to maxBytes, each rounded down to a
// multiple of `align` (and at least `align`). Throws Error for min > max, factor < 2, ...
std::vector<uint64_t> SizeSweep(uint64_t minBytes, uint64_t maxBytes, uint64_t factor, uint64_t align);

struct CollectiveRun {
    core::Collective collective = core::Collective::AllReduce;
    DType dtype = DType::Float;
    int root = 0;
    std::string ncclAlgo;  // NCCL_ALGO for this run ("" = NCCL's choice)
    std::string ncclProto; // NCCL_PROTO
    bool ncclProfiler = false; // load paralens's NCCL profiler plugin and merge NCCL's own events
};

struct PlanRun {
    core::Collective collective = core::Collective::AllReduce;
    core::Algorithm algorithm = core::Algorithm::Ring;
    int ranks = 0;           // 0: one per GPU used
    bool virtualRanks = false; // all ranks on the first GPU (forced when ranks > GPUs)
    Transport transport = Transport::Auto;
    int root = 0;
    // Also time each size as one CUDA graph of the whole program (captured once, launched
    // --iters times, its result checked): the device's time without the host issuing every
    // transfer and reduction. Peer copies only (not --transport nccl).
    bool graph = false;
};

struct PipelineRun {
    core::ScheduleKind schedule = core::ScheduleKind::OneFOneB;
    int stages = 4;        // D
    int microBatches = 8;  // N
    int chunks = 1;        // v (interleaved)
    int layersPerStage = 2; // MLP blocks per stage (split over the chunks)
    int hidden = 4096;     // h
    int ffn = 16384;       // f: each block is h->f then f->h
    int tokens = 4096;     // rows of one micro-batch (batch x sequence)
    DType dtype = DType::BFloat16;
    bool virtualStages = false; // all stages on the first GPU (forced when stages > GPUs)
    Transport transport = Transport::Auto;
    SmPartition smPartition = SmPartition::Auto;
    CopyOn copyOn = CopyOn::Receiver; // virtual stages' copies
    bool recompute = false;
};

struct GemmShape {
    int m = 0, n = 0, k = 0;
};
// "8192x8192x8192" or "8192" (square). Throws Error naming `option`.
GemmShape ParseGemmShape(const char* option, const std::string& text);

struct GemmRun {
    std::vector<DType> dtypes{DType::BFloat16, DType::Half, DType::Float};
    std::vector<GemmShape> shapes{{8192, 8192, 8192}, {4096, 4096, 4096}, {16384, 8192, 1024}, {2048, 2048, 2048}};
};

// One process of a multi-process job (`mpirun -np N paralens run --backend mpi --workload
// collective|gemm`): this process drives one GPU (RunRequest::gpus holds exactly it) as rank
// `rank` of `size`. For the collective workload every process joins one NCCL communicator named
// by `ncclId`, which rank 0 made with NewNcclUniqueId() and the launcher broadcast (over MPI).
struct ProcessGroup {
    static constexpr size_t kNcclIdBytes = 128; // NCCL_UNIQUE_ID_BYTES
    int rank = 0;
    int size = 0; // 0: not part of a multi-process job (the local GPUs are all the ranks)
    std::array<uint8_t, kNcclIdBytes> ncclId{};
    bool Active() const { return size > 0; }
};

struct RunRequest {
    Workload workload = Workload::Collective;
    Timing timing = Timing::Auto;
    std::vector<int> gpus;      // CUDA ordinals; empty = all
    std::vector<uint64_t> sizes; // collective and plan: the sizes to run (n, FORMULAS.md)
    int warmupIters = 5;
    int iters = 20;
    bool check = true;          // compare results with the CPU reference
    uint64_t seed = 1;
    double alphaUs = 5.0;       // model prediction shown beside the measurement
    double bandwidthGBps = 0.0; // 0: from the GPU's spec (NVLink one way, or HBM/2 for copies within one GPU)
    double peakTflops = 0.0;    // the MFU denominator per GPU; 0: the spec sheet's (a GEMM probe's measured peak fits here)
    bool apiSpans = false;      // keep CUDA API calls as host spans (CUPTI only)
    CollectiveRun collective;
    PlanRun plan;
    PipelineRun pipeline;
    GemmRun gemm;
    ProcessGroup processGroup;
};

// Throws Error naming the option for anything out of range or inconsistent (no sizes for a
// collective, a schedule that cannot be built, iters < 1, a GEMM shape with a zero side, a
// process group that is not one GPU per process, ...).
void ValidateRunRequest(const RunRequest& request);

// "0,1,3" or "all" (empty result). Throws Error naming `option`.
std::vector<int> ParseGpuList(const char* option, const std::string& text);

} // namespace paralens::gpu
