#include "CuptiDecode.hpp"

#include "CudaCompat.hpp"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace paralens::prof {

std::string DemangleKernelName(const char* name)
{
    if (!name) return {};
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
    return status == 0 && out ? std::string(out.get()) : std::string(name);
}

CopyKind ToCopyKind(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return CopyKind::HostToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return CopyKind::DeviceToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return CopyKind::DeviceToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return CopyKind::PeerToPeer;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return CopyKind::HostToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN: return CopyKind::Unknown;
    default: return CopyKind::Other;
    }
}

SyncKind ToSyncKind(uint32_t t)
{
    switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return SyncKind::EventSynchronize;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return SyncKind::StreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return SyncKind::StreamSynchronize;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return SyncKind::ContextSynchronize;
    default: return SyncKind::Unknown;
    }
}

#if CUPTI_API_VERSION >= 130000
static ChannelType ToChannelType(CUpti_ChannelType t)
{
    switch (t) {
    case CUPTI_CHANNEL_TYPE_COMPUTE: return ChannelType::Compute;
    case CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY: return ChannelType::CopyEngine;
    default: return ChannelType::Unknown;
    }
}
#endif

CuptiDecoder::CuptiDecoder(ApiNamer namer) : m_namer(std::move(namer)) {}

namespace {

GpuActivity FromKernel(const compat::KernelRecord& k)
{
    GpuActivity a;
    a.kind = ActivityKind::Kernel;
    a.startNs = k.start;
    a.endNs = k.end;
    a.deviceId = k.deviceId;
    a.contextId = k.contextId;
    a.streamId = k.streamId;
    a.correlationId = k.correlationId;
    a.graphId = k.graphId;
    a.graphNodeId = k.graphNodeId;
    a.name = DemangleKernelName(k.name);
    a.gridX = static_cast<uint32_t>(k.gridX);
    a.gridY = static_cast<uint32_t>(k.gridY);
    a.gridZ = static_cast<uint32_t>(k.gridZ);
    a.blockX = static_cast<uint32_t>(k.blockX);
    a.blockY = static_cast<uint32_t>(k.blockY);
    a.blockZ = static_cast<uint32_t>(k.blockZ);
#if CUPTI_API_VERSION >= 130000
    a.channelId = k.channelID;
    a.channelType = ToChannelType(k.channelType);
#endif
    return a;
}

GpuActivity FromMemcpy(const compat::MemcpyRecord& m)
{
    GpuActivity a;
    a.kind = ActivityKind::Memcpy;
    a.startNs = m.start;
    a.endNs = m.end;
    a.deviceId = m.deviceId;
    a.contextId = m.contextId;
    a.streamId = m.streamId;
    a.correlationId = m.correlationId;
    a.graphId = m.graphId;
    a.graphNodeId = m.graphNodeId;
    a.bytes = m.bytes;
    a.copyKind = ToCopyKind(m.copyKind);
    if (a.copyKind == CopyKind::DeviceToDevice) a.srcDeviceId = a.dstDeviceId = m.deviceId;
#if CUPTI_API_VERSION >= 130000
    a.channelId = m.channelID;
    a.channelType = ToChannelType(m.channelType);
#endif
    return a;
}

GpuActivity FromPeerCopy(const compat::PeerCopyRecord& m)
{
    GpuActivity a;
    a.kind = ActivityKind::Memcpy;
    a.startNs = m.start;
    a.endNs = m.end;
    a.deviceId = m.deviceId;
    a.contextId = m.contextId;
    a.streamId = m.streamId;
    a.correlationId = m.correlationId;
    a.graphId = m.graphId;
    a.graphNodeId = m.graphNodeId;
    a.bytes = m.bytes;
    a.copyKind = ToCopyKind(m.copyKind);
    a.srcDeviceId = m.srcDeviceId;
    a.dstDeviceId = m.dstDeviceId;
    return a;
}

GpuActivity FromMemset(const compat::MemsetRecord& m)
{
    GpuActivity a;
    a.kind = ActivityKind::Memset;
    a.startNs = m.start;
    a.endNs = m.end;
    a.deviceId = m.deviceId;
    a.contextId = m.contextId;
    a.streamId = m.streamId;
    a.correlationId = m.correlationId;
    a.graphId = m.graphId;
    a.graphNodeId = m.graphNodeId;
    a.bytes = m.bytes;
    return a;
}

GpuActivity FromSync(const compat::SyncRecord& s)
{
    GpuActivity a;
    a.kind = ActivityKind::Sync;
    a.startNs = s.start;
    a.endNs = s.end;
    a.deviceId = kNoId; // synchronisation records name a context, not a device: the trace resolves it
    a.contextId = s.contextId;
    a.streamId = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? kNoId : s.streamId;
    a.correlationId = s.correlationId;
    a.syncKind = ToSyncKind(static_cast<uint32_t>(s.type));
    return a;
}

} // namespace

bool CuptiDecoder::Decode(const CUpti_Activity* record, ActivityBatch& out)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        out.activities.push_back(FromKernel(*reinterpret_cast<const compat::KernelRecord*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        out.activities.push_back(FromMemcpy(*reinterpret_cast<const compat::MemcpyRecord*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        out.activities.push_back(FromPeerCopy(*reinterpret_cast<const compat::PeerCopyRecord*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        out.activities.push_back(FromMemset(*reinterpret_cast<const compat::MemsetRecord*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        out.activities.push_back(FromSync(*reinterpret_cast<const compat::SyncRecord*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto& r = *reinterpret_cast<const compat::ApiRecord*>(record);
        ApiCall c;
        c.startNs = r.start;
        c.endNs = r.end;
        c.threadId = r.threadId;
        c.correlationId = r.correlationId;
        c.driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
        if (m_namer) c.name = m_namer(c.driver, static_cast<uint32_t>(r.cbid));
        out.apiCalls.push_back(std::move(c));
        return true;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
        const auto& m = *reinterpret_cast<const compat::MarkerRecord*>(record);
        const uint32_t thread = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
        if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
            m_markers.OnStart(m.id, m.timestamp, thread, m.name ? m.name : "", m.domain ? m.domain : "");
        } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
            NvtxRange range;
            if (m_markers.OnEnd(m.id, m.timestamp, range)) out.ranges.push_back(std::move(range));
        }
        return true; // instantaneous markers carry no duration: nothing to draw
    }
    default: ++m_skipped; return false;
    }
}

} // namespace paralens::prof
