// Simulates a Workload (task graph) on the modelled cluster into a Trace.
// Compute tasks run on their device's compute lane in the order they were added, after their
// dependencies, for seconds x the device's straggler factor. Messages use the Network's ports.
// A collective starts on each member when that member's own dependencies are done and its
// communication lane is free (a dependency on a task of another member does not hold it back),
// and runs its Plan (core/plan) through RunPlan; dependents on a member wait for that member's end.
// Pure function of its inputs; thread-safe.
#pragma once

#include "sim/ClusterModel.hpp"
#include "schedule/Workload.hpp"
#include "trace/Trace.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace paralens::core {

struct WorkloadOptions {
    bool buildTrace = true;
    bool transferDetail = false; // collectives also drawn as their individual transfers
    Metadata meta;               // copied into the Trace
    // Called with the Trace's metadata and the finished timings just before the Trace is sealed
    // (to record results such as the makespan).
    std::function<void(Metadata&, const struct WorkloadResult&)> finishMeta;
};

struct TaskTiming {
    double start = 0.0; // for collectives: the first member's join
    double end = 0.0;   // for collectives: the last member's end
};

struct WorkloadResult {
    double seconds = 0.0;            // makespan
    std::vector<TaskTiming> tasks;   // by TaskId
    std::vector<double> deviceEnd;   // when each device's last task ends
    uint64_t wireBytes = 0;          // bytes sent between devices (messages and collectives' transfers)
    std::optional<Trace> trace;      // devices as named by the workload; tracks compute, comm, send, recv
};

// Options without a Trace (times only).
inline WorkloadOptions TimesOnly()
{
    WorkloadOptions o;
    o.buildTrace = false;
    return o;
}

// Throws Error for stragglers or links naming devices the workload lacks.
WorkloadResult SimulateWorkload(const Workload& workload, const ClusterModel& cluster, const WorkloadOptions& options = {});

} // namespace paralens::core
