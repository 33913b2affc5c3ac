// Interval arithmetic on half-open [begin, end) nanosecond ranges: unions, intersections and
// differences of sorted, merged lists. Busy, idle, overlap and exposed time are always computed
// this way, never by summing durations (which counts overlapping kernels twice).
#pragma once

#include <cstdint>
#include <vector>

namespace paralens::core {

struct Interval {
    int64_t begin = 0;
    int64_t end = 0;
    int64_t Length() const { return end - begin; }
    bool operator==(const Interval&) const = default;
};

using IntervalSet = std::vector<Interval>; // sorted by begin, disjoint, non-touching, non-empty

// Sorts and merges (touching intervals merge; empty ones are dropped).
IntervalSet UnionOf(std::vector<Interval> intervals);
IntervalSet Union(const IntervalSet& a, const IntervalSet& b);
IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b);
IntervalSet Subtract(const IntervalSet& a, const IntervalSet& b);
// The parts of [begin, end) not covered by `busy`.
IntervalSet Gaps(const IntervalSet& busy, int64_t begin, int64_t end);
// `set` cut to [begin, end).
IntervalSet Clip(const IntervalSet& set, int64_t begin, int64_t end);
int64_t TotalLength(const IntervalSet& set);

} // namespace paralens::core
