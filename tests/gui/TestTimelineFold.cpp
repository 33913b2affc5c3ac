// The Tracy-style folding of narrow spans (app/gui/TimelineFold.hpp), without a window.
#include "TimelineFold.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

using paralens::app::FoldIndex;
using paralens::app::FoldVisible;

namespace {

struct Item {
    int64_t start;
    int64_t end;
};

struct Outcome {
    std::vector<size_t> items;                                  // wide items, by index
    std::vector<std::pair<size_t, size_t>> folds;               // (first, count)
    std::vector<std::pair<int64_t, int64_t>> foldExtents;
    size_t accessorCalls = 0;
};

Outcome Fold(const std::vector<Item>& items, int64_t t0, int64_t t1, double nsPerPx, double minPx,
             const FoldIndex* index = nullptr)
{
    Outcome o;
    FoldVisible<Item>(
        items, t0, t1, nsPerPx, minPx, [&](const Item& i) { ++o.accessorCalls; return i.start; },
        [&](const Item& i) { ++o.accessorCalls; return i.end; }, [&](const Item&, size_t at) { o.items.push_back(at); },
        [&](int64_t b, int64_t e, size_t first, size_t count) {
            o.folds.emplace_back(first, count);
            o.foldExtents.emplace_back(b, e);
        },
        index);
    return o;
}

FoldIndex IndexOf(const std::vector<Item>& items)
{
    FoldIndex index;
    index.Build(std::span<const Item>(items), [](const Item& i) { return i.start; }, [](const Item& i) { return i.end; });
    return index;
}

// Every visible item is handed out exactly once, as itself or inside one fold, in order.
void CheckPartition(const std::vector<Item>& items, const Outcome& o, int64_t t0, int64_t t1, double minNs)
{
    std::vector<int> seen(items.size(), 0);
    for (size_t i : o.items) {
        ++seen[i];
        CHECK(items[i].end - items[i].start >= minNs);
    }
    for (auto [first, count] : o.folds) {
        REQUIRE(count >= 1);
        for (size_t i = first; i < first + count; ++i) ++seen[i];
    }
    for (size_t i = 0; i < items.size(); ++i) {
        const bool visible = items[i].end >= t0 && items[i].start < t1;
        INFO("item " << i);
        if (visible) CHECK(seen[i] == 1);
        else CHECK(seen[i] == 0);
    }
    for (size_t f = 1; f < o.foldExtents.size(); ++f) CHECK(o.foldExtents[f].first >= o.foldExtents[f - 1].second);
}

} // namespace

TEST_CASE("wide spans are handed out one by one", "[gui]")
{
    std::vector<Item> items{{0, 100}, {150, 300}, {300, 1000}};
    Outcome o = Fold(items, 0, 1000, 1.0, 3.0);
    CHECK(o.items == std::vector<size_t>{0, 1, 2});
    CHECK(o.folds.empty());
}

TEST_CASE("narrow neighbours fold into one counted block, a visible gap splits folds", "[gui]")
{
    // Ten 1 ns spans 1 ns apart, a 50 ns gap, ten more: at 1 ns/px and 3 px minimum, two folds.
    std::vector<Item> items;
    for (int i = 0; i < 10; ++i) items.push_back({2 * i, 2 * i + 1});
    for (int i = 0; i < 10; ++i) items.push_back({70 + 2 * i, 70 + 2 * i + 1});
    Outcome o = Fold(items, 0, 200, 1.0, 3.0);
    CHECK(o.items.empty());
    REQUIRE(o.folds.size() == 2);
    CHECK(o.folds[0] == std::pair<size_t, size_t>{0, 10});
    CHECK(o.folds[1] == std::pair<size_t, size_t>{10, 10});
    CHECK(o.foldExtents[0] == std::pair<int64_t, int64_t>{0, 19});
    CHECK(o.foldExtents[1] == std::pair<int64_t, int64_t>{70, 89});
    // Zoomed in (0.1 ns/px) every span is 10 px wide: no folds.
    Outcome in = Fold(items, 0, 200, 0.1, 3.0);
    CHECK(in.items.size() == 20);
    CHECK(in.folds.empty());
}

TEST_CASE("only the visible window is visited, a span straddling its start is included", "[gui]")
{
    std::vector<Item> items;
    for (int i = 0; i < 100; ++i) items.push_back({i * 100, i * 100 + 90});
    Outcome o = Fold(items, 1050, 2000, 1.0, 3.0);
    REQUIRE(!o.items.empty());
    CHECK(o.items.front() == 10); // [1000, 1090) reaches into the window
    CHECK(o.items.back() == 19);  // [1900, 1990); [2000, ...) starts at t1 and is outside
    CHECK(o.items.size() == 10);
}

TEST_CASE("folding partitions random lanes at every zoom level", "[gui]")
{
    std::mt19937_64 rng(7);
    std::vector<Item> items;
    int64_t t = 0;
    for (int i = 0; i < 20000; ++i) {
        t += static_cast<int64_t>(rng() % 50);
        const int64_t len = (rng() % 10 == 0) ? 1 + static_cast<int64_t>(rng() % 5000) : 1 + static_cast<int64_t>(rng() % 20);
        items.push_back({t, t + len});
        t += len;
    }
    for (double nsPerPx : {0.01, 1.0, 7.0, 100.0, 5000.0}) {
        for (auto [t0, t1] : {std::pair<int64_t, int64_t>{0, t}, {t / 3, t / 2}, {t - 1000, t + 1000}}) {
            INFO("ns/px " << nsPerPx << " window " << t0 << ".." << t1);
            Outcome o = Fold(items, t0, t1, nsPerPx, 3.0);
            CheckPartition(items, o, t0, t1, 3.0 * nsPerPx);
        }
    }
}

TEST_CASE("an index finds the same folds in one query each", "[gui]")
{
    std::mt19937_64 rng(11);
    std::vector<Item> items;
    int64_t t = 0;
    for (int i = 0; i < 50000; ++i) {
        t += static_cast<int64_t>(rng() % 40);
        const int64_t len = (rng() % 50 == 0) ? 1 + static_cast<int64_t>(rng() % 3000) : 1 + static_cast<int64_t>(rng() % 15);
        items.push_back({t, t + len});
        t += len;
        if (rng() % 500 == 0) t += 20000; // now and then a gap that shows
    }
    const FoldIndex index = IndexOf(items);
    for (double nsPerPx : {0.05, 1.0, 10.0, 400.0, 1e5})
        for (auto [t0, t1] : {std::pair<int64_t, int64_t>{0, t}, {t / 5, t / 3}, {t - 5000, t + 10}}) {
            INFO("ns/px " << nsPerPx << " window " << t0 << ".." << t1);
            const Outcome plain = Fold(items, t0, t1, nsPerPx, 3.0);
            const Outcome fast = Fold(items, t0, t1, nsPerPx, 3.0, &index);
            CHECK(fast.items == plain.items);
            CHECK(fast.folds == plain.folds);
            CHECK(fast.foldExtents == plain.foldExtents);
            CheckPartition(items, fast, t0, t1, 3.0 * nsPerPx);
        }
}

TEST_CASE("the index's query finds the first key at or above a threshold", "[gui]")
{
    // Keys: max(duration, gap before); the first item's gap counts as large.
    std::vector<Item> items;
    for (int i = 0; i < 10000; ++i) items.push_back({10 * i, 10 * i + 5}); // duration 5, gap 5
    items[7777].end = items[7777].start + 9;                              // duration 9 (gap after: 1)
    const FoldIndex index = IndexOf(items);
    CHECK(index.FirstAtLeast(1, 6.0f) == 7777u);
    CHECK(index.FirstAtLeast(7778, 6.0f) == 10000u);
    CHECK(index.FirstAtLeast(0, 6.0f) == 0u);      // the first item: nothing before it
    CHECK(index.FirstAtLeast(1, 5.0f) == 1u);
    CHECK(index.FirstAtLeast(10000, 1.0f) == 10000u);
}

TEST_CASE("the cost of a fold follows pixels, not events", "[gui]")
{
    // Ten million 1 ns spans, packed: at full zoom-out over 2000 px they are one fold, found with
    // binary searches whose number follows the pixels, rather than ten million steps.
    std::vector<Item> items(10'000'000);
    for (size_t i = 0; i < items.size(); ++i) items[i] = {static_cast<int64_t>(2 * i), static_cast<int64_t>(2 * i + 1)};
    const int64_t end = items.back().end;
    Outcome o = Fold(items, 0, end, static_cast<double>(end) / 2000.0, 3.0);
    REQUIRE(o.folds.size() == 1);
    CHECK(o.folds[0].second == items.size());
    // About width / minPx binary searches of log2(10^7) steps each: tens of thousands, not 10^7.
    CHECK(o.accessorCalls < 2 * (2000 / 3 + 2) * 2 * 25);
    // With an index the whole lane is one query: a handful of accessor calls.
    const FoldIndex index = IndexOf(items);
    Outcome fast = Fold(items, 0, end, static_cast<double>(end) / 2000.0, 3.0, &index);
    REQUIRE(fast.folds.size() == 1);
    CHECK(fast.folds[0].second == items.size());
    CHECK(fast.accessorCalls < 200);
    // Sparse enough that gaps show (a span every 20 px): one block per span, and the work stays
    // proportional to the blocks drawn.
    std::vector<Item> sparse;
    for (int i = 0; i < 100; ++i) sparse.push_back({i * 20'000, i * 20'000 + 10});
    Outcome s = Fold(sparse, 0, 2'000'000, 1000.0, 3.0);
    CHECK(s.folds.size() == 100);
    CHECK(s.accessorCalls < 100 * 40);
}
