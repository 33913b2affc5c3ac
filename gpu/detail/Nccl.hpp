// NCCL communicators for the GPUs of one process (one rank per GPU), created non-blocking so that
// every wait can be polled: initialisation, group launches and stream waits end with an error
// and an aborted communicator instead of a hang when a peer fails or nothing moves.
// Not thread-safe except Abort(), which another thread may call to unblock NCCL.
#pragma once

#include "gpu/GpuError.hpp"
#include "gpu/GpuJob.hpp"
#include "gpu/RunRequest.hpp"
#include "gpu/detail/NcclCheck.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace paralens::gpu::detail {

class NcclComms {
public:
    // One communicator over `devices` (rank r on devices[r]); or, when `group` is active, this
    // process's one rank (group.rank on devices[0]) of a communicator spanning group.size
    // processes, joined with group.ncclId. NCCL_ALGO / NCCL_PROTO and the profiler plugin's
    // variables are set for the initialisation and restored after.
    NcclComms(const std::vector<int>& devices, JobContext& job, const std::string& algo, const std::string& proto,
              const std::string& pluginPath, const std::string& pluginDir, const ProcessGroup& group = {});
    ~NcclComms();
    NcclComms(const NcclComms&) = delete;
    NcclComms& operator=(const NcclComms&) = delete;

    ncclComm_t operator[](size_t rank) const { return m_comms[rank]; }
    size_t Size() const { return m_comms.size(); }

    // Polls every communicator until none is still in progress. Throws (after aborting) on an
    // asynchronous error or after the timeout.
    void WaitReady(const char* what);
    // Throws (after aborting) when a communicator reports an asynchronous error: for WaitStreams.
    void Poll();
    // Aborts every communicator (idempotent, thread-safe).
    void Abort();
    // Destroys the communicators in order (so the profiler plugin writes its files).
    void Destroy();

private:
    JobContext& m_job;
    std::vector<ncclComm_t> m_comms;
    std::mutex m_abortMutex;
    bool m_aborted = false;
};

// ncclGroupStart/End as a scope; End is checked and waited for (non-blocking communicators).
class NcclGroup {
public:
    explicit NcclGroup(NcclComms& comms);
    void End(const char* what);
    ~NcclGroup();

private:
    NcclComms& m_comms;
    bool m_open = true;
};

} // namespace paralens::gpu::detail
