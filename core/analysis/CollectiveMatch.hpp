// Collective spans of a trace, matched across ranks, and rank clocks aligned by them.
// Pure functions of an immutable Trace; thread-safe.
#pragma once

#include "trace/CollectiveTag.hpp"
#include "trace/Trace.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace paralens::core {

// One collective span on one device, with what its CollectiveTag says (or, without a tag, the
// span's name as the collective).
struct CollectiveSpan {
    uint32_t device = 0;
    uint32_t track = 0;
    const Span* span = nullptr; // points into the Trace
    CollectiveTag tag;
};

// Every span of category Collective on devices other than Cpu ones, by device, then start.
std::vector<CollectiveSpan> CollectiveSpans(const Trace& trace);

// One collective operation as every rank that took part in it ran it.
struct CollectiveInstance {
    struct Participant {
        uint32_t device = 0;
        int64_t startNs = 0, endNs = 0;
    };
    std::string collective, group;
    int64_t seq = -1;   // the tag's sequence number, or the position in the reference rank's sequence
    uint64_t bytes = 0; // the largest of the participants' (alltoall sizes differ per rank)
    int32_t ranks = 0;  // from the tags (the group size); 0 when unknown
    std::vector<Participant> participants; // by device
    int64_t firstStartNs = 0, lastStartNs = 0, firstEndNs = 0, lastEndNs = 0;
    uint32_t slowestDevice = 0; // the last to arrive (latest start): the one the others waited for

    int64_t SkewNs() const { return lastStartNs - firstStartNs; }
    // The time from the last arrival to the end: the collective itself, without waiting.
    int64_t TransferNs() const { return lastEndNs - lastStartNs; }
};

// Matches collective spans across devices. When every tag has a sequence number, by (group,
// collective, seq). Otherwise per group in order: each device's sequence of collectives is
// aligned with the longest one by their longest common subsequence, a pair matching when the
// collective is the same and so is the size (except for alltoall and send/recv, whose sizes
// differ per rank); then aligned again keeping only pairs whose ends agree (within 10 % of the
// shorter span or 100 us) after the median end offset of the first pass. So a collective missing
// from one rank (a sampled trace) is skipped rather than shifting every later match, and a clock
// offset between hosts does not matter. Only instances with two or more devices are returned,
// by start.
std::vector<CollectiveInstance> MatchCollectives(const Trace& trace);

struct ClockAlignment {
    std::map<int32_t, int64_t> offsetNs;    // rank -> how far its clock was ahead of the reference
    std::map<int32_t, size_t> matches;      // rank -> matched collectives the offset rests on
    int32_t referenceRank = 0;
    std::vector<int64_t> deviceShiftNs;     // per device: what was added to its times (-offset)
};

// Per rank, the median over matched collectives of (its end - the reference rank's end): ranks
// leave a collective together, so the median is the clock offset. The reference is the lowest
// rank; ranks without a match with it keep offset 0.
ClockAlignment MeasureClockOffsets(const Trace& trace);

// The trace with each rank's devices (GPU and host threads) moved by -offset.
Trace AlignRankClocks(const Trace& trace, ClockAlignment* alignment = nullptr);

} // namespace paralens::core
