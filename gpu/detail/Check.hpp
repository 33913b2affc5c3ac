// Checks for every CUDA, NCCL and cuBLAS call of gpu/: on failure they record the call as
// written, file:line and the library's own error name and string, clear CUDA's non-sticky error
// state, and throw GpuError (or paralens::Unavailable for "no device" / "driver too old").
// Only gpu/ .cpp and .cu files include this header.
#pragma once

#include "gpu/GpuError.hpp"

#include <cuda_runtime_api.h>

namespace paralens::gpu::detail {

// "gpu/PlanExecutor.cpp" from an absolute __FILE__.
const char* ShortFile(const char* path);

void FailCuda(cudaError_t r, const char* expr, const char* file, int line);
void FailNccl(int r, const char* expr, const char* file, int line, const char* lastError);
void FailCublas(int status, const char* expr, const char* file, int line);

inline void CheckCuda(cudaError_t r, const char* expr, const char* file, int line)
{
    if (r != cudaSuccess) FailCuda(r, expr, file, line);
}

// A CUDA call in a destructor or cleanup path: errors are swallowed (the first error already
// reported is the one that matters), but the non-sticky error state is cleared.
inline void IgnoreCuda(cudaError_t r)
{
    if (r != cudaSuccess) (void)cudaGetLastError();
}

} // namespace paralens::gpu::detail

#define PARALENS_CUDA(expr) ::paralens::gpu::detail::CheckCuda((expr), #expr, __FILE__, __LINE__)
// Checks the launch of the kernel just enqueued (invalid configuration, no kernel image, ...).
#define PARALENS_CUDA_LAUNCHED(what) ::paralens::gpu::detail::CheckCuda(cudaGetLastError(), what, __FILE__, __LINE__)
