#include "ClockMap.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace paralens::prof {

ClockMap::ClockMap(const ClockSample& start)
    : m_gpu0(start.gpuNs), m_offset0(start.hostNs - static_cast<int64_t>(start.gpuNs)),
      m_uncertaintyNs(start.uncertaintyNs)
{
}

ClockMap::ClockMap(const ClockSample& start, const ClockSample& end) : ClockMap(start)
{
    if (end.gpuNs <= start.gpuNs) return; // no elapsed time: keep the offset only
    m_spanGpuNs = end.gpuNs - start.gpuNs;
    const int64_t offset1 = end.hostNs - static_cast<int64_t>(end.gpuNs);
    m_driftNs = offset1 - m_offset0;
    m_uncertaintyNs = start.uncertaintyNs + end.uncertaintyNs;
    m_hasEnd = true;
}

int64_t ClockMap::ToHost(uint64_t gpuNs) const
{
    if (m_gpu0 == 0 && m_offset0 == 0) return static_cast<int64_t>(gpuNs); // identity
    const int64_t elapsed = static_cast<int64_t>(gpuNs - m_gpu0); // may be negative (before the start sample)
    int64_t correction = 0;
    if (m_hasEnd && m_driftNs != 0) {
        // Linear in the elapsed GPU time; long double keeps ns exact over hours.
        correction = static_cast<int64_t>(std::llround(static_cast<long double>(m_driftNs) * elapsed /
                                                       static_cast<long double>(m_spanGpuNs)));
    }
    return static_cast<int64_t>(gpuNs) + m_offset0 + correction;
}

double ClockMap::DriftPpm() const
{
    if (!m_hasEnd) return 0.0;
    return static_cast<double>(m_driftNs) / static_cast<double>(m_spanGpuNs) * 1e6;
}

std::optional<std::string> ClockMap::DriftWarning(int64_t limitNs) const
{
    if (!m_hasEnd || std::llabs(m_driftNs) <= limitNs + m_uncertaintyNs) return std::nullopt;
    char text[256];
    std::snprintf(text, sizeof text,
                  "the GPU and host clocks drifted by %lld ns over %.3f s (%.2f ppm, readings uncertain by %lld ns); "
                  "GPU spans were corrected linearly between the start and end samples",
                  static_cast<long long>(m_driftNs), static_cast<double>(m_spanGpuNs) * 1e-9, DriftPpm(),
                  static_cast<long long>(m_uncertaintyNs));
    return std::string(text);
}

} // namespace paralens::prof
