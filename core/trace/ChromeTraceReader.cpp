// Chrome Trace Event JSON into a Trace: every phase ChromeAssembly knows, and our own "paralens"
// metadata (devices, tracks, counters, sections) when present, so our files round-trip exactly.
// Without our metadata each pid becomes a device and each tid a track.
#include "common/Error.hpp"
#include "trace/ChromeAssembly.hpp"
#include "trace/ChromeEvents.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

namespace paralens::core {

namespace {

using Json = nlohmann::json;

MetaValue ToMetaValue(const Json& v)
{
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

void ReadSection(const Json& obj, const char* key, MetaSection& section)
{
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_object()) return;
    for (const auto& [k, v] : it->items()) section.Set(k, ToMetaValue(v));
}

// Our span fields from an event's args; the category from "cat".
void FillGenericSpan(const ChromeEvent& e, Span& s, TraceBuilder& b)
{
    s.category = ParseSpanCategory(e.cat);
    for (const ChromeArg& a : e.args) {
        int64_t i = 0;
        if (a.key == "bytes") a.AsUint64(s.bytes);
        else if (a.key == "flops") a.AsDouble(s.flops);
        else if (a.key == "predictedNs" && a.AsInt64(i)) s.predictedNs = i;
        else if (a.key == "microBatch" && a.AsInt64(i)) s.microBatch = static_cast<int32_t>(i);
        else if (a.key == "chunk" && a.AsInt64(i)) s.chunk = static_cast<int32_t>(i);
        else if (a.key == "step" && a.AsInt64(i)) s.step = static_cast<int32_t>(i);
        else if (a.key == "detail") s.detail = b.Intern(a.text);
    }
}

class ChromeReader {
public:
    explicit ChromeReader(const std::string& origin) : m_assembly(origin, m_builder) {}

    void OnTopLevel(std::string_view key, std::string_view raw, JsonKind kind)
    {
        if (key == "paralens" && kind == JsonKind::Object) {
            try {
                m_paralens = Json::parse(raw);
            } catch (const Json::exception& e) {
                throw Error(m_assembly.Origin() + ": the \"paralens\" metadata is not valid JSON: " + e.what());
            }
        } else if (key == "paralensDependencies" && kind == JsonKind::Array) {
            try {
                m_dependencies = Json::parse(raw);
            } catch (const Json::exception& e) {
                throw Error(m_assembly.Origin() + ": \"paralensDependencies\" is not valid JSON: " + e.what());
            }
        }
    }

    void OnEvent(const ChromeEvent& e)
    {
        m_assembly.OnEvent(e, [this](const ChromeEvent& ev, Span& s) { FillGenericSpan(ev, s, m_builder); });
    }

    Trace Finish();

private:
    void ApplyParalensMetadata(std::map<std::string, uint32_t>& deviceOf, std::map<std::string, uint32_t>& trackOf);
    void AddDevices(std::map<std::string, uint32_t>& deviceOf);
    void AddTracks(std::map<std::string, uint32_t>& deviceOf, std::map<std::string, uint32_t>& trackOf);
    void AddFlowsAndCounters(std::map<std::string, uint32_t>& deviceOf, std::map<std::string, uint32_t>& trackOf);
    void AddDependencies();
    uint32_t DeviceFor(std::map<std::string, uint32_t>& deviceOf, const std::string& pid);

    TraceBuilder m_builder;
    ChromeAssembly m_assembly;
    Json m_paralens;
    Json m_dependencies;
};

// Rows of [fromTrack, fromStartNs, fromEndNs, toTrack, toStartNs, toEndNs]; tracks are indices
// into the paralens metadata's track list (the builder's ids, which are made in that order).
void ChromeReader::AddDependencies()
{
    if (!m_dependencies.is_array()) return;
    const size_t tracks = m_builder.TrackCount();
    size_t row = 0;
    for (const Json& d : m_dependencies) {
        auto bad = [&](const std::string& why) {
            return Error(m_assembly.Origin() + ": paralensDependencies[" + std::to_string(row) + "] " + why);
        };
        if (!d.is_array() || d.size() != 6) throw bad("is not [fromTrack, fromStart, fromEnd, toTrack, toStart, toEnd]");
        for (const Json& v : d)
            if (!v.is_number_integer()) throw bad("holds a value that is not an integer");
        Dependency dep{{d[0].get<uint32_t>(), d[1].get<int64_t>(), d[2].get<int64_t>()},
                       {d[3].get<uint32_t>(), d[4].get<int64_t>(), d[5].get<int64_t>()}};
        if (dep.from.track >= tracks || dep.to.track >= tracks)
            throw bad("names a track outside the " + std::to_string(tracks) + " the metadata lists");
        m_builder.AddDependency(dep);
        ++row;
    }
}

void ChromeReader::ApplyParalensMetadata(std::map<std::string, uint32_t>& deviceOf,
                                         std::map<std::string, uint32_t>& trackOf)
{
    TraceBuilder& b = m_builder;
    const Json& p = m_paralens;
    Metadata& m = b.Meta();
    m.source = ParseTraceSource(p.value("source", "chrome"));
    m.title = p.value("title", "");
    ReadSection(p, "workload", m.workload);
    ReadSection(p, "model", m.model);
    ReadSection(p, "hardware", m.hardware);
    ReadSection(p, "results", m.results);
    ReadSection(p, "extra", m.extra);
    if (auto it = p.find("devices"); it != p.end() && it->is_array()) {
        for (const Json& d : *it) {
            uint32_t id = b.AddDevice(d.value("name", ""), ParseDeviceKind(d.value("kind", "modelled")),
                                      d.value("rank", 0), d.value("host", ""), d.value("gpuIndex", kNone));
            deviceOf[std::to_string(id)] = id;
        }
    }
    if (auto it = p.find("tracks"); it != p.end() && it->is_array()) {
        uint32_t index = 0;
        for (const Json& t : *it) {
            uint32_t device = t.value("device", 0u);
            if (device >= b.DeviceCount())
                throw Error(m_assembly.Origin() + ": paralens.tracks[" + std::to_string(index) + "] names device " +
                            std::to_string(device) + " but only " + std::to_string(b.DeviceCount()) + " exist");
            uint32_t id = b.AddTrack(device, t.value("name", ""));
            trackOf[std::to_string(device) + '\x1f' + std::to_string(index)] = id;
            ++index;
        }
    }
}

uint32_t ChromeReader::DeviceFor(std::map<std::string, uint32_t>& deviceOf, const std::string& pid)
{
    auto it = deviceOf.find(pid);
    if (it != deviceOf.end()) return it->second;
    uint32_t id = m_builder.AddDevice(pid.empty() ? "process" : "process " + pid, DeviceKind::Gpu,
                                      static_cast<int32_t>(m_builder.DeviceCount()));
    deviceOf[pid] = id;
    return id;
}

// Devices for pids our metadata did not list, in numeric order, named by process_name.
void ChromeReader::AddDevices(std::map<std::string, uint32_t>& deviceOf)
{
    std::vector<std::string> pids;
    for (const PendingTrack& t : m_assembly.Tracks()) pids.push_back(t.pid);
    for (const PendingCounter& c : m_assembly.Counters()) pids.push_back(c.pid);
    for (const PendingFlow& f : m_assembly.Flows())
        if (f.haveDst) pids.insert(pids.end(), {m_assembly.Tracks()[f.srcTrack].pid, m_assembly.Tracks()[f.dstTrack].pid});
    std::sort(pids.begin(), pids.end(), IdLess);
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    const auto& names = m_assembly.ProcessNames();
    for (const std::string& pid : pids) {
        if (deviceOf.count(pid)) continue;
        auto nameIt = names.find(pid);
        std::string name = nameIt != names.end() ? nameIt->second : pid.empty() ? "process" : "process " + pid;
        deviceOf[pid] = m_builder.AddDevice(name, DeviceKind::Gpu, static_cast<int32_t>(m_builder.DeviceCount()));
    }
}

void ChromeReader::AddTracks(std::map<std::string, uint32_t>& deviceOf, std::map<std::string, uint32_t>& trackOf)
{
    std::vector<PendingTrack>& tracks = m_assembly.Tracks();
    std::vector<size_t> order(tracks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const PendingTrack& a = tracks[x];
        const PendingTrack& c = tracks[y];
        if (a.pid != c.pid) return IdLess(a.pid, c.pid);
        if (a.async != c.async) return c.async;
        return IdLess(a.tid, c.tid);
    });
    for (size_t i : order) {
        PendingTrack& t = tracks[i];
        if (t.spans.empty() && t.name.empty()) continue; // a tid known only from a stray record
        std::string key = t.pid + '\x1f' + t.tid;
        auto it = trackOf.find(key);
        uint32_t id = 0;
        if (it != trackOf.end()) {
            id = it->second;
        } else {
            std::string name = !t.name.empty() ? t.name : t.tid.empty() ? "events" : "thread " + t.tid;
            id = m_builder.AddTrack(DeviceFor(deviceOf, t.pid), name);
            trackOf[key] = id;
        }
        m_builder.AddSpans(id, std::move(t.spans));
    }
}

void ChromeReader::AddFlowsAndCounters(std::map<std::string, uint32_t>& deviceOf,
                                       std::map<std::string, uint32_t>& trackOf)
{
    // Each pending track's device and track, found when a flow first names it (a device for a pid
    // only then, as before), instead of two lookups by text for each flow.
    const std::vector<PendingTrack>& tracks = m_assembly.Tracks();
    std::vector<std::optional<std::pair<uint32_t, uint32_t>>> ends(tracks.size());
    auto endOf = [&](uint32_t i) {
        if (!ends[i]) {
            const uint32_t device = DeviceFor(deviceOf, tracks[i].pid);
            auto it = trackOf.find(tracks[i].pid + '\x1f' + tracks[i].tid);
            ends[i] = std::pair{device, it == trackOf.end() ? kNoTrack : it->second};
        }
        return *ends[i];
    };
    for (const PendingFlow& f : m_assembly.Flows()) {
        if (!f.haveDst) continue;
        Flow flow;
        const auto [srcDevice, srcTrack] = endOf(f.srcTrack);
        const auto [dstDevice, dstTrack] = endOf(f.dstTrack);
        flow.srcDevice = srcDevice;
        flow.dstDevice = dstDevice;
        flow.srcTrack = srcTrack;
        flow.dstTrack = dstTrack;
        flow.srcNs = f.srcNs;
        flow.dstNs = f.dstNs;
        flow.bytes = f.bytes;
        flow.step = f.step;
        flow.chunk = f.chunk;
        flow.name = f.name;
        m_builder.AddFlow(flow);
    }
    std::map<std::string, std::string> units; // device \x1f name -> unit, from our metadata
    if (m_paralens.is_object()) {
        if (auto it = m_paralens.find("counters"); it != m_paralens.end() && it->is_array())
            for (const Json& c : *it)
                if (c.is_object())
                    units[std::to_string(c.value("device", 0u)) + '\x1f' + c.value("name", "")] = c.value("unit", "");
    }
    for (const PendingCounter& c : m_assembly.Counters()) {
        uint32_t device = DeviceFor(deviceOf, c.pid);
        uint32_t id = m_builder.AddCounter(device, c.name, units[std::to_string(device) + '\x1f' + c.name]);
        for (const CounterSample& s : c.samples) m_builder.AddSample(id, s.timeNs, s.value);
    }
}

Trace ChromeReader::Finish()
{
    m_assembly.CloseOpen();
    std::map<std::string, uint32_t> deviceOf; // pid text -> device
    std::map<std::string, uint32_t> trackOf;  // pid \x1f tid -> track
    if (m_paralens.is_object()) {
        ApplyParalensMetadata(deviceOf, trackOf);
    } else {
        m_builder.Meta().source = TraceSource::Chrome;
        if (m_assembly.EventCount() == 0)
            throw Error(m_assembly.Origin() + ": the trace holds no events (an empty event array)");
    }
    AddDevices(deviceOf);
    AddTracks(deviceOf, trackOf);
    AddFlowsAndCounters(deviceOf, trackOf);
    if (m_paralens.is_object()) AddDependencies();
    MetaSection& extra = m_builder.Meta().extra;
    if (m_assembly.UnclosedCount() > 0) extra.Set("unclosedSpans", static_cast<int64_t>(m_assembly.UnclosedCount()));
    if (m_assembly.SkippedCount() > 0) extra.Set("skippedEvents", static_cast<int64_t>(m_assembly.SkippedCount()));
    Trace trace = std::move(m_builder).Finish();
    if (!m_paralens.is_object() && trace.SpanCount() == 0 && trace.Flows().empty() && trace.Counters().empty())
        throw Error(m_assembly.Origin() + ": none of the trace's " + std::to_string(m_assembly.EventCount()) +
                    " events is a span, flow or counter paralens can show (phases X, B/E, i, b/e, s/f, C expected)");
    return trace;
}

} // namespace

Trace ReadChromeTrace(ByteSource& source, const std::string& origin, const ReadOptions& options)
{
    ChromeReader reader(origin);
    try {
        ReadChromeEvents(
            source, origin, [&](const ChromeEvent& e) { reader.OnEvent(e); },
            [&](std::string_view key, std::string_view raw, JsonKind kind) { reader.OnTopLevel(key, raw, kind); },
            options.progress, options.blockBytes, options.parseWorkers);
        return reader.Finish();
    } catch (const Json::exception& e) { // a "paralens" object of the wrong shape
        throw Error(origin + ": the \"paralens\" metadata is not what paralens writes: " + e.what());
    }
}

Trace ReadChromeJson(const std::string& json, const std::string& origin)
{
    auto source = TextSource(json);
    return ReadChromeTrace(*source, origin);
}

} // namespace paralens::core
