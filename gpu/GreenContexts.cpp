#include "gpu/detail/GreenContexts.hpp"
#include "gpu/PipelineProgram.hpp"
#include "gpu/detail/Check.hpp"
#include "gpu/detail/Resources.hpp"

#include "profiler/CudaCompat.hpp"

#if PARALENS_HAS_GREEN_CONTEXTS
#include <cuda.h>
#include <cudaTypedefs.h>
#endif

namespace paralens::gpu::detail {

#if PARALENS_HAS_GREEN_CONTEXTS

struct GreenContexts::Driver {
    PFN_cuDeviceGet_v2000 deviceGet = nullptr;
    PFN_cuDeviceGetDevResource_v12040 getResource = nullptr;
    PFN_cuDevSmResourceSplitByCount_v12040 split = nullptr;
    PFN_cuDevResourceGenerateDesc_v12040 generateDesc = nullptr;
    PFN_cuGreenCtxCreate_v12040 create = nullptr;
    PFN_cuGreenCtxDestroy_v12040 destroy = nullptr;
    PFN_cuGreenCtxStreamCreate_v12050 streamCreate = nullptr;
    PFN_cuCtxFromGreenCtx_v12040 toContext = nullptr;
    PFN_cuCtxPushCurrent_v4000 push = nullptr;
    PFN_cuCtxPopCurrent_v4000 pop = nullptr;
};

namespace {

template <class Fn>
bool Entry(const char* name, Fn& out)
{
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12050, cudaEnableDefault, &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess || !fn) {
        (void)cudaGetLastError();
        return false;
    }
    out = reinterpret_cast<Fn>(fn);
    return true;
}

} // namespace

std::unique_ptr<GreenContexts> GreenContexts::Create(int device, int groups, std::string* whyNot)
{
    auto fail = [&](const std::string& why) -> std::unique_ptr<GreenContexts> {
        if (whyNot) *whyNot = why;
        return nullptr;
    };
    auto d = std::make_shared<Driver>();
    if (!Entry("cuDeviceGet", d->deviceGet) || !Entry("cuDeviceGetDevResource", d->getResource) ||
        !Entry("cuDevSmResourceSplitByCount", d->split) || !Entry("cuDevResourceGenerateDesc", d->generateDesc) ||
        !Entry("cuGreenCtxCreate", d->create) || !Entry("cuGreenCtxDestroy", d->destroy) ||
        !Entry("cuGreenCtxStreamCreate", d->streamCreate) || !Entry("cuCtxFromGreenCtx", d->toContext) ||
        !Entry("cuCtxPushCurrent", d->push) || !Entry("cuCtxPopCurrent", d->pop))
        return fail("the NVIDIA driver offers no green contexts (it needs CUDA 12.5 or newer)");
    DeviceScope scope(device);
    PARALENS_CUDA(cudaFree(nullptr)); // the primary context exists from here on
    CUdevice dev{};
    if (d->deviceGet(&dev, device) != CUDA_SUCCESS) return fail("cuDeviceGet failed");
    CUdevResource sms{};
    if (d->getResource(dev, &sms, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS) return fail("cuDeviceGetDevResource failed");
#if CUDART_VERSION >= 13000
    const int minPartition = static_cast<int>(sms.sm.minSmPartitionSize);
    const int alignment = static_cast<int>(sms.sm.smCoscheduledAlignment);
#else
    int major = 0;
    PARALENS_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    const int minPartition = major >= 9 ? 8 : 2; // CUDA 12.x's documented minimum SM counts
    const int alignment = minPartition;
#endif
    const int perGroup = GreenGroupSize(static_cast<int>(sms.sm.smCount), groups, minPartition, alignment);
    if (perGroup == 0)
        return fail("GPU " + std::to_string(device) + "'s " + std::to_string(sms.sm.smCount) + " SMs cannot be split into " +
                    std::to_string(groups) + " partitions of at least " + std::to_string(minPartition) + " SMs");
    std::vector<CUdevResource> parts(static_cast<size_t>(groups));
    unsigned made = static_cast<unsigned>(groups);
    CUdevResource rest{};
    if (d->split(parts.data(), &made, &sms, &rest, 0, static_cast<unsigned>(perGroup)) != CUDA_SUCCESS || made < static_cast<unsigned>(groups))
        return fail("the driver split the SMs into " + std::to_string(made) + " of the " + std::to_string(groups) + " partitions asked for");
    std::unique_ptr<GreenContexts> g(new GreenContexts());
    g->m_driver = d;
    g->m_smsPerGroup = static_cast<int>(parts[0].sm.smCount);
    for (CUdevResource& part : parts) {
        CUdevResourceDesc desc{};
        CUgreenCtx ctx{};
        if (d->generateDesc(&desc, &part, 1) != CUDA_SUCCESS || d->create(&ctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS)
            return fail("cuGreenCtxCreate failed");
        g->m_contexts.push_back(ctx);
    }
    return g;
}

GreenContexts::~GreenContexts()
{
    for (void* c : m_contexts) m_driver->destroy(static_cast<CUgreenCtx>(c));
}

cudaStream_t GreenContexts::NewStream(int group)
{
    CUstream s{};
    const CUresult r = m_driver->streamCreate(&s, static_cast<CUgreenCtx>(m_contexts[static_cast<size_t>(group)]),
                                              CU_STREAM_NON_BLOCKING, 0);
    if (r != CUDA_SUCCESS)
        ThrowGpuFailure(GpuFailure{"CUDA driver", "cuGreenCtxStreamCreate(...)", "gpu/GreenContexts.cpp", __LINE__,
                                   static_cast<int>(r), "CUresult " + std::to_string(static_cast<int>(r)), "cannot create a stream in a green context"});
    return static_cast<cudaStream_t>(s);
}

GreenContexts::Scope::Scope(GreenContexts* green, int group) : m_green(green)
{
    if (!m_green) return;
    CUcontext ctx{};
    const auto* d = m_green->m_driver.get();
    if (d->toContext(&ctx, static_cast<CUgreenCtx>(m_green->m_contexts[static_cast<size_t>(group)])) != CUDA_SUCCESS ||
        d->push(ctx) != CUDA_SUCCESS)
        ThrowGpuFailure(GpuFailure{"CUDA driver", "cuCtxFromGreenCtx / cuCtxPushCurrent", "gpu/GreenContexts.cpp", __LINE__, 0,
                                   "", "cannot make a green context current"});
}

GreenContexts::Scope::~Scope()
{
    if (!m_green) return;
    CUcontext popped{};
    m_green->m_driver->pop(&popped);
}

#else // CUDA older than 12.5

struct GreenContexts::Driver {};

std::unique_ptr<GreenContexts> GreenContexts::Create(int, int, std::string* whyNot)
{
    if (whyNot) *whyNot = "paralens was built with a CUDA toolkit older than 12.5, which has no green-context streams";
    return nullptr;
}
GreenContexts::~GreenContexts() = default;
cudaStream_t GreenContexts::NewStream(int) { return nullptr; }
GreenContexts::Scope::Scope(GreenContexts*, int) : m_green(nullptr) {}
GreenContexts::Scope::~Scope() = default;

#endif

} // namespace paralens::gpu::detail
