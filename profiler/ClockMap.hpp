// Maps GPU timestamps (CUPTI's clock) to the host's steady clock, so GPU spans line up with host
// events and with other ranks. A sample pairs one reading of each clock, taken back to back; two
// samples (capture start and end) give an offset and a rate, and the drift between them is
// reported. Pure value type; thread-safe to read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace paralens::prof {

struct ClockSample {
    uint64_t gpuNs = 0;         // the GPU-side clock (cuptiGetTimestamp)
    int64_t hostNs = 0;         // the steady clock, the midpoint of the readings around gpuNs
    int64_t uncertaintyNs = 0;  // half the time the host readings bracketed
};

// Takes `readGpu` between two steady-clock readings and returns the sample (the host time is
// their midpoint). `ReadHost` and `ReadGpu` are callables returning int64_t / uint64_t ns.
template <class ReadHost, class ReadGpu>
ClockSample TakeClockSample(ReadHost&& readHost, ReadGpu&& readGpu)
{
    const int64_t before = readHost();
    const uint64_t gpu = readGpu();
    const int64_t after = readHost();
    return ClockSample{gpu, before + (after - before) / 2, (after - before + 1) / 2};
}

class ClockMap {
public:
    ClockMap() = default; // identity: GPU times are already host times (the CUDA-events fallback)
    // Offset only, from one sample.
    explicit ClockMap(const ClockSample& start);
    // Offset at `start` and a linear correction for the drift seen at `end` (end after start).
    ClockMap(const ClockSample& start, const ClockSample& end);

    int64_t ToHost(uint64_t gpuNs) const;

    // Host minus GPU at the end minus the same at the start, in ns (0 with one sample).
    int64_t DriftNs() const { return m_driftNs; }
    // Drift per second of elapsed time, in parts per million.
    double DriftPpm() const;
    int64_t UncertaintyNs() const { return m_uncertaintyNs; }
    bool HasEnd() const { return m_hasEnd; }

    // A sentence when |drift| exceeds `limitNs` plus the samples' uncertainty, else nothing.
    std::optional<std::string> DriftWarning(int64_t limitNs) const;

private:
    uint64_t m_gpu0 = 0;
    int64_t m_offset0 = 0;   // hostNs - gpuNs at the start
    uint64_t m_spanGpuNs = 0;
    int64_t m_driftNs = 0;
    int64_t m_uncertaintyNs = 0;
    bool m_hasEnd = false;
};

} // namespace paralens::prof
