// The analysis of a trace as a plain report: what `paralens analyze` prints and the Stats tab
// shows. Per device busy, idle and bubbles, compute vs communication, their overlap and the
// exposed communication (interval unions, DeviceUsage.hpp: never sums of kernel durations);
// per collective count, bytes, time, algbw and busbw (nccl-tests' factors); collectives matched
// across ranks with their skew and slowest rank (CollectiveMatch.hpp); MFU where spans carry
// FLOPs. A pure function of an immutable Trace; thread-safe; run it on a worker for big traces.
#pragma once

#include "analysis/CollectiveMatch.hpp"
#include "analysis/DeviceUsage.hpp"
#include "analysis/HardwareChannels.hpp"
#include "analysis/PipelineMetrics.hpp"
#include "trace/Trace.hpp"

#include <optional>
#include <string>
#include <vector>

namespace paralens::core {

struct AnalysisOptions {
    bool includeCpu = false;           // also analyse host threads (Cpu devices)
    std::optional<UsageWindow> window; // default: from the first to the last busy span of the analysed devices
    std::string dtype = "bf16";        // the data type whose peak FLOPS MFU uses
    double peakTflops = 0;             // the peak per device; 0: from the GPU spec table by device/hardware name
};

struct DeviceReport {
    uint32_t device = 0;
    std::string name, host;
    int32_t rank = 0, gpuIndex = kNone;
    DeviceKind kind = DeviceKind::Gpu;
    size_t spanCount = 0;       // every span of the device
    size_t kernelCount = 0;     // compute-like and collective spans (GPU kernels)
    size_t collectiveCount = 0;
    DeviceUsage usage;          // busy, idle, compute, comm, overlap, exposed (ns) and the idle gaps
    size_t bubbleCount = 0;     // idle gaps inside the window
    int64_t largestBubbleNs = 0;
    double flops = 0;           // FLOPs of the spans that carry them
    double peakFlops = 0;       // FLOP/s; 0 when unknown
    std::optional<double> mfu;  // flops / window / peak, when both are known
};

struct CollectiveSummary {
    std::string collective;
    int32_t ranks = 0;          // group size used for busbw (0: unknown, factor 1)
    size_t count = 0;           // spans: one per rank per operation
    size_t instances = 0;       // operations matched across ranks
    uint64_t bytes = 0;         // sum over spans of nccl-tests' n
    int64_t timeNs = 0;         // sum over spans of their durations (per-rank time in the collective)
    double algbwGBps = 0;       // bytes / time
    double busbwFactor = 1;
    double busbwGBps = 0;       // algbw x factor
    int64_t maxSkewNs = 0;      // over matched instances: latest arrival - earliest
    double meanSkewNs = 0;
    int32_t slowestRank = kNone; // the rank that most often arrived last (instances with skew > 0)
    std::string source;         // "spans", or "simulation" (from a simulated trace's metadata)
};

struct TraceReport {
    std::string title;
    TraceSource source = TraceSource::Chrome;
    int64_t startNs = 0, endNs = 0; // the analysed window
    std::vector<DeviceReport> devices;
    std::vector<CollectiveSummary> collectives;
    std::vector<CollectiveInstance> instances; // matched across ranks, by start
    double idleFraction = 0;                   // idle / (devices x window): the bubble fraction
    SendDelays sendDelays;                     // a pipeline's stage-to-stage sends after their producers (PipelineMetrics.hpp)
    OpStartWaits opStartWaits;                 // its ops that waited with nothing to wait for (PipelineMetrics.hpp)
    ChannelReport channels;                    // the hardware queues of a capture (HardwareChannels.hpp)
    std::vector<std::string> notes;            // assumptions a reader should know
};

TraceReport AnalyzeTrace(const Trace& trace, const AnalysisOptions& options = {});

} // namespace paralens::core
