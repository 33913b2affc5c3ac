#include "trace/TraceMerge.hpp"

#include "common/Error.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>

namespace paralens::core {

namespace {

// t + shift, saturating at the int64 limits (a shift from an absurd clock offset must not overflow).
int64_t Shifted(int64_t t, int64_t shift)
{
    int64_t out = 0;
    if (!__builtin_add_overflow(t, shift, &out)) return out;
    return shift > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// Copies a source trace into a builder (spans, flows, recorded dependencies, counters): devices through `deviceMap` (source device -> new id),
// times moved by the ClockMap of their source device.
class TraceCopier {
public:
    TraceCopier(TraceBuilder& b, const Trace& src) : m_b(b), m_src(src) {}

    StringId Map(StringId id) { return id == 0 ? 0 : m_b.Intern(m_src.Str(id)); }
    uint32_t MapTrack(uint32_t track) const { return track == kNoTrack ? kNoTrack : m_trackMap[track]; }

    void CopyTracks(const std::vector<uint32_t>& deviceMap, const std::vector<ClockMap>& shift)
    {
        m_trackMap.assign(m_src.Tracks().size(), kNoTrack);
        for (uint32_t d = 0; d < m_src.Devices().size(); ++d) {
            for (uint32_t t : m_src.Devices()[d].tracks) {
                const Track& track = m_src.Tracks()[t];
                uint32_t id = m_b.AddTrack(deviceMap[d], m_src.Str(track.name));
                m_trackMap[t] = id;
                std::vector<Span> spans(track.spans);
                for (Span& s : spans) {
                    s.name = Map(s.name);
                    s.detail = Map(s.detail);
                    s.startNs = shift[d].Apply(s.startNs);
                    s.endNs = std::max(shift[d].Apply(s.endNs), s.startNs);
                }
                m_b.AddSpans(id, std::move(spans));
            }
        }
    }

    void CopyLinksAndCounters(const std::vector<uint32_t>& deviceMap, const std::vector<ClockMap>& shift)
    {
        for (const Flow& f : m_src.Flows()) {
            Flow g = f;
            g.srcDevice = deviceMap[f.srcDevice];
            g.dstDevice = deviceMap[f.dstDevice];
            g.srcTrack = f.srcTrack == kNoTrack ? kNoTrack : m_trackMap[f.srcTrack];
            g.dstTrack = f.dstTrack == kNoTrack ? kNoTrack : m_trackMap[f.dstTrack];
            g.srcNs = shift[f.srcDevice].Apply(g.srcNs);
            g.dstNs = shift[f.dstDevice].Apply(g.dstNs);
            g.name = Map(f.name);
            m_b.AddFlow(g);
        }
        for (const Dependency& d : m_src.Dependencies()) {
            Dependency e = d;
            for (SpanRef* ref : {&e.from, &e.to}) {
                if (ref->track >= m_trackMap.size()) continue;
                const ClockMap& clock = shift[m_src.Tracks()[ref->track].device];
                ref->track = m_trackMap[ref->track];
                ref->startNs = clock.Apply(ref->startNs);
                ref->endNs = std::max(clock.Apply(ref->endNs), ref->startNs); // as CopyTracks moves the span
            }
            m_b.AddDependency(e);
        }
        for (const Counter& c : m_src.Counters()) {
            uint32_t id = m_b.AddCounter(deviceMap[c.device], m_src.Str(c.name), m_src.Str(c.unit));
            for (const CounterSample& s : c.samples) m_b.AddSample(id, shift[c.device].Apply(s.timeNs), s.value);
        }
    }

private:
    TraceBuilder& m_b;
    const Trace& m_src;
    std::vector<uint32_t> m_trackMap;
};

struct DeviceRef {
    size_t part = 0;
    uint32_t device = 0;
};

} // namespace

Trace MergeTraces(std::vector<Trace>&& parts, const std::vector<std::string>& origins)
{
    Require(!parts.empty(), "no traces to merge");
    if (parts.size() == 1) return std::move(parts.front());
    auto fileName = [&](size_t p) {
        return p < origins.size() ? std::filesystem::path(origins[p]).filename().string() : "part " + std::to_string(p);
    };
    std::vector<DeviceRef> order;
    for (size_t p = 0; p < parts.size(); ++p)
        for (uint32_t d = 0; d < parts[p].Devices().size(); ++d) order.push_back({p, d});
    std::stable_sort(order.begin(), order.end(), [&](const DeviceRef& x, const DeviceRef& y) {
        const Device& a = parts[x.part].Devices()[x.device];
        const Device& b = parts[y.part].Devices()[y.device];
        std::string_view ha = parts[x.part].Str(a.host), hb = parts[y.part].Str(b.host);
        if (ha != hb) return ha < hb;
        bool ca = a.kind == DeviceKind::Cpu, cb = b.kind == DeviceKind::Cpu;
        if (ca != cb) return cb;
        if (a.rank != b.rank) return a.rank < b.rank;
        return a.gpuIndex < b.gpuIndex;
    });
    TraceBuilder b;
    std::vector<std::vector<uint32_t>> deviceMap(parts.size());
    for (size_t p = 0; p < parts.size(); ++p) deviceMap[p].resize(parts[p].Devices().size());
    std::set<std::string> names;
    for (const DeviceRef& r : order) {
        const Trace& t = parts[r.part];
        const Device& d = t.Devices()[r.device];
        std::string name(t.Str(d.name));
        if (!names.insert(name).second) names.insert(name += " [" + fileName(r.part) + "]");
        deviceMap[r.part][r.device] = b.AddDevice(name, d.kind, d.rank, t.Str(d.host), d.gpuIndex);
    }
    b.Meta() = parts.front().Meta();
    std::string files;
    for (size_t p = 0; p < parts.size(); ++p) files += (p ? ", " : "") + fileName(p);
    b.Meta().title = std::to_string(parts.size()) + " files: " + files;
    b.Meta().extra.Set("files", files);
    std::set<int32_t> ranks;
    for (size_t p = 0; p < parts.size(); ++p) {
        for (const Device& d : parts[p].Devices()) ranks.insert(d.rank);
        std::vector<ClockMap> noShift(parts[p].Devices().size());
        TraceCopier copier(b, parts[p]);
        copier.CopyTracks(deviceMap[p], noShift);
        copier.CopyLinksAndCounters(deviceMap[p], noShift);
        parts[p] = Trace{}; // free each part as soon as it is copied
    }
    b.Meta().workload.Set("ranksInFiles", static_cast<int64_t>(ranks.size()));
    return std::move(b).Finish();
}

int64_t ClockMap::Apply(int64_t t) const
{
    const double drift = slope * static_cast<double>(Shifted(t, anchorNs == std::numeric_limits<int64_t>::min() ? 0 : -anchorNs));
    const double bounded = std::clamp(drift, -4e18, 4e18);
    return Shifted(Shifted(t, shiftAtAnchorNs), static_cast<int64_t>(bounded));
}

Trace MapDeviceClocks(const Trace& trace, const std::vector<ClockMap>& maps, const Metadata* meta)
{
    Require(maps.size() == trace.Devices().size(), "MapDeviceClocks: one clock map per device expected");
    TraceBuilder b;
    std::vector<uint32_t> deviceMap;
    for (const Device& d : trace.Devices())
        deviceMap.push_back(b.AddDevice(trace.Str(d.name), d.kind, d.rank, trace.Str(d.host), d.gpuIndex));
    b.Meta() = meta ? *meta : trace.Meta();
    TraceCopier copier(b, trace);
    copier.CopyTracks(deviceMap, maps);
    copier.CopyLinksAndCounters(deviceMap, maps);
    return std::move(b).Finish();
}

Trace ShiftDeviceClocks(const Trace& trace, const std::vector<int64_t>& shiftNs, const Metadata* meta)
{
    Require(shiftNs.size() == trace.Devices().size(), "ShiftDeviceClocks: one shift per device expected");
    std::vector<ClockMap> maps(shiftNs.size());
    for (size_t d = 0; d < shiftNs.size(); ++d) maps[d].shiftAtAnchorNs = shiftNs[d];
    return MapDeviceClocks(trace, maps, meta);
}

Trace WithExtraFlows(const Trace& trace, const std::vector<Flow>& flows)
{
    TraceBuilder b;
    std::vector<uint32_t> deviceMap;
    for (const Device& d : trace.Devices())
        deviceMap.push_back(b.AddDevice(trace.Str(d.name), d.kind, d.rank, trace.Str(d.host), d.gpuIndex));
    b.Meta() = trace.Meta();
    const std::vector<ClockMap> none(trace.Devices().size());
    TraceCopier copier(b, trace);
    copier.CopyTracks(deviceMap, none);
    copier.CopyLinksAndCounters(deviceMap, none);
    for (const Flow& f : flows) {
        Flow g = f;
        g.srcDevice = deviceMap[f.srcDevice];
        g.dstDevice = deviceMap[f.dstDevice];
        g.srcTrack = copier.MapTrack(f.srcTrack);
        g.dstTrack = copier.MapTrack(f.dstTrack);
        g.name = copier.Map(f.name);
        b.AddFlow(g);
    }
    return std::move(b).Finish();
}

} // namespace paralens::core
