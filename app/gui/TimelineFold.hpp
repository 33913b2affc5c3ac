// Tracy-style folding of a timeline lane, written once and used for every kind of lane (spans,
// idle intervals): the items visible in [t0, t1) are handed out either one by one (those at least
// `minPx` pixels wide) or as folds: maximal runs of narrow items separated by gaps narrower than
// `minPx` too, drawn as one block with a count. The walk never visits the items inside a fold:
//  - without an index, it jumps with a binary search to the first item ending a minimum width
//    further on (about width / minPx searches per lane, as Tracy does);
//  - with a FoldIndex (built once per lane, off the GUI thread), it finds the end of the whole
//    fold in one query over block maxima, so a lane of millions of narrow spans costs a few
//    microseconds at full zoom-out.
// Either way the work per frame follows the pixels on screen, not the events.
//
// Preconditions: `items` sorted by start and non-overlapping (so their ends are sorted too), as
// one depth level of a core::Track is. Header-only, no ImGui; thread-safe (pure; a built
// FoldIndex is read-only).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace paralens::app {

// For one lane: key[j] = max(duration of item j, gap between item j-1 and item j) in ns, with the
// maxima of blocks of 64 and of 4096 keys, to find the first key at or above a threshold fast.
class FoldIndex {
public:
    static constexpr size_t kBlock = 64;

    template <class T, class StartFn, class EndFn>
    void Build(std::span<const T> items, StartFn startOf, EndFn endOf)
    {
        const size_t n = items.size();
        m_key.resize(n);
        for (size_t j = 0; j < n; ++j) {
            const int64_t gap = j == 0 ? std::numeric_limits<int32_t>::max() : startOf(items[j]) - endOf(items[j - 1]);
            m_key[j] = static_cast<float>(std::max<int64_t>(endOf(items[j]) - startOf(items[j]), gap));
        }
        Reduce(m_key, m_l1);
        Reduce(m_l1, m_l2);
    }

    size_t Size() const { return m_key.size(); }

    // The first index >= from whose key is >= threshold; Size() when there is none.
    size_t FirstAtLeast(size_t from, float threshold) const
    {
        const size_t n = m_key.size();
        size_t i = from;
        // Finish the current block of 64, then the current block of 4096, then jump by 4096s.
        for (; i < n && i % kBlock != 0; ++i)
            if (m_key[i] >= threshold) return i;
        if (i >= n) return n; // (a partial last block's maximum may come from before `from`)
        size_t b = i / kBlock;
        for (; b < m_l1.size() && b % kBlock != 0; ++b)
            if (m_l1[b] >= threshold) return Descend(m_key, b, threshold);
        if (b >= m_l1.size()) return n;
        size_t c = b / kBlock;
        for (; c < m_l2.size(); ++c)
            if (m_l2[c] >= threshold) return Descend(m_key, Descend(m_l1, c, threshold), threshold);
        return n;
    }

private:
    static void Reduce(const std::vector<float>& in, std::vector<float>& out)
    {
        out.assign((in.size() + kBlock - 1) / kBlock, 0.0f);
        for (size_t i = 0; i < in.size(); ++i) out[i / kBlock] = std::max(out[i / kBlock], in[i]);
    }
    // The first element of block `block` of `level` at or above the threshold (the block has one).
    static size_t Descend(const std::vector<float>& level, size_t block, float threshold)
    {
        size_t i = block * kBlock;
        while (i < level.size() && level[i] < threshold) ++i;
        return i;
    }

    std::vector<float> m_key, m_l1, m_l2;
};

// onItem(const T& item, size_t index) for each wide item;
// onFold(int64_t beginNs, int64_t endNs, size_t firstIndex, size_t count) for each fold.
// `index`, when given, must have been built from these items.
template <class T, class StartFn, class EndFn, class ItemFn, class FoldFn>
void FoldVisible(std::span<const T> items, int64_t t0, int64_t t1, double nsPerPx, double minPx, StartFn startOf,
                 EndFn endOf, ItemFn onItem, FoldFn onFold, const FoldIndex* index = nullptr)
{
    const int64_t minNs = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(minPx * nsPerPx)));
    const auto first = items.begin(), last = items.end();
    auto endBefore = [&](const T& item, int64_t t) { return endOf(item) < t; };
    auto it = std::lower_bound(first, last, t0, endBefore);
    // The end of the visible items: the first starting at or after t1.
    const auto stop = std::lower_bound(it, last, t1, [&](const T& item, int64_t t) { return startOf(item) < t; });
    while (it != stop) {
        if (endOf(*it) - startOf(*it) >= minNs) {
            onItem(*it, static_cast<size_t>(it - first));
            ++it;
            continue;
        }
        const auto foldFirst = it;
        const int64_t foldBegin = startOf(*it);
        if (index && index->Size() == items.size()) {
            // The fold runs up to the first item that is wide or follows a visible gap.
            const size_t end = index->FirstAtLeast(static_cast<size_t>(it - first) + 1, static_cast<float>(minNs));
            it = first + static_cast<ptrdiff_t>(std::min(end, static_cast<size_t>(stop - first)));
        } else {
            int64_t foldEnd = endOf(*it);
            ++it;
            for (;;) {
                // Everything ending within one minimum width of the fold is narrow and joins it.
                const auto next = std::lower_bound(it, stop, foldEnd + minNs, endBefore);
                if (next != it) {
                    foldEnd = endOf(*(next - 1));
                    it = next;
                }
                if (it == stop) break;
                // The next item joins too when it is narrow and the gap before it is invisible.
                if (endOf(*it) - startOf(*it) >= minNs || startOf(*it) - foldEnd >= minNs) break;
                foldEnd = endOf(*it);
                ++it;
            }
        }
        onFold(foldBegin, endOf(*(it - 1)), static_cast<size_t>(foldFirst - first), static_cast<size_t>(it - foldFirst));
    }
}

} // namespace paralens::app
