// Runs a core Workload (core/schedule/Workload.hpp: the task graph the simulator runs) for real
// between the processes of an mpirun job, one device per process: a compute task is a real
// single-thread CPU GEMM sized to take the task's seconds at the probed sgemm peak (times the
// rank's straggler slowdown), a message moves its bytes with MPI (a reducing message adds them
// into the receiver's copy), a collective runs its core Plan through the PlanExecutor (checked
// against the collective's definition on the last run; a message's ends carry its task's mark).
//
// Each process runs its own tasks one at a time in the workload's order (a topological order, the
// same on every process, so no wait can close a cycle); runs of its messages that do not depend on
// one another are posted together and complete in arrival order, as a server's port takes them.
// Dependencies must reach the process that needs them through the task itself: its own earlier
// task, the sender of a message, or any member of a collective (CheckRunnable names any other).
// Tasks are not overlapped on one process: a compute and a message of the same device run one
// after the other. A message's detail names its task id as the "iteration" (what pairs the
// sender's span with the receiver's: core/trace/RankTraceMerge).
#pragma once

#include "mpi/MpiContext.hpp"
#include "mpi/MpiPlanExecutor.hpp"
#include "schedule/Workload.hpp"
#include "trace/TraceBuilder.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace paralens::app::mpi {

struct WorkloadTracks {
    uint32_t compute = 0, collective = 0, send = 0, recv = 0, reduce = 0;
};

struct WorkloadRunOptions {
    double peakFlops = 0.0;     // this CPU's probed single-thread sgemm rate
    double slowdown = 1.0;      // this rank's compute takes this many times longer (a straggler)
    int firstTracedStep = 0;    // tasks tagged with an earlier step (iteration) are warm-up: not traced
    double timeoutSec = 30.0;
    uint64_t seed = 1;
};

// Throws Error when `w` cannot run with one process per device on `processes` processes: a device
// count that differs, a collective not over every process in rank order, or a dependency that no
// task carries to the process that needs it (both tasks named).
void CheckRunnable(const core::Workload& w, int processes);

class WorkloadExecutor {
public:
    WorkloadExecutor(const Context& ctx, const core::Workload& w, const WorkloadRunOptions& o, core::TraceBuilder& b, WorkloadTracks tracks);

    // Runs this process's tasks; `afterTask` is called after each (the live stream's flush).
    void Run(const std::function<void()>& afterTask);

    // Per traced step (iteration): this process's end of that step's last task minus the end of
    // the step before (the run's start for the first).
    std::vector<double> StepSeconds() const;
    // The first wrong byte of a collective's result, or a message that arrived for another task
    // (each carries its task's mark in its first and last byte); "" when every check passed.
    const std::string& Mismatch() const { return m_mismatch; }

private:
    void Compute(core::TaskId t);
    void Messages(const std::vector<core::TaskId>& batch);
    void Collective(core::TaskId t, bool last);
    bool Traced(core::TaskId t) const;
    core::Span Tagged(const core::TaskTags& tags, int64_t start, int64_t end);
    void Ended(const core::TaskTags& tags, int64_t endNs);

    const Context& m_ctx;
    const core::Workload& m_w;
    WorkloadRunOptions m_o;
    core::TraceBuilder& m_b;
    WorkloadTracks m_tracks;
    std::vector<float> m_a, m_x, m_y;                 // GEMM operands, grown to the largest task
    std::vector<std::vector<uint8_t>> m_buffers;       // one per message of a batch
    std::vector<uint8_t> m_accumulated;                // what reducing messages add into
    std::map<uint64_t, std::unique_ptr<core::Plan>> m_plans;            // by bytes
    std::map<uint64_t, std::unique_ptr<PlanExecutor>> m_executors;      // by bytes
    std::map<int, int64_t> m_stepEnd;                  // step -> this process's latest end in it
    int64_t m_startNs = 0;
    std::string m_mismatch;
};

} // namespace paralens::app::mpi
