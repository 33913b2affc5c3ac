// Tracy-style folding of a timeline lane, written once and used for every kind of lane (spans,
// idle intervals): the items visible in [t0, t1) are handed out either one by one (those at least
// `minPx` pixels wide) or as folds, runs of narrow items close to each other that are drawn as
// one block with a count. Inside a fold the walk does not visit items one by one: it jumps with a
// binary search to the first item ending a minimum width further on, so the work per frame
// follows the pixels on screen (about 2 x width / minPx searches per lane), not the events.
//
// Preconditions: `items` sorted by start and non-overlapping (so their ends are sorted too), as
// one depth level of a core::Track is. Header-only, no ImGui; thread-safe (pure).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace paralens::app {

// onItem(const T& item, size_t index) for each wide item;
// onFold(int64_t beginNs, int64_t endNs, size_t firstIndex, size_t count) for each fold.
template <class T, class StartFn, class EndFn, class ItemFn, class FoldFn>
void FoldVisible(std::span<const T> items, int64_t t0, int64_t t1, double nsPerPx, double minPx, StartFn startOf,
                 EndFn endOf, ItemFn onItem, FoldFn onFold)
{
    const int64_t minNs = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(minPx * nsPerPx)));
    const auto first = items.begin(), last = items.end();
    auto endBefore = [&](const T& item, int64_t t) { return endOf(item) < t; };
    auto it = std::lower_bound(first, last, t0, endBefore);
    while (it != last && startOf(*it) < t1) {
        if (endOf(*it) - startOf(*it) >= minNs) {
            onItem(*it, static_cast<size_t>(it - first));
            ++it;
            continue;
        }
        const auto foldFirst = it;
        const int64_t foldBegin = startOf(*it);
        int64_t foldEnd = endOf(*it);
        ++it;
        for (;;) {
            // Everything ending within one minimum width of the fold is narrow and joins it.
            const auto next = std::lower_bound(it, last, foldEnd + minNs, endBefore);
            if (next != it) {
                foldEnd = std::max(foldEnd, endOf(*(next - 1)));
                it = next;
            }
            if (it == last || startOf(*it) >= t1) break;
            // The next item joins too when it is narrow and the gap before it is invisible.
            if (endOf(*it) - startOf(*it) >= minNs || startOf(*it) - foldEnd >= minNs) break;
            foldEnd = endOf(*it);
            ++it;
        }
        onFold(foldBegin, foldEnd, static_cast<size_t>(foldFirst - first), static_cast<size_t>(it - foldFirst));
    }
}

} // namespace paralens::app
