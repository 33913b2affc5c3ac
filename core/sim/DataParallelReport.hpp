// What a data-parallel run measured: time per iteration (overall and per worker) and, with
// parameter servers, the staleness each pull saw: how many iterations behind the current one the
// oldest contribution in the pulled parameters is (0 under BSP, at most s under SSP).
#pragma once

#include "schedule/DataParallel.hpp"
#include "sim/WorkloadSimulator.hpp"

#include <vector>

namespace paralens::core {

struct DataParallelReport {
    double seconds = 0.0;
    double secondsPerIteration = 0.0;          // makespan / iterations
    std::vector<double> workerSecondsPerIteration; // each worker's last iteration end / iterations
    int maxStaleness = 0;
    double meanStaleness = 0.0;
};

DataParallelReport SummarizeDataParallel(const DataParallelWorkload& dp, const WorkloadResult& result);

} // namespace paralens::core
