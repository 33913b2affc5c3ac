// The cost of a CUPTI capture: the same stream of kernels of a fixed length (a spin on the GPU's
// global timer) run without capture, with the CUPTI capture paralens uses (kernels, copies,
// NVTX ranges and the runtime/driver records that attribute kernels to them), and timed by CUDA
// events instead. The CUPTI issue's target: at most 2% for kernels of 1 ms and more; the figures
// for small kernels are reported too. Prints a table; asserts nothing.
// Without a GPU it says so and exits 0 (it cannot measure anything).
#include "BenchMachine.hpp"

#include "gpu/GpuBackend.hpp"
#include "gpu/detail/Kernels.hpp"
#include "gpu/detail/Nvtx.hpp"
#include "gpu/detail/Resources.hpp"

#include "common/Error.hpp"
#include "profiler/Capture.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace paralens;
using namespace paralens::gpu::detail;

namespace {

enum class Mode { Plain, Cupti, Events };

// Launches `count` spin kernels of `ns` each, one NVTX range per kernel (as paralens's ops have),
// and returns the wall time until the stream is idle.
double RunKernels(Stream& s, uint64_t ns, int count, Mode mode)
{
    std::vector<Event> events;
    if (mode == Mode::Events)
        for (int i = 0; i < 2 * count; ++i) events.emplace_back(0, true);
    PARALENS_CUDA(cudaStreamSynchronize(s.Get()));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i) {
        NvtxRange range("bench cat=compute");
        if (mode == Mode::Events) PARALENS_CUDA(cudaEventRecord(events[static_cast<size_t>(2 * i)].Get(), s.Get()));
        LaunchSpin(ns, 32, s.Get());
        if (mode == Mode::Events) PARALENS_CUDA(cudaEventRecord(events[static_cast<size_t>(2 * i + 1)].Get(), s.Get()));
    }
    PARALENS_CUDA(cudaStreamSynchronize(s.Get()));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double Median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main()
{
    prof::PrepareNvtxForCupti();
    const gpu::DeviceReport devices = gpu::DiscoverDevices();
    if (devices.devices.empty()) {
        std::printf("paralens CUPTI overhead benchmark: needs a GPU (%s): not run\n", devices.problem.c_str());
        return 0;
    }
    if (!prof::CuptiBuilt()) {
        std::printf("paralens CUPTI overhead benchmark: this build has no CUPTI: not run\n");
        return 0;
    }
    try {
        std::printf("paralens CUPTI overhead benchmark on %s, GPU 0: %s\n\n", MachineDescription().c_str(),
                    devices.devices.front().name.c_str());
        std::printf("%12s %8s %14s %14s %14s %12s %12s\n", "kernel", "count", "plain (ms)", "cupti (ms)", "events (ms)",
                    "cupti +%", "events +%");
        DeviceScope scope(0);
        Stream s(0);
        RunKernels(s, 10000, 100, Mode::Plain); // warm-up: module load, clocks up
        for (uint64_t ns : {5'000ull, 50'000ull, 1'000'000ull, 10'000'000ull}) {
            const int count = static_cast<int>(std::clamp<uint64_t>(2'000'000'000ull / ns, 50, 20000)); // ~2 s of kernels
            std::vector<double> plain, cupti, events;
            for (int rep = 0; rep < 3; ++rep) {
                plain.push_back(RunKernels(s, ns, count, Mode::Plain));
                events.push_back(RunKernels(s, ns, count, Mode::Events));
                std::string why;
                auto capture = prof::MakeCuptiCapture(prof::CaptureOptions{}, &why);
                capture->Start();
                cupti.push_back(RunKernels(s, ns, count, Mode::Cupti));
                capture->Stop();
                (void)capture->TakeBatch();
            }
            const double p = Median(plain), c = Median(cupti), e = Median(events);
            std::printf("%9.3f ms %8d %14.2f %14.2f %14.2f %11.2f%% %11.2f%%\n", static_cast<double>(ns) * 1e-6, count, p * 1e3,
                        c * 1e3, e * 1e3, (c - p) / p * 100, (e - p) / p * 100);
            if (ns >= 1'000'000)
                ReportTarget("CUPTI capture overhead, kernels of " + Fixed(static_cast<double>(ns) * 1e-6, 1, "ms"), "<= 2 %",
                             Fixed((c - p) / p * 100, 2, "%"), (c - p) / p * 100 <= 2.0);
        }
        std::printf("\nplain: no capture; cupti: kernels, copies, NVTX and API records captured; events: two CUDA events per "
                    "kernel.\nTarget: at most 2%% for kernels of 1 ms and more.\n");
    } catch (const Error& e) {
        std::printf("paralens CUPTI overhead benchmark: %s\n", e.what());
        return 1;
    }
    return 0;
}
