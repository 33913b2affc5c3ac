#include "common/KeyOrder.hpp"

#include <algorithm>
#include <utility>

namespace paralens::core {

// One counting pass puts each key in one of about n buckets by its top bits (relative to the
// smallest), in input order; each bucket is then sorted on its own: by insertion when small (the
// usual case: times spread over their range), by a stable sort when many keys share one.
std::vector<uint32_t> StableOrderByKey(std::span<const int64_t> keys)
{
    const size_t n = keys.size();
    std::vector<uint32_t> order(n);
    if (n == 0) return order;
    const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
    const uint64_t base = static_cast<uint64_t>(*lo);
    const uint64_t range = static_cast<uint64_t>(*hi) - base;
    int bits = 0;
    while ((size_t{1} << bits) < n) ++bits;
    int shift = 0;
    while ((range >> shift) >= (uint64_t{1} << bits)) ++shift;
    const size_t buckets = static_cast<size_t>(range >> shift) + 1;
    std::vector<uint32_t> start(buckets + 1, 0);
    for (int64_t k : keys) ++start[((static_cast<uint64_t>(k) - base) >> shift) + 1];
    for (size_t b = 1; b <= buckets; ++b) start[b] += start[b - 1];
    std::vector<std::pair<uint64_t, uint32_t>> a(n); // (key - smallest, index)
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < n; ++i) {
        const uint64_t k = static_cast<uint64_t>(keys[i]) - base;
        a[fill[k >> shift]++] = {k, static_cast<uint32_t>(i)};
    }
    auto byKey = [](const std::pair<uint64_t, uint32_t>& x, const std::pair<uint64_t, uint32_t>& y) { return x.first < y.first; };
    constexpr uint32_t kInsertion = 24; // larger buckets: a stable sort
    for (size_t b = 0; b < buckets; ++b) {
        const uint32_t first = start[b], last = start[b + 1];
        if (last - first > kInsertion) {
            std::stable_sort(a.begin() + first, a.begin() + last, byKey);
            continue;
        }
        for (uint32_t i = first + 1; i < last; ++i) {
            const auto x = a[i];
            uint32_t j = i;
            for (; j > first && a[j - 1].first > x.first; --j) a[j] = a[j - 1];
            a[j] = x;
        }
    }
    for (size_t i = 0; i < n; ++i) order[i] = a[i].second;
    return order;
}

} // namespace paralens::core
