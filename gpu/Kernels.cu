// The kernels of gpu/: grid-stride loops, one instantiation per element type. Kept small so that
// nvcc stays quick on a 2-core CI machine (see gpu/CMakeLists.txt).
#include "gpu/detail/Kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace paralens::gpu::detail {

namespace {

constexpr int kThreads = 256;

unsigned Blocks(uint64_t n)
{
    const uint64_t b = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(b < 1 ? 1 : (b > 8192 ? 8192 : b));
}

__device__ inline uint64_t GridStart() { return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline uint64_t GridStride() { return static_cast<uint64_t>(gridDim.x) * blockDim.x; }

template <class T>
__device__ inline T FromDouble(double v)
{
    return static_cast<T>(v);
}
template <>
__device__ inline __half FromDouble<__half>(double v)
{
    return __double2half(v);
}
template <>
__device__ inline __nv_bfloat16 FromDouble<__nv_bfloat16>(double v)
{
    return __double2bfloat16(v);
}

template <class T>
__device__ inline double ToDouble(T v)
{
    return static_cast<double>(v);
}
template <>
__device__ inline double ToDouble<__half>(__half v)
{
    return static_cast<double>(__half2float(v));
}
template <>
__device__ inline double ToDouble<__nv_bfloat16>(__nv_bfloat16 v)
{
    return static_cast<double>(__bfloat162float(v));
}

__device__ inline void NoteMismatch(unsigned long long* counters, uint64_t index)
{
    atomicAdd(&counters[0], 1ull);
    atomicMin(&counters[1], static_cast<unsigned long long>(index));
}

__global__ void FillPlanBytes(uint8_t* buf, uint64_t bytes, uint64_t seed, int rank, uint64_t offset)
{
    for (uint64_t i = GridStart(); i < bytes; i += GridStride()) buf[i] = check::PlanByte(seed, rank, offset + i);
}

// 16 bytes per thread when both pointers allow it (__vadd4 adds four bytes without carries).
__global__ void ReduceBytes(uint8_t* dst, const uint8_t* src, uint64_t bytes)
{
    const bool vector = ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15u) == 0;
    const uint64_t vecBytes = vector ? bytes / 16 * 16 : 0;
    for (uint64_t v = GridStart(); v < vecBytes / 16; v += GridStride()) {
        uint4 a = reinterpret_cast<uint4*>(dst)[v];
        const uint4 b = reinterpret_cast<const uint4*>(src)[v];
        a.x = __vadd4(a.x, b.x);
        a.y = __vadd4(a.y, b.y);
        a.z = __vadd4(a.z, b.z);
        a.w = __vadd4(a.w, b.w);
        reinterpret_cast<uint4*>(dst)[v] = a;
    }
    for (uint64_t i = vecBytes + GridStart(); i < bytes; i += GridStride()) dst[i] = static_cast<uint8_t>(dst[i] + src[i]);
}

__global__ void CheckPlanRegion(const uint8_t* buf, check::PlanRegion region, int ranks, uint64_t seed,
                                unsigned long long* counters)
{
    for (uint64_t i = GridStart(); i < region.bytes; i += GridStride())
        if (buf[region.offset + i] != check::ExpectedPlanByte(region, i, ranks, seed)) NoteMismatch(counters, i);
}

template <class T>
__global__ void FillPattern(T* buf, uint64_t count, uint64_t seed, int rank)
{
    for (uint64_t i = GridStart(); i < count; i += GridStride()) buf[i] = FromDouble<T>(check::PatternValue(seed, rank, i));
}

template <class T>
__global__ void CheckCollective(const T* recv, uint64_t count, check::CollShape shape, uint64_t seed, int rank,
                                unsigned long long* counters)
{
    for (uint64_t j = GridStart(); j < count; j += GridStride()) {
        double want = 0;
        if (check::ExpectedCollValue(shape, seed, rank, j, &want) && ToDouble(recv[j]) != want) NoteMismatch(counters, j);
    }
}

template <class T>
__global__ void FillUniform(T* buf, uint64_t count, uint64_t seed, float scale)
{
    for (uint64_t i = GridStart(); i < count; i += GridStride()) {
        const uint64_t h = check::ReferenceValue(seed, 0, i);
        const double u = static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); // [0, 1)
        buf[i] = FromDouble<T>((2.0 * u - 1.0) * scale);
    }
}

__device__ inline uint64_t GlobalTimer()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void Spin(uint64_t ns)
{
    const uint64_t start = GlobalTimer();
    while (GlobalTimer() - start < ns) {
    }
}

template <template <class> class Launch, class... Args>
void Dispatch(KType type, Args&&... args)
{
    switch (type) {
    case KType::Float: Launch<float>::Run(args...); break;
    case KType::Half: Launch<__half>::Run(args...); break;
    case KType::BFloat16: Launch<__nv_bfloat16>::Run(args...); break;
    case KType::Double: Launch<double>::Run(args...); break;
    case KType::Int32: Launch<int32_t>::Run(args...); break;
    }
}

template <class T>
struct FillPatternLaunch {
    static void Run(void* buf, uint64_t count, uint64_t seed, int rank, cudaStream_t s)
    {
        FillPattern<T><<<Blocks(count), kThreads, 0, s>>>(static_cast<T*>(buf), count, seed, rank);
    }
};

template <class T>
struct CheckCollectiveLaunch {
    static void Run(const void* recv, uint64_t count, check::CollShape shape, uint64_t seed, int rank,
                    unsigned long long* counters, cudaStream_t s)
    {
        CheckCollective<T><<<Blocks(count), kThreads, 0, s>>>(static_cast<const T*>(recv), count, shape, seed, rank, counters);
    }
};

template <class T>
struct FillUniformLaunch {
    static void Run(void* buf, uint64_t count, uint64_t seed, float scale, cudaStream_t s)
    {
        FillUniform<T><<<Blocks(count), kThreads, 0, s>>>(static_cast<T*>(buf), count, seed, scale);
    }
};

} // namespace

void LaunchFillPlanBytes(uint8_t* buf, uint64_t bytes, uint64_t seed, int rank, uint64_t offset, cudaStream_t stream)
{
    FillPlanBytes<<<Blocks(bytes), kThreads, 0, stream>>>(buf, bytes, seed, rank, offset);
}

void LaunchReduceBytes(uint8_t* dst, const uint8_t* src, uint64_t bytes, cudaStream_t stream)
{
    ReduceBytes<<<Blocks(bytes / 16 + 1), kThreads, 0, stream>>>(dst, src, bytes);
}

void LaunchCheckPlanRegion(const uint8_t* buf, check::PlanRegion region, int ranks, uint64_t seed,
                           unsigned long long* counters, cudaStream_t stream)
{
    CheckPlanRegion<<<Blocks(region.bytes), kThreads, 0, stream>>>(buf, region, ranks, seed, counters);
}

void LaunchFillPattern(void* buf, KType type, uint64_t count, uint64_t seed, int rank, cudaStream_t stream)
{
    Dispatch<FillPatternLaunch>(type, buf, count, seed, rank, stream);
}

void LaunchCheckCollective(const void* recv, KType type, uint64_t count, check::CollShape shape, uint64_t seed, int rank,
                           unsigned long long* counters, cudaStream_t stream)
{
    Dispatch<CheckCollectiveLaunch>(type, recv, count, shape, seed, rank, counters, stream);
}

void LaunchSpin(uint64_t ns, int threads, cudaStream_t stream) { Spin<<<1, threads, 0, stream>>>(ns); }

void LaunchFillUniform(void* buf, KType type, uint64_t count, uint64_t seed, float scale, cudaStream_t stream)
{
    Dispatch<FillUniformLaunch>(type, buf, count, seed, scale, stream);
}

} // namespace paralens::gpu::detail
