// The NCCL profiler plugin (libnccl-profiler-paralens.so) driven through its exported v5, v4 and
// v3 tables with synthetic event descriptors, as NCCL would call it; its files read back and
// turned into Trace spans and flows.
#include "profiler/ActivityTrace.hpp"
#include "profiler/NcclProfileData.hpp"
#include "profiler/NcclProfileTrace.hpp"
#include "profiler/nccl_plugin/NcclProfilerApi.hpp"

#include "common/Error.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace paralens;
using namespace paralens::prof;
namespace api = paralens::prof::nccl_api;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir()
    {
        static int counter = 0;
        path = fs::temp_directory_path() / ("paralens-nccl-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::create_directories(path);
        setenv("PARALENS_NCCL_PROFILE_DIR", path.c_str(), 1);
    }
    ~TempDir()
    {
        unsetenv("PARALENS_NCCL_PROFILE_DIR");
        fs::remove_all(path);
    }
    std::vector<NcclProfile> Read() const
    {
        std::vector<NcclProfile> out;
        for (const auto& e : fs::directory_iterator(path)) {
            std::ifstream in(e.path());
            std::stringstream ss;
            ss << in.rdbuf();
            out.push_back(ParseNcclProfileJson(ss.str(), e.path().string()));
        }
        std::sort(out.begin(), out.end(), [](const NcclProfile& a, const NcclProfile& b) { return a.rank < b.rank; });
        return out;
    }
};

api::EventDescrV5 CollV5(int rank)
{
    api::EventDescrV5 d{};
    d.type = api::kColl;
    d.rank = rank;
    d.coll.seqNumber = 7;
    d.coll.func = "AllReduce";
    d.coll.count = 1024;
    d.coll.datatype = "ncclFloat32";
    d.coll.algo = "RING";
    d.coll.proto = "LL128";
    d.coll.nChannels = 2;
    d.coll.nWarps = 16;
    return d;
}

// One rank's events for one collective: the collective, a kernel channel, a proxy op with two steps.
void RecordRank(void* ctx, int rank, int peer, bool send, uint64_t gpuStart, uint64_t gpuStop)
{
    void* coll = nullptr;
    api::EventDescrV5 c = CollV5(rank);
    REQUIRE(ncclProfiler_v5.startEvent(ctx, &coll, &c) == api::kSuccess);
    REQUIRE(coll != nullptr);

    api::EventDescrV5 k{};
    k.type = api::kKernelCh;
    k.parentObj = coll;
    k.rank = rank;
    k.kernelCh.channelId = 1;
    k.kernelCh.pTimer = gpuStart;
    void* kernel = nullptr;
    ncclProfiler_v5.startEvent(ctx, &kernel, &k);
    api::StateArgsV5 stop{};
    stop.kernelCh.pTimer = gpuStop;
    ncclProfiler_v5.recordEventState(kernel, api::kKernelChStop, &stop);
    ncclProfiler_v5.stopEvent(kernel);

    api::EventDescrV5 op{};
    op.type = api::kProxyOp;
    op.parentObj = coll;
    op.rank = rank;
    op.proxyOp.pid = ::getpid();
    op.proxyOp.channelId = 1;
    op.proxyOp.peer = peer;
    op.proxyOp.nSteps = 2;
    op.proxyOp.chunkSize = 4096;
    op.proxyOp.isSend = send ? 1 : 0;
    void* proxy = nullptr;
    ncclProfiler_v5.startEvent(ctx, &proxy, &op);
    for (int step = 0; step < 2; ++step) {
        api::EventDescrV5 s{};
        s.type = api::kProxyStep;
        s.parentObj = proxy;
        s.rank = rank;
        s.proxyStep.step = step;
        void* h = nullptr;
        ncclProfiler_v5.startEvent(ctx, &h, &s);
        api::StateArgsV5 args{};
        args.proxyStep.transSize = 4096;
        ncclProfiler_v5.recordEventState(h, send ? api::kProxyStepSendWait : api::kProxyStepRecvWait, &args);
        if (!send) ncclProfiler_v5.recordEventState(h, api::kProxyStepRecvFlushWait, &args);
        ncclProfiler_v5.stopEvent(h);
    }
    ncclProfiler_v5.stopEvent(proxy);
    ncclProfiler_v5.stopEvent(coll);
}

} // namespace

TEST_CASE("the NCCL plugin records a collective's events per rank and writes them on finalize", "[prof]")
{
    TempDir dir;
    void* ctx0 = nullptr;
    void* ctx1 = nullptr;
    int mask0 = 0, mask1 = 0;
    REQUIRE(ncclProfiler_v5.init(&ctx0, 0xabcdefull, &mask0, "world", 2, 2, 0, nullptr) == api::kSuccess);
    REQUIRE(ncclProfiler_v5.init(&ctx1, 0xabcdefull, &mask1, "world", 2, 2, 1, nullptr) == api::kSuccess);
    CHECK((mask0 & api::kColl) != 0);
    CHECK((mask0 & api::kProxyStep) != 0);
    CHECK((mask0 & api::kKernelCh) != 0);
    CHECK(std::string(ncclProfiler_v5.name) == "paralens");
    RecordRank(ctx0, 0, 1, true, 5'000'000'000'000ull, 5'000'000'010'000ull);
    RecordRank(ctx1, 1, 0, false, 5'000'000'002'000ull, 5'000'000'012'000ull);
    REQUIRE(ncclProfiler_v5.finalize(ctx0) == api::kSuccess);
    REQUIRE(ncclProfiler_v5.finalize(ctx1) == api::kSuccess);

    const std::vector<NcclProfile> profiles = dir.Read();
    REQUIRE(profiles.size() == 2);
    const NcclProfile& p0 = profiles[0];
    CHECK(p0.apiVersion == 5);
    CHECK(p0.commHash == 0xabcdefull);
    CHECK(p0.commName == "world");
    CHECK(p0.nranks == 2);
    CHECK(p0.pid == ::getpid());
    REQUIRE(p0.events.size() == 5); // coll, kernel channel, proxy op, two steps
    const NcclEventRecord& coll = p0.events[0];
    CHECK(coll.type == NcclEventType::Coll);
    CHECK(coll.func == "AllReduce");
    CHECK(coll.algo == "RING");
    CHECK(coll.proto == "LL128");
    CHECK(coll.count == 1024);
    CHECK(coll.seqNumber == 7);
    CHECK(coll.stopNs >= coll.startNs);
    const NcclEventRecord& kernel = p0.events[1];
    CHECK(kernel.parentId == coll.id);
    CHECK(kernel.gpuStartNs == 5'000'000'000'000ull);
    CHECK(kernel.gpuStopNs == 5'000'000'010'000ull);
    const NcclEventRecord& step = p0.events[3];
    CHECK(step.type == NcclEventType::ProxyStep);
    CHECK(step.parentId == p0.events[2].id);
    CHECK(step.transSize == 4096);
    REQUIRE(step.states.size() == 1);
    CHECK(step.states[0].state == api::kProxyStepSendWait);

    const NcclTraceParts parts = ConvertNcclProfiles(profiles);
    CHECK(parts.unfinished == 0);
    // Per rank: the collective, one kernel channel, the proxy op and its two steps.
    CHECK(parts.spans.size() == 10);
    REQUIRE(parts.flows.size() == 2); // step 0 and step 1, rank 0 -> rank 1
    for (const NcclFlow& f : parts.flows) {
        CHECK(f.srcRank == 0);
        CHECK(f.dstRank == 1);
        CHECK(f.chunk == 1);
        CHECK(f.bytes == 4096);
        CHECK(f.dstNs >= f.srcNs);
        CHECK(f.srcTrack == "NCCL proxy ch 1");
    }
    const NcclSpan& collSpan = parts.spans[0];
    CHECK(collSpan.name == "allreduce");
    CHECK(collSpan.bytes == 4096); // 1024 floats
    CHECK(collSpan.detail.find("RING LL128 ncclFloat32") == 0);
    bool sawKernel = false;
    for (const NcclSpan& s : parts.spans)
        if (s.track == "NCCL ch 1" && s.rank == 0) {
            sawKernel = true;
            CHECK(s.endNs - s.startNs == 10'000); // from the GPU timer
            CHECK(s.name == "allreduce ch 1");
            CHECK(s.detail == "GPU globaltimer");
        }
    CHECK(sawKernel);

    // Into a Trace beside GPU activity: the ranks' devices get NCCL tracks and the step flows.
    TraceAssembler a{AssemblerOptions{}};
    a.AddRank({0, 0, false, ""});
    a.AddNccl(parts);
    const core::Trace t = a.Build();
    CHECK(t.Devices().size() == 2); // rank 0 declared, rank 1 made for NCCL
    CHECK(t.Str(t.Devices()[1].name) == "NCCL rank 1");
    CHECK(t.Flows().size() == 2);
}

TEST_CASE("the NCCL plugin is disabled without an output folder and survives null handles", "[prof]")
{
    unsetenv("PARALENS_NCCL_PROFILE_DIR");
    void* ctx = nullptr;
    int mask = 0;
    CHECK(ncclProfiler_v5.init(&ctx, 1, &mask, "c", 1, 1, 0, nullptr) != api::kSuccess);
    CHECK(ctx == nullptr);
    CHECK(ncclProfiler_v5.stopEvent(nullptr) == api::kSuccess);
    CHECK(ncclProfiler_v5.recordEventState(nullptr, api::kKernelChStop, nullptr) == api::kSuccess);
    void* h = reinterpret_cast<void*>(1);
    api::EventDescrV5 d = CollV5(0);
    CHECK(ncclProfiler_v5.startEvent(nullptr, &h, &d) == api::kSuccess);
    CHECK(h == nullptr);
}

TEST_CASE("the plugin's event limit drops events and counts them", "[prof]")
{
    TempDir dir;
    setenv("PARALENS_NCCL_PROFILE_MAX_EVENTS", "1", 1);
    void* ctx = nullptr;
    int mask = 0;
    REQUIRE(ncclProfiler_v5.init(&ctx, 2, &mask, "c", 1, 1, 0, nullptr) == api::kSuccess);
    unsetenv("PARALENS_NCCL_PROFILE_MAX_EVENTS");
    api::EventDescrV5 d = CollV5(0);
    void* a = nullptr;
    void* b = nullptr;
    ncclProfiler_v5.startEvent(ctx, &a, &d);
    ncclProfiler_v5.startEvent(ctx, &b, &d);
    CHECK(a != nullptr);
    CHECK(b == nullptr);
    ncclProfiler_v5.stopEvent(a);
    ncclProfiler_v5.stopEvent(b);
    ncclProfiler_v5.finalize(ctx);
    const auto profiles = dir.Read();
    REQUIRE(profiles.size() == 1);
    CHECK(profiles[0].events.size() == 1);
    CHECK(profiles[0].droppedEvents == 1);
}

TEST_CASE("the v4 and v3 tables record the same events from their own layouts", "[prof]")
{
    TempDir dir;
    void* ctx4 = nullptr;
    int mask = 0;
    REQUIRE(ncclProfiler_v4.init(&ctx4, &mask, "v4comm", 0x44, 1, 2, 1, nullptr) == api::kSuccess);
    api::EventDescrV4 d4{};
    d4.type = api::kP2p;
    d4.rank = 1;
    d4.p2p.func = "Send";
    d4.p2p.datatype = "ncclBfloat16";
    d4.p2p.count = 10;
    d4.p2p.peer = 0;
    void* h4 = nullptr;
    ncclProfiler_v4.startEvent(ctx4, &h4, &d4);
    ncclProfiler_v4.stopEvent(h4);
    ncclProfiler_v4.finalize(ctx4);

    void* ctx3 = nullptr;
    REQUIRE(ncclProfiler_v3.init(&ctx3, &mask) == api::kSuccess);
    api::EventDescrV3 d3{};
    d3.type = api::kColl;
    d3.rank = 0;
    d3.coll.func = "Broadcast";
    d3.coll.count = 8;
    d3.coll.datatype = "ncclInt8";
    d3.coll.root = 0;
    d3.coll.nMaxChannels = 4;
    void* h3 = nullptr;
    ncclProfiler_v3.startEvent(ctx3, &h3, &d3);
    api::StateArgsV3 args{};
    args.proxyOp.transSize = 99;
    ncclProfiler_v3.recordEventState(h3, api::kProxyOpSendPosted, &args);
    ncclProfiler_v3.stopEvent(h3);
    ncclProfiler_v3.finalize(ctx3);

    auto profiles = dir.Read(); // sorted by rank: v3 wrote rank -1 (v3 init has no rank)
    REQUIRE(profiles.size() == 2);
    const NcclProfile& v3 = profiles[0];
    const NcclProfile& v4 = profiles[1];
    CHECK(v3.apiVersion == 3);
    REQUIRE(v3.events.size() == 1);
    CHECK(v3.events[0].func == "Broadcast");
    CHECK(v3.events[0].nChannels == 4);
    CHECK(v3.events[0].transSize == 99);
    CHECK(v3.events[0].rank == 0);
    CHECK(v4.apiVersion == 4);
    CHECK(v4.commName == "v4comm");
    REQUIRE(v4.events.size() == 1);
    CHECK(v4.events[0].type == NcclEventType::P2p);
    CHECK(v4.events[0].peer == 0);
    const NcclTraceParts parts = ConvertNcclProfiles(profiles);
    REQUIRE(parts.spans.size() == 2);
    for (const NcclSpan& s : parts.spans) {
        if (s.name == "send") {
            CHECK(s.category == core::SpanCategory::Send);
            CHECK(s.bytes == 20);
            CHECK(s.rank == 1);
        } else {
            CHECK(s.name == "broadcast");
            CHECK(s.bytes == 8);
        }
    }
}

TEST_CASE("NCCL profile files are checked when read", "[prof]")
{
    CHECK_THROWS_WITH(ParseNcclProfileJson("{]", "x.json"), Catch::Contains("x.json: not JSON at byte"));
    CHECK_THROWS_WITH(ParseNcclProfileJson("{}", "x.json"), Catch::Contains("not a paralens NCCL profile"));
    NcclProfile p;
    p.rank = 3;
    NcclEventRecord e;
    e.type = NcclEventType::ProxyCtrl;
    e.id = 1;
    e.startNs = 5;
    e.stopNs = 0; // never stopped
    p.events.push_back(e);
    const NcclProfile back = ParseNcclProfileJson(NcclProfileToJson(p), "p.json");
    CHECK(back.rank == 3);
    REQUIRE(back.events.size() == 1);
    CHECK(back.events[0].type == NcclEventType::ProxyCtrl);
    CHECK(ConvertNcclProfiles({back}).unfinished == 1);
    std::string bad = NcclProfileToJson(p);
    bad.replace(bad.find("proxyCtrl"), 9, "proxyZzzz");
    CHECK_THROWS_WITH(ParseNcclProfileJson(bad, "q.json"), Catch::Contains("unknown NCCL event type 'proxyZzzz'"));
    CHECK(NcclDatatypeBytes("ncclBfloat16") == 2);
    CHECK(NcclDatatypeBytes("ncclFloat64") == 8);
    CHECK(NcclDatatypeBytes("mystery") == 0);
    CHECK(NcclFuncName("ReduceScatter") == "reduce-scatter");
}
