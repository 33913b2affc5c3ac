// profiler/ActivityTrace: synthetic GPU activity (as CUPTI or the CUDA-events fallback would
// deliver it) into a Trace, checked span by span.
#include "profiler/ActivityTrace.hpp"

#include "analysis/HardwareChannels.hpp"
#include "analysis/PipelineMetrics.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::prof;

namespace {

GpuActivity Kernel(uint32_t device, uint32_t stream, uint32_t corr, uint64_t start, uint64_t end, std::string name)
{
    GpuActivity a;
    a.kind = ActivityKind::Kernel;
    a.deviceId = device;
    a.contextId = 10 + device;
    a.streamId = stream;
    a.correlationId = corr;
    a.startNs = start;
    a.endNs = end;
    a.name = std::move(name);
    return a;
}

ApiCall Launch(uint32_t thread, uint32_t corr, uint64_t time)
{
    ApiCall c;
    c.threadId = thread;
    c.correlationId = corr;
    c.startNs = time;
    c.endNs = time + 5;
    c.name = "cudaLaunchKernel";
    return c;
}

NvtxRange Range(uint32_t thread, uint64_t start, uint64_t end, const OpLabel& label, uint64_t id)
{
    NvtxRange r;
    r.threadId = thread;
    r.startNs = start;
    r.endNs = end;
    r.name = FormatOpLabel(label);
    r.domain = kNvtxDomain;
    r.id = id;
    return r;
}

const core::Track* FindTrack(const core::Trace& t, int32_t rank, std::string_view name)
{
    for (const core::Track& tr : t.Tracks())
        if (t.Devices()[tr.device].rank == rank && t.Str(tr.name) == name) return &tr;
    return nullptr;
}

TraceAssembler TwoRanks(AssemblerOptions options = {})
{
    TraceAssembler a(std::move(options));
    a.AddRank({0, 0, false, "NVIDIA H100 80GB HBM3"});
    a.AddRank({1, 1, false, "NVIDIA H100 80GB HBM3"});
    a.PlaceStream({0, kAnyContext, 7}, 0, "compute");
    a.PlaceStream({1, kAnyContext, 7}, 1, "compute");
    return a;
}

} // namespace

TEST_CASE("kernels inherit their op from the NVTX range around their launch", "[prof]")
{
    TraceAssembler a = TwoRanks();
    OpLabel f;
    f.name = "F0";
    f.category = core::SpanCategory::Forward;
    f.microBatch = 0;
    f.flops = 2e12;
    ActivityBatch b;
    b.ranges.push_back(Range(100, 1000, 2000, f, 1));
    b.apiCalls.push_back(Launch(100, 55, 1100));
    b.apiCalls.push_back(Launch(100, 56, 1500));
    b.activities.push_back(Kernel(0, 7, 55, 3000, 5000, "sm90_xmma_gemm_bf16"));
    b.activities.push_back(Kernel(0, 7, 56, 5000, 6000, "sm90_xmma_gemm_bf16"));
    a.Add(std::move(b));
    const core::Trace t = a.Build();

    REQUIRE(t.Devices().size() == 2);
    CHECK(t.Devices()[0].kind == core::DeviceKind::Gpu);
    CHECK(t.Str(t.Devices()[0].name) == "rank 0 (GPU 0 NVIDIA H100 80GB HBM3)");
    const core::Track* tr = FindTrack(t, 0, "compute");
    REQUIRE(tr);
    REQUIRE(tr->DepthCount() == 2);
    auto ops = tr->Lane(0);
    REQUIRE(ops.size() == 1);
    CHECK(t.Str(ops[0].name) == "F0");
    CHECK(ops[0].category == core::SpanCategory::Forward);
    CHECK(ops[0].startNs == 3000); // the GPU's times, not the NVTX range's host times
    CHECK(ops[0].endNs == 6000);
    CHECK(ops[0].microBatch == 0);
    CHECK(ops[0].flops == 2e12);
    auto kernels = tr->Lane(1);
    REQUIRE(kernels.size() == 2);
    CHECK(kernels[0].category == core::SpanCategory::Compute);
    CHECK(kernels[0].flops == 0.0);
    CHECK(t.Str(kernels[1].name) == "sm90_xmma_gemm_bf16");
    CHECK(a.Stats().attributed == 2);
    CHECK(t.Meta().source == core::TraceSource::Cupti);
    // One op span per micro-batch, so the activation count is right despite two kernels.
    CHECK(core::PeakActivations(t) == std::vector<int>{1, 0});
}

TEST_CASE("the innermost range on the launching thread wins, and other threads' ranges do not", "[prof]")
{
    TraceAssembler a = TwoRanks();
    OpLabel outer, inner, other;
    outer.name = "step";
    outer.category = core::SpanCategory::Other;
    inner.name = "B2";
    inner.category = core::SpanCategory::Backward;
    inner.microBatch = 2;
    other.name = "X";
    other.category = core::SpanCategory::Compute;
    ActivityBatch b;
    b.ranges.push_back(Range(1, 0, 10000, outer, 1));
    b.ranges.push_back(Range(1, 100, 200, inner, 2));
    b.ranges.push_back(Range(2, 0, 10000, other, 3));
    b.apiCalls.push_back(Launch(1, 9, 150)); // inside B2
    b.apiCalls.push_back(Launch(1, 10, 300)); // after B2: only "step"
    b.activities.push_back(Kernel(0, 7, 9, 1000, 2000, "k1"));
    b.activities.push_back(Kernel(0, 7, 10, 2000, 3000, "k2"));
    a.Add(std::move(b));
    const core::Trace t = a.Build();
    const core::Track* tr = FindTrack(t, 0, "compute");
    REQUIRE(tr);
    std::vector<std::string> names;
    for (const core::Span& s : tr->Lane(0)) names.emplace_back(t.Str(s.name));
    CHECK(names == std::vector<std::string>{"B2", "step"});
    CHECK(InnermostRange({}, 5) == nullptr);
}

TEST_CASE("kernels of a CUDA graph share a correlation id and are all kept", "[prof]")
{
    TraceAssembler a = TwoRanks();
    OpLabel g;
    g.name = "graph-step";
    g.category = core::SpanCategory::Compute;
    ActivityBatch b;
    b.ranges.push_back(Range(5, 0, 100, g, 1));
    b.apiCalls.push_back(Launch(5, 77, 50));
    for (int i = 0; i < 3; ++i) {
        GpuActivity k = Kernel(1, 7, 77, 1000 + 100 * i, 1090 + 100 * i, "node" + std::to_string(i));
        k.graphId = 4;
        k.graphNodeId = static_cast<uint64_t>(i + 1);
        b.activities.push_back(k);
    }
    a.Add(std::move(b));
    const core::Trace t = a.Build();
    const core::Track* tr = FindTrack(t, 1, "compute");
    REQUIRE(tr);
    REQUIRE(tr->DepthCount() == 2);
    CHECK(tr->Lane(0).size() == 1);
    CHECK(tr->Lane(0)[0].startNs == 1000);
    CHECK(tr->Lane(0)[0].endNs == 1290);
    REQUIRE(tr->Lane(1).size() == 3);
    CHECK(t.Str(tr->Lane(1)[2].detail) == "graph 4");
}

TEST_CASE("NCCL kernels are collectives, and unplaced streams go under their GPU", "[prof]")
{
    TraceAssembler a = TwoRanks();
    ActivityBatch b;
    b.activities.push_back(Kernel(0, 7, 1, 100, 900, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL128(ncclDevKernelArgsStorage<4096ul>)"));
    b.activities.push_back(Kernel(3, 12, 2, 100, 200, "myKernel"));
    a.Add(std::move(b));
    const core::Trace t = a.Build();
    const core::Track* tr = FindTrack(t, 0, "compute");
    REQUIRE(tr);
    REQUIRE(tr->spans.size() == 1);
    CHECK(tr->spans[0].category == core::SpanCategory::Collective);
    CHECK(t.Str(tr->spans[0].detail) == "allreduce ring LL128 bfloat16");
    bool foundGpu3 = false;
    for (const core::Device& d : t.Devices())
        if (t.Str(d.name) == "GPU 3") {
            foundGpu3 = true;
            CHECK(d.gpuIndex == 3);
            REQUIRE(d.tracks.size() == 1);
            CHECK(t.Str(t.Tracks()[d.tracks[0]].name) == "stream 12");
        }
    CHECK(foundGpu3);
    CHECK(a.Stats().unplaced == 1);
}

TEST_CASE("a labelled transfer is a send span and a flow to the receiving rank", "[prof]")
{
    TraceAssembler a = TwoRanks();
    a.PlaceStream({0, kAnyContext, 8}, 0, "send");
    OpLabel x;
    x.name = "0>1";
    x.category = core::SpanCategory::Send;
    x.srcRank = 0;
    x.dstRank = 1;
    x.step = 3;
    x.chunk = 2;
    x.bytes = 4096;
    ActivityBatch b;
    b.ranges.push_back(Range(1, 0, 50, x, 1));
    b.apiCalls.push_back(Launch(1, 20, 10));
    GpuActivity copy;
    copy.kind = ActivityKind::Memcpy;
    copy.copyKind = CopyKind::PeerToPeer;
    copy.deviceId = 0;
    copy.streamId = 8;
    copy.correlationId = 20;
    copy.startNs = 1000;
    copy.endNs = 1400;
    copy.bytes = 4096;
    copy.srcDeviceId = 0;
    copy.dstDeviceId = 1;
    b.activities.push_back(copy);
    b.activities.push_back(Kernel(1, 7, 21, 2000, 2100, "reduce")); // gives rank 1 its track
    a.Add(std::move(b));
    const core::Trace t = a.Build();
    const core::Track* send = FindTrack(t, 0, "send");
    REQUIRE(send);
    CHECK(send->Lane(0)[0].category == core::SpanCategory::Send);
    CHECK(send->Lane(1)[0].category == core::SpanCategory::Memcpy);
    CHECK(t.Str(send->Lane(1)[0].name) == "memcpy PtoP 4 KiB");
    REQUIRE(t.Flows().size() == 1);
    const core::Flow& f = t.Flows()[0];
    CHECK(t.Devices()[f.srcDevice].rank == 0);
    CHECK(t.Devices()[f.dstDevice].rank == 1);
    CHECK(f.srcNs == 1000);
    CHECK(f.dstNs == 1400);
    CHECK(f.bytes == 4096);
    CHECK(f.step == 3);
    CHECK(f.chunk == 2);
    CHECK(t.Str(t.Tracks()[f.dstTrack].name) == "compute");
}

TEST_CASE("an unlabelled peer copy between GPUs is a flow, and the clock map moves everything", "[prof]")
{
    TraceAssembler a = TwoRanks();
    a.SetClock(ClockMap(ClockSample{0, 0, 0}, ClockSample{1'000'000, 1'000'000, 0})); // no drift
    ClockMap shifted(ClockSample{1000, 501000, 0});
    a.SetClock(shifted);
    ActivityBatch b;
    GpuActivity copy;
    copy.kind = ActivityKind::Memcpy;
    copy.copyKind = CopyKind::PeerToPeer;
    copy.deviceId = 1;
    copy.streamId = 7;
    copy.startNs = 2000;
    copy.endNs = 3000;
    copy.bytes = 100;
    copy.srcDeviceId = 1;
    copy.dstDeviceId = 0;
    b.activities.push_back(copy);
    a.Add(std::move(b));
    const core::Trace t = a.Build();
    REQUIRE(t.Flows().size() == 1);
    CHECK(t.Devices()[t.Flows()[0].srcDevice].rank == 1);
    CHECK(t.Devices()[t.Flows()[0].dstDevice].rank == 0);
    CHECK(t.Flows()[0].srcNs == 502000);
    CHECK(t.BeginNs() == 502000);
    CHECK(t.EndNs() == 503000);
}

TEST_CASE("synchronisation records find their device through their context", "[prof]")
{
    TraceAssembler a = TwoRanks();
    ActivityBatch b;
    b.activities.push_back(Kernel(1, 7, 1, 100, 200, "k"));
    GpuActivity sync;
    sync.kind = ActivityKind::Sync;
    sync.deviceId = kNoId;
    sync.contextId = 11; // the context of device 1 (Kernel() uses 10 + device)
    sync.streamId = 7;
    sync.startNs = 300;
    sync.endNs = 400;
    sync.syncKind = SyncKind::StreamSynchronize;
    b.activities.push_back(sync);
    GpuActivity orphan = sync;
    orphan.contextId = 99; // nothing ran there: dropped
    b.activities.push_back(orphan);
    GpuActivity incomplete = Kernel(0, 7, 2, 500, 0, "unfinished");
    b.activities.push_back(incomplete);
    a.Add(std::move(b));
    const core::Trace t = a.Build();
    const core::Track* tr = FindTrack(t, 1, "compute");
    REQUIRE(tr);
    REQUIRE(tr->spans.size() == 2);
    CHECK(tr->spans[1].category == core::SpanCategory::Sync);
    CHECK(t.SpanCount() == 2);
}

TEST_CASE("waits inside an op's range neither make nor widen op spans, and waits on unused streams are left out", "[prof]")
{
    // Seen on an H100 (virtual pipeline stages sharing the SMs): cudaStreamWaitEvent inside F0's
    // range stretched F0 to the wait's host time, and a wait on the runner's own stream made an
    // F0 op, with an MFU counter, on a device "GPU 0".
    TraceAssembler a = TwoRanks();
    OpLabel f;
    f.name = "F0";
    f.category = core::SpanCategory::Forward;
    f.microBatch = 0;
    f.flops = 1e12;
    ActivityBatch b;
    b.ranges.push_back(Range(100, 1000, 2000, f, 1));
    b.apiCalls.push_back(Launch(100, 55, 1100));
    b.apiCalls.push_back(Launch(100, 56, 1200)); // the cudaStreamWaitEvent
    b.apiCalls.push_back(Launch(100, 57, 1300)); // a wait on a stream no rank uses
    b.activities.push_back(Kernel(0, 7, 55, 3000, 5000, "gemm"));
    GpuActivity wait;
    wait.kind = ActivityKind::Sync;
    wait.deviceId = kNoId;
    wait.contextId = 10;
    wait.streamId = 7;
    wait.correlationId = 56;
    wait.startNs = 1200;
    wait.endNs = 1210;
    wait.syncKind = SyncKind::StreamWaitEvent;
    b.activities.push_back(wait);
    GpuActivity elsewhere = wait;
    elsewhere.streamId = 21;
    elsewhere.correlationId = 57;
    b.activities.push_back(elsewhere);
    a.Add(std::move(b));
    const core::Trace t = a.Build();

    CHECK(t.Devices().size() == 2); // no device for the unused stream
    const core::Track* tr = FindTrack(t, 0, "compute");
    REQUIRE(tr);
    auto ops = tr->Lane(0);
    REQUIRE(ops.size() == 2); // the wait, beside F0
    CHECK(ops[0].category == core::SpanCategory::Sync);
    CHECK(ops[0].startNs == 1200);
    CHECK(t.Str(ops[1].name) == "F0");
    CHECK(ops[1].startNs == 3000); // the kernel's start, not the wait's
    CHECK(ops[1].endNs == 5000);
    CHECK(a.Stats().attributed == 1);
    CHECK(a.Stats().unplaced == 0);
    CHECK(t.SpanCount() == 3);
}

TEST_CASE("op spans timed by CUDA events need no CUPTI record and feed the MFU counter", "[prof]")
{
    AssemblerOptions o; // source: CUPTI, until the Timeline finds that no capture started
    o.peakFlopsPerDevice = 1e15;
    o.mfuBins = 4;
    TraceAssembler a(o);
    a.SetSource(core::TraceSource::CudaEvents);
    a.AddRank({0, 0, true, "GPU"});
    a.AddRank({1, 0, true, "GPU"});
    OpSpan f;
    f.rank = 0;
    f.trackName = "stage";
    f.startNs = 0;
    f.endNs = 1'000'000; // 1 ms
    f.label.name = "F0";
    f.label.category = core::SpanCategory::Forward;
    f.label.microBatch = 0;
    f.label.flops = 5e11; // 0.5 PFLOP/s over the ms: MFU 0.5
    a.AddOpSpan(f);
    OpSpan g = f;
    g.rank = 1;
    g.startNs = 1'000'000;
    g.endNs = 2'000'000;
    a.AddOpSpan(g);
    const core::Trace t = a.Build();
    CHECK(t.Meta().source == core::TraceSource::CudaEvents);
    CHECK(t.Meta().results.Find("cuptiDroppedRecords") == nullptr);
    CHECK(t.Devices()[0].kind == core::DeviceKind::VirtualGpu);
    CHECK(t.Str(t.Devices()[1].name) == "virtual rank 1 (GPU 0 GPU)");
    REQUIRE(t.Counters().size() == 2);
    const core::Counter& c0 = t.Counters()[0];
    CHECK(t.Str(c0.name) == "MFU");
    REQUIRE(c0.samples.size() == 4);
    CHECK(c0.samples[0].value == Approx(0.5));
    CHECK(c0.samples[1].value == Approx(0.5));
    CHECK(c0.samples[2].value == Approx(0.0));
    CHECK(t.Counters()[1].samples[3].value == Approx(0.5));
}

TEST_CASE("API calls become host spans only when asked", "[prof]")
{
    AssemblerOptions o;
    o.apiSpans = true;
    TraceAssembler a = TwoRanks(o);
    ActivityBatch b;
    b.apiCalls.push_back(Launch(42, 1, 100));
    a.Add(std::move(b));
    const core::Trace t = a.Build();
    bool found = false;
    for (const core::Device& d : t.Devices())
        if (d.kind == core::DeviceKind::Cpu) {
            found = true;
            CHECK(t.Str(d.name) == "host thread 42");
        }
    CHECK(found);
    CHECK(TwoRanks().Build().Devices().size() == 2);
}

TEST_CASE("NVTX start and end markers pair by id", "[prof]")
{
    MarkerPairer p;
    p.OnStart(1, 100, 7, "a", "paralens");
    p.OnStart(2, 150, 7, "b", "");
    NvtxRange r;
    CHECK_FALSE(p.OnEnd(3, 200, r));
    REQUIRE(p.OnEnd(2, 300, r));
    CHECK(r.name == "b");
    CHECK(r.startNs == 150);
    CHECK(r.endNs == 300);
    REQUIRE(p.OnEnd(1, 400, r));
    CHECK(r.domain == "paralens");
    CHECK(p.Open() == 0);
}

TEST_CASE("streams placed with a context are also found without one, unless that is ambiguous", "[prof]")
{
    TraceAssembler a{AssemblerOptions{}};
    a.AddRank({0, 0, true, ""});
    a.AddRank({1, 0, true, ""});
    a.PlaceStream({0, 5, 13}, 0, "compute"); // green context 5, stream 13
    a.PlaceStream({0, 6, 13}, 1, "compute"); // green context 6 reuses stream id 13
    a.PlaceStream({0, 5, 14}, 0, "send");
    ActivityBatch b;
    GpuActivity k = Kernel(0, 13, 1, 100, 200, "k");
    k.contextId = 6;
    b.activities.push_back(k); // exact: rank 1
    k.contextId = 99;
    b.activities.push_back(k); // stream 13 of an unknown context: ambiguous, so unplaced
    GpuActivity s = Kernel(0, 14, 2, 300, 400, "s");
    s.contextId = 77;
    b.activities.push_back(s); // stream 14 is unique: found through the loose key
    a.Add(std::move(b));
    const core::Trace t = a.Build();
    CHECK(FindTrack(t, 1, "compute") != nullptr);
    CHECK(FindTrack(t, 0, "send") != nullptr);
    CHECK(a.Stats().unplaced == 1);
}

TEST_CASE("kernels and copies keep the hardware channel CUPTI gave them, and shared channels are found", "[prof]")
{
    TraceAssembler a = TwoRanks();
    a.PlaceStream({0, kAnyContext, 8}, 0, "send");
    ActivityBatch b;
    GpuActivity gemm = Kernel(0, 7, 1, 1000, 2000, "gemm");
    gemm.channelId = 12;
    gemm.channelType = ChannelType::Compute;
    GpuActivity onSms = gemm;
    onSms.kind = ActivityKind::Memcpy;
    onSms.name.clear();
    onSms.copyKind = CopyKind::DeviceToDevice;
    onSms.bytes = 1 << 20;
    onSms.streamId = 8;
    onSms.startNs = 2000, onSms.endNs = 2100; // the send stream's copy, in the compute stream's queue
    GpuActivity onEngine = onSms;
    onEngine.channelId = 40;
    onEngine.channelType = ChannelType::CopyEngine;
    onEngine.startNs = 2100, onEngine.endNs = 2200;
    GpuActivity unknown = Kernel(1, 7, 2, 1000, 2000, "other"); // no channel: nothing written
    for (const GpuActivity& x : {gemm, onSms, onEngine, unknown}) b.activities.push_back(x);
    a.Add(std::move(b));
    const core::Trace t = a.Build();

    std::vector<std::string> details;
    for (const core::Track& tr : t.Tracks())
        for (const core::Span& s : tr.spans) details.emplace_back(s.detail ? t.Str(s.detail) : "");
    std::sort(details.begin(), details.end());
    CHECK(details == std::vector<std::string>{"", "copy engine, hw channel 40", "hw channel 12", "hw channel 12"});
    const core::ChannelReport r = core::ComputeChannelReport(t);
    CHECK(r.spansWithChannel == 3);
    CHECK(r.copiesOnSms == 1);
    CHECK(r.copiesOnCopyEngine == 1);
    REQUIRE(r.shared.size() == 1);
    CHECK(r.shared[0].channel == 12);
    CHECK(r.shared[0].tracks.size() == 2);
}
