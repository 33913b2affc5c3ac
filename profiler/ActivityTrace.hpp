// Turns GPU activity (a CUPTI capture's decoded records, or the CUDA-events fallback's op spans)
// into a core::Trace: one device per rank (a GPU, or a virtual rank sharing a GPU), one track per
// placed stream, each of paralens's ops as one span (from its NVTX label) with its kernels and
// copies as child spans, peer copies and transfers as flows, NCCL kernels classified by name,
// and an MFU counter per rank when the peak is known.
//
// Attribution: a kernel's or copy's correlation id names the API call that launched it; the
// innermost "paralens"-domain NVTX range open on that thread at that time is its op. Kernels of a
// CUDA graph share one correlation id and are all kept (each is a span; all join the op of the
// graph launch).
//
// Usage: declare ranks and place streams, Add() batches as they arrive, Build() whenever a
// snapshot is wanted (it rebuilds from everything so far, so late NVTX or API records still
// attribute). Not thread-safe: one owner thread.
#pragma once

#include "ClockMap.hpp"
#include "GpuActivity.hpp"
#include "NcclProfileTrace.hpp"
#include "OpLabel.hpp"

#include "trace/Trace.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace paralens::prof {

struct RankInfo {
    int32_t rank = 0;
    int32_t gpuIndex = 0;     // CUDA device ordinal
    bool virtualRank = false; // several ranks share this GPU (buffers and streams of their own)
    std::string gpuName;      // "NVIDIA H100 80GB HBM3"
};

inline constexpr uint32_t kAnyContext = 0xFFFFFFFFu;

// A stream as CUPTI names it. contextId may be kAnyContext when unknown.
struct StreamKey {
    uint32_t deviceId = 0;
    uint32_t contextId = kAnyContext;
    uint32_t streamId = 0;
    auto Tie() const { return std::tie(deviceId, contextId, streamId); }
    bool operator<(const StreamKey& o) const { return Tie() < o.Tie(); }
};

// An op timed without CUPTI (CUDA events), already on the host clock.
struct OpSpan {
    int32_t rank = 0;
    std::string trackName;
    int64_t startNs = 0;
    int64_t endNs = 0;
    OpLabel label;
};

struct AssemblerOptions {
    core::TraceSource source = core::TraceSource::Cupti;
    std::string title;
    std::string host;                // host name for the devices
    double peakFlopsPerDevice = 0.0; // > 0: an MFU counter per rank
    bool apiSpans = false;           // runtime/driver API calls as spans on host-thread devices
    int mfuBins = 200;
};

struct AssemblyStats {
    size_t activities = 0;   // kernels, copies, sets, syncs received
    size_t attributed = 0;   // of them, attributed to a paralens op
    size_t unplaced = 0;     // on streams nobody placed (shown under their GPU)
    uint64_t droppedRecords = 0;
};

class TraceAssembler {
public:
    explicit TraceAssembler(AssemblerOptions options);

    // Ranks must be declared before Build(); their order is the device order of the Trace.
    void AddRank(const RankInfo& rank);
    void PlaceStream(const StreamKey& key, int32_t rank, const std::string& trackName);
    void SetClock(const ClockMap& clock) { m_clock = clock; }
    const ClockMap& Clock() const { return m_clock; }

    void Add(ActivityBatch&& batch);
    void AddOpSpan(OpSpan span);
    // NCCL's own events (the profiler plugin's files, converted): placed on the devices of the
    // ranks they name (a device "NCCL rank r" when that rank was not declared).
    void AddNccl(NcclTraceParts parts);

    core::Metadata& Meta() { return m_meta; }
    const AssemblyStats& Stats() const { return m_stats; }
    // What timed the activities, once known (a CUPTI capture that could not start leaves CUDA events).
    void SetSource(core::TraceSource source) { m_options.source = source; }

    // Everything so far as an immutable Trace. Throws Error only on internal inconsistencies.
    core::Trace Build() const;

private:
    struct Placement {
        int32_t rank;
        std::string track;
    };
    const Placement* FindPlacement(const GpuActivity& a) const;

    AssemblerOptions m_options;
    core::Metadata m_meta;
    std::vector<RankInfo> m_ranks;
    std::map<StreamKey, Placement> m_placements;
    std::set<StreamKey> m_ambiguous; // (device, stream) ids shared by streams of several contexts
    ClockMap m_clock;
    ActivityBatch m_all;
    std::vector<OpSpan> m_opSpans;
    NcclTraceParts m_nccl;
    mutable AssemblyStats m_stats;
};

// Pure helpers, exposed for tests.

// The innermost range of `ranges` (sorted by start) that contains `timeNs`, or nullptr.
const NvtxRange* InnermostRange(const std::vector<NvtxRange>& ranges, uint64_t timeNs);

// The span category and detail text for an unlabelled kernel: NCCL kernels (named as
// core::ParseNcclKernelName reads them) are collectives, with "allreduce ring LL128 bfloat16".
core::SpanCategory KernelCategory(const std::string& kernelName, std::string* detail);

// "kernel", "memcpy PtoP 1.0 MiB", ...: the name of a child span.
std::string ActivityName(const GpuActivity& a);

} // namespace paralens::prof
