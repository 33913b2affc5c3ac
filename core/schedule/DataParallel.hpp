// Data-parallel training steps as Workloads (the lectures' "two solutions" for the gradient sum):
// every worker runs forward and backward over its own data, then gradients are summed either by
// allreduce (bucketed, optionally overlapped with the backward, as DDP does) or through
// parameter servers (one, or several shards) under bulk-synchronous (BSP), stale-synchronous (SSP,
// staleness s) or asynchronous updates. Devices: workers 0..P-1, then servers P..P+S-1.
#pragma once

#include "model/Collective.hpp"
#include "schedule/Workload.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace paralens::core {

enum class GradientSync { AllReduce, ParameterServer };
enum class Consistency { Bsp, Ssp, Async };
std::string_view Name(Consistency c);

struct DataParallelSpec {
    int workers = 4;
    int layers = 8;
    double forwardSecPerLayer = 1e-3;
    double backwardSecPerLayer = -1.0;         // < 0: 2 x forward
    uint64_t gradBytesPerLayer = 16ull << 20;
    int iterations = 4;
    double forwardFlopsPerLayer = 0.0;         // for MFU (0: unknown)
    double optimizerSec = 0.0;                 // per iteration, after the gradients are summed
    GradientSync sync = GradientSync::AllReduce;
    // allreduce
    Algorithm algorithm = Algorithm::Ring;
    uint64_t bucketBytes = 0;                  // layers are grouped (last first) into buckets of at least this; 0: one per layer
    bool overlap = true;                       // start a bucket's allreduce as soon as its backward is done
    // parameter server
    int servers = 1;                           // > 1: sharded, each server holds 1/S of the parameters
    Consistency consistency = Consistency::Bsp;
    int staleness = 0;                         // SSP: a worker may be this many iterations ahead of the slowest

    double BackwardSecPerLayer() const { return backwardSecPerLayer >= 0 ? backwardSecPerLayer : 2.0 * forwardSecPerLayer; }
};

struct DataParallelWorkload {
    Workload workload{1};
    DataParallelSpec spec;
    std::vector<std::vector<TaskId>> iterationEnd;          // [worker][iteration]
    std::vector<std::vector<std::vector<TaskId>>> pushes;   // [worker][iteration][server] (parameter server)
    std::vector<std::vector<std::vector<TaskId>>> pulls;    // [worker][iteration][server]
};

// Throws Error naming the parameter for bad values (workers < 1, SSP/async with allreduce, ...).
DataParallelWorkload BuildDataParallel(const DataParallelSpec& spec);

} // namespace paralens::core
