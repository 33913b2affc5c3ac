// What paralens's NCCL profiler plugin (profiler/nccl_plugin/, library
// libnccl-profiler-paralens.so) records for one communicator rank, and its file format: one JSON
// document per communicator and rank, written when NCCL finalizes the plugin context. Plain data
// with no NCCL type, shared by the plugin (writer) and paralens (reader, converter).
//
// Times are CLOCK_MONOTONIC nanoseconds (the clock std::chrono::steady_clock reads on Linux, so
// they line up with paralens's host and GPU spans); kernel-channel GPU timestamps are NCCL's GPU
// globaltimer values, mapped with `realtimeMinusMonotonicNs` (globaltimer follows the realtime
// clock; the mapping is approximate, to within the driver's clock calibration).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::prof {

// NCCL's event types (the bit positions of ncclProfileGroup ... ncclProfileKernelLaunch).
enum class NcclEventType : uint8_t {
    Group = 0,
    Coll = 1,
    P2p = 2,
    ProxyOp = 3,
    ProxyStep = 4,
    ProxyCtrl = 5,
    KernelCh = 6,
    NetPlugin = 7,
    GroupApi = 8,
    CollApi = 9,
    P2pApi = 10,
    KernelLaunch = 11,
};
std::string_view Name(NcclEventType t);

struct NcclStateChange {
    int32_t state = 0;    // NCCL's ncclProfilerEventState_t value
    int64_t timeNs = 0;
    uint64_t transSize = 0; // proxy steps: bytes moved so far, when NCCL says
};

struct NcclEventRecord {
    NcclEventType type = NcclEventType::Coll;
    uint64_t id = 0;        // unique within the file, from 1
    uint64_t parentId = 0;  // 0: none, or a parent in another process (PXN)
    int32_t rank = -1;
    int64_t startNs = 0;
    int64_t stopNs = 0;     // 0 while running (never stopped: the file was written early)
    std::string func;       // coll / p2p / API events: "AllReduce", "Send", ...
    std::string algo, proto, datatype;
    uint64_t count = 0;
    uint64_t seqNumber = 0;
    int32_t root = -1;
    int32_t peer = -1;
    int32_t channel = -1;
    int32_t step = -1;
    int32_t nSteps = 0;
    int32_t chunkSize = 0;
    int32_t isSend = -1;    // proxy ops: 1 send, 0 receive
    int32_t nChannels = 0;
    int32_t nWarps = 0;
    uint64_t transSize = 0; // proxy steps: the last size NCCL reported
    uint64_t gpuStartNs = 0; // kernel channels: globaltimer at start and stop (0 when not given)
    uint64_t gpuStopNs = 0;
    std::vector<NcclStateChange> states;
};

struct NcclProfile {
    int32_t apiVersion = 0; // the ncclProfiler_vN NCCL loaded
    int64_t pid = 0;
    uint64_t commHash = 0;
    std::string commName;
    int32_t rank = 0;
    int32_t nranks = 0;
    int32_t nNodes = 0;
    int64_t realtimeMinusMonotonicNs = 0;
    uint64_t droppedEvents = 0; // over the plugin's event limit
    std::vector<NcclEventRecord> events;
};

std::string NcclProfileToJson(const NcclProfile& profile);
// Throws paralens::Error naming `origin` and what is missing.
NcclProfile ParseNcclProfileJson(std::string_view json, const std::string& origin);

// Bytes per element of NCCL's datatype names ("ncclFloat32", "ncclBfloat16", ...); 0 if unknown.
uint64_t NcclDatatypeBytes(std::string_view name);

} // namespace paralens::prof
