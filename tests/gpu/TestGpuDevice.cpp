// Tests that need a GPU (paralens_gpu_tests; see GpuTestsMain.cpp): the kernels against the host
// functions they implement, CUPTI capture of real kernels, and every workload end to end on small
// sizes, checked against the CPU reference.
#include "gpu/CheckPattern.hpp"
#include "gpu/GpuBackend.hpp"
#include "gpu/detail/Kernels.hpp"
#include "gpu/detail/Resources.hpp"

#include "analysis/HardwareChannels.hpp"
#include "analysis/PipelineMetrics.hpp"
#include "model/CostModel.hpp"
#include "common/Error.hpp"
#include "profiler/Capture.hpp"

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

using namespace paralens;
using namespace paralens::gpu;
using namespace paralens::gpu::detail;

namespace {

std::vector<uint8_t> Download(const DeviceBuffer& b, size_t bytes)
{
    std::vector<uint8_t> out(bytes);
    PARALENS_CUDA(cudaMemcpy(out.data(), b.Get(), bytes, cudaMemcpyDeviceToHost));
    return out;
}

RunReport RunJob(RunRequest r)
{
    auto job = StartGpuJob(r);
    return job->Wait();
}

size_t CountSpans(const core::Trace& t, core::SpanCategory c)
{
    size_t n = 0;
    for (const core::Track& tr : t.Tracks())
        for (const core::Span& s : tr.spans) n += s.category == c;
    return n;
}

} // namespace

TEST_CASE("discovery finds the GPUs with their properties and spec entries", "[gpu][device]")
{
    const DeviceReport r = DiscoverDevices();
    REQUIRE_FALSE(r.devices.empty());
    CHECK(r.problem.empty());
    CHECK(r.driverVersion > 0);
    for (const DeviceInfo& d : r.devices) {
        INFO(d.name);
        CHECK(d.smCount > 0);
        CHECK(d.memoryBytes > 0);
        CHECK(d.ccMajor >= 7);
        CHECK(d.peerAccess.size() == r.devices.size());
        CHECK(d.peerAccess[static_cast<size_t>(d.index)]);
        if (d.name.find("H100") != std::string::npos) CHECK(d.specId.rfind("h100", 0) == 0);
    }
}

TEST_CASE("the fill, reduce and check kernels do what the host functions say", "[gpu][device]")
{
    const int dev = 0;
    DeviceScope scope(dev);
    Stream s(dev);
    const uint64_t n = (1 << 20) + 37; // not a multiple of 16: the scalar tail runs too
    DeviceBuffer a(dev, n + 16), b(dev, n + 16), counters(dev, 16);
    LaunchFillPlanBytes(a.Bytes(), n, 7, 2, 0, s.Get());
    LaunchFillPlanBytes(b.Bytes() + 3, n, 7, 5, 100, s.Get()); // misaligned: the vector path must step aside
    PARALENS_CUDA(cudaStreamSynchronize(s.Get()));
    const auto ha = Download(a, n);
    for (uint64_t i = 0; i < n; i += 4099) REQUIRE(ha[i] == check::PlanByte(7, 2, i));
    LaunchReduceBytes(a.Bytes(), b.Bytes() + 3, n, s.Get());
    PARALENS_CUDA(cudaStreamSynchronize(s.Get()));
    const auto sum = Download(a, n);
    for (uint64_t i = 0; i < n; i += 1013)
        REQUIRE(sum[i] == static_cast<uint8_t>(check::PlanByte(7, 2, i) + check::PlanByte(7, 5, 100 + i)));
    // The check kernel counts a planted error.
    LaunchFillPlanBytes(a.Bytes(), n, 7, 2, 0, s.Get());
    PARALENS_CUDA(cudaMemsetAsync(a.Bytes() + 12345, 0, 1, s.Get()));
    const unsigned long long init[2] = {0, ~0ull};
    PARALENS_CUDA(cudaMemcpyAsync(counters.Get(), init, sizeof init, cudaMemcpyHostToDevice, s.Get()));
    const check::PlanRegion region{0, n, 0, 2, 0};
    LaunchCheckPlanRegion(a.Bytes(), region, 8, 7, static_cast<unsigned long long*>(counters.Get()), s.Get());
    unsigned long long got[2];
    PARALENS_CUDA(cudaMemcpy(got, counters.Get(), sizeof got, cudaMemcpyDeviceToHost));
    CHECK(got[0] == (check::PlanByte(7, 2, 12345) == 0 ? 0u : 1u));
    if (got[0] == 1) CHECK(got[1] == 12345);
}

TEST_CASE("a CUPTI capture sees real kernels with GPU timestamps on the host clock", "[gpu][cupti]")
{
    if (!prof::CuptiBuilt()) {
        WARN("skipped: CUPTI not built");
        return;
    }
    std::string why;
    auto capture = prof::MakeCuptiCapture(prof::CaptureOptions{}, &why);
    REQUIRE(capture);
    try {
        capture->Start();
    } catch (const Error& e) {
        WARN("skipped: CUPTI refused here: " << e.what());
        return;
    }
    Stream s(0);
    const auto before = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) LaunchSpin(100000, 32, s.Get()); // 10 x 100 us
    PARALENS_CUDA(cudaStreamSynchronize(s.Get()));
    const auto after = std::chrono::steady_clock::now();
    capture->Stop();
    const prof::ActivityBatch batch = capture->TakeBatch();
    const prof::ClockMap clock = capture->Clock();
    size_t spins = 0;
    for (const prof::GpuActivity& a : batch.activities) {
        if (a.kind != prof::ActivityKind::Kernel || a.name.find("Spin") == std::string::npos) continue;
        ++spins;
        CHECK(a.endNs - a.startNs >= 100000);
        const int64_t host = clock.ToHost(a.startNs);
        CHECK(host >= std::chrono::duration_cast<std::chrono::nanoseconds>(before.time_since_epoch()).count() - 1'000'000);
        CHECK(host <= std::chrono::duration_cast<std::chrono::nanoseconds>(after.time_since_epoch()).count() + 1'000'000);
    }
    CHECK(spins == 10);
    CHECK(batch.droppedRecords == 0);
}

TEST_CASE("the Plan executor runs ring allreduce on 8 virtual ranks and checks it", "[gpu][plan]")
{
    for (auto [timing, graph] : {std::pair{Timing::Events, false}, std::pair{Timing::Auto, false}, std::pair{Timing::Auto, true}}) {
        RunRequest r;
        r.workload = Workload::Plan;
        r.timing = timing;
        r.gpus = {0};
        r.sizes = {1 << 20, 1000};
        r.iters = 2;
        r.warmupIters = 1;
        r.plan.ranks = 8;
        r.plan.collective = core::Collective::AllReduce;
        r.plan.algorithm = core::Algorithm::Ring;
        r.plan.graph = graph;
        const RunReport report = RunJob(r);
        INFO(Name(timing) << (graph ? " with --graph" : ""));
        CHECK(report.checksPassed);
        REQUIRE(report.rows.size() == 2);
        CHECK(report.rows[0].GetNumber("wrong", -1) == 0);
        CHECK(report.rows[0].GetNumber("timeUs") > 0);
        for (const core::MetaSection& row : report.rows) {
            CHECK((row.Find("graphTimeUs") != nullptr) == graph);
            if (!graph) continue;
            CHECK(row.GetNumber("graphWrong", -1) == 0);
            CHECK(row.GetNumber("graphMinTimeUs") > 0);
            CHECK(row.GetNumber("graphMinTimeUs") <= row.GetNumber("graphTimeUs"));
        }
        REQUIRE(report.trace);
        const core::Trace& t = *report.trace;
        CHECK(t.Devices().size() >= 8);
        CHECK(t.Devices()[0].kind == core::DeviceKind::VirtualGpu);
        // Every transfer of every run is a send span with a flow: 2 x 7 x 8 per run (the graphs'
        // launches are not traced).
        const size_t runs = 2 * (1 + 1 + 2); // sizes x (check + warm-up + timed)
        CHECK(CountSpans(t, core::SpanCategory::Send) == runs * 2 * 7 * 8);
        CHECK(t.Flows().size() == runs * 2 * 7 * 8);
        if (timing == Timing::Events) CHECK(t.Meta().source == core::TraceSource::CudaEvents);
    }
}

TEST_CASE("every collective and algorithm of core runs on virtual ranks with the right result", "[gpu][plan]")
{
    for (core::Collective c : core::AllCollectives())
        for (core::Algorithm a : core::AlgorithmsFor(c)) {
            RunRequest r;
            r.workload = Workload::Plan;
            r.timing = Timing::Events;
            r.gpus = {0};
            r.sizes = {4099};
            r.iters = 1;
            r.warmupIters = 0;
            r.plan.ranks = 5;
            r.plan.root = 2;
            r.plan.collective = c;
            r.plan.algorithm = a;
            r.plan.graph = true; // the op-by-op run and the captured graph, each checked
            INFO(core::Name(c) << " / " << core::Name(a));
            const RunReport report = RunJob(r);
            CHECK(report.checksPassed);
            CHECK(report.rows.at(0).GetNumber("graphWrong", -1) == 0);
        }
}

TEST_CASE("NCCL collectives run on the local GPUs and match the CPU reference", "[gpu][nccl]")
{
    for (core::Collective c : {core::Collective::AllReduce, core::Collective::AllGather, core::Collective::ReduceScatter,
                               core::Collective::Broadcast, core::Collective::AllToAll, core::Collective::SendRecv}) {
        RunRequest r;
        r.workload = Workload::Collective;
        r.timing = Timing::Events;
        r.sizes = {1 << 20};
        r.iters = 3;
        r.warmupIters = 1;
        r.collective.collective = c;
        r.collective.dtype = DType::BFloat16;
        const RunReport report = RunJob(r);
        INFO(core::Name(c));
        CHECK(report.checksPassed);
        REQUIRE(report.rows.size() == 1);
        // busbw = algbw x nccl-tests' factor for the communicator's ranks (one per GPU): 0 for an
        // allreduce, allgather, reduce-scatter or alltoall of one rank, as nccl-tests prints it.
        const int ranks = static_cast<int>(DiscoverDevices().devices.size());
        const double algbw = report.rows[0].GetNumber("algbwGBps");
        CHECK(algbw > 0);
        CHECK(report.rows[0].GetNumber("busbwGBps") == Approx(algbw * core::BusBwFactor(c, ranks)));
        CHECK(CountSpans(*report.trace, core::SpanCategory::Collective) > 0);
    }
}

TEST_CASE("a small 1F1B pipeline runs every op and reports MFU and bubbles", "[gpu][pipeline]")
{
    RunRequest r;
    r.workload = Workload::Pipeline;
    r.timing = Timing::Events;
    r.gpus = {0};
    r.iters = 2;
    r.warmupIters = 1;
    r.pipeline.schedule = core::ScheduleKind::OneFOneB;
    r.pipeline.stages = 2;
    r.pipeline.microBatches = 4;
    r.pipeline.hidden = 256;
    r.pipeline.ffn = 1024;
    r.pipeline.tokens = 256;
    r.pipeline.virtualStages = true;
    const RunReport report = RunJob(r);
    REQUIRE(report.rows.size() == 2);
    CHECK(report.rows[0].GetNumber("timeUs") > 0);
    size_t forwards = 0, backwards = 0;
    for (const core::Track& t : report.trace->Tracks())
        for (const core::Span& s : t.spans) {
            forwards += s.category == core::SpanCategory::Forward && s.step >= 0;
            backwards += s.category == core::SpanCategory::Backward && s.step >= 0;
        }
    CHECK(forwards == 2u * 4u * 2u); // D x N x iterations
    CHECK(backwards == forwards);    // none lost between its start and end events
    CHECK(report.summary.GetString("peakActivations") == "2 1");
}

TEST_CASE("copies between virtual stages run by either stage land on the sender's send track", "[gpu][pipeline]")
{
    for (auto [timing, copyOn] : {std::pair{Timing::Events, CopyOn::Receiver}, std::pair{Timing::Auto, CopyOn::Receiver},
                                  std::pair{Timing::Auto, CopyOn::Sender}}) {
        INFO(Name(timing) << " " << Name(copyOn));
        RunRequest r;
        r.workload = Workload::Pipeline;
        r.timing = timing;
        r.gpus = {0};
        r.iters = 1;
        r.warmupIters = 1;
        r.pipeline.schedule = core::ScheduleKind::OneFOneB;
        r.pipeline.stages = 3; // the middle stage receives from both sides
        r.pipeline.microBatches = 4;
        r.pipeline.hidden = 256;
        r.pipeline.ffn = 1024;
        r.pipeline.tokens = 256;
        r.pipeline.virtualStages = true;
        r.pipeline.copyOn = copyOn;
        const RunReport report = RunJob(r);
        CHECK(report.checksPassed);
        std::vector<size_t> sends(3, 0);
        size_t forwards = 0;
        for (const core::Track& t : report.trace->Tracks())
            for (const core::Span& s : t.spans) {
                if (s.step < 0) continue;
                forwards += s.category == core::SpanCategory::Forward;
                if (s.category == core::SpanCategory::Send && t.device < sends.size()) ++sends[t.device];
            }
        CHECK(forwards == 3u * 4u);
        CHECK(sends == std::vector<size_t>{4, 8, 4}); // activations forward, gradients back, on the sender's track
        CHECK(report.summary.GetString("peakActivations") == "3 2 1");
        CHECK(report.trace->Meta().workload.GetString("copyOn") == Name(copyOn));
        // CUPTI (CUDA 13) tells each kernel's and copy's hardware queue (a copy within a GPU: the SMs').
        const core::ChannelReport channels = core::ComputeChannelReport(*report.trace);
        if (report.trace->Meta().extra.GetString("timing") == "cupti") {
            CHECK(channels.spansWithChannel > 0);
            CHECK(channels.copiesOnSms + channels.copiesOnCopyEngine >= 16u); // the timed iteration's 16, the warm-up's, reads back
        }
    }
}

TEST_CASE("the GEMM probe measures TFLOPS per dtype", "[gpu][gemm]")
{
    RunRequest r;
    r.workload = Workload::Gemm;
    r.timing = Timing::Events;
    r.gpus = {0};
    r.iters = 3;
    r.warmupIters = 1;
    r.gemm.shapes = {{1024, 1024, 1024}};
    const RunReport report = RunJob(r);
    REQUIRE(report.rows.size() == 3);
    for (const core::MetaSection& row : report.rows) CHECK(row.GetNumber("tflops") > 0);
}

TEST_CASE("errors name what is wrong instead of hanging", "[gpu][errors]")
{
    RunRequest r;
    r.workload = Workload::Plan;
    r.gpus = {99};
    r.sizes = {1024};
    CHECK_THROWS_WITH(StartGpuJob(r), Catch::Contains("--gpus: GPU 99 does not exist"));
    r.gpus = {0};
    r.sizes = {1ull << 40}; // 1 TiB per rank
    r.plan.ranks = 2;
    auto job = StartGpuJob(r);
    CHECK_THROWS_WITH(job->Wait(), Catch::Contains("free"));
}
