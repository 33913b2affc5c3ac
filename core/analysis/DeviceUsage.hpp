// How each device spent a window of time: busy and idle (gaps in the union of its spans),
// compute and communication, their overlap and the communication left exposed. All by interval
// unions over every track of the device. Pure functions; thread-safe.
#pragma once

#include "analysis/Intervals.hpp"
#include "trace/Trace.hpp"

#include <vector>

namespace paralens::core {

enum class SpanKind { Compute, Communication, OtherBusy, NotBusy };

// forward, backward, weight-grad, compute -> Compute; collective, send, recv -> Communication;
// memcpy, memset, sync, other -> OtherBusy; idle, annotation -> NotBusy.
SpanKind KindOf(SpanCategory c);

struct DeviceUsage {
    uint32_t device = 0;
    int64_t windowNs = 0;      // length of the window analysed
    int64_t busyNs = 0;        // union of all busy spans
    int64_t idleNs = 0;        // windowNs - busyNs: the device's bubbles
    int64_t computeNs = 0;     // union of compute spans
    int64_t commNs = 0;        // union of communication spans
    int64_t overlapNs = 0;     // compute and communication at once
    int64_t exposedCommNs = 0; // communication while no compute runs
    IntervalSet idle;          // the gaps themselves, in the window
};

struct UsageWindow {
    int64_t beginNs = 0;
    int64_t endNs = 0;
};

// The trace's extent [BeginNs, EndNs).
UsageWindow WholeTrace(const Trace& trace);

// One entry per device of the trace. Spans are clipped to the window. `includeCpu` = false skips
// devices of kind Cpu (host threads of profiler traces).
std::vector<DeviceUsage> ComputeDeviceUsage(const Trace& trace, UsageWindow window, bool includeCpu = true);

// Idle / (devices x window): the bubble fraction of the lectures over the devices given.
double IdleFraction(const std::vector<DeviceUsage>& usage);

} // namespace paralens::core
