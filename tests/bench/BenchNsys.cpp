// Reading Nsight Systems SQLite exports (core/trace/NsysReader) against the target: at
// least 150 MB of SQLite per second (issue "Speed"; 100 before). Writes exports of 0.1 and 1 million kernels (each with its
// runtime call, plus a copy and an NVTX range per 10 kernels) under /tmp, reads each 3 times,
// prints the median beside the target and deletes the files. Asserts nothing.
#include "BenchMachine.hpp"
#include "../core/NsysTestDb.hpp"

#include "trace/TraceFile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace paralens;
using nsystest::GlobalTid;

namespace {

void Write(const std::string& path, int64_t kernels)
{
    nsystest::Db db(path);
    nsystest::CreateExportTables(db);
    for (int64_t i = 0; i < 64; ++i) db.Row("StringIds", {i, "kernel_" + std::to_string(i) + "_sm90_xmma_gemm_bf16bf16_bf16f32"});
    db.Row("StringIds", {int64_t{64}, std::string("cudaLaunchKernel")});
    db.Row("TARGET_INFO_GPU", {int64_t{0}, std::string("NVIDIA H100 80GB HBM3"), std::string("0000:01:00.0")});
    db.Row("TARGET_INFO_SESSION_START_TIME", {int64_t{1'700'000'000'000'000'000}, std::string("2023-11-14T22:13:20")});
    const int64_t pid = 777, thread = GlobalTid(pid, pid);
    for (int64_t i = 0; i < kernels; ++i) {
        const int64_t t = i * 2000;
        db.Row("CUPTI_ACTIVITY_KIND_KERNEL", {t + 100, t + 1500, i % 8, int64_t{1}, 7 + i % 4, i, GlobalTid(pid, 0), i % 64, nullptr,
                                              int64_t{132}, nullptr});
        db.Row("CUPTI_ACTIVITY_KIND_RUNTIME", {t, t + 40, int64_t{0}, thread, i, int64_t{64}});
        if (i % 10 == 0) {
            db.Row("CUPTI_ACTIVITY_KIND_MEMCPY", {t + 1600, t + 1900, i % 8, int64_t{1}, int64_t{20}, -1 - i, GlobalTid(pid, 0),
                                                  int64_t{1 << 20}, int64_t{1}});
            db.Row("NVTX_EVENTS", {t, t + 19000, int64_t{59}, nullptr, std::string("step"), thread, nullptr, int64_t{0}});
        }
    }
    db.Close();
}

} // namespace

int main()
{
    std::printf("paralens Nsight Systems export reading on %s\n", MachineDescription().c_str());
    std::printf("%10s %10s %10s %12s %10s %12s %8s\n", "kernels", "file (MB)", "spans", "read (s)", "MB/s", "target MB/s", "");
    for (int64_t kernels : {int64_t{100'000}, int64_t{1'000'000}}) {
        const std::string path = "/tmp/paralens-bench-nsys-" + std::to_string(::getpid()) + ".sqlite";
        Write(path, kernels);
        const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
        std::vector<double> seconds;
        size_t spans = 0;
        for (int rep = 0; rep < 3; ++rep) {
            const auto t0 = std::chrono::steady_clock::now();
            const core::Trace t = core::ReadTraceFile(path);
            seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            spans = t.SpanCount();
        }
        std::filesystem::remove(path);
        std::sort(seconds.begin(), seconds.end());
        const double s = seconds[1], rate = mb / s;
        std::printf("%10lld %10.1f %10zu %12.3f %10.1f %12s %8s\n", static_cast<long long>(kernels), mb, spans, s, rate, ">= 150",
                    rate >= 150 ? "met" : "MISSED");
        ReportTarget("Nsight Systems export read, " + Fixed(mb, 1, "MB"), ">= 150 MB/s", Fixed(rate, 0, "MB/s"), rate >= 150);
    }
    return 0;
}
