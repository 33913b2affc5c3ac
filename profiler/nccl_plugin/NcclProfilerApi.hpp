// The NCCL profiler plugin interface, versions 3, 4 and 5, as NCCL defines them in its source tree
// (ext-profiler/example/nccl/profiler_v3.h, profiler_v4.h, profiler_v5.h and profiler.h of
// github.com/NVIDIA/nccl). NCCL does not install these headers, and its README asks plugins to
// carry their own copy of the versions they implement; this is ours, the one place that knows
// the layouts. Field order and types must match NCCL's exactly (the structs cross the ABI).
//
//   version  loaded by          descriptor `type`  init arguments
//   v3       NCCL 2.25          uint8_t            (context, activationMask)
//   v4       NCCL 2.26 - 2.27   uint8_t            (context, activationMask, commName, commHash, nNodes, nranks, rank, logfn)
//   v5       NCCL 2.28          uint64_t           (context, commId, activationMask, commName, nNodes, nranks, rank, logfn)
// NCCL looks for the newest symbol it knows first (ncclProfiler_v5, then _v4, ...), so exporting
// all three serves NCCL 2.25 to 2.28. NCCL 2.23/2.24 (v1/v2) and newer versions (v6) are not served.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/types.h>

namespace paralens::prof::nccl_api {

// ncclResult_t: an enum passed as int.
enum Result : int { kSuccess = 0, kSystemError = 2, kInternalError = 3, kInvalidArgument = 4 };

// ncclDebugLogger_t: void (*)(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...)
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

// Event type bits (ncclProfileGroup ...).
enum EventBits : int {
    kGroup = 1 << 0,
    kColl = 1 << 1,
    kP2p = 1 << 2,
    kProxyOp = 1 << 3,
    kProxyStep = 1 << 4,
    kProxyCtrl = 1 << 5,
    kKernelCh = 1 << 6,
    kNetPlugin = 1 << 7,
    kGroupApi = 1 << 8, // v5
    kCollApi = 1 << 9,
    kP2pApi = 1 << 10,
    kKernelLaunch = 1 << 11,
};

// ncclProfilerEventState_t values (identical numbering in v3, v4 and v5).
enum State : int {
    kProxyOpSendPosted = 0,
    kProxyOpSendRemFifoWait = 1,
    kProxyOpSendTransmitted = 2,
    kProxyOpSendDone = 3,
    kProxyOpRecvPosted = 4,
    kProxyOpRecvReceived = 5,
    kProxyOpRecvTransmitted = 6,
    kProxyOpRecvDone = 7,
    kProxyStepSendGPUWait = 8,
    kProxyStepSendWait = 9,
    kProxyStepRecvWait = 10,
    kProxyStepRecvFlushWait = 11,
    kProxyStepRecvGPUWait = 12,
    kProxyCtrlIdle = 13,
    kProxyCtrlActive = 14,
    kProxyCtrlSleep = 15,
    kProxyCtrlWakeup = 16,
    kProxyCtrlAppend = 17,
    kProxyCtrlAppendEnd = 18,
    kProxyOpInProgressV4 = 19,
    kProxyStepSendPeerWaitV4 = 20,
    kNetPluginUpdate = 21,
    kKernelChStop = 22,
    kEndGroupApiStart = 23,
    kBeginGroupApiEnd = 24,
};

// ---- v3 (NCCL 2.25) ----
struct EventDescrV3 {
    uint8_t type;
    void* parentObj;
    int rank;
    union {
        struct {
            const char* name;
            uint64_t commHash;
            uint64_t seqNumber;
            const char* func;
            void const* sendBuff;
            void* recvBuff;
            size_t count;
            int root;
            const char* datatype;
            uint8_t nMaxChannels;
            uint8_t nWarps;
            const char* algo;
            const char* proto;
        } coll;
        struct {
            const char* name;
            uint64_t commHash;
            const char* func;
            void* buff;
            const char* datatype;
            size_t count;
            int peer;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channelId;
            int peer;
            int nSteps;
            int chunkSize;
            int isSend;
        } proxyOp;
        struct {
            int step;
        } proxyStep;
        struct {
            uint8_t channelId;
        } kernelCh;
        struct {
            int64_t id;
            void* data;
        } netPlugin;
    };
};

union StateArgsV3 {
    struct {
        size_t transSize;
        int steps;
    } proxyOp;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
};

struct ProfilerV3 {
    const char* name;
    Result (*init)(void** context, int* eActivationMask);
    Result (*startEvent)(void* context, void** eHandle, EventDescrV3* eDescr);
    Result (*stopEvent)(void* eHandle);
    Result (*recordEventState)(void* eHandle, int eState, StateArgsV3* eStateArgs);
    Result (*finalize)(void* context);
};

// ---- v4 (NCCL 2.26, 2.27) ----
struct EventDescrV4 {
    uint8_t type;
    void* parentObj;
    int rank;
    union {
        struct {
            uint64_t seqNumber;
            const char* func;
            void const* sendBuff;
            void* recvBuff;
            size_t count;
            int root;
            const char* datatype;
            uint8_t nChannels;
            uint8_t nWarps;
            const char* algo;
            const char* proto;
        } coll;
        struct {
            const char* func;
            void* buff;
            const char* datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channelId;
            int peer;
            int nSteps;
            int chunkSize;
            int isSend;
        } proxyOp;
        struct {
            int step;
        } proxyStep;
        struct {
            uint8_t channelId;
            uint64_t pTimer; // GPU globaltimer at the channel's start
        } kernelCh;
        struct {
            int64_t id;
            void* data;
        } netPlugin;
    };
};

union StateArgsV4 {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void* data;
    } netPlugin;
    struct {
        uint64_t pTimer; // GPU globaltimer at the channel's stop (state kKernelChStop)
    } kernelCh;
};
using StateArgsV5 = StateArgsV4; // same layout in v5

struct ProfilerV4 {
    const char* name;
    Result (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes, int nranks,
                   int rank, DebugLogger logfn);
    Result (*startEvent)(void* context, void** eHandle, EventDescrV4* eDescr);
    Result (*stopEvent)(void* eHandle);
    Result (*recordEventState)(void* eHandle, int eState, StateArgsV4* eStateArgs);
    Result (*finalize)(void* context);
};

// ---- v5 (NCCL 2.28) ----
struct EventDescrV5 {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        struct {
            int graphCaptured;
            int groupDepth;
        } groupApi;
        struct {
            const char* func;
            size_t count;
            const char* datatype;
            int root;
            void* stream;
            bool graphCaptured;
        } collApi;
        struct {
            const char* func;
            size_t count;
            const char* datatype;
            void* stream;
            bool graphCaptured;
        } p2pApi;
        struct {
            void* stream;
        } kernelLaunch;
        struct {
            uint64_t seqNumber;
            const char* func;
            void const* sendBuff;
            void* recvBuff;
            size_t count;
            int root;
            const char* datatype;
            uint8_t nChannels;
            uint8_t nWarps;
            const char* algo;
            const char* proto;
            void* parentGroup;
        } coll;
        struct {
            const char* func;
            void* buff;
            const char* datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
            void* parentGroup;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channelId;
            int peer;
            int nSteps;
            int chunkSize;
            int isSend;
        } proxyOp;
        struct {
            int step;
        } proxyStep;
        struct {
            uint8_t channelId;
            uint64_t pTimer;
        } kernelCh;
        struct {
            int64_t id;
            void* data;
        } netPlugin;
    };
};

struct ProfilerV5 {
    const char* name;
    Result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes, int nranks,
                   int rank, DebugLogger logfn);
    Result (*startEvent)(void* context, void** eHandle, EventDescrV5* eDescr);
    Result (*stopEvent)(void* eHandle);
    Result (*recordEventState)(void* eHandle, int eState, StateArgsV5* eStateArgs);
    Result (*finalize)(void* context);
};

} // namespace paralens::prof::nccl_api

// The symbols NCCL looks up with dlsym (C linkage, default visibility).
extern "C" {
extern paralens::prof::nccl_api::ProfilerV5 ncclProfiler_v5;
extern paralens::prof::nccl_api::ProfilerV4 ncclProfiler_v4;
extern paralens::prof::nccl_api::ProfilerV3 ncclProfiler_v3;
}
