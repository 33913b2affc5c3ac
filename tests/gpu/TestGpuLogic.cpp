// gpu/ host logic: run requests and their validation, nccl-tests arithmetic and the collectives'
// expected values, error messages, and the job API.
#include "gpu/CheckPattern.hpp"
#include "gpu/CollectiveMath.hpp"
#include "gpu/CudaEnvironment.hpp"
#include "gpu/GpuBackend.hpp"
#include "gpu/GpuError.hpp"
#include "gpu/GpuJob.hpp"
#include "gpu/RunRequest.hpp"

#include "common/Error.hpp"
#include "trace/TraceBuilder.hpp"

#include <catch2/catch.hpp>
#include <thread>

using namespace paralens;
using namespace paralens::gpu;

TEST_CASE("workload, timing, transport and dtype names parse both ways", "[gpu]")
{
    for (Workload w : {Workload::Collective, Workload::Plan, Workload::Pipeline, Workload::Gemm})
        CHECK(ParseWorkload(Name(w)) == w);
    CHECK(ParseTiming("CUPTI") == Timing::Cupti);
    CHECK_FALSE(ParseTiming("nsys"));
    CHECK(ParseTransport("nccl") == Transport::Nccl);
    CHECK(ParseSmPartition("green") == SmPartition::Green);
    CHECK(ParseDType("bf16") == DType::BFloat16);
    CHECK(ParseDType("bfloat16") == DType::BFloat16);
    CHECK(ParseDType("half") == DType::Half);
    CHECK(ParseDType("fp32") == DType::Float);
    CHECK(ParseDType("f64") == DType::Double);
    CHECK_FALSE(ParseDType("fp8"));
    CHECK(SizeOf(DType::BFloat16) == 2);
    CHECK(SizeOf(DType::Double) == 8);
    CHECK(ShortName(DType::Half) == "fp16");
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO values are checked as NCCL reads them", "[gpu]")
{
    CHECK_NOTHROW(ValidateNcclAlgo(""));
    CHECK_NOTHROW(ValidateNcclAlgo("Ring"));
    CHECK_NOTHROW(ValidateNcclAlgo("tree,ring"));
    CHECK_NOTHROW(ValidateNcclAlgo("^NVLS,CollnetDirect"));
    CHECK_NOTHROW(ValidateNcclAlgo("allreduce:tree;allgather:ring"));
    CHECK_THROWS_WITH(ValidateNcclAlgo("Rings"), Catch::Contains("--nccl-algo: unknown name 'Rings'") && Catch::Contains("NVLSTree"));
    CHECK_THROWS_WITH(ValidateNcclAlgo("allreduc:tree"), Catch::Contains("unknown collective 'allreduc'"));
    CHECK_NOTHROW(ValidateNcclProto("LL128,Simple"));
    CHECK_NOTHROW(ValidateNcclProto("^LL"));
    CHECK_THROWS_WITH(ValidateNcclProto("LL64"), Catch::Contains("--nccl-proto: unknown name 'LL64'"));
}

TEST_CASE("size sweeps follow nccl-tests' -b -e -f", "[gpu]")
{
    const auto sizes = SizeSweep(8, 1ull << 30, 2, 1);
    REQUIRE(sizes.size() == 28);
    CHECK(sizes.front() == 8);
    CHECK(sizes[1] == 16);
    CHECK(sizes.back() == 1ull << 30);
    CHECK(SizeSweep(8, 100, 4, 1) == std::vector<uint64_t>{8, 32});
    CHECK(SizeSweep(3, 40, 2, 4) == std::vector<uint64_t>{4, 12, 24}); // 3->4, 6->4 (merged), 12, 24
    CHECK(SizeSweep(64, 64, 2, 1) == std::vector<uint64_t>{64});
    CHECK_THROWS_WITH(SizeSweep(100, 8, 2, 1), Catch::Contains("must not exceed --max-bytes"));
    CHECK_THROWS_WITH(SizeSweep(8, 100, 1, 1), Catch::Contains("--step-factor must be at least 2"));
}

TEST_CASE("GEMM shapes and GPU lists are read with messages naming the option", "[gpu]")
{
    const GemmShape s = ParseGemmShape("--shapes", "8192x4096x1024");
    CHECK((s.m == 8192 && s.n == 4096 && s.k == 1024));
    const GemmShape sq = ParseGemmShape("--shapes", "2048");
    CHECK((sq.m == 2048 && sq.n == 2048 && sq.k == 2048));
    CHECK_THROWS_WITH(ParseGemmShape("--shapes", "8x8"), Catch::Contains("--shapes: cannot read '8x8'"));
    CHECK_THROWS_WITH(ParseGemmShape("--shapes", "0x8x8"), Catch::Contains("from 1 to 1048576"));
    CHECK(ParseGpuList("--gpus", "all").empty());
    CHECK(ParseGpuList("--gpus", "0,2,3") == std::vector<int>{0, 2, 3});
    CHECK_THROWS_WITH(ParseGpuList("--gpus", "0,x"), Catch::Contains("cannot read 'x'"));
    CHECK_THROWS_WITH(ParseGpuList("--gpus", "1,1"), Catch::Contains("listed twice"));
}

TEST_CASE("run requests are validated before any GPU is touched", "[gpu]")
{
    RunRequest r;
    r.workload = Workload::Collective;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("give at least one size"));
    r.sizes = {2};
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("less than one float element"));
    r.sizes = {1024};
    CHECK_NOTHROW(ValidateRunRequest(r));
    r.collective.ncclAlgo = "Ringo";
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("--nccl-algo"));
    r.collective.ncclAlgo.clear();
    r.iters = 0;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("--iters must be at least 1"));
    r.iters = 20;

    r.workload = Workload::Plan;
    r.plan.collective = core::Collective::AllToAll;
    r.plan.algorithm = core::Algorithm::Ring;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("--algorithm: ring does not implement alltoall"));
    r.plan.algorithm = core::Algorithm::Pairwise;
    r.plan.ranks = 65;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("--ranks must be between 1 and 64"));
    r.plan.ranks = 8;
    r.plan.root = 8;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("--root must be a rank (0 to 7)"));
    r.plan.root = 0;
    CHECK_NOTHROW(ValidateRunRequest(r));

    r.workload = Workload::Pipeline;
    r.pipeline.schedule = core::ScheduleKind::Interleaved;
    r.pipeline.chunks = 2;
    r.pipeline.microBatches = 6; // not a multiple of D = 4
    CHECK_THROWS_AS(ValidateRunRequest(r), Error);
    r.pipeline.microBatches = 8;
    r.pipeline.layersPerStage = 3;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("must be a multiple of --chunks"));
    r.pipeline.layersPerStage = 4;
    r.pipeline.dtype = DType::Int32;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("bf16, fp16 or fp32"));
    r.pipeline.dtype = DType::Half;
    CHECK_NOTHROW(ValidateRunRequest(r));

    r.workload = Workload::Gemm;
    r.gemm.dtypes = {DType::Double};
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("bf16, fp16 and fp32"));
}

TEST_CASE("a process of a multi-process job drives one GPU as a rank of the group", "[gpu][mpi]")
{
    RunRequest r;
    r.sizes = {1 << 20};
    r.processGroup.size = 4;
    r.processGroup.rank = 3;
    r.gpus = {0, 1};
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("each process drives exactly one GPU (got 2)"));
    r.gpus = {1};
    CHECK_NOTHROW(ValidateRunRequest(r));
    r.processGroup.rank = 4;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("rank 4 is not in 0..3"));
    r.processGroup.rank = 0;
    r.collective.root = 4;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("--root must be a rank (0 to 3)"));
    r.collective.root = 3;
    CHECK_NOTHROW(ValidateRunRequest(r));
    r.workload = Workload::Pipeline;
    CHECK_THROWS_WITH(ValidateRunRequest(r), Catch::Contains("collective and gemm, not pipeline"));
    r.workload = Workload::Gemm;
    CHECK_NOTHROW(ValidateRunRequest(r));
    r.processGroup.size = 0; // not a multi-process job: any number of GPUs
    r.gpus = {0, 1};
    r.workload = Workload::Collective;
    CHECK_NOTHROW(ValidateRunRequest(r));
}

TEST_CASE("collective counts follow nccl-tests", "[gpu]")
{
    const CollCounts ar = CollectiveCounts(core::Collective::AllReduce, 1000, 4, 8, 0);
    CHECK(ar.sendCount == 250);
    CHECK(ar.recvCount == 250);
    CHECK(ar.bytes == 1000);
    const CollCounts ag = CollectiveCounts(core::Collective::AllGather, 1000, 4, 8, 0);
    CHECK(ag.shape.base == 31); // 250 / 8
    CHECK(ag.sendCount == 31);
    CHECK(ag.recvCount == 248);
    CHECK(ag.bytes == 992);
    const CollCounts rs = CollectiveCounts(core::Collective::ReduceScatter, 1024, 2, 4, 0);
    CHECK(rs.sendCount == 512);
    CHECK(rs.recvCount == 128);
    const CollCounts a2a = CollectiveCounts(core::Collective::AllToAll, 64, 4, 4, 0);
    CHECK(a2a.sendCount == 16);
    CHECK(a2a.recvCount == 16);
    CHECK_THROWS_WITH(CollectiveCounts(core::Collective::AllGather, 16, 4, 8, 0), Catch::Contains("less than one element per rank"));
}

TEST_CASE("algbw and busbw use the lectures' factors, and time is the slowest rank's", "[gpu]")
{
    const Bandwidth b = ComputeBandwidth(core::Collective::AllReduce, 8, 1'000'000'000, 0.01);
    CHECK(b.algbwGBps == Approx(100.0));
    CHECK(b.busbwGBps == Approx(100.0 * 2 * 7 / 8));
    CHECK(ComputeBandwidth(core::Collective::AllGather, 4, 4'000'000'000, 0.1).busbwGBps == Approx(40.0 * 3 / 4));
    CHECK(ComputeBandwidth(core::Collective::Broadcast, 4, 1'000'000'000, 0.1).busbwGBps == Approx(10.0));
    CHECK(IterationSeconds({0.020, 0.025, 0.021}, 20) == Approx(0.00125));
    CHECK(IterationSeconds({}, 20) == 0.0);
    CHECK(ExactCheckPossible(DType::BFloat16, core::Collective::AllReduce, 32));
    CHECK_FALSE(ExactCheckPossible(DType::BFloat16, core::Collective::AllReduce, 33));
    CHECK(ExactCheckPossible(DType::BFloat16, core::Collective::AllGather, 1000));
    CHECK(ExactCheckPossible(DType::Half, core::Collective::ReduceScatter, 256));
}

TEST_CASE("the collectives' expected values match a plain CPU execution of each collective", "[gpu]")
{
    const uint64_t seed = 5;
    for (core::Collective c : core::AllCollectives()) {
        for (int p : {1, 2, 3, 8}) {
            const int root = p > 1 ? 1 : 0;
            const CollCounts cc = CollectiveCounts(c, 96 * 4, 4, p, root);
            const check::CollShape& s = cc.shape;
            const uint64_t b = s.base;
            // Send buffers, then the collective by its definition.
            std::vector<std::vector<int>> send(static_cast<size_t>(p));
            for (int q = 0; q < p; ++q)
                for (uint64_t i = 0; i < cc.sendCount; ++i) send[static_cast<size_t>(q)].push_back(check::PatternValue(seed, q, i));
            std::vector<std::vector<int>> recv(static_cast<size_t>(p), std::vector<int>(cc.recvCount, -1));
            for (int r = 0; r < p; ++r) {
                auto& out = recv[static_cast<size_t>(r)];
                for (uint64_t i = 0; i < cc.recvCount; ++i) {
                    int v = -1;
                    switch (c) {
                    case core::Collective::AllReduce:
                        v = 0;
                        for (int q = 0; q < p; ++q) v += send[static_cast<size_t>(q)][i];
                        break;
                    case core::Collective::Reduce:
                        if (r == root) {
                            v = 0;
                            for (int q = 0; q < p; ++q) v += send[static_cast<size_t>(q)][i];
                        }
                        break;
                    case core::Collective::Broadcast: v = send[static_cast<size_t>(root)][i]; break;
                    case core::Collective::AllGather: v = send[i / b][i % b]; break;
                    case core::Collective::Gather:
                        if (r == root) v = send[i / b][i % b];
                        break;
                    case core::Collective::ReduceScatter:
                        v = 0;
                        for (int q = 0; q < p; ++q) v += send[static_cast<size_t>(q)][static_cast<uint64_t>(r) * b + i];
                        break;
                    case core::Collective::AllToAll: v = send[i / b][static_cast<uint64_t>(r) * b + i % b]; break;
                    case core::Collective::Scatter: v = send[static_cast<size_t>(root)][static_cast<uint64_t>(r) * b + i]; break;
                    case core::Collective::SendRecv: v = send[static_cast<size_t>((r + p - 1) % p)][i]; break;
                    }
                    out[i] = v;
                }
            }
            for (int r = 0; r < p; ++r)
                for (uint64_t j = 0; j < cc.recvCount; ++j) {
                    double want = 0;
                    const bool checked = check::ExpectedCollValue(s, seed, r, j, &want);
                    INFO(core::Name(c) << " p=" << p << " rank " << r << " element " << j);
                    if (recv[static_cast<size_t>(r)][j] < 0) CHECK_FALSE(checked);
                    else {
                        REQUIRE(checked);
                        CHECK(want == recv[static_cast<size_t>(r)][j]);
                    }
                }
        }
    }
}

TEST_CASE("GPU failures read as one sentence with the call, the place and advice", "[gpu]")
{
    GpuFailure f{"CUDA", "cudaMalloc(&ptr, bytes)", "gpu/PlanExecutor.cpp", 120, 2, "cudaErrorMemoryAllocation", "out of memory"};
    const std::string text = FormatGpuFailure(f);
    CHECK(text.rfind("CUDA: cudaMalloc(&ptr, bytes) failed at gpu/PlanExecutor.cpp:120: out of memory (cudaErrorMemoryAllocation).", 0) == 0);
    CHECK(text.find("smaller --bytes") != std::string::npos);
    CHECK_FALSE(IsUnavailable(f));
    CHECK_THROWS_AS(ThrowGpuFailure(f), GpuError);
    GpuFailure none{"CUDA", "cudaGetDeviceCount(&n)", "gpu/DeviceDiscovery.cpp", 30, 100, "cudaErrorNoDevice", "no CUDA-capable device is detected"};
    CHECK(IsUnavailable(none));
    CHECK_THROWS_AS(ThrowGpuFailure(none), Unavailable);
    GpuFailure driver = none;
    driver.codeName = "cudaErrorInsufficientDriver";
    CHECK(AdviceFor(driver).find("update the driver") != std::string::npos);
    GpuFailure nccl{"NCCL", "ncclCommInitAll(...)", "x.cpp", 1, 6, "ncclRemoteError", "remote process exited or there was a network error"};
    CHECK(FormatGpuFailure(nccl).find("NCCL_DEBUG=WARN") != std::string::npos);
    GpuFailure bare{"cuBLAS", "cublasCreate(&h)", "", 0, 7, "", ""};
    CHECK(FormatGpuFailure(bare) == "cuBLAS: cublasCreate(&h) failed: error 7");
}

TEST_CASE("a job publishes snapshots, reports progress and hands over its report", "[gpu]")
{
    std::atomic<int> stage{0};
    GpuJob job([&](JobContext& ctx) {
        for (int i = 1; i <= 3; ++i) {
            core::TraceBuilder b;
            b.Meta().title = "snapshot " + std::to_string(i);
            ctx.Publish(std::make_shared<const core::Trace>(std::move(b).Finish()));
            ctx.SetProgress("step", i / 3.0);
        }
        while (stage.load() == 0) std::this_thread::yield();
        RunReport r;
        r.notes.push_back("done");
        core::TraceBuilder b;
        b.Meta().title = "final";
        r.trace = std::make_shared<const core::Trace>(std::move(b).Finish());
        return r;
    });
    // Wait for the third snapshot, then read it once.
    uint64_t version = 0;
    std::shared_ptr<const core::Trace> seen;
    while (job.Progress().fraction < 1.0) std::this_thread::yield();
    seen = job.Latest(&version);
    REQUIRE(seen);
    CHECK(seen->Meta().title == "snapshot 3");
    CHECK(version == 3);
    CHECK(job.Latest(&version) == nullptr); // nothing newer
    CHECK_FALSE(job.Done());
    stage = 1;
    RunReport report = job.Wait();
    CHECK(job.Done());
    CHECK(report.notes == std::vector<std::string>{"done"});
    auto last = job.Latest(&version);
    REQUIRE(last);
    CHECK(last->Meta().title == "final");
}

TEST_CASE("a job's error reaches Wait(), and Cancel() stops a cooperative body", "[gpu]")
{
    GpuJob failing([](JobContext&) -> RunReport { throw Error("no such GPU: 7"); });
    CHECK_THROWS_WITH(failing.Wait(), "no such GPU: 7");

    GpuJob endless([](JobContext& ctx) -> RunReport {
        for (;;) {
            ctx.ThrowIfCancelled();
            std::this_thread::yield();
        }
    });
    endless.Cancel();
    CHECK_THROWS_AS(endless.Wait(), Cancelled);
    { GpuJob dropped([](JobContext& ctx) -> RunReport { while (!ctx.CancelRequested()) std::this_thread::yield(); return {}; }); }
    SUCCEED("destroying a running job cancels and joins it");
}

TEST_CASE("what this build offers is reported consistently", "[gpu]")
{
    const BuildInfo info = GetBuildInfo();
    CHECK(info.gpuBackend == BackendBuilt());
    if (!info.gpuBackend) {
        const DeviceReport d = DiscoverDevices();
        CHECK(d.devices.empty());
        CHECK(d.problem.find("not built") != std::string::npos);
        RunRequest r;
        r.sizes = {1024};
        CHECK_THROWS_AS(StartGpuJob(r), Unavailable);
        r.sizes.clear();
        CHECK_THROWS_WITH(StartGpuJob(r), Catch::Contains("give at least one size")); // bad input first
        CHECK_THROWS_AS(NewNcclUniqueId(), Unavailable);
    } else {
        CHECK_FALSE(info.cudaVersion.empty());
        CHECK_FALSE(info.ncclVersion.empty());
    }
}

TEST_CASE("CUDA gets 32 hardware queues per GPU unless the environment chose a number", "[gpu]")
{
    const char* saved = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    const std::string before = saved ? saved : "";
    unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
    CHECK(HardwareQueues() == 8); // CUDA's default
    PrepareCudaEnvironment();
    CHECK(std::string(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")) == "32");
    CHECK(HardwareQueues() == 32);
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "4", 1);
    PrepareCudaEnvironment(); // a user's choice is kept
    CHECK(HardwareQueues() == 4);
    for (const char* bad : {"0", "33", "many", "8x"}) {
        setenv("CUDA_DEVICE_MAX_CONNECTIONS", bad, 1);
        CHECK(HardwareQueues() == 8);
    }
    CHECK(QueueSharingNote(9).find("9 streams on one GPU share its 8 hardware queues") == 0);
    CHECK(QueueSharingNote(8).empty());
    if (saved) setenv("CUDA_DEVICE_MAX_CONNECTIONS", before.c_str(), 1);
    else unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
}
