// The GPU backend as the app and the CLI see it: what this binary was built with, which GPUs the
// machine has, and starting a run. Plain C++; in a build without CUDA and NCCL the same
// functions exist (gpu/GpuBackendNone.cpp) and say so: BackendBuilt() is false, DiscoverDevices()
// explains, StartGpuJob() throws paralens::Unavailable.
#pragma once

#include "GpuJob.hpp"
#include "RunRequest.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace paralens::gpu {

struct BuildInfo {
    bool gpuBackend = false;       // CUDA and NCCL workloads compiled in
    bool cupti = false;            // CUPTI capture compiled in
    std::string cudaVersion;       // the CUDA runtime compiled against ("13.0"), "" when none
    std::string ncclVersion;       // "2.28.9"
    std::string cuptiVersion;      // CUPTI API version number ("130001")
    std::string cudaArchitectures; // "80;90"
    std::string ncclProfilerPlugin; // path of libnccl-profiler-paralens.so as built, "" when not built
};
BuildInfo GetBuildInfo();
bool BackendBuilt();

struct DeviceInfo {
    int index = 0;
    std::string name;
    std::string pciBusId;
    int smCount = 0;
    uint64_t memoryBytes = 0;
    uint64_t freeBytes = 0;
    int ccMajor = 0, ccMinor = 0;
    int clockMHz = 0;
    int memoryClockMHz = 0;
    int memoryBusWidthBits = 0;
    std::vector<bool> peerAccess;   // can this GPU access GPU j's memory (j = index into the list)
    std::vector<int> nvlinksTo;     // active NVLink links to GPU j (NVML; empty when NVML is absent)
    int nvlinksActive = -1;         // -1: unknown (NVML not found)
    std::string specId;             // the hardware table's entry ("h100-sxm"), "" when none matches
    double specBf16Tflops = 0, specFp32Tflops = 0, specHbmGBps = 0, specNvlinkUniGBps = 0;
};

struct DeviceReport {
    std::vector<DeviceInfo> devices;
    int driverVersion = 0;  // CUDA driver API version (12080 = 12.8), 0 when unknown
    int runtimeVersion = 0;
    int ncclVersion = 0;    // the NCCL library loaded at run time
    std::string problem;    // why there are no devices ("no CUDA device", "GPU backend not built", ...)
};
// Never throws for a machine without GPUs: `problem` says why the list is empty.
DeviceReport DiscoverDevices();

// A fresh NCCL unique id (ncclGetUniqueId), for rank 0 of a multi-process job to hand to every
// process (RunRequest::processGroup). It names a bootstrap socket this process now listens on.
// Throws Unavailable without the GPU backend, Error (with NCCL's message) when NCCL refuses.
std::array<uint8_t, ProcessGroup::kNcclIdBytes> NewNcclUniqueId();

// Validates the request (ValidateRunRequest) and starts it. Throws Error for bad requests and
// Unavailable when this binary has no GPU backend or the machine has no usable GPU.
std::unique_ptr<GpuJob> StartGpuJob(const RunRequest& request);

} // namespace paralens::gpu
