// Chrome Trace Event JSON into a Trace: X spans, s/f flows, C counters, M names, and our own
// "paralens" metadata (devices, tracks, counters, sections) when present.
#include "common/Error.hpp"
#include "trace/ChromeEvents.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace paralens::core {

namespace {

using Json = nlohmann::json;

struct PendingTrack {
    std::string pid, tid;
    std::string name;
    std::vector<Span> spans;
};

struct PendingFlow {
    std::string srcPid, srcTid, dstPid, dstTid;
    int64_t srcNs = 0, dstNs = 0;
    uint64_t bytes = 0;
    int32_t step = kNone, chunk = kNone;
    StringId name = 0;
    bool haveDst = false;
};

struct PendingCounter {
    std::string pid;
    std::string name;
    std::string unit;
    std::vector<CounterSample> samples;
};

// Numeric ids sort as numbers, others after them as text.
bool IdLess(const std::string& a, const std::string& b)
{
    int64_t x = 0, y = 0;
    bool nx = std::from_chars(a.data(), a.data() + a.size(), x).ec == std::errc() && !a.empty();
    bool ny = std::from_chars(b.data(), b.data() + b.size(), y).ec == std::errc() && !b.empty();
    if (nx && ny) return x < y;
    if (nx != ny) return nx;
    return a < b;
}

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

class ChromeAssembler {
public:
    explicit ChromeAssembler(const std::string& origin) : m_origin(origin) {}

    void OnTopLevel(std::string_view key, std::string_view raw, JsonKind kind)
    {
        if (key == "paralens" && kind == JsonKind::Object) {
            try {
                m_paralens = Json::parse(raw);
            } catch (const Json::exception& e) {
                throw Error(m_origin + ": the \"paralens\" metadata is not valid JSON: " + e.what());
            }
        }
    }

    void OnEvent(const ChromeEvent& e)
    {
        switch (e.ph) {
        case 'X': OnComplete(e); break;
        case 's': OnFlowStart(e); break;
        case 'f': OnFlowEnd(e); break;
        case 'C': OnCounter(e); break;
        case 'M': OnMetadata(e); break;
        default: ++m_skipped; break; // other phases: see ReadChromeJson's contract
        }
    }

    Trace Finish();

private:
    PendingTrack& TrackFor(const ChromeEvent& e)
    {
        std::string key = std::string(e.pid) + '\x1f' + std::string(e.tid);
        auto it = m_trackIndex.find(key);
        if (it != m_trackIndex.end()) return m_tracks[it->second];
        m_trackIndex.emplace(key, m_tracks.size());
        PendingTrack& t = m_tracks.emplace_back();
        t.pid = e.pid;
        t.tid = e.tid;
        return t;
    }

    void OnComplete(const ChromeEvent& e)
    {
        if (!e.hasTs) throw Error(m_origin + ": traceEvents[" + std::to_string(e.index) + "] (byte " +
                                  std::to_string(e.byteOffset) + "): an \"X\" event needs \"ts\"");
        Span s;
        s.startNs = e.tsNs;
        s.endNs = e.tsNs + (e.hasDur ? std::max<int64_t>(e.durNs, 0) : 0);
        s.name = m_builder.Intern(e.name);
        s.category = ParseSpanCategory(e.cat);
        for (const ChromeArg& a : e.args) {
            int64_t i = 0;
            if (a.key == "bytes") a.AsUint64(s.bytes);
            else if (a.key == "flops") a.AsDouble(s.flops);
            else if (a.key == "predictedNs" && a.AsInt64(i)) s.predictedNs = i;
            else if (a.key == "microBatch" && a.AsInt64(i)) s.microBatch = static_cast<int32_t>(i);
            else if (a.key == "chunk" && a.AsInt64(i)) s.chunk = static_cast<int32_t>(i);
            else if (a.key == "step" && a.AsInt64(i)) s.step = static_cast<int32_t>(i);
            else if (a.key == "detail") s.detail = m_builder.Intern(a.text);
        }
        TrackFor(e).spans.push_back(s);
    }

    std::string FlowKey(const ChromeEvent& e) const { return std::string(e.cat) + '\x1f' + std::string(e.id); }

    void OnFlowStart(const ChromeEvent& e)
    {
        PendingFlow f;
        f.srcPid = e.pid;
        f.srcTid = e.tid;
        f.srcNs = e.tsNs;
        f.name = m_builder.Intern(e.name);
        int64_t i = 0;
        if (const ChromeArg* a = e.Arg("bytes")) a->AsUint64(f.bytes);
        if (const ChromeArg* a = e.Arg("step"); a && a->AsInt64(i)) f.step = static_cast<int32_t>(i);
        if (const ChromeArg* a = e.Arg("chunk"); a && a->AsInt64(i)) f.chunk = static_cast<int32_t>(i);
        m_openFlows[FlowKey(e)] = m_flows.size();
        m_flows.push_back(std::move(f));
    }

    void OnFlowEnd(const ChromeEvent& e)
    {
        auto it = m_openFlows.find(FlowKey(e));
        if (it == m_openFlows.end()) {
            ++m_unmatchedFlowEnds;
            return;
        }
        PendingFlow& f = m_flows[it->second];
        f.dstPid = e.pid;
        f.dstTid = e.tid;
        f.dstNs = e.tsNs;
        f.haveDst = true;
        m_openFlows.erase(it);
    }

    void OnCounter(const ChromeEvent& e)
    {
        for (const ChromeArg& a : e.args) {
            double value = 0;
            if (!a.AsDouble(value)) continue;
            std::string name(e.name);
            if (a.key != "value" && !a.key.empty()) name += " " + std::string(a.key);
            std::string key = std::string(e.pid) + '\x1f' + name;
            auto [it, inserted] = m_counterIndex.emplace(key, m_counters.size());
            if (inserted) m_counters.push_back({std::string(e.pid), name, "", {}});
            m_counters[it->second].samples.push_back({e.tsNs, value});
        }
    }

    void OnMetadata(const ChromeEvent& e)
    {
        const ChromeArg* a = e.Arg("name");
        if (!a) return;
        if (e.name == "process_name") m_processNames[std::string(e.pid)] = std::string(a->text);
        else if (e.name == "thread_name") TrackFor(e).name = std::string(a->text);
    }

    void ApplyParalensMetadata(TraceBuilder& b, std::map<std::string, uint32_t>& deviceOf,
                               std::map<std::string, uint32_t>& trackOf);

    const std::string& m_origin;
    TraceBuilder m_builder;
    Json m_paralens;
    std::vector<PendingTrack> m_tracks;
    std::unordered_map<std::string, size_t> m_trackIndex;
    std::vector<PendingFlow> m_flows;
    std::unordered_map<std::string, size_t> m_openFlows;
    std::vector<PendingCounter> m_counters;
    std::unordered_map<std::string, size_t> m_counterIndex;
    std::map<std::string, std::string> m_processNames;
    size_t m_skipped = 0;
    size_t m_unmatchedFlowEnds = 0;
};

void ChromeAssembler::ApplyParalensMetadata(TraceBuilder& b, std::map<std::string, uint32_t>& deviceOf,
                                            std::map<std::string, uint32_t>& trackOf)
{
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
                throw Error(m_origin + ": paralens.tracks[" + std::to_string(index) + "] names device " +
                            std::to_string(device) + " but only " + std::to_string(b.DeviceCount()) + " exist");
            uint32_t id = b.AddTrack(device, t.value("name", ""));
            trackOf[std::to_string(device) + '\x1f' + std::to_string(index)] = id;
            ++index;
        }
    }
}

Trace ChromeAssembler::Finish()
{
    TraceBuilder& b = m_builder;
    std::map<std::string, uint32_t> deviceOf; // pid text -> device
    std::map<std::string, uint32_t> trackOf;  // pid \x1f tid -> track
    if (m_paralens.is_object()) ApplyParalensMetadata(b, deviceOf, trackOf);
    else b.Meta().source = TraceSource::Chrome;

    // Devices for pids the metadata did not list, in numeric order.
    std::vector<std::string> pids;
    for (const PendingTrack& t : m_tracks) pids.push_back(t.pid);
    for (const PendingCounter& c : m_counters) pids.push_back(c.pid);
    for (const PendingFlow& f : m_flows) pids.insert(pids.end(), {f.srcPid, f.dstPid});
    std::sort(pids.begin(), pids.end(), IdLess);
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    for (const std::string& pid : pids) {
        if (deviceOf.count(pid) || pid.empty()) continue;
        auto nameIt = m_processNames.find(pid);
        std::string name = nameIt != m_processNames.end() ? nameIt->second : "process " + pid;
        int32_t rank = static_cast<int32_t>(b.DeviceCount());
        deviceOf[pid] = b.AddDevice(name, DeviceKind::Gpu, rank);
    }
    auto deviceFor = [&](const std::string& pid) -> uint32_t {
        if (pid.empty() && !deviceOf.count(pid)) deviceOf[pid] = b.AddDevice("process", DeviceKind::Gpu, 0);
        return deviceOf.at(pid);
    };

    std::vector<size_t> order(m_tracks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const PendingTrack& a = m_tracks[x];
        const PendingTrack& c = m_tracks[y];
        if (a.pid != c.pid) return IdLess(a.pid, c.pid);
        return IdLess(a.tid, c.tid);
    });
    for (size_t i : order) {
        PendingTrack& t = m_tracks[i];
        std::string key = t.pid + '\x1f' + t.tid;
        auto it = trackOf.find(key);
        uint32_t id = 0;
        if (it != trackOf.end()) {
            id = it->second;
        } else {
            id = b.AddTrack(deviceFor(t.pid), t.name.empty() ? "thread " + t.tid : t.name);
            trackOf[key] = id;
        }
        b.ReserveSpans(id, t.spans.size());
        for (const Span& s : t.spans) b.AddSpan(id, s);
    }
    auto trackFor = [&](const std::string& pid, const std::string& tid) {
        auto it = trackOf.find(pid + '\x1f' + tid);
        return it == trackOf.end() ? kNoTrack : it->second;
    };
    for (const PendingFlow& f : m_flows) {
        if (!f.haveDst) continue;
        Flow flow;
        flow.srcDevice = deviceFor(f.srcPid);
        flow.dstDevice = deviceFor(f.dstPid);
        flow.srcTrack = trackFor(f.srcPid, f.srcTid);
        flow.dstTrack = trackFor(f.dstPid, f.dstTid);
        flow.srcNs = f.srcNs;
        flow.dstNs = f.dstNs;
        flow.bytes = f.bytes;
        flow.step = f.step;
        flow.chunk = f.chunk;
        flow.name = f.name;
        b.AddFlow(flow);
    }
    std::map<std::string, std::string> units; // device \x1f name -> unit, from our metadata
    if (m_paralens.is_object()) {
        if (auto it = m_paralens.find("counters"); it != m_paralens.end() && it->is_array())
            for (const Json& c : *it)
                units[std::to_string(c.value("device", 0u)) + '\x1f' + c.value("name", "")] = c.value("unit", "");
    }
    for (const PendingCounter& c : m_counters) {
        uint32_t device = deviceFor(c.pid);
        uint32_t id = b.AddCounter(device, c.name, units[std::to_string(device) + '\x1f' + c.name]);
        for (const CounterSample& s : c.samples) b.AddSample(id, s.timeNs, s.value);
    }
    return std::move(b).Finish();
}

} // namespace

Trace ReadChromeJson(const std::string& json, const std::string& origin)
{
    ChromeAssembler assembler(origin);
    ReadChromeEvents(
        json, origin, [&](const ChromeEvent& e) { assembler.OnEvent(e); },
        [&](std::string_view key, std::string_view raw, JsonKind kind) { assembler.OnTopLevel(key, raw, kind); });
    return assembler.Finish();
}

} // namespace paralens::core
