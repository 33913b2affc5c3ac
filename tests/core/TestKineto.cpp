// PyTorch profiler (Kineto) traces: real files from ../shared/reference-data and synthetic ones.
#include "analysis/CollectiveMatch.hpp"
#include "common/Error.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/FileIO.hpp"
#include "trace/NcclKernelName.hpp"
#include "trace/TraceFile.hpp"
#include "trace/TraceMerge.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace paralens;
using namespace paralens::core;

namespace {

// A reference file, or "" when ../shared/reference-data is absent (a user's clone).
std::string RefFile(const std::string& rel)
{
    std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/" + rel;
    return std::filesystem::exists(path) ? path : "";
}

const Device* FindDevice(const Trace& t, DeviceKind kind, int index = 0)
{
    for (const Device& d : t.Devices())
        if (d.kind == kind && index-- == 0) return &d;
    return nullptr;
}

struct GpuCounts {
    size_t spans = 0, compute = 0, collectives = 0, memcpyBytes = 0;
};

GpuCounts CountGpu(const Trace& t, const Device& d)
{
    GpuCounts c;
    for (uint32_t k : d.tracks)
        for (const Span& s : t.Tracks()[k].spans) {
            ++c.spans;
            c.compute += s.category == SpanCategory::Compute;
            c.collectives += s.category == SpanCategory::Collective;
            if (s.category == SpanCategory::Memcpy) c.memcpyBytes += s.bytes;
        }
    return c;
}

const Span* SpanStartingAt(const Trace& t, int64_t ns)
{
    for (const Track& track : t.Tracks())
        for (const Span& s : track.spans)
            if (s.startNs == ns) return &s;
    return nullptr;
}

} // namespace

TEST_CASE("NCCL kernel names of every NCCL generation", "[io][kineto]")
{
    auto a = ParseNcclKernelName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
    REQUIRE(a);
    CHECK(a->collective == "allreduce");
    CHECK(a->algorithm == "ring");
    CHECK(a->protocol == "LL");
    CHECK(a->redop == "sum");
    CHECK(a->dtype == "float");
    auto b = ParseNcclKernelName("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
    REQUIRE(b);
    CHECK(b->collective == "reduce-scatter");
    CHECK(b->redop == "sum");
    CHECK(b->dtype == "bfloat16");
    CHECK(b->algorithm == "ring");
    CHECK(b->protocol == "LL");
    auto c = ParseNcclKernelName("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
    REQUIRE(c);
    CHECK(c->collective == "allgather");
    CHECK(c->redop.empty());
    auto d = ParseNcclKernelName("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)");
    REQUIRE(d);
    CHECK(d->collective == "sendrecv");
    CHECK(d->protocol == "SIMPLE");
    CHECK(d->dtype == "int8");
    auto e = ParseNcclKernelName("ncclDevKernel_AllReduce_Sum_f32_NVLS_TREE_SIMPLE");
    REQUIRE(e);
    CHECK(e->algorithm == "nvls_tree");
    CHECK(ParseNcclKernelName("ncclKernel_Broadcast_RING_LL_Sum___nv_bfloat16()")->dtype == "bfloat16");
    CHECK(ParseNcclKernelName("ncclAllReduceRingLLKernel_sum_f32")->algorithm == "ring");
    CHECK(ParseNcclKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)")->collective == "sendrecv");
    CHECK_FALSE(ParseNcclKernelName("void at::native::vectorized_elementwise_kernel<4>(int)"));
    CHECK(CollectiveFromName("nccl:_all_gather_base") == Collective::AllGather);
    CHECK(CollectiveFromName("c10d::_reduce_scatter_base_") == Collective::ReduceScatter);
    CHECK(CollectiveFromName("all_to_all") == Collective::AllToAll);
    CHECK(CollectiveFromName("reduce_perf") == Collective::Reduce);
    CHECK_FALSE(CollectiveFromName("barrier"));
    CHECK(DtypeSizeBytes("BFloat16") == 2);
    CHECK(DtypeSizeBytes("unsigned char") == 1);
    CHECK(DtypeSizeBytes("Long") == 8);
    CHECK(DtypeSizeBytes("complex") == 0);
}

TEST_CASE("collective tags round-trip through text", "[io][kineto]")
{
    CollectiveTag t;
    t.collective = "allreduce";
    t.algorithm = "ring";
    t.group = "default pg%1";
    t.ranks = 8;
    t.seq = 12;
    auto back = ParseCollectiveTag(FormatCollectiveTag(t));
    REQUIRE(back);
    CHECK(back->collective == "allreduce");
    CHECK(back->group == "default pg%1");
    CHECK(back->ranks == 8);
    CHECK(back->seq == 12);
    CHECK_FALSE(ParseCollectiveTag("algo=ring proto=LL"));
}

TEST_CASE("Kineto: relative ts plus baseTimeNanoseconds, to the nanosecond, NCCL args give bytes", "[io][kineto]")
{
    const std::string text = R"J({"schemaVersion":1,
      "distributedInfo":{"backend":"nccl","rank":1,"world_size":2,"pg_count":1,
                         "pg_config":[{"pg_name":"0","pg_desc":"default_pg","pg_size":2,"ranks":[0,1]}]},
      "deviceProperties":[{"id":1,"name":"NVIDIA H100 80GB HBM3"}],
      "traceEvents":[
        {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
         "pid":1,"tid":7,"ts":4458676388068.751,"dur":12.001,
         "args":{"device":1,"stream":7,"correlation":9,"Collective name":"allreduce","In msg nelems":6637568,
                 "Out msg nelems":6637568,"Group size":2,"dtype":"BFloat16","Process Group Name":"0",
                 "Process Group Ranks":"[0, 1]"}},
        {"ph":"X","cat":"kernel","name":"sm90_gemm","pid":1,"tid":7,"ts":4458676388080.752,"dur":1,"args":{}},
        {"ph":"X","cat":"gpu_user_annotation","name":"nccl:all_reduce","pid":1,"tid":7,"ts":4458676388068,"dur":20},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":55,"tid":55,"ts":4458676388060,"dur":3,
         "args":{"correlation":9}},
        {"ph":"s","cat":"ac2g","name":"ac2g","id":9,"pid":55,"tid":55,"ts":4458676388060},
        {"ph":"f","cat":"ac2g","name":"ac2g","id":9,"pid":1,"tid":7,"ts":4458676388068.751,"bp":"e"},
        {"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"stream 7 "}}
      ],
      "traceName":"r1.json","displayTimeUnit":"ms","baseTimeNanoseconds":1711964646000000000})J";
    CHECK(DetectTraceFormat(text) == TraceFormat::Kineto);
    Trace t = ReadTraceText(text, "r1.json");
    CHECK(t.Meta().source == TraceSource::Kineto);
    const int64_t base = 1711964646000000000;
    const Span* nccl = SpanStartingAt(t, base + 4458676388068751);
    REQUIRE(nccl);
    CHECK(nccl->endNs == base + 4458676388080752);
    CHECK(nccl->category == SpanCategory::Collective);
    CHECK(nccl->bytes == 6637568u * 2);
    auto tag = ParseCollectiveTag(t.Str(nccl->detail));
    REQUIRE(tag);
    CHECK(tag->collective == "allreduce");
    CHECK(tag->ranks == 2);
    CHECK(tag->group == "0");
    CHECK(tag->dtype == "bfloat16");
    CHECK(tag->algorithm == "ring");
    CHECK(tag->bytesFrom == "args");
    const Device* gpu = FindDevice(t, DeviceKind::Gpu);
    REQUIRE(gpu);
    CHECK(t.Str(gpu->name) == "rank 1 GPU 1 (NVIDIA H100 80GB HBM3)");
    CHECK(gpu->rank == 1);
    CHECK(gpu->gpuIndex == 1);
    CHECK(t.Str(t.Tracks()[gpu->tracks[0]].name) == "stream 7");
    CHECK(CountGpu(t, *gpu).compute == 1);
    REQUIRE(t.Flows().size() == 1);
    CHECK(t.Flows()[0].dstNs == base + 4458676388068751);
    CHECK(t.Meta().hardware.GetString("gpu") == "NVIDIA H100 80GB HBM3");
    ReadOptions noCpu;
    noCpu.keepCpu = false;
    Trace g = ReadTraceText(text, "r1.json", noCpu);
    CHECK(g.Devices().size() == 1);
    CHECK(g.Flows().empty());
}

TEST_CASE("Kineto: NCCL kernels without args take collective and size from the launching CPU ops", "[io][kineto]")
{
    const std::string text = R"J({"traceEvents":[
      {"ph":"X","cat":"user_annotation","name":"nccl:_all_gather_base","pid":9,"tid":9,"ts":100,"dur":50},
      {"ph":"X","cat":"cpu_op","name":"c10d::_allgather_base_","pid":9,"tid":9,"ts":99,"dur":60,
       "args":{"Input Dims":[[1048576],[16384],[]],"Input type":["float","float",""]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":110,"dur":5,"args":{"correlation":77}},
      {"ph":"X","cat":"kernel","name":"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
       "pid":0,"tid":84,"ts":120,"dur":1000.0,"args":{"correlation":77}}
    ]})J";
    Trace t = ReadTraceText(text, "job_rank3.json");
    const Span* nccl = SpanStartingAt(t, 120000);
    REQUIRE(nccl);
    CHECK(nccl->bytes == 1048576u * 4);
    auto tag = ParseCollectiveTag(t.Str(nccl->detail));
    REQUIRE(tag);
    CHECK(tag->collective == "allgather"); // the annotation names it; the kernel is a SendRecv
    CHECK(tag->kernel == "sendrecv");
    CHECK(tag->ranks == 64);                 // output / input of the allgather
    CHECK(tag->bytesFrom == "cpu-op");
    CHECK(t.Str(FindDevice(t, DeviceKind::Gpu)->name) == "rank 3 GPU 0"); // rank from the file name
    CHECK(t.Meta().workload.GetString("rankFrom") == "file name");
}

TEST_CASE("Kineto: bad input gets a clear error", "[io][kineto]")
{
    CHECK_THROWS_WITH(ReadTraceText(R"({"schemaVersion":1,"traceEvents":[]})", "k.json"), Catch::Contains("no events"));
    CHECK_THROWS_WITH(ReadTraceText(R"({"schemaVersion":1,"traceEvents":[{"ph":"X","cat":"kernel","pid":0,"tid":7,"ts":1,"dur":"x"}]})", "k.json"),
                      Catch::Contains("k.json") && Catch::Contains("\"dur\""));
    CHECK_THROWS_WITH(ReadTraceText(R"({"schemaVersion":1,"traceEvents":[{"ph":"X","cat":"kernel","pid":0,"tid":7,"ts":1,"dur":1}],"baseTimeNanoseconds":"soon"})", "k.json"),
                      Catch::Contains("baseTimeNanoseconds"));
}

TEST_CASE("reference Kineto trace, one GPU: devices, kernels, flows, exact timestamps", "[io][kineto][reference]")
{
    std::string path = RefFile("kineto/alexnet_1gpu.json.gz");
    if (path.empty()) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    Trace t = ReadTraceFile(path);
    CHECK(t.Meta().source == TraceSource::Kineto);
    REQUIRE(t.Devices().size() == 3); // GPU 0, the Python process, the profiler's marks
    const Device* gpu = FindDevice(t, DeviceKind::Gpu);
    REQUIRE(gpu);
    CHECK(FindDevice(t, DeviceKind::Gpu, 1) == nullptr);
    CHECK(t.Str(gpu->name) == "rank 0 GPU 0 (NVIDIA A100-PG509-200)");
    CHECK(gpu->tracks.size() == 3); // streams 7 and 20, and "Device 0" (context syncs)
    GpuCounts c = CountGpu(t, *gpu);
    CHECK(c.spans == 139);
    CHECK(c.compute == 79);
    CHECK(c.collectives == 0);
    CHECK(c.memcpyBytes == 244403360);
    CHECK(t.SpanCount() == 870);
    CHECK(t.Flows().size() == 139); // ac2g launches whose two ends are in the file
    const Span* first = SpanStartingAt(t, 1695835572943613000);
    REQUIRE(first);
    CHECK(first->category == SpanCategory::Memcpy);
    CHECK(first->endNs == 1695835572943625000);
}

TEST_CASE("reference Kineto traces of two ranks: NCCL collectives, sizes, one timeline", "[io][kineto][reference]")
{
    std::string r0 = RefFile("kineto/sampled_rank-0.json.gz"), r1 = RefFile("kineto/sampled_rank-1.json.gz");
    if (r0.empty() || r1.empty()) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    Trace t0 = ReadTraceFile(r0);
    const Device* gpu = FindDevice(t0, DeviceKind::Gpu);
    REQUIRE(gpu);
    GpuCounts c = CountGpu(t0, *gpu);
    CHECK(c.spans == 1204);
    CHECK(c.compute + c.collectives == 1154);
    CHECK(c.collectives == 10);
    const Span* allreduce = SpanStartingAt(t0, 1682725898295662000);
    REQUIRE(allreduce);
    CHECK(allreduce->endNs == 1682725898307389000);
    CHECK(allreduce->bytes == 19618307u * 4);
    CHECK(ParseCollectiveTag(t0.Str(allreduce->detail))->collective == "allreduce");
    const Span* allgather = SpanStartingAt(t0, 1682725898585321000);
    REQUIRE(allgather);
    CHECK(allgather->bytes == 1073741824u);
    CHECK(ParseCollectiveTag(t0.Str(allgather->detail))->ranks == 64);

    Trace job = ReadTraceFiles({r0, r1});
    std::vector<const Device*> gpus;
    for (const Device& d : job.Devices())
        if (d.kind == DeviceKind::Gpu) gpus.push_back(&d);
    REQUIRE(gpus.size() == 2);
    CHECK(job.Str(gpus[0]->name) == "rank 0 GPU 0");
    CHECK(job.Str(gpus[1]->name) == "rank 1 GPU 1");
    CHECK(job.Devices()[0].kind == DeviceKind::Gpu); // GPUs first, then host threads
    CHECK(job.SpanCount() == 4811 + 4676);
    auto matched = MatchCollectives(job);
    REQUIRE(matched.size() == 5); // the collectives both sampled ranks hold, paired by their ends
    for (const CollectiveInstance& m : matched) {
        CHECK(m.participants.size() == 2);
        CHECK(m.lastEndNs - m.firstEndNs < 400'000);
    }
}

TEST_CASE("ranks of one job merge onto one timeline and align by matched collectives", "[io][kineto]")
{
    auto rank = [](int r, int64_t clockAheadNs) {
        std::string events;
        for (int i = 0; i < 6; ++i) {
            int64_t start = 1000 * (i + 1) + (r == 1 && i == 2 ? 300 : 0); // rank 1 is late once
            int64_t ts = start + clockAheadNs / 1000;
            events += std::string(i ? "," : "") + R"({"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL",)" +
                      R"("pid":)" + std::to_string(r) + R"(,"tid":7,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
                      std::to_string(1000 * (i + 1) + 500 - start) + R"(,"args":{"Collective name":"allreduce","In msg nelems":1024,)" +
                      R"("Out msg nelems":1024,"dtype":"Float","Group size":2,"Process Group Name":"0","Seq":)" + std::to_string(i) + "}}";
        }
        return R"({"distributedInfo":{"rank":)" + std::to_string(r) + R"(},"traceEvents":[)" + events + "]}";
    };
    std::vector<Trace> parts;
    parts.push_back(ReadTraceText(rank(1, 2'000'000), "b.json"));
    parts.push_back(ReadTraceText(rank(0, 0), "a.json"));
    Trace job = MergeTraces(std::move(parts), {"b.json", "a.json"});
    REQUIRE(job.Devices().size() == 2);
    CHECK(job.Devices()[0].rank == 0);
    auto matched = MatchCollectives(job);
    REQUIRE(matched.size() == 6);
    CHECK(matched[0].seq == 0);
    ClockAlignment a;
    Trace aligned = AlignRankClocks(job, &a);
    CHECK(a.referenceRank == 0);
    CHECK(a.offsetNs.at(1) == 2'000'000);
    CHECK(a.matches.at(1) == 6);
    auto again = MatchCollectives(aligned);
    REQUIRE(again.size() == 6);
    CHECK(again[2].SkewNs() == 300'000);
    CHECK(aligned.Devices()[again[2].slowestDevice].rank == 1);
    CHECK(aligned.Meta().extra.GetNumber("clockOffsetNs.rank1") == 2e6);
}

TEST_CASE("an imported Kineto trace converts to a paralens trace and back without loss", "[io][kineto]")
{
    const std::string text = R"J({"schemaVersion":1,"traceEvents":[
      {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather_RING_LL(x)","pid":0,"tid":7,"ts":100.001,"dur":5,
       "args":{"Collective name":"allgather","In msg nelems":16,"Out msg nelems":64,"dtype":"Half","Group size":4,
               "Process Group Name":"tp group"}},
      {"ph":"X","cat":"gpu_user_annotation","name":"## fwd ##","pid":0,"tid":7,"ts":99,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":5,"tid":5,"ts":98,"dur":1}]})J";
    Trace a = ReadTraceText(text, "k.json");
    Trace b = ReadChromeJson(TraceToJsonText(a), "round.json");
    CHECK(b.Meta().source == TraceSource::Kineto);
    REQUIRE(b.Devices().size() == a.Devices().size());
    CHECK(b.Devices()[1].kind == DeviceKind::Cpu);
    const Span* k = SpanStartingAt(b, 100001);
    REQUIRE(k);
    CHECK(k->category == SpanCategory::Collective);
    CHECK(k->bytes == 128);
    auto tag = ParseCollectiveTag(b.Str(k->detail));
    REQUIRE(tag);
    CHECK(tag->group == "tp group");
    CHECK(tag->ranks == 4);
    CHECK(SpanStartingAt(b, 99000)->category == SpanCategory::Annotation);
}
