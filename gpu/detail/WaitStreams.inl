// Template body of WaitStreams (detail/Workloads.hpp).
#pragma once

#include <thread>

namespace paralens::gpu::detail {

template <class Poll>
void WaitStreams(const std::vector<cudaStream_t>& streams, JobContext& job, std::chrono::seconds timeout, Poll&& poll,
                 const char* what)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    size_t next = 0;
    for (;;) {
        while (next < streams.size()) {
            const cudaError_t r = cudaStreamQuery(streams[next]);
            if (r == cudaErrorNotReady) break;
            PARALENS_CUDA(r);
            ++next;
        }
        if (next == streams.size()) return;
        poll();
        job.ThrowIfCancelled();
        if (std::chrono::steady_clock::now() > deadline)
            throw Error(std::string(what) + " made no progress in " + std::to_string(timeout.count()) +
                        " s (set PARALENS_GPU_TIMEOUT_S to wait longer)");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

} // namespace paralens::gpu::detail
