#include "trace/TraceBuilder.hpp"

#include "common/Error.hpp"
#include "common/KeyOrder.hpp"
#include "common/Parallel.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>

namespace paralens::core {

uint32_t TraceBuilder::AddDevice(std::string_view name, DeviceKind kind, int32_t rank, std::string_view host,
                                 int32_t gpuIndex)
{
    const StringId n = Intern(name);
    return AddDevice(n, kind, rank, Intern(host), gpuIndex);
}

uint32_t TraceBuilder::AddDevice(StringId name, DeviceKind kind, int32_t rank, StringId host, int32_t gpuIndex)
{
    Require(name < m_trace.m_strings.Size() && host < m_trace.m_strings.Size(), "a device's name is not among the trace's strings");
    Device d;
    d.name = name;
    d.host = host;
    d.rank = rank;
    d.gpuIndex = gpuIndex;
    d.kind = kind;
    m_trace.m_devices.push_back(std::move(d));
    return static_cast<uint32_t>(m_trace.m_devices.size() - 1);
}

uint32_t TraceBuilder::AddTrack(uint32_t device, std::string_view name)
{
    Require(device < m_trace.m_devices.size(), "track '" + std::string(name) + "' names a device that does not exist");
    return AddTrack(device, Intern(name));
}

uint32_t TraceBuilder::AddTrack(uint32_t device, StringId name)
{
    Require(device < m_trace.m_devices.size() && name < m_trace.m_strings.Size(),
            "a track names a device or a string that does not exist");
    Track t;
    t.device = device;
    t.name = name;
    m_trace.m_tracks.push_back(std::move(t));
    uint32_t id = static_cast<uint32_t>(m_trace.m_tracks.size() - 1);
    m_trace.m_devices[device].tracks.push_back(id);
    return id;
}

Trace::DependencyStore& TraceBuilder::Store()
{
    if (!m_trace.m_dependencies) m_trace.m_dependencies = std::make_shared<Trace::DependencyStore>();
    return *m_trace.m_dependencies;
}

void TraceBuilder::AddSpan(uint32_t track, const Span& span)
{
    if (span.endNs < span.startNs)
        throw Error("span '" + std::string(Str(span.name)) + "' ends (" + std::to_string(span.endNs) +
                    " ns) before it starts (" + std::to_string(span.startNs) + " ns)");
    std::vector<Span>& spans = m_trace.m_tracks[track].spans;
    spans.push_back(span);
    // A simulation feeds thousands of tracks in turn (each rank's send, receive and reduce
    // lanes), so a track's next slot is written long after its last and would miss the cache:
    // ask for it now, within what was reserved.
    if (spans.size() < spans.capacity()) __builtin_prefetch(spans.data() + spans.size(), 1);
}

void TraceBuilder::AddSpans(uint32_t track, std::vector<Span>&& spans)
{
    for (const Span& span : spans)
        if (span.endNs < span.startNs) AddSpan(track, span); // throws with the span's name
    std::vector<Span>& dst = m_trace.m_tracks[track].spans;
    if (dst.empty()) dst = std::move(spans);
    else dst.insert(dst.end(), spans.begin(), spans.end());
    spans = {};
}

uint32_t TraceBuilder::AddCounter(uint32_t device, std::string_view name, std::string_view unit)
{
    Counter c;
    c.device = device;
    c.name = Intern(name);
    c.unit = Intern(unit);
    m_trace.m_counters.push_back(std::move(c));
    return static_cast<uint32_t>(m_trace.m_counters.size() - 1);
}

void TraceBuilder::AddSample(uint32_t counter, int64_t timeNs, double value)
{
    m_trace.m_counters[counter].samples.push_back({timeNs, value});
}

namespace {

bool SpanOrder(const Span& a, const Span& b)
{
    if (a.startNs != b.startNs) return a.startNs < b.startNs;
    return a.endNs > b.endNs; // the enclosing span first
}

// Sorts, assigns depths and groups by depth; returns the track's [begin, end) extent.
std::pair<int64_t, int64_t> FinishTrack(Track& track)
{
    auto& spans = track.spans;
    if (!std::is_sorted(spans.begin(), spans.end(), SpanOrder))
        std::stable_sort(spans.begin(), spans.end(), SpanOrder);
    // Most tracks never overlap themselves (a stage's compute, a rank's sends): all at depth 0.
    int64_t reach = std::numeric_limits<int64_t>::min();
    bool flat = true;
    for (const Span& s : spans) {
        if (s.startNs < reach) {
            flat = false;
            break;
        }
        reach = std::max(reach, s.endNs);
    }
    if (flat) {
        for (Span& s : spans) s.depth = 0;
        track.depthBegin.assign({0, static_cast<uint32_t>(spans.size())});
        if (spans.empty()) track.depthBegin.assign(1, 0);
        return spans.empty() ? std::pair{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}
                             : std::pair{spans.front().startNs, reach};
    }
    // One pass: each span takes the lowest level free at its start. Levels in use wait in a heap
    // by their end, released levels in a heap by number: O(n log depth) however deep the nesting.
    using EndLevel = std::pair<int64_t, size_t>;
    std::priority_queue<EndLevel, std::vector<EndLevel>, std::greater<>> busy;
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> freeLevels;
    size_t levels = 0, maxDepth = 0;
    int64_t begin = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
    for (Span& s : spans) {
        while (!busy.empty() && busy.top().first <= s.startNs) {
            freeLevels.push(busy.top().second);
            busy.pop();
        }
        size_t level = levels;
        if (!freeLevels.empty()) {
            level = freeLevels.top();
            freeLevels.pop();
        } else {
            ++levels;
        }
        busy.push({s.endNs, level});
        s.depth = static_cast<uint16_t>(std::min<size_t>(level, 65535));
        maxDepth = std::max<size_t>(maxDepth, s.depth);
        begin = std::min(begin, s.startNs);
        end = std::max(end, s.endNs);
    }
    track.depthBegin.assign(maxDepth + 2, 0);
    if (maxDepth == 0) {
        track.depthBegin[1] = static_cast<uint32_t>(spans.size());
    } else { // group by depth, keeping start order inside each depth
        std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.depth < b.depth; });
        for (const Span& s : spans) ++track.depthBegin[static_cast<size_t>(s.depth) + 1];
        for (size_t d = 1; d < track.depthBegin.size(); ++d) track.depthBegin[d] += track.depthBegin[d - 1];
    }
    if (spans.empty()) track.depthBegin.assign(1, 0);
    return {begin, end};
}

// The order that sorts flows by source time, ties in the order they were added (StableOrderByKey:
// much cheaper than moving the large structs through a comparison sort), or none when they are
// sorted already; and, in the same pass, their extent.
std::vector<uint32_t> FlowOrder(const std::vector<Flow>& flows, std::pair<int64_t, int64_t>& extent)
{
    std::vector<int64_t> keys(flows.size());
    bool sorted = true;
    for (size_t i = 0; i < flows.size(); ++i) {
        const Flow& f = flows[i];
        keys[i] = f.srcNs;
        sorted = sorted && (i == 0 || keys[i - 1] <= f.srcNs);
        extent.first = std::min({extent.first, f.srcNs, f.dstNs});
        extent.second = std::max({extent.second, f.srcNs, f.dstNs});
    }
    return sorted ? std::vector<uint32_t>() : StableOrderByKey(keys);
}

// The flows put in `order`, a slice of them at a time (`parts` slices, side by side on every core).
void ApplyFlowOrder(std::vector<Flow>& flows, const std::vector<uint32_t>& order, size_t parts)
{
    if (order.empty()) return;
    std::vector<Flow> sorted(flows.size());
    const size_t slice = (flows.size() + parts - 1) / parts;
    auto gather = [&](size_t part) {
        for (size_t k = part * slice; k < std::min(flows.size(), (part + 1) * slice); ++k) sorted[k] = flows[order[k]];
    };
    if (parts == 1) gather(0);
    else ParallelFor(parts, 1, gather);
    flows.swap(sorted);
}

} // namespace

Trace TraceBuilder::Finish() &&
{
    Trace& t = m_trace;
    int64_t begin = std::numeric_limits<int64_t>::max();
    int64_t end = std::numeric_limits<int64_t>::min();
    t.m_spanCount = 0;
    for (const Track& track : t.m_tracks) t.m_spanCount += track.spans.size();
    // The tracks are independent: a large trace's are finished on every core, the flows' order
    // found beside them, then the flows put in it on every core.
    std::vector<std::pair<int64_t, int64_t>> extent(t.m_tracks.size());
    std::pair<int64_t, int64_t> flowExtent{begin, end};
    std::vector<uint32_t> order;
    constexpr size_t kAlone = size_t{1} << 16; // fewer spans and flows than this: threads would cost more
    if (t.m_spanCount + t.m_flows.size() < kAlone) {
        for (size_t k = 0; k < t.m_tracks.size(); ++k) extent[k] = FinishTrack(t.m_tracks[k]);
        order = FlowOrder(t.m_flows, flowExtent);
        ApplyFlowOrder(t.m_flows, order, 1);
    } else {
        constexpr size_t kRun = 8; // tracks a task
        const size_t runs = (t.m_tracks.size() + kRun - 1) / kRun;
        ParallelFor(runs + 1, 1, [&](size_t i) { // the flows first: the largest task
            if (i == 0) return void(order = FlowOrder(t.m_flows, flowExtent));
            for (size_t k = (i - 1) * kRun; k < std::min(t.m_tracks.size(), i * kRun); ++k) extent[k] = FinishTrack(t.m_tracks[k]);
        });
        ApplyFlowOrder(t.m_flows, order, 4 * UsableThreads());
    }
    extent.push_back(flowExtent);
    for (const auto& [b, e] : extent) {
        begin = std::min(begin, b);
        end = std::max(end, e);
    }
    for (Counter& c : t.m_counters) {
        std::stable_sort(c.samples.begin(), c.samples.end(),
                         [](const CounterSample& a, const CounterSample& b) { return a.timeNs < b.timeNs; });
        if (!c.samples.empty()) {
            begin = std::min(begin, c.samples.front().timeNs);
            end = std::max(end, c.samples.back().timeNs);
        }
    }
    t.m_beginNs = begin <= end ? begin : 0;
    t.m_endNs = begin <= end ? end : 0;
    return std::move(m_trace);
}

Trace TraceBuilder::WithMetadata(Trace&& trace, Metadata meta)
{
    trace.m_meta = std::move(meta);
    return std::move(trace);
}

} // namespace paralens::core
