#include "trace/FileIO.hpp"
#include "trace/JsonText.hpp"
#include "trace/TraceFile.hpp"

#include <thread>
#include <variant>

namespace paralens::core {

namespace {

constexpr size_t kFlushBytes = 1 << 20;

void AppendMetaValue(std::string& out, const MetaValue& v)
{
    if (const auto* b = std::get_if<bool>(&v)) out += *b ? "true" : "false";
    else if (const auto* i = std::get_if<int64_t>(&v)) AppendInt(out, *i);
    else if (const auto* d = std::get_if<double>(&v)) AppendDouble(out, *d);
    else AppendJsonString(out, std::get<std::string>(v));
}

void AppendSection(std::string& out, std::string_view key, const MetaSection& section)
{
    out += ",\n  ";
    AppendJsonString(out, key);
    out += ":{";
    bool first = true;
    for (const auto& [k, v] : section.Entries()) {
        if (!first) out += ',';
        first = false;
        AppendJsonString(out, k);
        out += ':';
        AppendMetaValue(out, v);
    }
    out += '}';
}

void AppendHeader(std::string& out, const Trace& t)
{
    const Metadata& m = t.Meta();
    out += "{\"displayTimeUnit\":\"ns\",\n\"paralens\":{\"format\":\"paralens-trace\",\"version\":1,\"source\":";
    AppendJsonString(out, Name(m.source));
    out += ",\"title\":";
    AppendJsonString(out, m.title);
    AppendSection(out, "workload", m.workload);
    AppendSection(out, "model", m.model);
    AppendSection(out, "hardware", m.hardware);
    AppendSection(out, "results", m.results);
    AppendSection(out, "extra", m.extra);
    out += ",\n  \"devices\":[";
    for (size_t i = 0; i < t.Devices().size(); ++i) {
        const Device& d = t.Devices()[i];
        out += i ? ",\n    {\"name\":" : "\n    {\"name\":";
        AppendJsonString(out, t.Str(d.name));
        out += ",\"host\":";
        AppendJsonString(out, t.Str(d.host));
        out += ",\"rank\":";
        AppendInt(out, d.rank);
        out += ",\"gpuIndex\":";
        AppendInt(out, d.gpuIndex);
        out += ",\"kind\":";
        AppendJsonString(out, Name(d.kind));
        out += '}';
    }
    out += "],\n  \"tracks\":[";
    for (size_t i = 0; i < t.Tracks().size(); ++i) {
        const Track& tr = t.Tracks()[i];
        out += i ? ",\n    {\"device\":" : "\n    {\"device\":";
        AppendUint(out, tr.device);
        out += ",\"name\":";
        AppendJsonString(out, t.Str(tr.name));
        out += '}';
    }
    out += "],\n  \"counters\":[";
    for (size_t i = 0; i < t.Counters().size(); ++i) {
        const Counter& c = t.Counters()[i];
        out += i ? ",{\"device\":" : "{\"device\":";
        AppendUint(out, c.device);
        out += ",\"name\":";
        AppendJsonString(out, t.Str(c.name));
        out += ",\"unit\":";
        AppendJsonString(out, t.Str(c.unit));
        out += '}';
    }
    out += "]},\n\"traceEvents\":[\n";
}

void AppendNameEvent(std::string& out, bool& first, std::string_view what, uint32_t pid, int64_t tid,
                     std::string_view key, std::string_view name)
{
    out += first ? "{\"ph\":\"M\",\"name\":" : ",\n{\"ph\":\"M\",\"name\":";
    first = false;
    AppendJsonString(out, what);
    out += ",\"pid\":";
    AppendUint(out, pid);
    if (tid >= 0) {
        out += ",\"tid\":";
        AppendInt(out, tid);
    }
    out += ",\"args\":{";
    AppendJsonString(out, key);
    out += ':';
    if (key == "name") AppendJsonString(out, name);
    else out += name; // sort_index: a number already formatted
    out += "}}";
}

void AppendSpan(std::string& out, const Trace& t, uint32_t pid, uint32_t tid, const Span& s)
{
    out += ",\n{\"ph\":\"X\",\"pid\":";
    AppendUint(out, pid);
    out += ",\"tid\":";
    AppendUint(out, tid);
    out += ",\"ts\":";
    AppendMicrosFromNs(out, s.startNs);
    out += ",\"dur\":";
    AppendMicrosFromNs(out, s.endNs - s.startNs);
    out += ",\"name\":";
    AppendJsonString(out, t.Str(s.name));
    out += ",\"cat\":";
    AppendJsonString(out, Name(s.category));
    out += ",\"args\":{";
    size_t mark = out.size();
    auto sep = [&] { if (out.size() != mark) out += ','; };
    if (s.bytes) { sep(); out += "\"bytes\":"; AppendUint(out, s.bytes); }
    if (s.flops != 0.0) { sep(); out += "\"flops\":"; AppendDouble(out, s.flops); }
    if (s.predictedNs != kNoPrediction) { sep(); out += "\"predictedNs\":"; AppendInt(out, s.predictedNs); }
    if (s.microBatch != kNone) { sep(); out += "\"microBatch\":"; AppendInt(out, s.microBatch); }
    if (s.chunk != kNone) { sep(); out += "\"chunk\":"; AppendInt(out, s.chunk); }
    if (s.step != kNone) { sep(); out += "\"step\":"; AppendInt(out, s.step); }
    if (s.detail != 0) { sep(); out += "\"detail\":"; AppendJsonString(out, t.Str(s.detail)); }
    out += "}}";
}

void AppendFlow(std::string& out, const Trace& t, size_t id, const Flow& f)
{
    auto track = [](uint32_t tr) { return tr == kNoTrack ? int64_t{-1} : int64_t{tr}; };
    out += ",\n{\"ph\":\"s\",\"id\":";
    AppendUint(out, id);
    out += ",\"pid\":";
    AppendUint(out, f.srcDevice);
    out += ",\"tid\":";
    AppendInt(out, track(f.srcTrack));
    out += ",\"ts\":";
    AppendMicrosFromNs(out, f.srcNs);
    out += ",\"name\":";
    AppendJsonString(out, f.name ? t.Str(f.name) : std::string_view("message"));
    out += ",\"cat\":\"flow\",\"args\":{\"bytes\":";
    AppendUint(out, f.bytes);
    out += ",\"step\":";
    AppendInt(out, f.step);
    out += ",\"chunk\":";
    AppendInt(out, f.chunk);
    out += "}},\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":";
    AppendUint(out, id);
    out += ",\"pid\":";
    AppendUint(out, f.dstDevice);
    out += ",\"tid\":";
    AppendInt(out, track(f.dstTrack));
    out += ",\"ts\":";
    AppendMicrosFromNs(out, f.dstNs);
    out += ",\"name\":";
    AppendJsonString(out, f.name ? t.Str(f.name) : std::string_view("message"));
    out += ",\"cat\":\"flow\"}";
}

// After the events, as [fromTrack, fromStartNs, fromEndNs, toTrack, toStartNs, toEndNs] rows.
template <class Sink>
void AppendDependencies(std::string& out, const Trace& t, Sink& sink)
{
    if (t.Dependencies().empty()) return;
    out += ",\n\"paralensDependencies\":[";
    bool first = true;
    for (const Dependency& d : t.Dependencies()) {
        out += first ? "\n[" : ",\n[";
        first = false;
        for (const SpanRef* ref : {&d.from, &d.to}) {
            if (ref == &d.to) out += ',';
            AppendUint(out, ref->track);
            out += ',';
            AppendInt(out, ref->startNs);
            out += ',';
            AppendInt(out, ref->endNs);
        }
        out += ']';
        if (out.size() > kFlushBytes) { sink(out); out.clear(); }
    }
    out += "]";
}

template <class Sink>
void WriteTrace(const Trace& t, Sink&& sink)
{
    // Dependencies a producer derives when asked (a large simulation's) are derived on a thread of
    // their own while the spans are written; they are written last.
    std::thread derive;
    if (t.DerivesDependencies() && std::thread::hardware_concurrency() > 1) derive = std::thread([&t] { (void)t.Dependencies(); });
    struct Join {
        std::thread& t;
        ~Join() { if (t.joinable()) t.join(); }
    } join{derive};
    std::string out;
    out.reserve(kFlushBytes + 4096);
    AppendHeader(out, t);
    bool first = true;
    for (uint32_t d = 0; d < t.Devices().size(); ++d) {
        AppendNameEvent(out, first, "process_name", d, -1, "name", t.Str(t.Devices()[d].name));
        AppendNameEvent(out, first, "process_sort_index", d, -1, "sort_index", std::to_string(d));
    }
    for (uint32_t i = 0; i < t.Tracks().size(); ++i) {
        const Track& tr = t.Tracks()[i];
        AppendNameEvent(out, first, "thread_name", tr.device, i, "name", t.Str(tr.name));
        AppendNameEvent(out, first, "thread_sort_index", tr.device, i, "sort_index", std::to_string(i));
    }
    if (first) out += "{\"ph\":\"M\",\"name\":\"trace_name\",\"pid\":0,\"args\":{\"name\":\"empty\"}}";
    for (uint32_t i = 0; i < t.Tracks().size(); ++i) {
        const Track& tr = t.Tracks()[i];
        for (const Span& s : tr.spans) {
            AppendSpan(out, t, tr.device, i, s);
            if (out.size() > kFlushBytes) { sink(out); out.clear(); }
        }
    }
    for (size_t i = 0; i < t.Flows().size(); ++i) {
        AppendFlow(out, t, i + 1, t.Flows()[i]);
        if (out.size() > kFlushBytes) { sink(out); out.clear(); }
    }
    for (const Counter& c : t.Counters()) {
        for (const CounterSample& s : c.samples) {
            out += ",\n{\"ph\":\"C\",\"pid\":";
            AppendUint(out, c.device);
            out += ",\"name\":";
            AppendJsonString(out, t.Str(c.name));
            out += ",\"ts\":";
            AppendMicrosFromNs(out, s.timeNs);
            out += ",\"args\":{\"value\":";
            AppendDouble(out, s.value);
            out += "}}";
            if (out.size() > kFlushBytes) { sink(out); out.clear(); }
        }
    }
    out += "\n]";
    AppendDependencies(out, t, sink);
    out += "}\n";
    sink(out);
}

} // namespace

void WriteTraceFile(const Trace& trace, const std::string& path)
{
    OutputFile file(path);
    WriteTrace(trace, [&](const std::string& chunk) { file.Write(chunk); });
    file.Commit();
}

std::string TraceToJsonText(const Trace& trace)
{
    std::string all;
    WriteTrace(trace, [&](const std::string& chunk) { all += chunk; });
    return all;
}

} // namespace paralens::core
