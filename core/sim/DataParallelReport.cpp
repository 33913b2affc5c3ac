#include "sim/DataParallelReport.hpp"

#include <algorithm>

namespace paralens::core {

DataParallelReport SummarizeDataParallel(const DataParallelWorkload& dp, const WorkloadResult& r)
{
    const DataParallelSpec& s = dp.spec;
    DataParallelReport out;
    out.seconds = r.seconds;
    out.secondsPerIteration = r.seconds / s.iterations;
    for (const auto& ends : dp.iterationEnd) out.workerSecondsPerIteration.push_back(r.tasks[ends.back()].end / s.iterations);
    if (s.sync != GradientSync::ParameterServer) return out;
    long count = 0, sum = 0;
    for (int k = 0; k < s.workers; ++k) {
        for (int i = 0; i < s.iterations; ++i) {
            for (int sv = 0; sv < s.servers; ++sv) {
                const double readAt = r.tasks[dp.pulls[k][i][sv]].start;
                int oldest = i;
                for (int v = 0; v < s.workers; ++v) {
                    if (v == k) continue;
                    int latest = -1; // the newest iteration of v already applied at the server
                    for (int j = 0; j < s.iterations; ++j)
                        if (r.tasks[dp.pushes[v][j][sv]].end <= readAt) latest = j;
                    oldest = std::min(oldest, latest);
                }
                const int staleness = i - oldest;
                out.maxStaleness = std::max(out.maxStaleness, staleness);
                sum += staleness;
                ++count;
            }
        }
    }
    out.meanStaleness = count ? static_cast<double>(sum) / count : 0.0;
    return out;
}

} // namespace paralens::core
