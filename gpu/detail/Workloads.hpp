// The four GPU workloads (one file each) and what they share: opening the GPUs asked for, trace
// metadata about the hardware, NCCL communicators with error polling, and waiting for streams
// without hanging. Only gpu/ .cpp files include this header.
#pragma once

#include "gpu/GpuBackend.hpp"
#include "gpu/GpuJob.hpp"
#include "gpu/RunRequest.hpp"
#include "gpu/detail/Resources.hpp"

#include "profiler/ActivityTrace.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace paralens::gpu::detail {

RunReport RunCollectiveWorkload(const RunRequest& request, JobContext& job);
RunReport RunPlanWorkload(const RunRequest& request, JobContext& job);
RunReport RunPipelineWorkload(const RunRequest& request, JobContext& job);
RunReport RunGemmWorkload(const RunRequest& request, JobContext& job);

struct Gpus {
    DeviceReport report;
    std::vector<DeviceInfo> used; // in rank order
};
// The GPUs of --gpus (all when empty). Throws Unavailable when the machine has none, Error for an
// index it does not have.
Gpus OpenGpus(const std::vector<int>& requested);

std::string HostName();
// GPU names, driver, CUDA runtime, NCCL and CUPTI versions, host: the Trace's hardware section.
void DescribeHardware(core::MetaSection& hw, const Gpus& gpus);
prof::AssemblerOptions TraceOptions(const std::string& title, double peakFlopsPerDevice);

// Enables peer access between every pair of the devices that supports it; returns the pairs
// that do not ("GPU 0 -> GPU 2") so the report can say their copies go through the host.
std::vector<std::string> EnablePeerAccess(const std::vector<int>& devices);

// Waits until every stream is idle, polling instead of blocking so that a cancel, a timeout or
// (through `poll`) an NCCL error ends the wait with an exception instead of a hang.
// `poll` is called every millisecond or so and may throw.
template <class Poll>
void WaitStreams(const std::vector<cudaStream_t>& streams, JobContext& job, std::chrono::seconds timeout, Poll&& poll,
                 const char* what);

double TimeoutSeconds(); // PARALENS_GPU_TIMEOUT_S, default 300

// The spec-sheet peak FLOP/s of the GPU for a dtype ("bf16"), 0 when the table has no entry.
double SpecPeakFlops(const DeviceInfo& gpu, const std::string& dtype);

} // namespace paralens::gpu::detail

#include "gpu/detail/WaitStreams.inl"
