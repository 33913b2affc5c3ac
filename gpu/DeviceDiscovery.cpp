// GPU discovery: CUDA's device properties and peer-access matrix, NVLink links from NVML (loaded
// at run time when the driver provides libnvidia-ml.so.1), and the hardware table's entry.
#include "gpu/GpuBackend.hpp"
#include "gpu/detail/Check.hpp"
#include "gpu/detail/NcclCheck.hpp"

#include "model/Hardware.hpp"

#include <cstdio>
#include <dlfcn.h>

namespace paralens::gpu {

namespace {

// The few NVML entry points and types used here, declared as NVML (nvml.h, stable C ABI since
// NVML 9) defines them; nvml.h itself is not part of the CUDA toolkit installed for paralens.
struct NvmlPciInfo {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
};
using NvmlDevice = void*;
constexpr unsigned kNvlinkMaxLinks = 18;

struct Nvml {
    int (*init)() = nullptr;
    int (*shutdown)() = nullptr;
    int (*byBusId)(const char*, NvmlDevice*) = nullptr;
    int (*linkState)(NvmlDevice, unsigned, int*) = nullptr;
    int (*remotePci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
    bool ok = false;
};

Nvml LoadNvml()
{
    Nvml n;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return n;
    n.init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    n.shutdown = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlShutdown"));
    n.byBusId = reinterpret_cast<int (*)(const char*, NvmlDevice*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.linkState = reinterpret_cast<int (*)(NvmlDevice, unsigned, int*)>(dlsym(lib, "nvmlDeviceGetNvLinkState"));
    n.remotePci = reinterpret_cast<int (*)(NvmlDevice, unsigned, NvmlPciInfo*)>(dlsym(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2"));
    n.ok = n.init && n.shutdown && n.byBusId && n.linkState && n.remotePci && n.init() == 0;
    return n;
}

// "0000:18:00.0" and "00000000:18:00.0" name the same function: compare the numbers.
bool SameBusId(const char* a, const char* b)
{
    unsigned d1 = 0, b1 = 0, v1 = 0, f1 = 0, d2 = 0, b2 = 0, v2 = 0, f2 = 0;
    return std::sscanf(a, "%x:%x:%x.%x", &d1, &b1, &v1, &f1) == 4 && std::sscanf(b, "%x:%x:%x.%x", &d2, &b2, &v2, &f2) == 4 &&
           d1 == d2 && b1 == b2 && v1 == v2 && f1 == f2;
}

void AddNvlinks(std::vector<DeviceInfo>& devices)
{
    Nvml nvml = LoadNvml();
    if (!nvml.ok) return;
    for (DeviceInfo& d : devices) {
        NvmlDevice handle = nullptr;
        if (nvml.byBusId(d.pciBusId.c_str(), &handle) != 0) continue;
        d.nvlinksActive = 0;
        d.nvlinksTo.assign(devices.size(), 0);
        for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
            int active = 0;
            if (nvml.linkState(handle, link, &active) != 0 || !active) continue;
            ++d.nvlinksActive;
            NvmlPciInfo remote{};
            if (nvml.remotePci(handle, link, &remote) != 0) continue;
            for (size_t j = 0; j < devices.size(); ++j)
                if (SameBusId(remote.busId, devices[j].pciBusId.c_str())) ++d.nvlinksTo[j];
        }
    }
    nvml.shutdown();
}

int Attribute(cudaDeviceAttr attr, int device)
{
    int v = 0;
    PARALENS_CUDA(cudaDeviceGetAttribute(&v, attr, device));
    return v;
}

DeviceInfo Describe(int index)
{
    DeviceInfo d;
    d.index = index;
    cudaDeviceProp p{};
    PARALENS_CUDA(cudaGetDeviceProperties(&p, index));
    d.name = p.name;
    d.smCount = p.multiProcessorCount;
    d.memoryBytes = p.totalGlobalMem;
    d.ccMajor = p.major;
    d.ccMinor = p.minor;
    d.memoryBusWidthBits = p.memoryBusWidth;
    d.clockMHz = Attribute(cudaDevAttrClockRate, index) / 1000;
    d.memoryClockMHz = Attribute(cudaDevAttrMemoryClockRate, index) / 1000;
    char bus[32] = {};
    PARALENS_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, index));
    d.pciBusId = bus;
    size_t freeBytes = 0, total = 0;
    int previous = 0;
    PARALENS_CUDA(cudaGetDevice(&previous));
    PARALENS_CUDA(cudaSetDevice(index));
    PARALENS_CUDA(cudaMemGetInfo(&freeBytes, &total));
    PARALENS_CUDA(cudaSetDevice(previous));
    d.freeBytes = freeBytes;
    if (const core::GpuSpec* spec = core::FindGpu(d.name)) {
        d.specId = spec->id;
        d.specBf16Tflops = spec->PeakFlops("bf16") / 1e12;
        d.specFp32Tflops = spec->PeakFlops("fp32") / 1e12;
        d.specHbmGBps = spec->hbmGBps;
        d.specNvlinkUniGBps = spec->nvlinkUniGBps;
    }
    return d;
}

} // namespace

DeviceReport DiscoverDevices()
{
    DeviceReport r;
    cudaDriverGetVersion(&r.driverVersion);
    cudaRuntimeGetVersion(&r.runtimeVersion);
    ncclGetVersion(&r.ncclVersion);
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (e == cudaErrorNoDevice) r.problem = "no CUDA device";
        else if (e == cudaErrorInsufficientDriver)
            r.problem = r.driverVersion == 0 ? "no CUDA device (no NVIDIA driver is installed)"
                                             : "the NVIDIA driver (CUDA " + std::to_string(r.driverVersion / 1000) + "." +
                                                   std::to_string(r.driverVersion % 1000 / 10) +
                                                   ") is older than the CUDA runtime paralens was built with";
        else r.problem = std::string("CUDA cannot list devices: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
        return r;
    }
    if (count == 0) {
        r.problem = "no CUDA device";
        return r;
    }
    try {
        for (int i = 0; i < count; ++i) r.devices.push_back(Describe(i));
        for (DeviceInfo& d : r.devices) {
            d.peerAccess.assign(static_cast<size_t>(count), false);
            for (int j = 0; j < count; ++j) {
                int can = j == d.index ? 1 : 0;
                if (j != d.index) PARALENS_CUDA(cudaDeviceCanAccessPeer(&can, d.index, j));
                d.peerAccess[static_cast<size_t>(j)] = can != 0;
            }
        }
        AddNvlinks(r.devices);
    } catch (const Error& err) {
        r.devices.clear();
        r.problem = err.what();
    }
    return r;
}

} // namespace paralens::gpu
