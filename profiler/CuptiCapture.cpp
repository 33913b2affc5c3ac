// The CUPTI capture: activity buffers from a bounded pool, a flush thread that asks CUPTI for
// completed buffers about every flushPeriodMs, decoding on CUPTI's completion callback, clock
// samples at start and stop, and CUPTI's dropped-record counts. CUPTI's callbacks are plain C
// functions without user data, so the one active capture is reached through a global.
#include "Capture.hpp"
#include "CudaCompat.hpp"
#include "CuptiDecode.hpp"

#include "common/Error.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <thread>
#include <vector>

namespace paralens::prof {

namespace {

std::string CuptiErrorText(CUptiResult r)
{
    const char* text = nullptr;
    if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) return "CUPTI error " + std::to_string(static_cast<int>(r));
    return text;
}

// Throws Error naming the CUPTI call, file:line and CUPTI's own words; adds what to do for the
// errors users meet (another profiler attached, no permission).
void CheckCupti(CUptiResult r, const char* expr, const char* file, int line)
{
    if (r == CUPTI_SUCCESS) return;
    std::string advice;
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        advice = " (GPU profiling is restricted to administrators on this machine: NVreg_RestrictProfilingToAdminUsers=1)";
    else if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_COMPATIBLE)
        advice = " (another profiler, e.g. Nsight Systems, already holds CUPTI)";
    throw Error(std::string("CUPTI: ") + expr + " failed at " + file + ":" + std::to_string(line) + ": " +
                CuptiErrorText(r) + advice);
}
#define PARALENS_CUPTI(expr) CheckCupti((expr), #expr, __FILE__, __LINE__)

int64_t SteadyNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint64_t CuptiNow()
{
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}

std::string ApiName(bool driver, uint32_t cbid)
{
    const char* name = nullptr;
    const CUpti_CallbackDomain domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    if (cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name) return name;
    return {};
}

// CUPTI's id of the context a stream belongs to (green contexts have their own), through the
// driver's cuStreamGetCtx reached via the runtime (paralens never links libcuda); kAnyContext
// when it cannot be had.
uint32_t StreamContextId(CUstream stream)
{
#if PARALENS_HAS_ENTRY_POINT_BY_VERSION
    using GetCtx = CUresult(CUDAAPI*)(CUstream, CUcontext*);
    static GetCtx getCtx = [] {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult status{};
        if (cudaGetDriverEntryPointByVersion("cuStreamGetCtx", &fn, 9020, cudaEnableDefault, &status) != cudaSuccess ||
            status != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            return static_cast<GetCtx>(nullptr);
        }
        return reinterpret_cast<GetCtx>(fn);
    }();
    CUcontext ctx = nullptr;
    uint32_t id = 0;
    if (getCtx && getCtx(stream, &ctx) == CUDA_SUCCESS && ctx && cuptiGetContextId(ctx, &id) == CUPTI_SUCCESS) return id;
#else
    (void)stream;
#endif
    return kAnyContext;
}

class CuptiCapture;
std::mutex g_activeMutex;
CuptiCapture* g_active = nullptr;

class CuptiCapture final : public Capture {
public:
    explicit CuptiCapture(const CaptureOptions& o) : m_options(o), m_decoder(ApiName) {}
    ~CuptiCapture() override
    {
        try {
            Stop();
        } catch (...) {
        }
        std::lock_guard<std::mutex> lock(g_activeMutex);
        if (g_active == this) g_active = nullptr;
        for (uint8_t* b : m_free) std::free(b);
    }

    void Start() override
    {
        {
            std::lock_guard<std::mutex> lock(g_activeMutex);
            if (g_active && g_active != this) throw Error("a CUPTI capture is already running in this process");
            g_active = this;
        }
        try {
            StartCupti();
        } catch (...) {
            std::lock_guard<std::mutex> lock(g_activeMutex);
            g_active = nullptr;
            throw;
        }
    }

    void Stop() override
    {
        if (!m_running.exchange(false)) return;
        {
            std::lock_guard<std::mutex> lock(m_threadMutex);
            m_stopFlush = true;
        }
        m_wake.notify_all();
        if (m_flushThread.joinable()) m_flushThread.join();
        // The caller synchronised its devices: a forced flush delivers the last records.
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        for (CUpti_ActivityKind k : m_enabled) cuptiActivityDisable(k);
        m_end = TakeClockSample(SteadyNs, CuptiNow);
        m_hasEnd = true;
    }

    ActivityBatch TakeBatch() override
    {
        std::lock_guard<std::mutex> lock(m_batchMutex);
        ActivityBatch out = std::move(m_pending);
        m_pending = ActivityBatch{};
        return out;
    }

    StreamKey KeyOf(void* stream, int deviceOrdinal) override
    {
        StreamKey key;
        key.deviceId = static_cast<uint32_t>(deviceOrdinal);
        key.contextId = StreamContextId(static_cast<CUstream>(stream));
        PARALENS_CUPTI(cuptiGetStreamIdEx(nullptr, static_cast<CUstream>(stream), 0, &key.streamId));
        return key;
    }

    ClockMap Clock() const override { return m_hasEnd ? ClockMap(m_start, m_end) : ClockMap(m_start); }

    std::string Describe() const override
    {
        uint32_t version = 0;
        cuptiGetVersion(&version);
        return "CUPTI API " + std::to_string(version) + " (compiled against " + std::to_string(CUPTI_API_VERSION) + "), " +
               std::to_string(m_options.bufferBytes >> 20) + " MiB buffers, flush every " +
               std::to_string(m_options.flushPeriodMs) + " ms";
    }

    uint64_t PoolExhaustions() const override { return m_exhausted.load(); }

    // ---- CUPTI's callbacks (through the global) ----
    void OnBufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords)
    {
        *maxRecords = 0;
        std::lock_guard<std::mutex> lock(m_poolMutex);
        if (!m_free.empty()) {
            *buffer = m_free.back();
            m_free.pop_back();
        } else if (m_allocated < m_options.maxBuffers) {
            *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, m_options.bufferBytes));
            if (*buffer) ++m_allocated;
        } else {
            *buffer = nullptr;
        }
        if (!*buffer) {
            ++m_exhausted; // CUPTI drops the records it cannot store; cuptiActivityGetNumDroppedRecords counts them
            *size = 0;
            return;
        }
        *size = m_options.bufferBytes;
    }

    void OnBufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t* buffer, size_t validSize)
    {
        ActivityBatch batch;
        CUpti_Activity* record = nullptr;
        while (validSize > 0 && cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS)
            m_decoder.Decode(record, batch);
        size_t dropped = 0;
        if (cuptiActivityGetNumDroppedRecords(ctx, streamId, &dropped) == CUPTI_SUCCESS) batch.droppedRecords += dropped;
        {
            std::lock_guard<std::mutex> lock(m_batchMutex);
            m_pending.Append(std::move(batch));
        }
        std::lock_guard<std::mutex> lock(m_poolMutex);
        m_free.push_back(buffer);
    }

private:
    void StartCupti()
    {
        PrepareNvtxForCupti();
        PARALENS_CUPTI(cuptiActivityRegisterCallbacks(&BufferRequested, &BufferCompleted));
        auto enable = [&](bool on, CUpti_ActivityKind kind) {
            if (!on) return;
            PARALENS_CUPTI(cuptiActivityEnable(kind));
            m_enabled.push_back(kind);
        };
        enable(m_options.kernels, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        enable(m_options.memcpy, CUPTI_ACTIVITY_KIND_MEMCPY);
        enable(m_options.memcpy, CUPTI_ACTIVITY_KIND_MEMCPY2);
        enable(m_options.memset, CUPTI_ACTIVITY_KIND_MEMSET);
        enable(m_options.sync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
        enable(m_options.nvtx, CUPTI_ACTIVITY_KIND_MARKER);
        // Attributing kernels to NVTX ranges needs the launching calls (thread and time).
        enable(m_options.nvtx || m_options.apiRecords, CUPTI_ACTIVITY_KIND_RUNTIME);
        enable(m_options.nvtx || m_options.apiRecords, CUPTI_ACTIVITY_KIND_DRIVER);
        m_start = TakeClockSample(SteadyNs, CuptiNow);
        m_stopFlush = false;
        m_running = true;
        m_flushThread = std::thread([this] { FlushLoop(); });
    }

    void FlushLoop()
    {
        std::unique_lock<std::mutex> lock(m_threadMutex);
        while (!m_stopFlush) {
            m_wake.wait_for(lock, std::chrono::milliseconds(m_options.flushPeriodMs), [this] { return m_stopFlush; });
            if (m_stopFlush) break;
            lock.unlock();
            cuptiActivityFlushAll(0); // completed buffers only; errors here are not fatal
            lock.lock();
        }
    }

    static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords)
    {
        *buffer = nullptr;
        *size = 0;
        *maxRecords = 0;
        try {
            std::lock_guard<std::mutex> lock(g_activeMutex);
            if (g_active) g_active->OnBufferRequested(buffer, size, maxRecords);
        } catch (...) {
            *buffer = nullptr;
            *size = 0;
        }
    }

    static void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t* buffer, size_t, size_t validSize)
    {
        try {
            std::lock_guard<std::mutex> lock(g_activeMutex);
            if (g_active) {
                g_active->OnBufferCompleted(ctx, streamId, buffer, validSize);
                return;
            }
        } catch (...) {
        }
        std::free(buffer); // no capture left to recycle it
    }

    CaptureOptions m_options;
    CuptiDecoder m_decoder; // used only on CUPTI's completion callback (one at a time: g_activeMutex)
    std::vector<CUpti_ActivityKind> m_enabled;
    std::mutex m_poolMutex;
    std::vector<uint8_t*> m_free;
    size_t m_allocated = 0;
    std::atomic<uint64_t> m_exhausted{0};
    std::mutex m_batchMutex;
    ActivityBatch m_pending;
    std::mutex m_threadMutex;
    std::condition_variable m_wake;
    bool m_stopFlush = false;
    std::thread m_flushThread;
    std::atomic<bool> m_running{false};
    ClockSample m_start, m_end;
    bool m_hasEnd = false;
};

} // namespace

std::unique_ptr<Capture> MakeCuptiCapture(const CaptureOptions& options, std::string* whyNot)
{
    if (whyNot) whyNot->clear();
    return std::make_unique<CuptiCapture>(options);
}

// NVTX reaches CUPTI through NVTX's injection hook, read once at the process's first NVTX call.
void PrepareNvtxForCupti()
{
    if (std::getenv("NVTX_INJECTION64_PATH")) return;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) && info.dli_fname)
        setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

bool CuptiBuilt() { return true; }
uint32_t CuptiCompiledVersion() { return CUPTI_API_VERSION; }

} // namespace paralens::prof
