// PyTorch profiler (Kineto) traces into a Trace (field notes: reference-data/KINETO-FORMAT.md).
//
// - GPU work (categories kernel, gpu_memcpy, gpu_memset, cuda_sync, gpu_user_annotation,
//   mtia_ccp_events) lies on pid = device index, tid = stream: one Gpu device per such pid, one
//   track per stream. Kernels are compute, except NCCL kernels: collectives with a CollectiveTag
//   in Span::detail and their bytes.
// - Host threads (cpu_op, user_annotation, cuda_runtime, ...) become Cpu devices, one per
//   process (dropped with ReadOptions::keepCpu = false); the profiler's own marks (pids "Spans",
//   "Traces", "") a "PyTorch Profiler" Cpu device. User annotations are Annotation spans.
// - Launch flows (ac2g, and the older async_cpu_to_gpu / async_gpu) become flows.
// - Timestamps: ts text straight into int64 ns, plus baseTimeNanoseconds when present.
// - Rank: distributedInfo.rank, else "rank N" in the file name (rank-1, rank_1, rank1), else 0.
//
// An NCCL kernel's collective, size and group come from, in order: its args (Collective name,
// In/Out msg nelems, dtype, Group size, Process Group Name/Ranks: newer PyTorch), else the CPU
// ops that launched it (the nccl:* annotation, c10d::* and record_param_comms enclosing the
// cudaLaunchKernel of the same correlation id: their Input Dims x Input type), else its name.
// Bytes are nccl-tests' n: the larger of input and output (the full vector). GEMM kernels get
// their FLOPs and shape from the matmul op that launched them, the memory-bound kernels their
// bytes from the elementwise, copy, norm or reduction op that did (KinetoGemm.hpp).
#include "common/Error.hpp"
#include "common/CharConv.hpp"
#include "trace/ChromeAssembly.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/JsonText.hpp"
#include "trace/KinetoGemm.hpp"
#include "trace/KinetoSupport.hpp"
#include "trace/NcclKernelName.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace paralens::core {

namespace {

using Json = nlohmann::json;

enum class Side { Gpu, Cpu };

Side SideOf(std::string_view cat)
{
    return cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cuda_sync" ||
                   cat == "gpu_user_annotation" || cat == "mtia_ccp_events" || cat == "Memcpy" || cat == "Memset"
               ? Side::Gpu
               : Side::Cpu;
}

// A pid or tid that is a number (in int32 range: GPU indices and OS ids).
bool IsNumericId(const std::string& id)
{
    int32_t v = 0;
    auto r = paralens::FromChars(id.data(), id.data() + id.size(), v);
    return !id.empty() && r.ec == std::errc() && r.ptr == id.data() + id.size();
}

int32_t NumericId(const std::string& id)
{
    int32_t v = kNone;
    paralens::FromChars(id.data(), id.data() + id.size(), v);
    return v;
}

bool IsCommOpName(std::string_view name)
{
    return name.substr(0, 5) == "nccl:" || name.substr(0, 6) == "c10d::" || name == "record_param_comms";
}

std::string TrimSpace(std::string s)
{
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

class KinetoReader {
public:
    KinetoReader(const std::string& origin, const ReadOptions& options)
        : m_origin(origin), m_options(options), m_assembly(origin, m_builder)
    {
    }

    void OnTopLevel(std::string_view key, std::string_view raw, JsonKind kind);
    void OnEvent(const ChromeEvent& e);
    Trace Finish();

private:
    void FillSpan(const ChromeEvent& e, Span& s);
    void OnComplete(const ChromeEvent& e);
    void ResolveCollectives();
    void ResolveRank();
    void AddDevices(std::map<std::string, uint32_t>& deviceOf, std::map<std::string, uint32_t>& trackOf);
    void AddFlows(const std::map<std::string, uint32_t>& deviceOf, const std::map<std::string, uint32_t>& trackOf);
    void AddLaunchFlows(const std::map<std::string, uint32_t>& trackOf);
    void FillMetadata();
    void Shift(Span& s) const;
    int64_t Based(int64_t ns) const;

    const std::string& m_origin;
    const ReadOptions& m_options;
    TraceBuilder m_builder;
    ChromeAssembly m_assembly;
    KinetoCollectives m_collectives;
    KinetoGemms m_gemms{m_collectives};
    std::set<std::string> m_gpuPids;
    std::string m_lastGpuPid;
    Json m_distributed, m_deviceProperties;
    std::map<std::string, std::string> m_topStrings; // traceName, schemaVersion, ... for metadata
    int64_t m_baseNs = 0;
    int32_t m_rank = 0;
    std::string m_rankFrom = "assumed";
    std::string m_host;
    // Launches and GPU activities by correlation id: launch flows for files that have none.
    struct Correlated {
        int64_t correlation;
        int64_t startNs; // before baseTimeNanoseconds (the spans move into the builder)
        uint32_t track;
        bool operator<(const Correlated& o) const { return correlation < o.correlation; }
    };
    std::vector<Correlated> m_launchOf, m_activityOf;
    // Host ops by record-function id, for an execution trace's dependencies.
    struct Recorded {
        int64_t rfId;
        int64_t startNs, endNs; // before baseTimeNanoseconds
        uint32_t track;         // pending track
    };
    std::vector<Recorded> m_byRfId;
    void AddExecutionTraceDependencies(const std::map<std::string, uint32_t>& trackOf);
};

void KinetoReader::OnTopLevel(std::string_view key, std::string_view raw, JsonKind kind)
{
    auto parse = [&](Json& into) {
        try {
            into = Json::parse(raw);
        } catch (const Json::exception&) {
            into = Json();
        }
    };
    if (key == "distributedInfo" && kind == JsonKind::Object) parse(m_distributed);
    else if (key == "deviceProperties" && kind == JsonKind::Array) parse(m_deviceProperties);
    else if (key == "baseTimeNanoseconds") {
        if (!ParseDecimalNs(raw, m_baseNs) || m_baseNs > kMaxAbsTraceNs || m_baseNs < -kMaxAbsTraceNs)
            throw Error(m_origin + ": \"baseTimeNanoseconds\" must be a number of nanoseconds within 4e18 of 0, found " +
                        std::string(raw.substr(0, 40)));
    } else if (key == "host_name" || key == "hostname") {
        m_host = std::string(raw);
    } else if (kind != JsonKind::Object && kind != JsonKind::Array && raw.size() < 256) {
        m_topStrings[std::string(key)] = std::string(raw);
    }
}

void KinetoReader::FillSpan(const ChromeEvent& e, Span& s)
{
    const std::string_view cat = e.cat;
    if (cat == "kernel" || cat == "Kernel" || cat == "mtia_ccp_events") s.category = SpanCategory::Compute;
    else if (cat == "gpu_memcpy" || cat == "Memcpy") s.category = SpanCategory::Memcpy;
    else if (cat == "gpu_memset" || cat == "Memset") s.category = SpanCategory::Memset;
    else if (cat == "cuda_sync") s.category = SpanCategory::Sync;
    else if (cat == "gpu_user_annotation" || cat == "user_annotation" || cat == "Trace" || e.ph != 'X')
        s.category = SpanCategory::Annotation;
    else s.category = SpanCategory::Other;
    if (s.category == SpanCategory::Memcpy || s.category == SpanCategory::Memset)
        if (const ChromeArg* a = e.Arg("bytes")) a->AsUint64(s.bytes);
}

void KinetoReader::OnComplete(const ChromeEvent& e)
{
    auto [track, index] = m_assembly.AddComplete(e, [this](const ChromeEvent& ev, Span& s) { FillSpan(ev, s); });
    int64_t correlation = -1;
    if (const ChromeArg* c = e.Arg("correlation"); c && c->AsInt64(correlation) && correlation >= 0) {
        const bool launch = e.cat == "cuda_runtime" || e.cat == "Runtime" || e.cat == "cuda_driver";
        if (launch || SideOf(e.cat) == Side::Gpu)
            (launch ? m_launchOf : m_activityOf)
                .push_back({correlation, m_assembly.Tracks()[track].spans[index].startNs, static_cast<uint32_t>(track)});
    }
    if (SideOf(e.cat) == Side::Gpu) {
        if (e.pid != m_lastGpuPid) { // a set insertion per kernel would cost an allocation each
            m_lastGpuPid = e.pid;
            m_gpuPids.insert(m_lastGpuPid);
        }
        if ((e.cat == "kernel" || e.cat == "Kernel") && e.name.find("ccl") != std::string_view::npos)
            m_collectives.OnKernel(e, track, index);
        else if (e.cat == "kernel" || e.cat == "Kernel") // GEMMs, attention, and the memory-bound rest
            m_gemms.OnKernel(e, track, index, m_assembly.Tracks()[track].spans[index].name);
        return;
    }
    if (!m_options.executionTraces.empty() && (e.cat == "cpu_op" || e.cat == "user_annotation")) {
        const ChromeArg* rf = e.Arg("Record function id");
        if (!rf) rf = e.Arg("External id"); // older traces: the rf_id itself
        int64_t id = -1;
        if (rf && rf->AsInt64(id)) {
            const Span& s = m_assembly.Tracks()[track].spans[index];
            m_byRfId.push_back({id, s.startNs, s.endNs, static_cast<uint32_t>(track)});
        }
    }
    if (const ChromeArg* c = e.Arg("correlation"); c && (e.cat == "cuda_runtime" || e.cat == "Runtime" ||
                                                        e.cat == "cuda_driver"))
        m_collectives.OnLaunch(e, *c);
    if (IsCommOpName(e.name)) m_collectives.OnCommOp(e);
    if (e.cat == "cpu_op" && IsFlopsOpName(e.name)) m_gemms.OnFlopsOp(e);
    else if (e.cat == "cpu_op" && IsMemoryOpName(e.name)) m_gemms.OnMemoryOp(e);
}

void KinetoReader::OnEvent(const ChromeEvent& e)
{
    if (e.ph == 'X') OnComplete(e);
    else m_assembly.OnEvent(e, [this](const ChromeEvent& ev, Span& s) { FillSpan(ev, s); });
}

void KinetoReader::ResolveRank()
{
    if (m_distributed.is_object()) {
        auto it = m_distributed.find("rank");
        if (it != m_distributed.end() && it->is_number_integer()) {
            m_rank = it->get<int32_t>();
            m_rankFrom = "distributedInfo";
            return;
        }
    }
    if (auto r = RankFromFileName(m_origin)) {
        m_rank = *r;
        m_rankFrom = "file name";
    }
}

// Adds baseTimeNanoseconds; both are within kMaxAbsTraceNs, so the sum cannot overflow, and it
// must stay in range too.
int64_t KinetoReader::Based(int64_t ns) const
{
    int64_t t = ns + m_baseNs;
    if (t > kMaxAbsTraceNs || t < -kMaxAbsTraceNs)
        throw Error(m_origin + ": a time plus \"baseTimeNanoseconds\" is out of range (more than 126 years from 1970)");
    return t;
}

void KinetoReader::Shift(Span& s) const
{
    s.startNs = Based(s.startNs);
    s.endNs = Based(s.endNs);
}

void KinetoReader::AddDevices(std::map<std::string, uint32_t>& deviceOf, std::map<std::string, uint32_t>& trackOf)
{
    std::vector<PendingTrack>& tracks = m_assembly.Tracks();
    std::vector<size_t> order(tracks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto groupOf = [&](const PendingTrack& t) { // GPUs first, then host processes, then the profiler's marks
        return m_gpuPids.count(t.pid) ? 0 : IsNumericId(t.pid) ? 1 : 2;
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const PendingTrack& a = tracks[x];
        const PendingTrack& b = tracks[y];
        if (groupOf(a) != groupOf(b)) return groupOf(a) < groupOf(b);
        if (a.pid != b.pid) return IdLess(a.pid, b.pid);
        return IdLess(a.tid, b.tid);
    });
    const auto& processNames = m_assembly.ProcessNames();
    for (size_t i : order) {
        PendingTrack& t = tracks[i];
        if (t.spans.empty()) continue;
        int group = groupOf(t);
        if (group > 0 && !m_options.keepCpu) continue;
        std::string deviceKey = group == 2 ? std::string("\x1eprofiler") : t.pid;
        auto it = deviceOf.find(deviceKey);
        if (it == deviceOf.end()) {
            uint32_t id = 0;
            if (group == 0) {
                int32_t gpu = IsNumericId(t.pid) ? NumericId(t.pid) : kNone;
                id = m_builder.AddDevice(KinetoGpuName(m_rank, m_rankFrom != "assumed", gpu, m_deviceProperties),
                                         DeviceKind::Gpu, m_rank, m_host, gpu);
            } else if (group == 1) {
                auto name = processNames.find(t.pid);
                std::string process = name != processNames.end() ? name->second + " " : "";
                std::string prefix = m_rankFrom != "assumed" ? "rank " + std::to_string(m_rank) + " " : "";
                id = m_builder.AddDevice(prefix + "CPU " + process + "(pid " + t.pid + ")", DeviceKind::Cpu, m_rank, m_host);
            } else {
                id = m_builder.AddDevice("PyTorch Profiler", DeviceKind::Cpu, m_rank, m_host);
            }
            it = deviceOf.emplace(deviceKey, id).first;
        }
        std::string name = TrimSpace(t.name);
        if (name.empty()) name = group == 0 ? "stream " + t.tid : group == 1 ? "thread " + t.tid : t.tid.empty() ? "marks" : t.tid;
        uint32_t track = m_builder.AddTrack(it->second, name);
        trackOf[t.pid + '\x1f' + t.tid] = track;
        for (Span& s : t.spans) Shift(s);
        m_builder.AddSpans(track, std::move(t.spans));
    }
}

void KinetoReader::AddFlows(const std::map<std::string, uint32_t>& deviceOf, const std::map<std::string, uint32_t>& trackOf)
{
    size_t dropped = 0;
    // Each pending track's track, looked up by its text once, not twice for each flow.
    const std::vector<PendingTrack>& tracks = m_assembly.Tracks();
    constexpr uint32_t kUnknown = kNoTrack - 1;
    std::vector<uint32_t> trackOfPending(tracks.size(), kUnknown);
    auto trackOfEnd = [&](uint32_t i) {
        if (trackOfPending[i] == kUnknown) {
            auto it = trackOf.find(tracks[i].pid + '\x1f' + tracks[i].tid);
            trackOfPending[i] = it == trackOf.end() ? kNoTrack : it->second;
        }
        return trackOfPending[i];
    };
    for (const PendingFlow& f : m_assembly.Flows()) {
        if (!f.haveDst) continue;
        const uint32_t src = trackOfEnd(f.srcTrack), dst = trackOfEnd(f.dstTrack);
        if (src == kNoTrack || dst == kNoTrack) {
            ++dropped; // an end on a thread without spans, or on a dropped CPU device
            continue;
        }
        Flow flow;
        flow.srcTrack = src;
        flow.dstTrack = dst;
        flow.srcDevice = m_builder.TrackAt(flow.srcTrack).device;
        flow.dstDevice = m_builder.TrackAt(flow.dstTrack).device;
        flow.srcNs = Based(f.srcNs);
        flow.dstNs = Based(f.dstNs);
        flow.name = f.name;
        m_builder.AddFlow(flow);
    }
    for (const PendingCounter& c : m_assembly.Counters()) {
        auto it = deviceOf.find(c.pid);
        if (it == deviceOf.end()) continue;
        uint32_t id = m_builder.AddCounter(it->second, c.name, "");
        for (const CounterSample& s : c.samples) m_builder.AddSample(id, Based(s.timeNs), s.value);
    }
    if (dropped > 0) m_builder.Meta().extra.Set("flowsWithoutBothEnds", static_cast<int64_t>(dropped));
    if (m_assembly.Flows().empty()) AddLaunchFlows(trackOf);
    AddExecutionTraceDependencies(trackOf);
}

// The execution trace of this process (by pid; the only one, when only one was given) joined to
// the host ops through their record-function ids.
void KinetoReader::AddExecutionTraceDependencies(const std::map<std::string, uint32_t>& trackOf)
{
    if (m_byRfId.empty()) return;
    const std::vector<PendingTrack>& tracks = m_assembly.Tracks();
    const ExecutionTraceLinks* et = nullptr;
    const std::string& pid = tracks[m_byRfId.front().track].pid;
    const bool knownPid = IsNumericId(pid);
    for (const auto& candidate : m_options.executionTraces)
        if (knownPid && candidate->pid == NumericId(pid)) et = candidate.get();
    // The only execution trace given with the only profiler trace, when their pids cannot be compared.
    if (!et && m_options.executionTraces.size() == 1 && !m_options.executionTraceByPid &&
        (!knownPid || m_options.executionTraces.front()->pid < 0))
        et = m_options.executionTraces.front().get();
    if (!et) return;
    std::sort(m_byRfId.begin(), m_byRfId.end(), [](const Recorded& a, const Recorded& b) { return a.rfId < b.rfId; });
    auto find = [&](int64_t rf) -> const Recorded* {
        auto it = std::lower_bound(m_byRfId.begin(), m_byRfId.end(), rf, [](const Recorded& r, int64_t x) { return r.rfId < x; });
        return it != m_byRfId.end() && it->rfId == rf ? &*it : nullptr;
    };
    auto ref = [&](const Recorded& r) {
        auto it = trackOf.find(tracks[r.track].pid + '\x1f' + tracks[r.track].tid);
        return SpanRef{it == trackOf.end() ? kNoTrack : it->second, Based(r.startNs), Based(r.endNs)};
    };
    int64_t added = 0;
    for (const auto& [producer, consumer] : et->dependencies) {
        const Recorded* a = find(producer);
        const Recorded* b = find(consumer);
        if (!a || !b) continue;
        const Dependency d{ref(*a), ref(*b)};
        if (d.from.track == kNoTrack || d.to.track == kNoTrack) continue;
        m_builder.AddDependency(d);
        ++added;
    }
    m_builder.Meta().extra.Set("executionTrace", std::filesystem::path(et->origin).filename().string());
    m_builder.Meta().extra.Set("executionTraceDependencies", added);
}

// Files without ac2g flow events (sampled or older traces) still pair each launch with its GPU
// activity through the correlation id both carry: one flow per pair, as the flow events would.
void KinetoReader::AddLaunchFlows(const std::map<std::string, uint32_t>& trackOf)
{
    std::sort(m_launchOf.begin(), m_launchOf.end());
    std::sort(m_activityOf.begin(), m_activityOf.end());
    const std::vector<PendingTrack>& tracks = m_assembly.Tracks();
    auto trackId = [&](uint32_t t) {
        auto it = trackOf.find(tracks[t].pid + '\x1f' + tracks[t].tid);
        return it == trackOf.end() ? kNoTrack : it->second;
    };
    size_t l = 0;
    for (const Correlated& a : m_activityOf) {
        while (l < m_launchOf.size() && m_launchOf[l].correlation < a.correlation) ++l;
        if (l == m_launchOf.size() || m_launchOf[l].correlation != a.correlation) continue;
        const Correlated& launch = m_launchOf[l];
        Flow flow;
        flow.srcTrack = trackId(launch.track);
        flow.dstTrack = trackId(a.track);
        if (flow.srcTrack == kNoTrack || flow.dstTrack == kNoTrack) continue; // host threads left out
        flow.srcDevice = m_builder.TrackAt(flow.srcTrack).device;
        flow.dstDevice = m_builder.TrackAt(flow.dstTrack).device;
        flow.srcNs = Based(launch.startNs);
        flow.dstNs = Based(a.startNs);
        flow.name = m_builder.Intern("launch");
        m_builder.AddFlow(flow);
    }
}

void KinetoReader::FillMetadata()
{
    Metadata& m = m_builder.Meta();
    m.source = TraceSource::Kineto;
    auto name = m_topStrings.find("traceName");
    m.title = std::filesystem::path(name != m_topStrings.end() ? name->second : m_origin).filename().string();
    m.workload.Set("rank", int64_t{m_rank});
    m.workload.Set("rankFrom", m_rankFrom);
    if (m_distributed.is_object()) {
        if (auto it = m_distributed.find("world_size"); it != m_distributed.end() && it->is_number_integer())
            m.workload.Set("worldSize", it->get<int64_t>());
        if (auto it = m_distributed.find("backend"); it != m_distributed.end() && it->is_string())
            m.workload.Set("backend", it->get<std::string>());
        if (auto it = m_distributed.find("nccl_version"); it != m_distributed.end() && it->is_string())
            m.hardware.Set("ncclVersion", it->get<std::string>());
        if (auto it = m_distributed.find("pg_config"); it != m_distributed.end()) m.extra.Set("pgConfig", it->dump());
    }
    for (const std::string& pid : m_gpuPids)
        if (IsNumericId(pid))
            if (std::string gpu = KinetoGpuModel(NumericId(pid), m_deviceProperties); !gpu.empty()) m.hardware.Set("gpu", gpu);
    if (!m_host.empty()) m.hardware.Set("host", m_host);
    for (const auto& [key, value] : m_topStrings) m.extra.Set(key, value);
    if (m_baseNs != 0) m.extra.Set("baseTimeNanoseconds", m_baseNs);
    m.extra.Set("events", static_cast<int64_t>(m_assembly.EventCount()));
    if (m_assembly.UnclosedCount() > 0) m.extra.Set("unclosedSpans", static_cast<int64_t>(m_assembly.UnclosedCount()));
}

Trace KinetoReader::Finish()
{
    if (m_assembly.EventCount() == 0) throw Error(m_origin + ": the trace holds no events (an empty event array)");
    m_assembly.CloseOpen();
    ResolveRank();
    KinetoGroupInfo groups{m_distributed};
    m_collectives.Resolve(m_assembly.Tracks(), m_builder, groups);
    m_gemms.Resolve(m_assembly.Tracks(), m_builder);
    std::map<std::string, uint32_t> deviceOf, trackOf;
    AddDevices(deviceOf, trackOf);
    AddFlows(deviceOf, trackOf);
    FillMetadata();
    m_builder.Meta().results.Set("ncclKernels", static_cast<int64_t>(m_collectives.KernelCount()));
    using Kind = KinetoGemms::Kind;
    m_builder.Meta().results.Set("gemmKernels", static_cast<int64_t>(m_gemms.KernelCount(Kind::Gemm)));
    m_builder.Meta().results.Set("gemmKernelsWithFlops", static_cast<int64_t>(m_gemms.Resolved(Kind::Gemm)));
    if (const size_t attention = m_gemms.KernelCount(Kind::Attention); attention > 0) {
        m_builder.Meta().results.Set("attentionKernels", static_cast<int64_t>(attention));
        m_builder.Meta().results.Set("attentionKernelsWithFlops", static_cast<int64_t>(m_gemms.Resolved(Kind::Attention)));
    }
    m_builder.Meta().results.Set("memoryKernelsWithBytes", static_cast<int64_t>(m_gemms.Resolved(Kind::Memory)));
    Trace trace = std::move(m_builder).Finish();
    if (trace.SpanCount() == 0)
        throw Error(m_origin + ": none of the trace's " + std::to_string(m_assembly.EventCount()) +
                    " events is a span paralens can show" + (m_options.keepCpu ? "" : " (host threads were left out)"));
    return trace;
}

} // namespace

Trace ReadKinetoTrace(ByteSource& source, const std::string& origin, const ReadOptions& options)
{
    KinetoReader reader(origin, options);
    try {
        ReadChromeEvents(
            source, origin, [&](const ChromeEvent& e) { reader.OnEvent(e); },
            [&](std::string_view key, std::string_view raw, JsonKind kind) { reader.OnTopLevel(key, raw, kind); },
            options.progress, options.blockBytes, options.parseWorkers);
        return reader.Finish();
    } catch (const nlohmann::json::exception& e) { // distributedInfo or deviceProperties of unexpected shape
        throw Error(origin + ": unexpected trace metadata: " + e.what());
    }
}

Trace ReadKinetoJson(const std::string& json, const std::string& origin, const ReadOptions& options)
{
    auto source = TextSource(json);
    return ReadKinetoTrace(*source, origin, options);
}

} // namespace paralens::core
