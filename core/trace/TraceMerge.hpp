// Putting traces together: several files of one job (one per rank) on one timeline, and a trace
// with its devices' clocks shifted (clock alignment). Pure functions; thread-safe.
#pragma once

#include "trace/Trace.hpp"

#include <string>
#include <vector>

namespace paralens::core {

// One Trace holding every device, track, span, flow and counter of `parts` (consumed), with
// strings re-interned. Devices are grouped by host, then GPUs before host threads, then by rank
// and GPU index; a device name that repeats gets its file's name appended. `origins` (one per
// part, may be empty) name the files in that case and in the metadata ("files"). The metadata is
// the first part's, with the title saying how many files were merged.
Trace MergeTraces(std::vector<Trace>&& parts, const std::vector<std::string>& origins = {});

// A copy of `trace` with every time on device d moved by shiftNs[d] (spans, counter samples,
// and each end of a flow by its own device). shiftNs has one entry per device. `meta`, when
// given, replaces the metadata.
Trace ShiftDeviceClocks(const Trace& trace, const std::vector<int64_t>& shiftNs, const Metadata* meta = nullptr);

// A linear clock correction: t -> t + shiftAtAnchorNs + slope x (t - anchorNs) (drift).
struct ClockMap {
    int64_t anchorNs = 0;
    int64_t shiftAtAnchorNs = 0;
    double slope = 0.0;
    int64_t Apply(int64_t t) const;
    bool operator==(const ClockMap&) const = default;
};

// ShiftDeviceClocks with a linear correction per device (one ClockMap per device).
Trace MapDeviceClocks(const Trace& trace, const std::vector<ClockMap>& maps, const Metadata* meta = nullptr);

// A copy of `trace` with `flows` added (their devices and tracks refer to `trace`'s).
Trace WithExtraFlows(const Trace& trace, const std::vector<Flow>& flows);

} // namespace paralens::core
