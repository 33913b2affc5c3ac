// profiler/CuptiDecode: CUPTI activity records, built by hand as the plain C structs of
// cupti_activity.h, decoded without a GPU (built when CUPTI is found).
#include "profiler/CudaCompat.hpp"
#include "profiler/CuptiDecode.hpp"

#include <catch2/catch.hpp>
#include <cstring>

using namespace paralens::prof;

namespace {

template <class T>
T Zeroed()
{
    T t;
    std::memset(&t, 0, sizeof t);
    return t;
}

const CUpti_Activity* AsRecord(const void* p) { return static_cast<const CUpti_Activity*>(p); }

} // namespace

TEST_CASE("a concurrent-kernel record becomes a kernel activity with its demangled name", "[prof]")
{
    auto k = Zeroed<compat::KernelRecord>();
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1000;
    k.end = 5000;
    k.deviceId = 1;
    k.contextId = 3;
    k.streamId = 14;
    k.correlationId = 77;
    k.gridX = 132;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 256;
    k.graphId = 9;
    k.graphNodeId = 4;
    k.name = "_ZN8paralens3gpu6detail12_GLOBAL__N_111ReduceBytesEPhPKhm";
    CuptiDecoder decoder;
    ActivityBatch batch;
    REQUIRE(decoder.Decode(AsRecord(&k), batch));
    REQUIRE(batch.activities.size() == 1);
    const GpuActivity& a = batch.activities[0];
    CHECK(a.kind == ActivityKind::Kernel);
    CHECK(a.startNs == 1000);
    CHECK(a.endNs == 5000);
    CHECK(a.deviceId == 1);
    CHECK(a.contextId == 3);
    CHECK(a.streamId == 14);
    CHECK(a.correlationId == 77);
    CHECK(a.graphId == 9);
    CHECK(a.graphNodeId == 4);
    CHECK(a.gridX == 132);
    CHECK(a.blockX == 256);
    CHECK(a.name.find("ReduceBytes(unsigned char*, unsigned char const*, unsigned long)") != std::string::npos);
    CHECK(DemangleKernelName("ncclDevKernel_SendRecv") == "ncclDevKernel_SendRecv");
    CHECK(DemangleKernelName(nullptr).empty());
}

TEST_CASE("copies, peer copies, sets and synchronisations are decoded", "[prof]")
{
    CuptiDecoder decoder;
    ActivityBatch batch;
    auto m = Zeroed<compat::MemcpyRecord>();
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    m.bytes = 4096;
    m.start = 10;
    m.end = 20;
    m.deviceId = 0;
    m.streamId = 7;
    m.correlationId = 5;
#if CUPTI_API_VERSION >= 130000
    m.channelID = 3;
    m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE; // a copy within a GPU: a kernel on the SMs
#endif
    REQUIRE(decoder.Decode(AsRecord(&m), batch));
    auto p = Zeroed<compat::PeerCopyRecord>();
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.bytes = 1 << 20;
    p.start = 30;
    p.end = 90;
    p.deviceId = 0;
    p.srcDeviceId = 0;
    p.dstDeviceId = 1;
    REQUIRE(decoder.Decode(AsRecord(&p), batch));
    auto s = Zeroed<compat::MemsetRecord>();
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 16;
    s.start = 100;
    s.end = 110;
    REQUIRE(decoder.Decode(AsRecord(&s), batch));
    auto y = Zeroed<compat::SyncRecord>();
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    y.start = 200;
    y.end = 300;
    y.contextId = 3;
    y.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    REQUIRE(decoder.Decode(AsRecord(&y), batch));
    REQUIRE(batch.activities.size() == 4);
    CHECK(batch.activities[0].copyKind == CopyKind::DeviceToDevice);
    CHECK(batch.activities[0].bytes == 4096);
#if CUPTI_API_VERSION >= 130000
    CHECK(batch.activities[0].channelId == 3);
    CHECK(batch.activities[0].channelType == ChannelType::Compute);
    CHECK(batch.activities[1].channelType == ChannelType::Unknown); // peer copies: not decoded
#endif
    CHECK(batch.activities[1].copyKind == CopyKind::PeerToPeer);
    CHECK(batch.activities[1].srcDeviceId == 0);
    CHECK(batch.activities[1].dstDeviceId == 1);
    CHECK(batch.activities[2].kind == ActivityKind::Memset);
    CHECK(batch.activities[3].kind == ActivityKind::Sync);
    CHECK(batch.activities[3].syncKind == SyncKind::StreamWaitEvent);
    CHECK(batch.activities[3].deviceId == kNoId);
    CHECK(batch.activities[3].streamId == kNoId);
    CHECK(batch.activities[3].contextId == 3);
}

TEST_CASE("API records are named by callback id, and NVTX markers pair into ranges", "[prof]")
{
    CuptiDecoder decoder([](bool driver, uint32_t cbid) { return (driver ? "cu#" : "cuda#") + std::to_string(cbid); });
    ActivityBatch batch;
    auto api = Zeroed<compat::ApiRecord>();
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = 211;
    api.start = 5;
    api.end = 9;
    api.threadId = 1234;
    api.correlationId = 77;
    REQUIRE(decoder.Decode(AsRecord(&api), batch));
    api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    REQUIRE(decoder.Decode(AsRecord(&api), batch));
    REQUIRE(batch.apiCalls.size() == 2);
    CHECK(batch.apiCalls[0].name == "cuda#211");
    CHECK_FALSE(batch.apiCalls[0].driver);
    CHECK(batch.apiCalls[1].name == "cu#211");
    CHECK(batch.apiCalls[1].threadId == 1234);

    auto start = Zeroed<compat::MarkerRecord>();
    start.kind = CUPTI_ACTIVITY_KIND_MARKER;
    start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    start.timestamp = 100;
    start.id = 3;
    start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    start.objectId.pt.threadId = 1234;
    start.name = "F0 cat=forward mb=0";
    start.domain = "paralens";
    auto end = Zeroed<compat::MarkerRecord>();
    end.kind = CUPTI_ACTIVITY_KIND_MARKER;
    end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    end.timestamp = 900;
    end.id = 3;
    REQUIRE(decoder.Decode(AsRecord(&start), batch));
    CHECK(batch.ranges.empty());
    CHECK(decoder.OpenRanges() == 1);
    REQUIRE(decoder.Decode(AsRecord(&end), batch));
    REQUIRE(batch.ranges.size() == 1);
    CHECK(batch.ranges[0].name == "F0 cat=forward mb=0");
    CHECK(batch.ranges[0].domain == "paralens");
    CHECK(batch.ranges[0].threadId == 1234);
    CHECK(batch.ranges[0].startNs == 100);
    CHECK(batch.ranges[0].endNs == 900);

    auto other = Zeroed<CUpti_Activity>();
    other.kind = CUPTI_ACTIVITY_KIND_PCIE;
    CHECK_FALSE(decoder.Decode(&other, batch));
    CHECK(decoder.Skipped() == 1);
}
