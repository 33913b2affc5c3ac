// TraceBuilder: collects devices, tracks, spans, flows and counters in any order, then Finish()
// sorts each track, assigns overlap depths and hands out an immutable Trace.
// Not thread-safe, with one exception: AddSpan on distinct tracks (whose tracks were added before)
// may run on several threads at once, beside AddFlow on one of them (a simulation writes its
// ranks' lanes so). Otherwise one builder per worker thread; publish the finished Trace.
#pragma once

#include "trace/Trace.hpp"

#include <string_view>

namespace paralens::core {

class TraceBuilder {
public:
    TraceBuilder() = default;
    // A builder whose strings start as `strings` (their ids stay valid): for spans interned
    // beforehand, as a live collector keeps them between snapshots.
    explicit TraceBuilder(StringTable strings) { m_trace.m_strings = std::move(strings); }

    StringId Intern(std::string_view text) { return m_trace.m_strings.Intern(text); }
    Metadata& Meta() { return m_trace.m_meta; }

    uint32_t AddDevice(std::string_view name, DeviceKind kind, int32_t rank, std::string_view host = {},
                       int32_t gpuIndex = kNone);
    uint32_t AddTrack(uint32_t device, std::string_view name);
    // The same with names already interned in the strings the builder started from (no lookup:
    // a copied table is indexed only when it first interns).
    uint32_t AddDevice(StringId name, DeviceKind kind, int32_t rank, StringId host, int32_t gpuIndex = kNone);
    uint32_t AddTrack(uint32_t device, StringId name);
    size_t DeviceCount() const { return m_trace.m_devices.size(); }
    size_t TrackCount() const { return m_trace.m_tracks.size(); }
    Device& DeviceAt(uint32_t device) { return m_trace.m_devices[device]; }
    const Track& TrackAt(uint32_t track) const { return m_trace.m_tracks[track]; }
    std::string_view Str(StringId id) const { return m_trace.m_strings.Get(id); }

    void ReserveSpans(uint32_t track, size_t count) { m_trace.m_tracks[track].spans.reserve(count); }
    // Throws Error when the span ends before it starts.
    void AddSpan(uint32_t track, const Span& span);
    // Many spans at once, taken over without a copy when the track has none yet (large imports).
    // Throws Error when one ends before it starts.
    void AddSpans(uint32_t track, std::vector<Span>&& spans);
    void ReserveFlows(size_t count) { m_trace.m_flows.reserve(count); }
    void ReserveDependencies(size_t count) { Store().list.reserve(count); }
    void AddFlow(const Flow& flow) { m_trace.m_flows.push_back(flow); }
    void AddDependency(const Dependency& d) { Store().list.push_back(d); }
    // Dependencies derived when first asked for (after the recorded ones): see DependencySource.
    void SetDependencySource(std::shared_ptr<const DependencySource> source) { Store().source = std::move(source); }
    uint32_t AddCounter(uint32_t device, std::string_view name, std::string_view unit);
    void AddSample(uint32_t counter, int64_t timeNs, double value);

    // Sorts spans by start (longer first on ties, so parents precede children), gives overlapping
    // spans separate depth levels (never drops one; each span takes the lowest free level, in
    // O(n log depth)), sorts flows and samples, computes the extent. A large trace's tracks are
    // finished on every core (core/common/Parallel.hpp), beside the flows' sort.
    Trace Finish() &&;

    // The same trace under other metadata (a merge's result given its run's title and sections);
    // no copy of the spans.
    static Trace WithMetadata(Trace&& trace, Metadata meta);

private:
    Trace::DependencyStore& Store();

    Trace m_trace;
};

} // namespace paralens::core
