// The few kernels of gpu/ (gpu/Kernels.cu), behind plain launch functions: data fills, the Plan
// executor's bytewise reduction, and the checks of results against check::CheckPattern on the GPU
// (so a 1 GiB result is never copied to the host to be checked). All launches are asynchronous
// on `stream`; the caller checks errors with PARALENS_CUDA_LAUNCHED.
#pragma once

#include "gpu/CheckPattern.hpp"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace paralens::gpu::detail {

// Element types as the kernels know them (the order of gpu::DType).
enum class KType : int { Float = 0, Half = 1, BFloat16 = 2, Double = 3, Int32 = 4 };

// buf[i] = check::PlanByte(seed, rank, offset + i) for i < bytes.
void LaunchFillPlanBytes(uint8_t* buf, uint64_t bytes, uint64_t seed, int rank, uint64_t offset, cudaStream_t stream);
// dst[i] += src[i] (bytes, wrapping): the Plan reference's reduction.
void LaunchReduceBytes(uint8_t* dst, const uint8_t* src, uint64_t bytes, cudaStream_t stream);
// Counts bytes of buf[region.offset ...] that differ from check::ExpectedPlanByte into
// counters[0] and keeps the smallest differing index in counters[1] (start it at ~0).
void LaunchCheckPlanRegion(const uint8_t* buf, check::PlanRegion region, int ranks, uint64_t seed,
                           unsigned long long* counters, cudaStream_t stream);

// buf[i] = check::PatternValue(seed, rank, i) for i < count, converted to the type.
void LaunchFillPattern(void* buf, KType type, uint64_t count, uint64_t seed, int rank, cudaStream_t stream);
// Counts elements of recv that differ from check::ExpectedCollValue (as in LaunchCheckPlanRegion).
void LaunchCheckCollective(const void* recv, KType type, uint64_t count, check::CollShape shape, uint64_t seed, int rank,
                           unsigned long long* counters, cudaStream_t stream);

// Uniform values in [-scale, scale) from a hash of (seed, i): GEMM operands.
void LaunchFillUniform(void* buf, KType type, uint64_t count, uint64_t seed, float scale, cudaStream_t stream);

// One block of `threads` threads that spins for `ns` nanoseconds of the GPU's global timer: a
// kernel of known length for overhead measurements (tests/bench).
void LaunchSpin(uint64_t ns, int threads, cudaStream_t stream);

} // namespace paralens::gpu::detail
