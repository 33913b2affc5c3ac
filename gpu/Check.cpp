#include "gpu/detail/Check.hpp"
#include "gpu/detail/Cublas.hpp"
#include "gpu/detail/NcclCheck.hpp"

#include <cstring>

namespace paralens::gpu::detail {

const char* ShortFile(const char* path)
{
    for (const char* marker : {"/gpu/", "/profiler/", "/app/", "/tests/"}) {
        const char* at = std::strstr(path, marker);
        if (at) return at + 1;
    }
    return path;
}

void FailCuda(cudaError_t r, const char* expr, const char* file, int line)
{
    (void)cudaGetLastError(); // clear the non-sticky state so later calls report their own errors
    GpuFailure f;
    f.library = "CUDA";
    f.expression = expr;
    f.file = ShortFile(file);
    f.line = line;
    f.code = static_cast<int>(r);
    f.codeName = cudaGetErrorName(r);
    f.message = cudaGetErrorString(r);
    ThrowGpuFailure(std::move(f));
}

const char* NcclResultName(int r)
{
    static constexpr const char* kNames[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                             "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                             "ncclRemoteError",   "ncclInProgress"};
    return r >= 0 && r < 8 ? kNames[r] : "ncclResult";
}

void FailNccl(int r, const char* expr, const char* file, int line, const char* lastError)
{
    GpuFailure f;
    f.library = "NCCL";
    f.expression = expr;
    f.file = ShortFile(file);
    f.line = line;
    f.code = r;
    f.codeName = NcclResultName(r);
    f.message = ncclGetErrorString(static_cast<ncclResult_t>(r));
    if (lastError && *lastError) f.message += std::string(" (") + lastError + ")";
    ThrowGpuFailure(std::move(f));
}

void FailCublas(int status, const char* expr, const char* file, int line)
{
    GpuFailure f;
    f.library = "cuBLAS";
    f.expression = expr;
    f.file = ShortFile(file);
    f.line = line;
    f.code = status;
    f.codeName = CublasStatusName(status);
    f.message = CublasStatusText(status);
    ThrowGpuFailure(std::move(f));
}

} // namespace paralens::gpu::detail
