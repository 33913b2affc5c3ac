// ChromeAssembly: what the Chrome and Kineto readers share. It turns Chrome trace events of every
// phase into pending spans on (pid, tid) tracks, flows and counters; each reader then decides how
// pids become devices. Internal to core/trace; not thread-safe (one per read).
//
// Phases: X complete; B/E begin/end, matched per thread (E closes the latest open B); i/I/R
// instants as zero-length spans; b/n/e nestable async and S/F legacy async as spans on an
// "async <cat>" track of their process (e closes the latest open b of the same cat, id and name);
// s/t/f flows, paired by cat and id in time order whatever their order in the file (Kineto
// writes a flow's f before its s; t closes one arrow and opens the next); C counters; M names. Spans still open at
// the end are closed at the latest time seen and counted, never dropped. Other phases (P, O, N,
// D, c, ...) are counted as skipped.
#pragma once

#include "trace/ChromeEvents.hpp"
#include "trace/TraceBuilder.hpp"

#include <array>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace paralens::core {

// Times a reader accepts: within +-4e18 ns of 0 (years 1843 to 2096 as Unix time), so that any
// sum or difference of two of them fits int64 (analysis, merging, clock shifts).
inline constexpr int64_t kMaxAbsTraceNs = 4'000'000'000'000'000'000;

struct PendingTrack {
    std::string pid, tid;
    std::string name; // from thread_name, or given by the assembly for async and instant tracks
    bool async = false;
    std::vector<Span> spans;
};

struct PendingFlow {
    uint32_t srcTrack = 0, dstTrack = 0; // indices into ChromeAssembly::Tracks(): their pid and tid
    int64_t srcNs = 0, dstNs = 0;
    uint64_t bytes = 0;
    int32_t step = kNone, chunk = kNone;
    StringId name = 0;
    bool haveDst = false;
};

struct PendingCounter {
    std::string pid;
    std::string name;
    std::vector<CounterSample> samples;
};

// Numeric ids sort as numbers, others after them as text.
bool IdLess(const std::string& a, const std::string& b);

class ChromeAssembly {
public:
    // Sets a span's category, bytes, detail, ... from its event (start, end and name are set).
    using SpanFill = std::function<void(const ChromeEvent&, Span&)>;

    ChromeAssembly(const std::string& origin, TraceBuilder& builder) : m_origin(origin), m_builder(builder) {}

    // Any phase. Throws Error naming the event when a timed phase has no "ts", or a time is
    // beyond kMaxAbsTraceNs.
    void OnEvent(const ChromeEvent& e, const SpanFill& fill);
    // An X event (counted like OnEvent): returns {track index, span index} of its span.
    std::pair<size_t, size_t> AddComplete(const ChromeEvent& e, const SpanFill& fill);
    // Adds a finished span to the (pid, tid) track; returns {track index, span index}.
    std::pair<size_t, size_t> AddSpan(std::string_view pid, std::string_view tid, const Span& span);
    // At the end of the events: closes what is still open (B without E, b without e) at the
    // latest time seen, and pairs the flow events into Flows().
    void CloseOpen();

    [[noreturn]] void Fail(const ChromeEvent& e, const std::string& what) const;
    const std::string& Origin() const { return m_origin; }
    TraceBuilder& Builder() { return m_builder; }

    std::vector<PendingTrack>& Tracks() { return m_tracks; }
    std::vector<PendingFlow>& Flows() { return m_flows; }
    std::vector<PendingCounter>& Counters() { return m_counters; }
    const std::map<std::string, std::string>& ProcessNames() const { return m_processNames; }
    const std::map<std::string, std::string>& ProcessLabels() const { return m_processLabels; }

    size_t EventCount() const { return m_events; }
    size_t SkippedCount() const { return m_skipped; }
    size_t UnclosedCount() const { return m_unclosed; }
    size_t UnmatchedEndCount() const { return m_unmatchedEnds; }
    int64_t LatestNs() const { return m_latestNs; }

private:
    size_t TrackIndex(std::string_view pid, std::string_view tid);
    Span Start(const ChromeEvent& e, const SpanFill& fill);
    void Note(const ChromeEvent& e);
    void OnBegin(const ChromeEvent& e, const SpanFill& fill);
    void OnEnd(const ChromeEvent& e);
    void OnAsync(const ChromeEvent& e, const SpanFill& fill);
    void OnFlow(const ChromeEvent& e);
    void OnCounter(const ChromeEvent& e);
    void OnMetadata(const ChromeEvent& e);
    void RequireTs(const ChromeEvent& e) const;

    struct OpenAsync {
        size_t track = 0;
        Span span;
    };
    struct FlowPoint {
        uint32_t cat = 0; // index in m_flowCats
        uint64_t id = 0;  // the id's number, or (1 << 63) | index in m_flowIds for other ids
        char ph = 0;
        uint32_t track = 0;
        int64_t tsNs = 0;
        uint64_t bytes = 0;
        int32_t step = kNone, chunk = kNone;
        StringId name = 0;
    };
    void PairFlows();

    const std::string& m_origin;
    TraceBuilder& m_builder;
    std::vector<PendingTrack> m_tracks;
    std::unordered_map<std::string, size_t> m_trackIndex;
    struct RecentTrack {
        std::string pid, tid;
        size_t track = kNoRecent;
    };
    static constexpr size_t kNoRecent = ~size_t{0};
    std::array<RecentTrack, 4> m_recent; // the last tracks the map gave
    size_t m_nextRecent = 0;             // the slot the next one takes
    std::unordered_map<size_t, std::vector<Span>> m_openBegins;         // track -> B stack
    std::unordered_map<std::string, std::vector<OpenAsync>> m_openAsync; // pid/cat/id -> b stack
    std::vector<PendingFlow> m_flows;
    std::vector<FlowPoint> m_flowPoints;
    std::vector<std::string> m_flowCats;                // few: searched in order
    std::unordered_map<std::string, uint64_t> m_flowIds; // ids that are not numbers
    uint64_t FlowId(std::string_view id);
    std::vector<PendingCounter> m_counters;
    std::unordered_map<std::string, size_t> m_counterIndex;
    std::map<std::string, std::string> m_processNames, m_processLabels;
    size_t m_events = 0, m_skipped = 0, m_unclosed = 0, m_unmatchedEnds = 0;
    int64_t m_latestNs = 0;
    bool m_sawTime = false;
};

} // namespace paralens::core
