// Plain records of GPU activity, free of any CUDA or CUPTI type: what the CUPTI capture decodes
// its activity records into (profiler/CuptiDecode.cpp) and what the CUDA-events fallback of gpu/
// produces, so that one set of pure functions (profiler/ActivityTrace.hpp) turns either into a
// core::Trace. Tests build these records by hand.
//
// Times are nanoseconds in the clock of the source: CUPTI timestamps for a capture (mapped to the
// host's steady clock by a ClockMap when the Trace is built), steady-clock nanoseconds for
// records made by the CUDA-events fallback. Plain values; no thread-safety of their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::prof {

enum class ActivityKind : uint8_t { Kernel, Memcpy, Memset, Sync };

// Direction of a copy, as CUPTI distinguishes them.
enum class CopyKind : uint8_t { Unknown, HostToDevice, DeviceToHost, DeviceToDevice, PeerToPeer, HostToHost, Other };

enum class SyncKind : uint8_t { Unknown, EventSynchronize, StreamWaitEvent, StreamSynchronize, ContextSynchronize };

// The hardware channel (queue) a kernel or copy went through, as CUPTI reports it: a compute
// channel (work on the SMs) or an asynchronous copy engine's. Streams that share a compute channel
// share one queue: work on one waits behind the other's.
enum class ChannelType : uint8_t { Unknown, Compute, CopyEngine };

inline constexpr uint32_t kNoId = 0xFFFFFFFFu;

// One kernel, copy, set or synchronisation executed (or waited for) by a GPU.
struct GpuActivity {
    ActivityKind kind = ActivityKind::Kernel;
    uint64_t startNs = 0;
    uint64_t endNs = 0;
    uint32_t deviceId = 0;      // CUDA device ordinal
    uint32_t contextId = 0;
    uint32_t streamId = kNoId;  // kNoId for context-wide synchronisation
    uint32_t correlationId = 0; // links it to the API call that launched it
    uint32_t graphId = 0;       // non-zero for work launched from a CUDA graph
    uint64_t graphNodeId = 0;
    std::string name;           // kernel name (demangled), empty for copies and sets
    uint64_t bytes = 0;         // copies and sets
    CopyKind copyKind = CopyKind::Unknown;
    uint32_t srcDeviceId = kNoId; // peer-to-peer copies: the devices at both ends
    uint32_t dstDeviceId = kNoId;
    SyncKind syncKind = SyncKind::Unknown;
    uint32_t gridX = 0, gridY = 0, gridZ = 0, blockX = 0, blockY = 0, blockZ = 0;
    uint32_t channelId = kNoId; // kernels and copies (CUDA 13's CUPTI)
    ChannelType channelType = ChannelType::Unknown;
};

// A host-side API call (runtime or driver) that may have launched GPU work.
struct ApiCall {
    uint64_t startNs = 0;
    uint64_t endNs = 0;
    uint32_t threadId = 0;
    uint32_t correlationId = 0;
    bool driver = false;
    std::string name; // "cudaLaunchKernel", "cuLaunchKernelEx", ... (may be empty)
};

// A closed NVTX push/pop or start/end range on a host thread.
struct NvtxRange {
    uint64_t startNs = 0;
    uint64_t endNs = 0;
    uint32_t threadId = 0;
    uint64_t id = 0;
    std::string name;
    std::string domain;
};

// Everything one flush of a capture delivered.
struct ActivityBatch {
    std::vector<GpuActivity> activities;
    std::vector<ApiCall> apiCalls;
    std::vector<NvtxRange> ranges;
    uint64_t droppedRecords = 0; // records CUPTI reported as lost (buffers full)

    bool Empty() const { return activities.empty() && apiCalls.empty() && ranges.empty() && droppedRecords == 0; }
    void Append(ActivityBatch&& other);
};

// Pairs NVTX start and end markers (CUPTI delivers them as separate records with one id).
// Not thread-safe: one per decoding thread.
class MarkerPairer {
public:
    void OnStart(uint64_t id, uint64_t timeNs, uint32_t threadId, std::string name, std::string domain);
    // Returns true and fills `out` when a start with this id was seen.
    bool OnEnd(uint64_t id, uint64_t timeNs, NvtxRange& out);
    size_t Open() const { return m_open.size(); }

private:
    std::vector<NvtxRange> m_open; // few at a time: linear search from the back
};

} // namespace paralens::prof
