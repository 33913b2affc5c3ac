#include "GpuError.hpp"

namespace paralens::gpu {

std::string AdviceFor(const GpuFailure& f)
{
    const std::string& n = f.codeName;
    if (n == "cudaErrorMemoryAllocation" || n == "CUBLAS_STATUS_ALLOC_FAILED")
        return "The GPU is out of memory: use smaller --bytes / --max-bytes, fewer virtual ranks, or a smaller model "
               "(--tokens, --hidden, --ffn, --microbatches); other processes may hold GPU memory (nvidia-smi).";
    if (n == "cudaErrorNoDevice") return "No CUDA device is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES).";
    if (n == "cudaErrorInsufficientDriver")
        return "The NVIDIA driver is older than the CUDA runtime paralens was built with; update the driver "
               "(or build paralens with an older CUDA toolkit).";
    if (n == "cudaErrorInvalidDevice") return "A GPU index given with --gpus does not exist.";
    if (n == "cudaErrorPeerAccessUnsupported")
        return "These GPUs cannot access each other's memory; use --transport nccl.";
    if (n == "ncclRemoteError" || n == "ncclSystemError")
        return "NCCL lost a peer or a connection; run with NCCL_DEBUG=WARN for NCCL's own account.";
    if (n == "ncclInvalidUsage" || n == "ncclInvalidArgument") return "NCCL rejected the call; NCCL_DEBUG=WARN says why.";
    if (n == "ncclTimeout") return "NCCL made no progress within the timeout; the communicator was aborted.";
    return {};
}

std::string FormatGpuFailure(const GpuFailure& f)
{
    std::string out = f.library + ": " + f.expression + " failed";
    if (!f.file.empty()) out += " at " + f.file + ":" + std::to_string(f.line);
    out += ": " + (f.message.empty() ? std::string("error ") + std::to_string(f.code) : f.message);
    if (!f.codeName.empty()) out += " (" + f.codeName + ")";
    const std::string advice = AdviceFor(f);
    if (!advice.empty()) out += ". " + advice;
    return out;
}

bool IsUnavailable(const GpuFailure& f)
{
    return f.codeName == "cudaErrorNoDevice" || f.codeName == "cudaErrorInsufficientDriver" ||
           f.codeName == "cudaErrorCompatNotSupportedOnDevice" || f.codeName == "cudaErrorSystemDriverMismatch" ||
           f.codeName == "cudaErrorNoKernelImageForDevice" || f.codeName == "cudaErrorUnsupportedPtxVersion";
}

void ThrowGpuFailure(GpuFailure f)
{
    if (IsUnavailable(f)) throw Unavailable(FormatGpuFailure(f));
    throw GpuError(std::move(f));
}

} // namespace paralens::gpu
