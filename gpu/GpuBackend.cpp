// The GPU backend of a build with CUDA and NCCL: build information, starting a run, and what the
// four workloads share.
#include "gpu/GpuBackend.hpp"
#include "gpu/CudaEnvironment.hpp"
#include "gpu/detail/Workloads.hpp"

#include "common/Error.hpp"
#include "model/Hardware.hpp"
#include "profiler/Capture.hpp"
#include "profiler/CudaCompat.hpp"

#include <cstdlib>
#include <unistd.h>

#ifndef PARALENS_CUDA_ARCHITECTURES
#define PARALENS_CUDA_ARCHITECTURES ""
#endif
#ifndef PARALENS_NCCL_PLUGIN_PATH
#define PARALENS_NCCL_PLUGIN_PATH ""
#endif

namespace paralens::gpu {

BuildInfo GetBuildInfo()
{
    BuildInfo b;
    b.gpuBackend = true;
    b.cupti = prof::CuptiBuilt();
    b.cudaVersion = std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
    b.ncclVersion = std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH);
    if (b.cupti) b.cuptiVersion = std::to_string(prof::CuptiCompiledVersion());
    b.cudaArchitectures = PARALENS_CUDA_ARCHITECTURES;
    b.ncclProfilerPlugin = PARALENS_NCCL_PLUGIN_PATH;
    return b;
}

bool BackendBuilt() { return true; }

std::unique_ptr<GpuJob> StartGpuJob(const RunRequest& request)
{
    ValidateRunRequest(request);
    // Before the first NVTX call of the process, so that a CUPTI capture (now or later) sees NVTX.
    prof::PrepareNvtxForCupti();
    // Fail here, on the caller's thread, when there is no GPU at all: a clear "cannot run here".
    detail::OpenGpus(request.gpus);
    return std::make_unique<GpuJob>([request](JobContext& job) -> RunReport {
        switch (request.workload) {
        case Workload::Collective: return detail::RunCollectiveWorkload(request, job);
        case Workload::Plan: return detail::RunPlanWorkload(request, job);
        case Workload::Pipeline: return detail::RunPipelineWorkload(request, job);
        case Workload::Gemm: return detail::RunGemmWorkload(request, job);
        }
        throw Error("unknown workload");
    });
}

namespace detail {

Gpus OpenGpus(const std::vector<int>& requested)
{
    Gpus g;
    g.report = DiscoverDevices();
    if (g.report.devices.empty()) throw Unavailable(g.report.problem.empty() ? "no CUDA device" : g.report.problem);
    if (requested.empty()) {
        g.used = g.report.devices;
        return g;
    }
    for (int index : requested) {
        if (index >= static_cast<int>(g.report.devices.size()))
            throw Error("--gpus: GPU " + std::to_string(index) + " does not exist (this machine has " +
                        std::to_string(g.report.devices.size()) + ": 0 to " + std::to_string(g.report.devices.size() - 1) + ")");
        g.used.push_back(g.report.devices[static_cast<size_t>(index)]);
    }
    return g;
}

std::string HostName()
{
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "localhost";
    return name;
}

void DescribeHardware(core::MetaSection& hw, const Gpus& gpus)
{
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    hw.Set("host", HostName());
    if (!gpus.used.empty()) {
        hw.Set("gpu", gpus.used.front().name);
        hw.Set("gpuSpec", gpus.used.front().specId);
        hw.Set("smCount", static_cast<int64_t>(gpus.used.front().smCount));
        hw.Set("memoryBytes", static_cast<int64_t>(gpus.used.front().memoryBytes));
        hw.Set("computeCapability", std::to_string(gpus.used.front().ccMajor) + "." + std::to_string(gpus.used.front().ccMinor));
    }
    hw.Set("gpusUsed", static_cast<int64_t>(gpus.used.size()));
    hw.Set("gpusOnHost", static_cast<int64_t>(gpus.report.devices.size()));
    hw.Set("driverCuda", version(gpus.report.driverVersion));
    hw.Set("hardwareQueues", static_cast<int64_t>(HardwareQueues())); // CUDA_DEVICE_MAX_CONNECTIONS
    hw.Set("cudaRuntime", version(gpus.report.runtimeVersion));
    const int n = gpus.report.ncclVersion;
    hw.Set("nccl", std::to_string(n / 10000) + "." + std::to_string(n / 100 % 100) + "." + std::to_string(n % 100));
    if (prof::CuptiBuilt()) hw.Set("cuptiApi", static_cast<int64_t>(prof::CuptiCompiledVersion()));
    if (!gpus.used.empty() && gpus.used.front().nvlinksActive >= 0)
        hw.Set("nvlinksActive", static_cast<int64_t>(gpus.used.front().nvlinksActive));
}

prof::AssemblerOptions TraceOptions(const std::string& title, double peakFlopsPerDevice)
{
    prof::AssemblerOptions o;
    o.title = title;
    o.host = HostName();
    o.peakFlopsPerDevice = peakFlopsPerDevice;
    return o;
}

std::vector<std::string> EnablePeerAccess(const std::vector<int>& devices)
{
    std::vector<std::string> without;
    for (int a : devices)
        for (int b : devices) {
            if (a == b) continue;
            int can = 0;
            PARALENS_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
            if (!can) {
                without.push_back("GPU " + std::to_string(a) + " -> GPU " + std::to_string(b));
                continue;
            }
            DeviceScope scope(a);
            const cudaError_t r = cudaDeviceEnablePeerAccess(b, 0);
            if (r == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
            else PARALENS_CUDA(r);
        }
    return without;
}

double TimeoutSeconds()
{
    if (const char* t = std::getenv("PARALENS_GPU_TIMEOUT_S")) {
        const double v = std::atof(t);
        if (v > 0) return v;
    }
    return 300.0;
}

double SpecPeakFlops(const DeviceInfo& gpu, const std::string& dtype)
{
    const core::GpuSpec* spec = core::FindGpu(gpu.specId.empty() ? gpu.name : gpu.specId);
    return spec ? spec->PeakFlops(dtype) : 0.0;
}

} // namespace detail

} // namespace paralens::gpu
