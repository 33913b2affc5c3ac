#include "trace/ChromeAssembly.hpp"

#include "common/CharConv.hpp"
#include "common/Error.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace paralens::core {

bool IdLess(const std::string& a, const std::string& b)
{
    int64_t x = 0, y = 0;
    bool nx = !a.empty() && paralens::FromChars(a.data(), a.data() + a.size(), x).ec == std::errc();
    bool ny = !b.empty() && paralens::FromChars(b.data(), b.data() + b.size(), y).ec == std::errc();
    if (nx && ny) return x < y;
    if (nx != ny) return nx;
    return a < b;
}

namespace {
constexpr char kSep = '\x1f';
constexpr std::string_view kAsyncTid = "\x1e" "async "; // cannot clash with a real tid
} // namespace

void ChromeAssembly::Fail(const ChromeEvent& e, const std::string& what) const
{
    throw Error(m_origin + ": traceEvents[" + std::to_string(e.index) + "] (byte " + std::to_string(e.byteOffset) +
                "): " + what);
}

void ChromeAssembly::RequireTs(const ChromeEvent& e) const
{
    if (!e.hasTs) Fail(e, std::string("an \"") + e.ph + "\" event needs \"ts\"");
}

size_t ChromeAssembly::TrackIndex(std::string_view pid, std::string_view tid)
{
    // A few threads' events interleave (a CPU op, its launch's flow, the kernel on a stream): the
    // last few tracks the map gave are looked at first, by their pid and tid.
    for (const RecentTrack& r : m_recent)
        if (r.track != kNoRecent && r.pid == pid && r.tid == tid) return r.track;
    std::string key;
    key.reserve(pid.size() + 1 + tid.size());
    key.assign(pid);
    key += kSep;
    key.append(tid);
    auto [it, inserted] = m_trackIndex.emplace(std::move(key), m_tracks.size());
    if (inserted) {
        PendingTrack& t = m_tracks.emplace_back();
        t.pid = pid;
        t.tid = tid;
        if (tid.substr(0, kAsyncTid.size()) == kAsyncTid) {
            t.async = true;
            t.name = "async" + std::string(tid.substr(kAsyncTid.size() - 1));
            while (!t.name.empty() && t.name.back() == ' ') t.name.pop_back();
        }
    }
    RecentTrack& slot = m_recent[m_nextRecent]; // in place of the one found longest ago
    m_nextRecent = (m_nextRecent + 1) % m_recent.size();
    slot.pid.assign(pid);
    slot.tid.assign(tid);
    slot.track = it->second;
    return it->second;
}

std::pair<size_t, size_t> ChromeAssembly::AddSpan(std::string_view pid, std::string_view tid, const Span& span)
{
    size_t track = TrackIndex(pid, tid);
    m_tracks[track].spans.push_back(span);
    if (!m_sawTime || span.endNs > m_latestNs) m_latestNs = span.endNs;
    m_sawTime = true;
    return {track, m_tracks[track].spans.size() - 1};
}

Span ChromeAssembly::Start(const ChromeEvent& e, const SpanFill& fill)
{
    RequireTs(e);
    Span s;
    s.startNs = e.tsNs;
    s.endNs = e.tsNs;
    s.name = m_builder.Intern(e.name);
    if (fill) fill(e, s);
    return s;
}

void ChromeAssembly::Note(const ChromeEvent& e)
{
    ++m_events;
    if (e.hasTs && (e.tsNs > kMaxAbsTraceNs || e.tsNs < -kMaxAbsTraceNs))
        Fail(e, "\"ts\" is out of range: more than 4e15 microseconds (126 years) from 0");
    if (e.hasTs && (!m_sawTime || e.tsNs > m_latestNs)) {
        m_latestNs = e.tsNs;
        m_sawTime = true;
    }
}

std::pair<size_t, size_t> ChromeAssembly::AddComplete(const ChromeEvent& e, const SpanFill& fill)
{
    Note(e);
    Span s = Start(e, fill);
    int64_t dur = e.hasDur ? std::max<int64_t>(e.durNs, 0) : 0;
    if (dur > kMaxAbsTraceNs - s.startNs) // no overflow: |startNs| <= kMaxAbsTraceNs
        Fail(e, "\"dur\" is too large: the span would end more than 4e15 microseconds (126 years) from 0");
    s.endNs = s.startNs + dur;
    return AddSpan(e.pid, e.tid, s);
}

void ChromeAssembly::OnEvent(const ChromeEvent& e, const SpanFill& fill)
{
    if (e.ph == 'X') {
        AddComplete(e, fill);
        return;
    }
    Note(e);
    switch (e.ph) {
    case 'B': OnBegin(e, fill); break;
    case 'E': OnEnd(e); break;
    case 'i':
    case 'I':
    case 'R': AddSpan(e.pid, e.tid, Start(e, fill)); break;
    case 'b':
    case 'n':
    case 'e':
    case 'S':
    case 'F': OnAsync(e, fill); break;
    case 's':
    case 't':
    case 'f': OnFlow(e); break;
    case 'C': OnCounter(e); break;
    case 'M': OnMetadata(e); break;
    default: ++m_skipped; break;
    }
}

void ChromeAssembly::OnBegin(const ChromeEvent& e, const SpanFill& fill)
{
    size_t track = TrackIndex(e.pid, e.tid);
    m_openBegins[track].push_back(Start(e, fill));
}

void ChromeAssembly::OnEnd(const ChromeEvent& e)
{
    RequireTs(e);
    size_t track = TrackIndex(e.pid, e.tid);
    auto it = m_openBegins.find(track);
    if (it == m_openBegins.end() || it->second.empty()) {
        ++m_unmatchedEnds;
        return;
    }
    Span s = it->second.back();
    it->second.pop_back();
    s.endNs = std::max(e.tsNs, s.startNs);
    m_tracks[track].spans.push_back(s);
}

void ChromeAssembly::OnAsync(const ChromeEvent& e, const SpanFill& fill)
{
    std::string tid(kAsyncTid);
    tid.append(e.cat);
    size_t track = TrackIndex(e.pid, tid);
    std::string key = std::string(e.pid) + kSep + std::string(e.cat) + kSep + std::string(e.id);
    if (e.ph == 'n') {
        m_tracks[track].spans.push_back(Start(e, fill));
        return;
    }
    if (e.ph == 'b' || e.ph == 'S') {
        m_openAsync[key].push_back({track, Start(e, fill)});
        return;
    }
    RequireTs(e);
    auto it = m_openAsync.find(key);
    if (it == m_openAsync.end() || it->second.empty()) {
        ++m_unmatchedEnds;
        return;
    }
    std::vector<OpenAsync>& stack = it->second;
    size_t pick = stack.size() - 1; // the latest open one of the same name, else the latest
    if (!e.name.empty()) {
        for (size_t i = stack.size(); i-- > 0;) {
            if (m_builder.Str(stack[i].span.name) == e.name) {
                pick = i;
                break;
            }
        }
    }
    OpenAsync open = stack[pick];
    stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(pick));
    open.span.endNs = std::max(e.tsNs, open.span.startNs);
    m_tracks[open.track].spans.push_back(open.span);
}

void ChromeAssembly::OnFlow(const ChromeEvent& e)
{
    RequireTs(e);
    FlowPoint p;
    auto cat = std::find(m_flowCats.begin(), m_flowCats.end(), e.cat);
    if (cat == m_flowCats.end()) cat = m_flowCats.insert(m_flowCats.end(), std::string(e.cat));
    p.cat = static_cast<uint32_t>(cat - m_flowCats.begin());
    p.id = FlowId(e.id);
    p.ph = e.ph;
    p.track = static_cast<uint32_t>(TrackIndex(e.pid, e.tid));
    p.tsNs = e.tsNs;
    if (e.ph != 'f') {
        p.name = m_builder.Intern(e.name);
        int64_t i = 0;
        if (const ChromeArg* a = e.Arg("bytes")) a->AsUint64(p.bytes);
        if (const ChromeArg* a = e.Arg("step"); a && a->AsInt64(i)) p.step = static_cast<int32_t>(i);
        if (const ChromeArg* a = e.Arg("chunk"); a && a->AsInt64(i)) p.chunk = static_cast<int32_t>(i);
    }
    m_flowPoints.push_back(p);
}

// Flow ids are numbers (Kineto's correlation ids) or strings ("0x1f"): numbers keep no string.
uint64_t ChromeAssembly::FlowId(std::string_view id)
{
    constexpr uint64_t kText = uint64_t{1} << 63;
    uint64_t v = 0;
    auto r = paralens::FromChars(id.data(), id.data() + id.size(), v);
    if (!id.empty() && r.ec == std::errc() && r.ptr == id.data() + id.size() && v < kText) return v;
    auto [it, inserted] = m_flowIds.emplace(std::string(id), kText | m_flowIds.size());
    return it->second;
}

void ChromeAssembly::PairFlows()
{
    auto rank = [](char ph) { return ph == 's' ? 0 : ph == 't' ? 1 : 2; };
    auto sameKey = [](const FlowPoint& a, const FlowPoint& b) { return a.cat == b.cat && a.id == b.id; };
    std::stable_sort(m_flowPoints.begin(), m_flowPoints.end(), [&](const FlowPoint& a, const FlowPoint& b) {
        if (a.cat != b.cat) return a.cat < b.cat;
        if (a.id != b.id) return a.id < b.id;
        if (a.tsNs != b.tsNs) return a.tsNs < b.tsNs;
        return rank(a.ph) < rank(b.ph);
    });
    const FlowPoint* open = nullptr;
    for (const FlowPoint& p : m_flowPoints) {
        if (open && !sameKey(*open, p)) open = nullptr; // a start left without an end
        if (p.ph != 's' && open) {
            PendingFlow f;
            f.srcTrack = open->track;
            f.dstTrack = p.track;
            f.srcNs = open->tsNs;
            f.dstNs = p.tsNs;
            f.bytes = open->bytes;
            f.step = open->step;
            f.chunk = open->chunk;
            f.name = open->name;
            f.haveDst = true;
            m_flows.push_back(f);
            open = nullptr;
        } else if (p.ph == 'f') {
            ++m_unmatchedEnds;
        }
        if (p.ph != 'f') open = &p; // s, and t which starts the next arrow
    }
    m_flowPoints = {};
}

void ChromeAssembly::OnCounter(const ChromeEvent& e)
{
    RequireTs(e);
    for (const ChromeArg& a : e.args) {
        double value = 0;
        if (!a.AsDouble(value)) continue;
        std::string name(e.name);
        if (a.key != "value" && !a.key.empty()) name += " " + std::string(a.key);
        std::string key = std::string(e.pid) + kSep + name;
        auto [it, inserted] = m_counterIndex.emplace(key, m_counters.size());
        if (inserted) m_counters.push_back({std::string(e.pid), name, {}});
        m_counters[it->second].samples.push_back({e.tsNs, value});
    }
}

void ChromeAssembly::OnMetadata(const ChromeEvent& e)
{
    if (e.name == "process_labels") {
        if (const ChromeArg* a = e.Arg("labels")) m_processLabels[std::string(e.pid)] = std::string(a->text);
        return;
    }
    const ChromeArg* a = e.Arg("name");
    if (!a) return;
    if (e.name == "process_name") m_processNames[std::string(e.pid)] = std::string(a->text);
    else if (e.name == "thread_name") m_tracks[TrackIndex(e.pid, e.tid)].name = std::string(a->text);
}

void ChromeAssembly::CloseOpen()
{
    PairFlows();
    for (auto& [track, stack] : m_openBegins) {
        for (Span& s : stack) {
            s.endNs = std::max(m_latestNs, s.startNs);
            m_tracks[track].spans.push_back(s);
            ++m_unclosed;
        }
        stack.clear();
    }
    for (auto& [key, stack] : m_openAsync) {
        for (OpenAsync& open : stack) {
            open.span.endNs = std::max(m_latestNs, open.span.startNs);
            m_tracks[open.track].spans.push_back(open.span);
            ++m_unclosed;
        }
        stack.clear();
    }
}

} // namespace paralens::core
