#include "analysis/Intervals.hpp"

#include <algorithm>
#include <cstddef>

namespace paralens::core {

IntervalSet UnionOf(std::vector<Interval> v)
{
    v.erase(std::remove_if(v.begin(), v.end(), [](const Interval& i) { return i.end <= i.begin; }), v.end());
    // The intervals mostly come as a few sorted runs (a track's spans, lane by lane): merge the
    // runs pairwise, O(n log runs), rather than sort from scratch; many short runs are sorted.
    const auto byBegin = [](const Interval& a, const Interval& b) { return a.begin < b.begin; };
    std::vector<size_t> runs{0};
    for (size_t i = 1; i < v.size() && runs.size() <= 64; ++i)
        if (v[i].begin < v[i - 1].begin) runs.push_back(i);
    if (runs.size() > 64) {
        std::sort(v.begin(), v.end(), byBegin);
    } else {
        runs.push_back(v.size());
        while (runs.size() > 2) {
            std::vector<size_t> merged{0};
            for (size_t j = 0; j + 2 < runs.size(); j += 2) {
                std::inplace_merge(v.begin() + static_cast<std::ptrdiff_t>(runs[j]), v.begin() + static_cast<std::ptrdiff_t>(runs[j + 1]),
                                   v.begin() + static_cast<std::ptrdiff_t>(runs[j + 2]), byBegin);
                merged.push_back(runs[j + 2]);
            }
            if (runs.size() % 2 == 0) merged.push_back(runs.back()); // an odd run out waits for the next round
            runs.swap(merged);
        }
    }
    IntervalSet out;
    for (const Interval& i : v) {
        if (!out.empty() && i.begin <= out.back().end) out.back().end = std::max(out.back().end, i.end);
        else out.push_back(i);
    }
    return out;
}

IntervalSet Union(const IntervalSet& a, const IntervalSet& b)
{
    std::vector<Interval> all(a);
    all.insert(all.end(), b.begin(), b.end());
    return UnionOf(std::move(all));
}

IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b)
{
    IntervalSet out;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        int64_t lo = std::max(a[i].begin, b[j].begin);
        int64_t hi = std::min(a[i].end, b[j].end);
        if (lo < hi) out.push_back({lo, hi});
        if (a[i].end < b[j].end) ++i;
        else ++j;
    }
    return out;
}

IntervalSet Subtract(const IntervalSet& a, const IntervalSet& b)
{
    IntervalSet out;
    size_t j = 0;
    for (Interval cur : a) {
        while (j < b.size() && b[j].end <= cur.begin) ++j;
        size_t k = j;
        while (k < b.size() && b[k].begin < cur.end) {
            if (b[k].begin > cur.begin) out.push_back({cur.begin, b[k].begin});
            cur.begin = std::max(cur.begin, b[k].end);
            if (cur.begin >= cur.end) break;
            ++k;
        }
        if (cur.begin < cur.end) out.push_back(cur);
    }
    return out;
}

IntervalSet Gaps(const IntervalSet& busy, int64_t begin, int64_t end)
{
    if (end <= begin) return {};
    return Subtract(IntervalSet{{begin, end}}, busy);
}

IntervalSet Clip(const IntervalSet& set, int64_t begin, int64_t end)
{
    if (end <= begin) return {};
    return Intersect(set, IntervalSet{{begin, end}});
}

int64_t TotalLength(const IntervalSet& set)
{
    int64_t total = 0;
    for (const Interval& i : set) total += i.Length();
    return total;
}

} // namespace paralens::core
