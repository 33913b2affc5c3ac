// The Trace: the one thing every executor and importer produces and every view reads.
//
// Units: time is int64 nanoseconds (absolute, in the clock of the source; a simulation starts at
// 0), sizes are uint64 bytes, FLOPs are counted operations. A Trace is built by TraceBuilder and
// is immutable afterwards: share it as std::shared_ptr<const Trace>; every getter is const and
// safe to call from any thread.
#pragma once

#include "trace/StringTable.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace paralens::core {

enum class SpanCategory : uint8_t {
    Forward,
    Backward,
    WeightGrad,
    Compute,
    Collective,
    Send,
    Recv,
    Memcpy,
    Memset,
    Sync,
    Idle,
    Other,
    Annotation, // a label over a time range (profiler or user annotation), not work: never busy
};
inline constexpr int kSpanCategoryCount = 13;
std::string_view Name(SpanCategory c);
SpanCategory ParseSpanCategory(std::string_view name); // unknown names map to Other

// Cpu: a host thread beside the devices (profiler traces); analyses of devices skip it.
// Process: a rank that is a CPU process doing the work itself (the processes backend's pipeline
// stages); analysed like a GPU.
enum class DeviceKind : uint8_t { Modelled, Gpu, VirtualGpu, Cpu, Process };
std::string_view Name(DeviceKind k);
DeviceKind ParseDeviceKind(std::string_view name);

enum class TraceSource : uint8_t { Simulated, Cupti, CudaEvents, Kineto, Chrome, NcclTests, Mpi, Nsys };
std::string_view Name(TraceSource s);
TraceSource ParseTraceSource(std::string_view name); // unknown names map to Chrome

inline constexpr int64_t kNoPrediction = -1;
inline constexpr int32_t kNone = -1;
inline constexpr uint32_t kNoTrack = std::numeric_limits<uint32_t>::max();

struct Span {
    int64_t startNs = 0;
    int64_t endNs = 0;
    uint64_t bytes = 0;
    double flops = 0.0;
    int64_t predictedNs = kNoPrediction; // the model's duration for this span, if known
    StringId name = 0;
    StringId detail = 0;                 // free text shown in tooltips (kernel args, algorithm)
    int32_t microBatch = kNone;
    int32_t chunk = kNone;               // model chunk (pipelines) or data block (collectives)
    int32_t step = kNone;
    SpanCategory category = SpanCategory::Other;
    uint16_t depth = 0;                  // assigned by TraceBuilder::Finish

    int64_t DurationNs() const { return endNs - startNs; }
};

struct Device {
    StringId name = 0;
    StringId host = 0;
    int32_t rank = 0;
    int32_t gpuIndex = kNone;
    DeviceKind kind = DeviceKind::Modelled;
    std::vector<uint32_t> tracks; // indices into Trace::Tracks(), in creation order
};

// One lane of a device: a CUDA stream, or the send/recv/compute lanes of a simulation.
// Spans are grouped by depth; within a depth they do not overlap and are sorted by start (so
// their ends are sorted too and a lower_bound on end finds the first visible one).
struct Track {
    uint32_t device = 0;
    StringId name = 0;
    std::vector<Span> spans;          // depth 0 first, then depth 1, ...
    std::vector<uint32_t> depthBegin; // spans of depth d are [depthBegin[d], depthBegin[d+1])

    int DepthCount() const { return depthBegin.empty() ? 0 : static_cast<int>(depthBegin.size()) - 1; }
    std::span<const Span> Lane(int depth) const
    {
        return std::span<const Span>(spans).subspan(depthBegin[depth], depthBegin[depth + 1] - depthBegin[depth]);
    }
};

// A message: drawn as an arrow from (source track, srcNs) to (destination track, dstNs).
struct Flow {
    uint32_t srcDevice = 0;
    uint32_t dstDevice = 0;
    uint32_t srcTrack = kNoTrack;
    uint32_t dstTrack = kNoTrack;
    int64_t srcNs = 0;
    int64_t dstNs = 0;
    uint64_t bytes = 0;
    int32_t step = kNone;
    int32_t chunk = kNone;
    StringId name = 0;
};

// A span named by its track and times (a track's spans move when the builder sorts them).
struct SpanRef {
    uint32_t track = kNoTrack;
    int64_t startNs = 0;
    int64_t endNs = 0;
};

// "`to` could not start before `from` ended": a dependency the producer knew (a simulator's data
// and schedule dependencies). Lane order and messages are not repeated here: analyses infer
// those from the tracks and flows.
struct Dependency {
    SpanRef from, to;
};

// Dependencies a producer derives when a consumer first asks instead of storing them with the
// trace: a simulation's follow from its Plan, so it keeps the plan, not millions of records.
// Derive() must return the same list every time and be safe to call from any thread.
class DependencySource {
public:
    virtual ~DependencySource() = default;
    virtual std::vector<Dependency> Derive() const = 0;
};

struct CounterSample {
    int64_t timeNs = 0;
    double value = 0.0;
};

// A time series of one device (MFU, memory in use, bandwidth); samples sorted by time.
struct Counter {
    uint32_t device = 0;
    StringId name = 0;
    StringId unit = 0;
    std::vector<CounterSample> samples;
};

using MetaValue = std::variant<bool, int64_t, double, std::string>;

// Ordered key/value pairs; keys are unique within a section.
class MetaSection {
public:
    void Set(std::string_view key, MetaValue value);
    const MetaValue* Find(std::string_view key) const;
    std::string GetString(std::string_view key, std::string_view fallback = {}) const;
    double GetNumber(std::string_view key, double fallback = 0.0) const;
    const std::vector<std::pair<std::string, MetaValue>>& Entries() const { return m_entries; }
    bool Empty() const { return m_entries.empty(); }

private:
    std::vector<std::pair<std::string, MetaValue>> m_entries;
};

struct Metadata {
    TraceSource source = TraceSource::Simulated;
    std::string title;
    MetaSection workload; // what ran: collective, algorithm, ranks, bytes, schedule, ...
    MetaSection model;    // cost-model parameters: alpha, bandwidth, gamma, ...
    MetaSection hardware; // GPU, driver, CUDA, NCCL versions, host names
    MetaSection results;  // headline numbers: simulatedSeconds, predictedSeconds, ...
    MetaSection extra;    // anything else an importer wants to keep
};

class Trace {
public:
    const Metadata& Meta() const { return m_meta; }
    const StringTable& Strings() const { return m_strings; }
    std::string_view Str(StringId id) const { return m_strings.Get(id); }

    std::span<const Device> Devices() const { return m_devices; }
    std::span<const Track> Tracks() const { return m_tracks; }
    std::span<const Flow> Flows() const { return m_flows; }         // sorted by srcNs
    std::span<const Counter> Counters() const { return m_counters; }
    // The recorded dependencies, then those the producer's source derives (on the first call).
    std::span<const Dependency> Dependencies() const;
    // How many are stored now: the recorded ones, plus the derived ones once asked for.
    size_t StoredDependencyCount() const;
    bool DerivesDependencies() const { return m_dependencies && m_dependencies->source; }

    int64_t BeginNs() const { return m_beginNs; } // earliest span/flow/sample start (0 when empty)
    int64_t EndNs() const { return m_endNs; }     // latest end
    size_t SpanCount() const { return m_spanCount; }

private:
    friend class TraceBuilder;

    Metadata m_meta;
    StringTable m_strings;
    std::vector<Device> m_devices;
    std::vector<Track> m_tracks;
    std::vector<Flow> m_flows;
    std::vector<Counter> m_counters;
    struct DependencyStore {
        std::vector<Dependency> list;
        std::shared_ptr<const DependencySource> source; // appends to list on the first ask
        std::once_flag derived;
    };
    std::shared_ptr<DependencyStore> m_dependencies; // shared by copies; null: none
    int64_t m_beginNs = 0;
    int64_t m_endNs = 0;
    size_t m_spanCount = 0;
};

} // namespace paralens::core
