// A GPU activity capture: CUPTI's Activity API when paralens was built with CUPTI. Plain C++
// interface (no CUDA or CUPTI type): gpu/ and the app use it through this header only.
//
// Lifetime: at most one capture is active per process (CUPTI's activity buffers are global).
// Start() before the GPU work, TakeBatch() as often as wanted (a flush thread delivers records
// about every `flushPeriodMs`), Stop() after the work (flushes everything, takes the end clock
// sample). Start/Stop/TakeBatch are thread-safe; callbacks inside never throw.
#pragma once

#include "ActivityTrace.hpp"
#include "ClockMap.hpp"
#include "GpuActivity.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace paralens::prof {

struct CaptureOptions {
    bool kernels = true;
    bool memcpy = true;      // including peer-to-peer copies
    bool memset = true;
    bool sync = true;
    bool nvtx = true;        // NVTX ranges (and the runtime/driver records that attribute kernels to them)
    bool apiRecords = false; // also keep runtime/driver API calls as host spans
    size_t bufferBytes = 8u << 20; // one CUPTI activity buffer
    size_t maxBuffers = 64;        // the pool's limit; when all are in use CUPTI drops records (counted)
    int flushPeriodMs = 100;
};

class Capture {
public:
    virtual ~Capture() = default;
    // Enables the activity kinds and the flush thread. Throws Error with CUPTI's reason (another
    // profiler attached, insufficient privileges, no driver) so the caller can fall back.
    virtual void Start() = 0;
    // Flushes every buffer, stops the flush thread, takes the end clock sample. Idempotent.
    virtual void Stop() = 0;
    // Records delivered since the last call (possibly none).
    virtual ActivityBatch TakeBatch() = 0;
    // CUPTI's name for a CUDA stream (cudaStream_t passed as void*): where its records will say
    // they ran. Throws Error when CUPTI cannot name it.
    virtual StreamKey KeyOf(void* cudaStream, int deviceOrdinal) = 0;
    // Offset (and, after Stop, drift correction) from CUPTI's clock to the steady clock.
    virtual ClockMap Clock() const = 0;
    // "CUPTI 13.0 (API 130001), 8 MiB buffers" for trace metadata.
    virtual std::string Describe() const = 0;
    // Buffers CUPTI asked for beyond the pool's limit (each one means dropped records).
    virtual uint64_t PoolExhaustions() const = 0;
};

// nullptr, with the reason in *whyNot, when this build has no CUPTI support.
std::unique_ptr<Capture> MakeCuptiCapture(const CaptureOptions& options, std::string* whyNot);

// Points NVTX's injection hook at libcupti (NVTX_INJECTION64_PATH, unless already set), so that
// NVTX ranges reach CUPTI. Must run before the process's first NVTX call; no-op without CUPTI.
void PrepareNvtxForCupti();

// Whether CUPTI support was built, and the CUPTI API version compiled against (0 when not).
bool CuptiBuilt();
uint32_t CuptiCompiledVersion();

} // namespace paralens::prof
