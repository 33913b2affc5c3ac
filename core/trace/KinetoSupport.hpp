// Pieces of the Kineto reader (KinetoReader.cpp): NCCL kernels resolved into collective spans,
// the process groups of distributedInfo, and device names. Internal to core/trace; not
// thread-safe (one per read).
#pragma once

#include "trace/ChromeAssembly.hpp"
#include "trace/CollectiveTag.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace paralens::core {

// Group sizes by process-group name, from distributedInfo.pg_config; world_size when pg_count is 1.
struct KinetoGroupInfo {
    explicit KinetoGroupInfo(const nlohmann::json& distributedInfo);
    int32_t SizeOf(const std::string& group) const; // 0 when unknown
    int32_t worldSize = 0;
    bool singleGroup = false; // pg_count is 1: every collective spans the world
    std::unordered_map<std::string, int32_t> sizes;
};

// NCCL kernels seen while reading, and what is needed to tell their collective and size.
class KinetoCollectives {
public:
    void OnKernel(const ChromeEvent& e, size_t track, size_t span);
    void OnLaunch(const ChromeEvent& e, const ChromeArg& correlation); // a cuda_runtime/driver call
    void OnCommOp(const ChromeEvent& e);                               // nccl:*, c10d::*, record_param_comms
    // Sets category Collective, bytes and the CollectiveTag (Span::detail) of every NCCL kernel.
    void Resolve(std::vector<PendingTrack>& tracks, TraceBuilder& builder, const KinetoGroupInfo& groups);
    size_t KernelCount() const { return m_kernels.size(); }
    // A host thread's id here (also for the GEMM kernels' ops: KinetoGemm.hpp).
    uint32_t ThreadId(std::string_view pid, std::string_view tid);
    // The launch of a GPU activity by its correlation id, after Resolve; false when not seen.
    bool FindLaunch(int64_t correlation, uint32_t& thread, int64_t& tsNs) const;

    // What a kernel's or a CPU op's args say about its collective.
    struct CommArgs {
        std::string collective, dtype, group;
        uint64_t bytes = 0;         // the larger of input and output, in bytes (0: unknown)
        uint64_t smallerBytes = 0;  // the other one (allgather/reduce-scatter: n / group size)
        int32_t ranks = 0;
        int64_t seq = -1;
    };

private:
    struct Kernel {
        size_t track = 0, span = 0;
        int64_t correlation = -1;
        CollectiveTag tag;
        CommArgs args;
    };
    struct Launch {
        int64_t correlation = 0;
        uint32_t thread = 0;
        int64_t tsNs = 0;
    };
    struct CommOp {
        uint32_t thread = 0;
        int64_t startNs = 0, endNs = 0;
        bool annotation = false; // nccl:* (the most specific name)
        CommArgs args;
    };

    std::vector<const CommOp*> Enclosing(uint32_t thread, int64_t tsNs) const;
    void ResolveOne(Kernel& k, const KinetoGroupInfo& groups) const;

    std::unordered_map<std::string, uint32_t> m_threads;
    std::vector<Kernel> m_kernels;
    std::vector<Launch> m_launches;
    std::vector<CommOp> m_ops;
    bool m_sorted = false;
};

// "rank 1 GPU 1 (NVIDIA A100-SXM4-80GB)", "GPU 0": the device's name in a Kineto trace.
std::string KinetoGpuName(int32_t rank, bool rankKnown, int32_t gpu, const nlohmann::json& deviceProperties);
// The GPU model of deviceProperties[id == gpu].name; "" when not listed.
std::string KinetoGpuModel(int32_t gpu, const nlohmann::json& deviceProperties);
// The rank in a file name: "rank-1", "rank_1", "rank1", "rank.1" (case-insensitive, last one wins).
std::optional<int32_t> RankFromFileName(const std::string& path);

} // namespace paralens::core
