#include "ActivityTrace.hpp"

#include "analysis/HardwareChannels.hpp"
#include "common/Units.hpp"
#include "trace/NcclKernelName.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <deque>
#include <utility>

namespace paralens::prof {

void ActivityBatch::Append(ActivityBatch&& other)
{
    auto move = [](auto& to, auto& from) {
        if (to.empty()) to = std::move(from);
        else to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
        from.clear();
    };
    move(activities, other.activities);
    move(apiCalls, other.apiCalls);
    move(ranges, other.ranges);
    droppedRecords += other.droppedRecords;
    other.droppedRecords = 0;
}

void MarkerPairer::OnStart(uint64_t id, uint64_t timeNs, uint32_t threadId, std::string name, std::string domain)
{
    NvtxRange r;
    r.id = id;
    r.startNs = timeNs;
    r.threadId = threadId;
    r.name = std::move(name);
    r.domain = std::move(domain);
    m_open.push_back(std::move(r));
}

bool MarkerPairer::OnEnd(uint64_t id, uint64_t timeNs, NvtxRange& out)
{
    for (size_t i = m_open.size(); i-- > 0;) {
        if (m_open[i].id != id) continue;
        out = std::move(m_open[i]);
        out.endNs = std::max(timeNs, out.startNs);
        m_open.erase(m_open.begin() + static_cast<ptrdiff_t>(i));
        return true;
    }
    return false;
}

const NvtxRange* InnermostRange(const std::vector<NvtxRange>& ranges, uint64_t timeNs)
{
    // Ranges on one thread nest (push/pop), so the innermost container is the one that starts
    // last among those containing the time: walk back from the last range starting at or before it.
    auto it = std::upper_bound(ranges.begin(), ranges.end(), timeNs,
                               [](uint64_t t, const NvtxRange& r) { return t < r.startNs; });
    while (it != ranges.begin()) {
        --it;
        if (it->endNs >= timeNs) return &*it;
    }
    return nullptr;
}

core::SpanCategory KernelCategory(const std::string& kernelName, std::string* detail)
{
    if (auto info = core::ParseNcclKernelName(kernelName)) { // core/trace's reader of NCCL's kernel names
        if (detail) {
            *detail = info->collective.empty() ? "nccl" : info->collective;
            for (const std::string* part : {&info->algorithm, &info->protocol, &info->dtype})
                if (!part->empty()) *detail += " " + *part;
        }
        return core::SpanCategory::Collective;
    }
    if (detail) detail->clear();
    return core::SpanCategory::Compute;
}

std::string ActivityName(const GpuActivity& a)
{
    switch (a.kind) {
    case ActivityKind::Kernel: return a.name.empty() ? std::string("kernel") : a.name;
    case ActivityKind::Memset: return "memset " + core::FormatBytes(a.bytes);
    case ActivityKind::Sync: return "sync";
    case ActivityKind::Memcpy: break;
    }
    static constexpr const char* kCopy[] = {"memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy DtoD",
                                            "memcpy PtoP", "memcpy HtoH", "memcpy"};
    return std::string(kCopy[static_cast<size_t>(a.copyKind)]) + " " + core::FormatBytes(a.bytes);
}

TraceAssembler::TraceAssembler(AssemblerOptions options) : m_options(std::move(options)) {}

void TraceAssembler::AddRank(const RankInfo& rank) { m_ranks.push_back(rank); }

void TraceAssembler::PlaceStream(const StreamKey& key, int32_t rank, const std::string& trackName)
{
    m_placements[key] = Placement{rank, trackName};
    if (key.contextId == kAnyContext) return;
    // Also by (device, stream) alone, for records whose context id differs from the one asked for
    // (green contexts): unless two streams of different contexts share that id, then neither.
    const StreamKey loose{key.deviceId, kAnyContext, key.streamId};
    if (m_ambiguous.count(loose)) return;
    auto it = m_placements.find(loose);
    if (it == m_placements.end()) m_placements[loose] = Placement{rank, trackName};
    else if (it->second.rank != rank || it->second.track != trackName) {
        m_placements.erase(it);
        m_ambiguous.insert(loose);
    }
}

void TraceAssembler::Add(ActivityBatch&& batch)
{
    m_stats.activities += batch.activities.size();
    m_all.Append(std::move(batch));
    m_stats.droppedRecords = m_all.droppedRecords;
}

void TraceAssembler::AddOpSpan(OpSpan span) { m_opSpans.push_back(std::move(span)); }

void TraceAssembler::AddNccl(NcclTraceParts parts)
{
    auto append = [](auto& to, auto& from) { to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end())); };
    append(m_nccl.spans, parts.spans);
    append(m_nccl.flows, parts.flows);
    m_nccl.unfinished += parts.unfinished;
    m_nccl.droppedEvents += parts.droppedEvents;
}

const TraceAssembler::Placement* TraceAssembler::FindPlacement(const GpuActivity& a) const
{
    auto it = m_placements.find(StreamKey{a.deviceId, a.contextId, a.streamId});
    if (it != m_placements.end()) return &it->second;
    it = m_placements.find(StreamKey{a.deviceId, kAnyContext, a.streamId});
    return it != m_placements.end() ? &it->second : nullptr;
}

namespace {

// Builder-side bookkeeping shared by the passes of Build().
class Layout {
public:
    Layout(core::TraceBuilder& b, const std::vector<RankInfo>& ranks, const std::string& host) : m_b(b), m_host(host)
    {
        for (const RankInfo& r : ranks) {
            const std::string gpu = r.gpuName.empty() ? "GPU " + std::to_string(r.gpuIndex)
                                                      : "GPU " + std::to_string(r.gpuIndex) + " " + r.gpuName;
            const std::string name = (r.virtualRank ? "virtual rank " : "rank ") + std::to_string(r.rank) + " (" + gpu + ")";
            m_rankDevice[r.rank] = b.AddDevice(name, r.virtualRank ? core::DeviceKind::VirtualGpu : core::DeviceKind::Gpu,
                                               r.rank, host, r.gpuIndex);
            if (!r.virtualRank && !m_gpuRank.count(r.gpuIndex)) m_gpuRank[r.gpuIndex] = r.rank;
        }
    }

    uint32_t RankDevice(int32_t rank) const
    {
        auto it = m_rankDevice.find(rank);
        return it == m_rankDevice.end() ? core::kNoTrack : it->second;
    }

    // The rank's device, made as "NCCL rank r" when the rank was not declared.
    uint32_t EnsureRankDevice(int32_t rank)
    {
        auto [it, fresh] = m_rankDevice.try_emplace(rank, 0u);
        if (fresh) it->second = m_b.AddDevice("NCCL rank " + std::to_string(rank), core::DeviceKind::Gpu, rank, m_host);
        return it->second;
    }

    // The device that stands for a GPU ordinal: its (first non-virtual) rank, else "GPU n".
    uint32_t GpuDevice(uint32_t gpu)
    {
        if (auto it = m_gpuRank.find(static_cast<int32_t>(gpu)); it != m_gpuRank.end()) return RankDevice(it->second);
        auto [it, fresh] = m_gpuDevice.try_emplace(gpu, 0u);
        if (fresh) it->second = m_b.AddDevice("GPU " + std::to_string(gpu), core::DeviceKind::Gpu,
                                              -1 - static_cast<int32_t>(gpu), m_host, static_cast<int32_t>(gpu));
        return it->second;
    }

    uint32_t Track(uint32_t device, const std::string& name)
    {
        auto [it, fresh] = m_tracks.try_emplace({device, name}, 0u);
        if (fresh) it->second = m_b.AddTrack(device, name);
        return it->second;
    }

    // The first track of a device (created as "stream" when it has none yet).
    uint32_t MainTrack(uint32_t device)
    {
        const auto& tracks = m_b.DeviceAt(device).tracks;
        return tracks.empty() ? Track(device, "stream") : tracks.front();
    }

private:
    core::TraceBuilder& m_b;
    std::string m_host;
    std::unordered_map<int32_t, uint32_t> m_rankDevice;
    std::unordered_map<int32_t, int32_t> m_gpuRank;
    std::unordered_map<uint32_t, uint32_t> m_gpuDevice;
    std::map<std::pair<uint32_t, std::string>, uint32_t> m_tracks;
};

struct Placed {
    uint32_t track = 0;
    int64_t startNs = 0;
    int64_t endNs = 0;
    const GpuActivity* activity = nullptr;
};

// One op of paralens: the label and the activities attributed to it on one track.
struct OpGroup {
    const NvtxRange* range = nullptr;
    uint32_t track = 0;
    int64_t startNs = 0;
    int64_t endNs = 0;
};

core::Span SpanFromLabel(core::TraceBuilder& b, const OpLabel& label, int64_t startNs, int64_t endNs)
{
    core::Span s;
    s.startNs = startNs;
    s.endNs = endNs;
    s.name = b.Intern(label.name);
    s.category = label.category;
    s.microBatch = label.microBatch;
    s.chunk = label.chunk;
    s.step = label.step;
    s.bytes = label.bytes;
    s.flops = label.flops;
    s.predictedNs = label.predictedNs;
    if (!label.detail.empty()) s.detail = b.Intern(label.detail);
    return s;
}

core::Span ChildSpan(core::TraceBuilder& b, const Placed& p)
{
    const GpuActivity& a = *p.activity;
    core::Span s;
    s.startNs = p.startNs;
    s.endNs = p.endNs;
    s.bytes = a.bytes;
    std::string detail;
    switch (a.kind) {
    case ActivityKind::Kernel:
        s.category = KernelCategory(a.name, &detail);
        if (a.graphId != 0) detail += (detail.empty() ? "" : "; ") + std::string("graph ") + std::to_string(a.graphId);
        break;
    case ActivityKind::Memcpy: s.category = core::SpanCategory::Memcpy; break;
    case ActivityKind::Memset: s.category = core::SpanCategory::Memset; break;
    case ActivityKind::Sync: s.category = core::SpanCategory::Sync; break;
    }
    if (a.channelType != ChannelType::Unknown && (a.kind == ActivityKind::Kernel || a.kind == ActivityKind::Memcpy))
        detail += (detail.empty() ? "" : "; ") +
                  core::DescribeHardwareChannel({a.channelId, a.channelType == ChannelType::CopyEngine});
    s.name = b.Intern(ActivityName(a));
    if (!detail.empty()) s.detail = b.Intern(detail);
    return s;
}

void AddNcclParts(core::TraceBuilder& b, Layout& layout, const NcclTraceParts& parts)
{
    for (const NcclSpan& n : parts.spans) {
        core::Span s;
        s.startNs = n.startNs;
        s.endNs = n.endNs;
        s.name = b.Intern(n.name);
        if (!n.detail.empty()) s.detail = b.Intern(n.detail);
        s.category = n.category;
        s.bytes = n.bytes;
        s.step = n.step;
        s.chunk = n.chunk;
        b.AddSpan(layout.Track(layout.EnsureRankDevice(n.rank), n.track), s);
    }
    for (const NcclFlow& n : parts.flows) {
        core::Flow f;
        f.srcDevice = layout.EnsureRankDevice(n.srcRank);
        f.dstDevice = layout.EnsureRankDevice(n.dstRank);
        f.srcTrack = layout.Track(f.srcDevice, n.srcTrack);
        f.dstTrack = layout.Track(f.dstDevice, n.dstTrack);
        f.srcNs = n.srcNs;
        f.dstNs = n.dstNs;
        f.bytes = n.bytes;
        f.step = n.step;
        f.chunk = n.chunk;
        f.name = b.Intern("NCCL step");
        b.AddFlow(f);
    }
    if (!parts.spans.empty()) {
        b.Meta().extra.Set("ncclPluginUnfinishedEvents", static_cast<int64_t>(parts.unfinished));
        b.Meta().extra.Set("ncclPluginDroppedEvents", static_cast<int64_t>(parts.droppedEvents));
    }
}

struct FlopSpan {
    uint32_t device;
    int64_t startNs, endNs;
    double flops;
};

// MFU per device over equal bins of [begin, end): a span's FLOPs spread evenly over its duration.
void AddMfuCounters(core::TraceBuilder& b, const std::vector<FlopSpan>& spans, double peak, int bins)
{
    if (spans.empty() || peak <= 0 || bins < 1) return;
    int64_t begin = spans.front().startNs, end = spans.front().endNs;
    for (const FlopSpan& f : spans) {
        begin = std::min(begin, f.startNs);
        end = std::max(end, f.endNs);
    }
    if (end <= begin) return;
    const double binNs = static_cast<double>(end - begin) / bins;
    std::map<uint32_t, std::vector<double>> perDevice;
    for (const FlopSpan& f : spans) {
        auto& acc = perDevice.try_emplace(f.device, std::vector<double>(static_cast<size_t>(bins), 0.0)).first->second;
        const double dur = static_cast<double>(std::max<int64_t>(f.endNs - f.startNs, 1));
        const int first = std::clamp(static_cast<int>((f.startNs - begin) / binNs), 0, bins - 1);
        const int last = std::clamp(static_cast<int>((f.endNs - begin) / binNs), 0, bins - 1);
        for (int i = first; i <= last; ++i) {
            const double lo = std::max(static_cast<double>(f.startNs), begin + i * binNs);
            const double hi = std::min(static_cast<double>(f.endNs), begin + (i + 1) * binNs);
            if (hi > lo) acc[static_cast<size_t>(i)] += f.flops * (hi - lo) / dur;
            else if (f.endNs == f.startNs) acc[static_cast<size_t>(i)] += f.flops;
        }
    }
    for (const auto& [device, acc] : perDevice) {
        const uint32_t c = b.AddCounter(device, "MFU", "fraction");
        for (int i = 0; i < bins; ++i)
            b.AddSample(c, begin + static_cast<int64_t>(i * binNs), acc[static_cast<size_t>(i)] / (binNs * 1e-9) / peak);
    }
}

} // namespace

core::Trace TraceAssembler::Build() const
{
    core::TraceBuilder b;
    b.Meta() = m_meta;
    b.Meta().source = m_options.source;
    if (!m_options.title.empty()) b.Meta().title = m_options.title;
    Layout layout(b, m_ranks, m_options.host);

    // Indexes: launching API call by correlation id, paralens NVTX ranges per thread.
    std::unordered_map<uint32_t, const ApiCall*> apiByCorrelation;
    for (const ApiCall& c : m_all.apiCalls) {
        auto [it, fresh] = apiByCorrelation.try_emplace(c.correlationId, &c);
        if (!fresh && c.startNs < it->second->startNs) it->second = &c; // the outer call (runtime around driver)
    }
    std::unordered_map<uint32_t, std::vector<NvtxRange>> rangesByThread;
    for (const NvtxRange& r : m_all.ranges)
        if (r.domain == kNvtxDomain) rangesByThread[r.threadId].push_back(r);
    for (auto& [thread, v] : rangesByThread)
        std::sort(v.begin(), v.end(), [](const NvtxRange& x, const NvtxRange& y) { return x.startNs < y.startNs; });

    std::vector<FlopSpan> flopSpans;
    std::vector<std::pair<OpGroup, std::vector<Placed>>> groups;
    std::map<std::pair<const NvtxRange*, uint32_t>, size_t> groupIndex;
    AssemblyStats stats;
    stats.activities = m_all.activities.size();
    stats.droppedRecords = m_all.droppedRecords;
    // Synchronisation records name a context, not a device: learn the contexts' devices.
    std::unordered_map<uint32_t, uint32_t> contextDevice;
    for (const GpuActivity& a : m_all.activities)
        if (a.deviceId != kNoId) contextDevice.try_emplace(a.contextId, a.deviceId);
    std::deque<GpuActivity> resolvedStore; // copies whose device had to be looked up (stable addresses)
    std::vector<Placed> loose;
    for (const GpuActivity& original : m_all.activities) {
        if (original.endNs < original.startNs || original.startNs == 0) continue; // incomplete record
        const GpuActivity* ap = &original;
        if (original.deviceId == kNoId) {
            auto it = contextDevice.find(original.contextId);
            if (it == contextDevice.end()) continue; // a context that ran nothing we saw
            resolvedStore.push_back(original);
            resolvedStore.back().deviceId = it->second;
            ap = &resolvedStore.back();
        }
        const GpuActivity& a = *ap;
        Placed p;
        p.activity = &a;
        p.startNs = m_clock.ToHost(a.startNs);
        p.endNs = m_clock.ToHost(a.endNs);
        // A synchronisation record is a wait (the host's, or a stream's on an event), not work of
        // the GPU: it stays on its rank's track beside the ops and never makes or widens one (its
        // times are the host's), and one on a stream no rank uses is left out.
        const bool sync = a.kind == ActivityKind::Sync;
        if (const Placement* pl = FindPlacement(a)) {
            p.track = layout.Track(layout.RankDevice(pl->rank), pl->track);
        } else if (sync) {
            continue;
        } else {
            ++stats.unplaced;
            const std::string name = a.streamId == kNoId ? "context" : "stream " + std::to_string(a.streamId);
            p.track = layout.Track(layout.GpuDevice(a.deviceId), name);
        }
        const NvtxRange* range = nullptr;
        if (auto api = sync ? apiByCorrelation.end() : apiByCorrelation.find(a.correlationId); api != apiByCorrelation.end()) {
            if (auto th = rangesByThread.find(api->second->threadId); th != rangesByThread.end())
                range = InnermostRange(th->second, api->second->startNs);
        }
        if (!range) {
            loose.push_back(p);
            continue;
        }
        ++stats.attributed;
        auto [it, fresh] = groupIndex.try_emplace({range, p.track}, groups.size());
        if (fresh) groups.push_back({OpGroup{range, p.track, p.startNs, p.endNs}, {}});
        auto& g = groups[it->second];
        g.first.startNs = std::min(g.first.startNs, p.startNs);
        g.first.endNs = std::max(g.first.endNs, p.endNs);
        g.second.push_back(p);
    }

    for (const Placed& p : loose) b.AddSpan(p.track, ChildSpan(b, p));
    struct PendingFlow {
        OpLabel label;
        uint32_t srcTrack;
        int64_t startNs, endNs;
    };
    std::vector<PendingFlow> flows;
    for (const auto& [g, items] : groups) {
        OpLabel label;
        if (auto parsed = ParseOpLabel(g.range->name)) label = std::move(*parsed);
        else {
            label.name = g.range->name;
            label.category = core::SpanCategory::Other;
        }
        b.AddSpan(g.track, SpanFromLabel(b, label, g.startNs, g.endNs));
        if (label.flops > 0) flopSpans.push_back({b.TrackAt(g.track).device, g.startNs, g.endNs, label.flops});
        for (const Placed& p : items) b.AddSpan(p.track, ChildSpan(b, p));
        if (label.IsTransfer()) flows.push_back({label, g.track, g.startNs, g.endNs});
    }
    for (const OpSpan& o : m_opSpans) {
        const uint32_t device = layout.RankDevice(o.rank);
        if (device == core::kNoTrack) continue;
        const uint32_t track = layout.Track(device, o.trackName);
        b.AddSpan(track, SpanFromLabel(b, o.label, o.startNs, o.endNs));
        if (o.label.flops > 0) flopSpans.push_back({device, o.startNs, o.endNs, o.label.flops});
        if (o.label.IsTransfer()) flows.push_back({o.label, track, o.startNs, o.endNs});
    }
    // Flows last: the receiving rank's main track exists by now when it ran anything.
    for (const PendingFlow& f : flows) {
        const uint32_t src = layout.RankDevice(f.label.srcRank), dst = layout.RankDevice(f.label.dstRank);
        if (src == core::kNoTrack || dst == core::kNoTrack) continue;
        core::Flow flow;
        flow.srcDevice = src;
        flow.dstDevice = dst;
        flow.srcTrack = f.srcTrack;
        flow.dstTrack = layout.MainTrack(dst);
        flow.srcNs = f.startNs;
        flow.dstNs = f.endNs;
        flow.bytes = f.label.bytes;
        flow.step = f.label.step;
        flow.chunk = f.label.chunk;
        flow.name = b.Intern(f.label.name);
        b.AddFlow(flow);
    }
    // Unlabelled peer-to-peer copies between two GPUs: a flow between the GPUs' devices.
    for (const Placed& p : loose) {
        const GpuActivity& a = *p.activity;
        if (a.kind != ActivityKind::Memcpy || a.copyKind != CopyKind::PeerToPeer || a.srcDeviceId == kNoId ||
            a.dstDeviceId == kNoId || a.srcDeviceId == a.dstDeviceId)
            continue;
        core::Flow flow;
        flow.srcDevice = layout.GpuDevice(a.srcDeviceId);
        flow.dstDevice = layout.GpuDevice(a.dstDeviceId);
        flow.srcTrack = b.TrackAt(p.track).device == flow.srcDevice ? p.track : layout.MainTrack(flow.srcDevice);
        flow.dstTrack = layout.MainTrack(flow.dstDevice);
        flow.srcNs = p.startNs;
        flow.dstNs = p.endNs;
        flow.bytes = a.bytes;
        flow.name = b.Intern("memcpy PtoP");
        b.AddFlow(flow);
    }
    AddNcclParts(b, layout, m_nccl);
    if (m_options.apiSpans) {
        std::unordered_map<uint32_t, uint32_t> threadTrack;
        for (const ApiCall& c : m_all.apiCalls) {
            auto [it, fresh] = threadTrack.try_emplace(c.threadId, 0u);
            if (fresh) {
                const uint32_t dev = b.AddDevice("host thread " + std::to_string(c.threadId), core::DeviceKind::Cpu,
                                                 core::kNone, m_options.host);
                it->second = b.AddTrack(dev, "CUDA API");
            }
            core::Span s;
            s.startNs = m_clock.ToHost(c.startNs);
            s.endNs = std::max(s.startNs, m_clock.ToHost(c.endNs));
            s.name = b.Intern(c.name.empty() ? std::string(c.driver ? "driver API" : "runtime API") : c.name);
            s.category = core::SpanCategory::Other;
            b.AddSpan(it->second, s);
        }
    }
    AddMfuCounters(b, flopSpans, m_options.peakFlopsPerDevice, m_options.mfuBins);
    core::MetaSection& extra = b.Meta().extra;
    extra.Set("gpuActivities", static_cast<int64_t>(stats.activities));
    extra.Set("attributedToOps", static_cast<int64_t>(stats.attributed));
    extra.Set("unplacedActivities", static_cast<int64_t>(stats.unplaced));
    if (m_options.source == core::TraceSource::Cupti)
        b.Meta().results.Set("cuptiDroppedRecords", static_cast<int64_t>(stats.droppedRecords));
    m_stats = stats;
    return std::move(b).Finish();
}

} // namespace paralens::prof
