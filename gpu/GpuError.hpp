// Failures of CUDA, NCCL, cuBLAS and CUPTI calls as plain data, and their messages. Plain C++:
// the check macros of gpu/detail/Check.hpp fill these from the libraries' own error names and
// strings. The first error wins by construction: one thread issues a run's GPU work and throws at
// the first failure; cleanup after it (destructors, aborts) never reports.
#pragma once

#include "common/Error.hpp"

#include <string>

namespace paralens::gpu {

struct GpuFailure {
    std::string library;    // "CUDA", "NCCL", "cuBLAS", "CUPTI"
    std::string expression; // the call as written
    std::string file;
    int line = 0;
    int code = 0;
    std::string codeName;   // "cudaErrorMemoryAllocation", "ncclRemoteError", ...
    std::string message;    // the library's own words
};

// "CUDA: cudaMalloc(&p, n) failed at gpu/PlanExecutor.cpp:120: out of memory
//  (cudaErrorMemoryAllocation). <advice>"
std::string FormatGpuFailure(const GpuFailure& f);
// What a user can do about the common failures (empty when nothing useful can be said).
std::string AdviceFor(const GpuFailure& f);
// True for failures that mean "cannot run here" (no device, driver too old, no CUDA-capable
// device, library missing) rather than a fault of the run: the CLI exits 3 for them.
bool IsUnavailable(const GpuFailure& f);

// Thrown by the check macros; what() is FormatGpuFailure. Unavailable failures are thrown as
// paralens::Unavailable instead (with the same text).
class GpuError : public Error {
public:
    explicit GpuError(GpuFailure f) : Error(FormatGpuFailure(f)), m_failure(std::move(f)) {}
    const GpuFailure& Failure() const { return m_failure; }

private:
    GpuFailure m_failure;
};

[[noreturn]] void ThrowGpuFailure(GpuFailure f);

} // namespace paralens::gpu
