// paralens's NCCL profiler plugin (libnccl-profiler-paralens.so): records NCCL's collective,
// point-to-point, proxy-op, proxy-step and kernel-channel events per communicator rank and
// writes them, when NCCL finalizes the communicator's context, to
//     $PARALENS_NCCL_PROFILE_DIR/paralens-nccl-<pid>-<commHash>-r<rank>.json
// in the format of profiler/NcclProfileData.hpp. Load it with
//     NCCL_PROFILER_PLUGIN=/path/to/libnccl-profiler-paralens.so PARALENS_NCCL_PROFILE_DIR=/tmp/x
// Environment: PARALENS_NCCL_PROFILE_MASK (event bits, default coll|p2p|proxyOp|proxyStep|kernelCh),
// PARALENS_NCCL_PROFILE_MAX_EVENTS (per communicator rank, default 2000000; more are counted as dropped).
//
// Thread-safety: NCCL calls from its user threads and its proxy thread; each communicator's
// context has a mutex. No exception leaves an entry point (NCCL is C); errors disable recording,
// never NCCL itself (only init may fail, which makes NCCL run without the plugin).
#include "NcclProfilerApi.hpp"

#include "profiler/NcclProfileData.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <mutex>
#include <string>
#include <unistd.h>

namespace paralens::prof::nccl_plugin {

namespace api = nccl_api;

namespace {

int64_t ClockNs(clockid_t id)
{
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t NowNs() { return ClockNs(CLOCK_MONOTONIC); }

uint64_t EnvNumber(const char* name, uint64_t fallback)
{
    const char* text = std::getenv(name);
    if (!text || !*text) return fallback;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 0);
    return end && *end == '\0' ? v : fallback;
}

struct Context;

// The handle NCCL holds for an event: where its record lives. Immutable once made; its address is
// stable (a deque never moves its elements), so a child may read its parent's id without a lock.
struct Slot {
    Context* ctx = nullptr;
    size_t index = 0;
    uint64_t id = 0;
};

struct Context {
    std::mutex mutex;
    NcclProfile profile;
    std::deque<Slot> slots;
    uint64_t maxEvents = 0;
    std::string dir;
    api::DebugLogger log = nullptr;
};

constexpr int kDefaultMask = api::kColl | api::kP2p | api::kProxyOp | api::kProxyStep | api::kKernelCh;

std::string Str(const char* s) { return s ? std::string(s) : std::string(); }

api::Result InitCommon(void** context, int* mask, int version, const char* commName, uint64_t commHash, int nNodes,
                       int nranks, int rank, api::DebugLogger log)
{
    *context = nullptr;
    const char* dir = std::getenv("PARALENS_NCCL_PROFILE_DIR");
    if (!dir || !*dir) {
        if (log) log(2, ~0ul, __FILE__, __LINE__, "paralens profiler plugin: PARALENS_NCCL_PROFILE_DIR is not set; plugin disabled");
        return api::kInvalidArgument;
    }
    try {
        auto* ctx = new Context;
        ctx->dir = dir;
        ctx->log = log;
        ctx->maxEvents = EnvNumber("PARALENS_NCCL_PROFILE_MAX_EVENTS", 2000000);
        NcclProfile& p = ctx->profile;
        p.apiVersion = version;
        p.pid = ::getpid();
        p.commHash = commHash;
        p.commName = Str(commName);
        p.rank = rank;
        p.nranks = nranks;
        p.nNodes = nNodes;
        p.realtimeMinusMonotonicNs = ClockNs(CLOCK_REALTIME) - NowNs();
        *mask = static_cast<int>(EnvNumber("PARALENS_NCCL_PROFILE_MASK", kDefaultMask));
        *context = ctx;
        return api::kSuccess;
    } catch (...) {
        return api::kSystemError;
    }
}

// Adds a record and returns its handle, or nullptr when over the limit (NCCL then passes null).
Slot* NewEvent(Context* ctx, NcclEventRecord&& rec)
{
    std::lock_guard<std::mutex> lock(ctx->mutex);
    if (ctx->profile.events.size() >= ctx->maxEvents) {
        ++ctx->profile.droppedEvents;
        return nullptr;
    }
    rec.id = ctx->profile.events.size() + 1;
    ctx->profile.events.push_back(std::move(rec));
    ctx->slots.push_back(Slot{ctx, ctx->profile.events.size() - 1, ctx->profile.events.back().id});
    return &ctx->slots.back();
}

uint64_t ParentId(void* parentObj) { return parentObj ? static_cast<Slot*>(parentObj)->id : 0; }

template <class Fn>
void WithRecord(void* handle, Fn&& fn)
{
    if (!handle) return;
    Slot* s = static_cast<Slot*>(handle);
    std::lock_guard<std::mutex> lock(s->ctx->mutex);
    fn(s->ctx->profile.events[s->index]);
}

bool WriteProfile(Context* ctx, std::string& error)
{
    char name[128];
    std::snprintf(name, sizeof name, "/paralens-nccl-%lld-%016llx-r%d.json", static_cast<long long>(ctx->profile.pid),
                  static_cast<unsigned long long>(ctx->profile.commHash), ctx->profile.rank);
    const std::string path = ctx->dir + name;
    const std::string tmp = path + ".tmp";
    const std::string text = NcclProfileToJson(ctx->profile);
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) {
        error = tmp + ": " + std::strerror(errno);
        return false;
    }
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = path + ": " + std::strerror(errno);
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

// ---- event starts per version: fill a record from the descriptor ----

NcclEventRecord BaseRecord(uint64_t type, void* parent, int rank)
{
    NcclEventRecord r;
    r.type = static_cast<NcclEventType>(__builtin_ctzll(type ? type : 1));
    r.parentId = ParentId(parent);
    r.rank = rank;
    r.startNs = NowNs();
    return r;
}

template <class Proxy>
void FillProxyOp(NcclEventRecord& r, const Proxy& op)
{
    r.channel = op.channelId;
    r.peer = op.peer;
    r.nSteps = op.nSteps;
    r.chunkSize = op.chunkSize;
    r.isSend = op.isSend;
}

NcclEventRecord FromV5(const api::EventDescrV5& d)
{
    // A proxy op made in another process (PXN) names a parent we must not dereference.
    const bool foreign = d.type == api::kProxyOp && d.proxyOp.pid != ::getpid();
    NcclEventRecord r = BaseRecord(d.type, foreign ? nullptr : d.parentObj, d.rank);
    switch (d.type) {
    case api::kColl:
        r.seqNumber = d.coll.seqNumber;
        r.func = Str(d.coll.func);
        r.count = d.coll.count;
        r.root = d.coll.root;
        r.datatype = Str(d.coll.datatype);
        r.nChannels = d.coll.nChannels;
        r.nWarps = d.coll.nWarps;
        r.algo = Str(d.coll.algo);
        r.proto = Str(d.coll.proto);
        break;
    case api::kP2p:
        r.func = Str(d.p2p.func);
        r.datatype = Str(d.p2p.datatype);
        r.count = d.p2p.count;
        r.peer = d.p2p.peer;
        r.nChannels = d.p2p.nChannels;
        break;
    case api::kProxyOp: FillProxyOp(r, d.proxyOp); break;
    case api::kProxyStep: r.step = d.proxyStep.step; break;
    case api::kKernelCh:
        r.channel = d.kernelCh.channelId;
        r.gpuStartNs = d.kernelCh.pTimer;
        break;
    case api::kCollApi:
        r.func = Str(d.collApi.func);
        r.count = d.collApi.count;
        r.datatype = Str(d.collApi.datatype);
        r.root = d.collApi.root;
        break;
    case api::kP2pApi:
        r.func = Str(d.p2pApi.func);
        r.count = d.p2pApi.count;
        r.datatype = Str(d.p2pApi.datatype);
        break;
    default: break;
    }
    return r;
}

NcclEventRecord FromV4(const api::EventDescrV4& d)
{
    const bool foreign = d.type == api::kProxyOp && d.proxyOp.pid != ::getpid();
    NcclEventRecord r = BaseRecord(d.type, foreign ? nullptr : d.parentObj, d.rank);
    switch (d.type) {
    case api::kColl:
        r.seqNumber = d.coll.seqNumber;
        r.func = Str(d.coll.func);
        r.count = d.coll.count;
        r.root = d.coll.root;
        r.datatype = Str(d.coll.datatype);
        r.nChannels = d.coll.nChannels;
        r.nWarps = d.coll.nWarps;
        r.algo = Str(d.coll.algo);
        r.proto = Str(d.coll.proto);
        break;
    case api::kP2p:
        r.func = Str(d.p2p.func);
        r.datatype = Str(d.p2p.datatype);
        r.count = d.p2p.count;
        r.peer = d.p2p.peer;
        r.nChannels = d.p2p.nChannels;
        break;
    case api::kProxyOp: FillProxyOp(r, d.proxyOp); break;
    case api::kProxyStep: r.step = d.proxyStep.step; break;
    case api::kKernelCh:
        r.channel = d.kernelCh.channelId;
        r.gpuStartNs = d.kernelCh.pTimer;
        break;
    default: break;
    }
    return r;
}

NcclEventRecord FromV3(const api::EventDescrV3& d)
{
    const bool foreign = d.type == api::kProxyOp && d.proxyOp.pid != ::getpid();
    NcclEventRecord r = BaseRecord(d.type, foreign ? nullptr : d.parentObj, d.rank);
    switch (d.type) {
    case api::kColl:
        r.seqNumber = d.coll.seqNumber;
        r.func = Str(d.coll.func);
        r.count = d.coll.count;
        r.root = d.coll.root;
        r.datatype = Str(d.coll.datatype);
        r.nChannels = d.coll.nMaxChannels;
        r.nWarps = d.coll.nWarps;
        r.algo = Str(d.coll.algo);
        r.proto = Str(d.coll.proto);
        break;
    case api::kP2p:
        r.func = Str(d.p2p.func);
        r.datatype = Str(d.p2p.datatype);
        r.count = d.p2p.count;
        r.peer = d.p2p.peer;
        break;
    case api::kProxyOp: FillProxyOp(r, d.proxyOp); break;
    case api::kProxyStep: r.step = d.proxyStep.step; break;
    case api::kKernelCh: r.channel = d.kernelCh.channelId; break;
    default: break;
    }
    return r;
}

template <class Descr, class Convert>
api::Result Start(void* context, void** handle, Descr* d, Convert&& convert)
{
    *handle = nullptr;
    if (!context || !d) return api::kSuccess;
    try {
        *handle = NewEvent(static_cast<Context*>(context), convert(*d));
    } catch (...) {
        *handle = nullptr; // out of memory: this event is lost, NCCL carries on
    }
    return api::kSuccess;
}

api::Result Stop(void* handle)
{
    WithRecord(handle, [](NcclEventRecord& r) { r.stopNs = NowNs(); });
    return api::kSuccess;
}

// `transSize` and `gpuTimer` are 0 when the state carries none.
api::Result Record(void* handle, int state, uint64_t transSize, uint64_t gpuTimer)
{
    try {
        WithRecord(handle, [&](NcclEventRecord& r) {
            if (transSize) r.transSize = transSize;
            if (state == api::kKernelChStop && gpuTimer) r.gpuStopNs = gpuTimer;
            r.states.push_back({state, NowNs(), transSize});
        });
    } catch (...) {
    }
    return api::kSuccess;
}

api::Result Finalize(void* context)
{
    auto* ctx = static_cast<Context*>(context);
    if (!ctx) return api::kSuccess;
    try {
        std::string error;
        bool ok;
        {
            std::lock_guard<std::mutex> lock(ctx->mutex);
            ok = WriteProfile(ctx, error);
        }
        if (!ok && ctx->log) ctx->log(2, ~0ul, __FILE__, __LINE__, "paralens profiler plugin: cannot write %s", error.c_str());
    } catch (...) {
    }
    delete ctx;
    return api::kSuccess;
}

// ---- the three versions' entry points ----

api::Result InitV5(void** context, uint64_t commId, int* mask, const char* commName, int nNodes, int nranks, int rank,
                   api::DebugLogger log)
{
    return InitCommon(context, mask, 5, commName, commId, nNodes, nranks, rank, log);
}
api::Result InitV4(void** context, int* mask, const char* commName, uint64_t commHash, int nNodes, int nranks, int rank,
                   api::DebugLogger log)
{
    return InitCommon(context, mask, 4, commName, commHash, nNodes, nranks, rank, log);
}
api::Result InitV3(void** context, int* mask) { return InitCommon(context, mask, 3, nullptr, 0, 0, 0, -1, nullptr); }

api::Result StartV5(void* c, void** h, api::EventDescrV5* d) { return Start(c, h, d, FromV5); }
api::Result StartV4(void* c, void** h, api::EventDescrV4* d) { return Start(c, h, d, FromV4); }
api::Result StartV3(void* c, void** h, api::EventDescrV3* d) { return Start(c, h, d, FromV3); }

api::Result RecordV4(void* h, int state, api::StateArgsV4* a)
{
    uint64_t trans = 0, timer = 0;
    if (a && state == api::kKernelChStop) timer = a->kernelCh.pTimer;
    else if (a && state >= api::kProxyStepSendGPUWait && state <= api::kProxyStepRecvGPUWait) trans = a->proxyStep.transSize;
    else if (a && state == api::kProxyStepSendPeerWaitV4) trans = a->proxyStep.transSize;
    return Record(h, state, trans, timer);
}
api::Result RecordV3(void* h, int state, api::StateArgsV3* a)
{
    const uint64_t trans = a && state <= api::kProxyOpRecvDone ? a->proxyOp.transSize : 0;
    return Record(h, state, trans, 0);
}

} // namespace

} // namespace paralens::prof::nccl_plugin

namespace pnp = paralens::prof::nccl_plugin;

extern "C" {
__attribute__((visibility("default"))) paralens::prof::nccl_api::ProfilerV5 ncclProfiler_v5 = {
    "paralens", pnp::InitV5, pnp::StartV5, pnp::Stop, pnp::RecordV4, pnp::Finalize};
__attribute__((visibility("default"))) paralens::prof::nccl_api::ProfilerV4 ncclProfiler_v4 = {
    "paralens", pnp::InitV4, pnp::StartV4, pnp::Stop, pnp::RecordV4, pnp::Finalize};
__attribute__((visibility("default"))) paralens::prof::nccl_api::ProfilerV3 ncclProfiler_v3 = {
    "paralens", pnp::InitV3, pnp::StartV3, pnp::Stop, pnp::RecordV3, pnp::Finalize};
}
