#include "common/Error.hpp"
#include "common/KeyOrder.hpp"
#include "common/Parallel.hpp"
#include "trace/TraceBuilder.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace paralens;
using namespace paralens::core;

namespace {

Span MakeSpan(TraceBuilder& b, int64_t start, int64_t end, const char* name)
{
    Span s;
    s.startNs = start;
    s.endNs = end;
    s.name = b.Intern(name);
    return s;
}

} // namespace

TEST_CASE("overlapping spans on one track get separate depths and none is dropped", "[core][trace]")
{
    TraceBuilder b;
    uint32_t d = b.AddDevice("gpu0", DeviceKind::Gpu, 0);
    uint32_t t = b.AddTrack(d, "stream 7");
    // Added out of order: a parent, a nested child, a partial overlap, and a later span.
    b.AddSpan(t, MakeSpan(b, 50, 60, "late"));
    b.AddSpan(t, MakeSpan(b, 0, 30, "parent"));
    b.AddSpan(t, MakeSpan(b, 5, 10, "child"));
    b.AddSpan(t, MakeSpan(b, 20, 40, "overlap"));
    b.AddSpan(t, MakeSpan(b, 12, 15, "child2"));
    Trace trace = std::move(b).Finish();
    const Track& tr = trace.Tracks()[0];
    REQUIRE(tr.spans.size() == 5);
    REQUIRE(tr.DepthCount() == 2);
    auto lane0 = tr.Lane(0);
    auto lane1 = tr.Lane(1);
    REQUIRE(lane0.size() == 2);
    CHECK(trace.Str(lane0[0].name) == "parent");
    CHECK(trace.Str(lane0[1].name) == "late");
    REQUIRE(lane1.size() == 3);
    CHECK(trace.Str(lane1[0].name) == "child");
    CHECK(trace.Str(lane1[1].name) == "child2");
    CHECK(trace.Str(lane1[2].name) == "overlap");
    for (int dpt = 0; dpt < tr.DepthCount(); ++dpt) {
        auto lane = tr.Lane(dpt);
        for (size_t i = 1; i < lane.size(); ++i) {
            CHECK(lane[i - 1].endNs <= lane[i].startNs); // no overlap inside a lane: ends are sorted too
            CHECK(lane[i].depth == dpt);
        }
    }
    CHECK(trace.BeginNs() == 0);
    CHECK(trace.EndNs() == 60);
    CHECK(trace.SpanCount() == 5);
}

TEST_CASE("a large trace is finished on every core: each track sorted into valid lanes, flows by time", "[core][trace]")
{
    // Past 65,536 spans and flows Finish() shares the tracks and the flows' sort between threads:
    // every span must come out once, on its own track, in lanes that do not overlap.
    TraceBuilder b;
    std::mt19937_64 rng(7);
    constexpr int kTracks = 100, kPerTrack = 800;
    std::vector<uint32_t> tracks;
    for (int k = 0; k < kTracks; ++k) tracks.push_back(b.AddTrack(b.AddDevice("rank " + std::to_string(k), DeviceKind::Modelled, k), "t"));
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    std::vector<int64_t> sums(kTracks, 0);
    for (int k = 0; k < kTracks; ++k)
        for (int i = 0; i < kPerTrack; ++i) {
            const int64_t start = static_cast<int64_t>(rng() % 1'000'000), length = static_cast<int64_t>(rng() % (k % 3 == 0 ? 5000 : 50));
            Span s;
            s.startNs = start;
            s.endNs = start + length;
            s.step = k; // which track it was given to
            b.AddSpan(tracks[static_cast<size_t>(k)], s);
            sums[static_cast<size_t>(k)] += start;
            lo = std::min(lo, start);
            hi = std::max(hi, start + length);
        }
    for (int i = 0; i < 30000; ++i) {
        Flow f;
        f.srcTrack = tracks[static_cast<size_t>(i % kTracks)];
        f.dstTrack = tracks[static_cast<size_t>((i + 1) % kTracks)];
        f.srcNs = static_cast<int64_t>(rng() % 1'000'000);
        f.dstNs = f.srcNs;
        b.AddFlow(f);
    }
    const Trace trace = std::move(b).Finish();
    CHECK(trace.SpanCount() == size_t{kTracks} * kPerTrack);
    CHECK(trace.BeginNs() == lo);
    CHECK(trace.EndNs() == hi);
    for (int k = 0; k < kTracks; ++k) {
        const Track& tr = trace.Tracks()[tracks[static_cast<size_t>(k)]];
        REQUIRE(tr.spans.size() == size_t{kPerTrack});
        int64_t sum = 0;
        for (int dpt = 0; dpt < tr.DepthCount(); ++dpt) {
            const auto lane = tr.Lane(dpt);
            for (size_t i = 0; i < lane.size(); ++i) {
                CHECK(lane[i].step == k);
                CHECK(lane[i].depth == dpt);
                sum += lane[i].startNs;
                if (i > 0) CHECK(lane[i - 1].endNs <= lane[i].startNs);
            }
        }
        CHECK(sum == sums[static_cast<size_t>(k)]);
        if (k % 3 == 0) CHECK(tr.DepthCount() > 1); // long spans overlap
    }
    const auto& flows = trace.Flows();
    REQUIRE(flows.size() == 30000);
    CHECK(std::is_sorted(flows.begin(), flows.end(), [](const Flow& a, const Flow& x) { return a.srcNs < x.srcNs; }));
}

TEST_CASE("ParallelFor runs every index once and rethrows the first failure", "[core][trace]")
{
    std::vector<std::atomic<int>> hits(1000);
    ParallelFor(hits.size(), 7, [&](size_t i) { ++hits[i]; });
    CHECK(std::all_of(hits.begin(), hits.end(), [](const std::atomic<int>& h) { return h == 1; }));
    std::atomic<int> ran{0};
    CHECK_THROWS_WITH(ParallelFor(1000, 1,
                                  [&](size_t i) {
                                      ++ran;
                                      if (i == 500) throw std::runtime_error("index 500 failed");
                                  }),
                      "index 500 failed");
    CHECK(ran >= 1);
    CHECK(ran <= 1000);
    int none = 0;
    ParallelFor(0, 4, [&](size_t) { ++none; });
    CHECK(none == 0);
}

TEST_CASE("zero-length spans stay on the lane of their neighbours", "[core][trace]")
{
    TraceBuilder b;
    uint32_t t = b.AddTrack(b.AddDevice("d", DeviceKind::Gpu, 0), "t");
    b.AddSpan(t, MakeSpan(b, 0, 10, "a"));
    b.AddSpan(t, MakeSpan(b, 10, 10, "instant"));
    b.AddSpan(t, MakeSpan(b, 12, 20, "b"));
    b.AddSpan(t, MakeSpan(b, 12, 12, "inside b"));
    Trace trace = std::move(b).Finish();
    const Track& tr = trace.Tracks()[0];
    REQUIRE(tr.DepthCount() == 2);
    CHECK(tr.Lane(0).size() == 3);                    // a, instant, b
    CHECK(trace.Str(tr.Lane(1)[0].name) == "inside b"); // nested at b's start
}

TEST_CASE("the builder rejects spans that end before they start", "[core][trace]")
{
    TraceBuilder b;
    uint32_t t = b.AddTrack(b.AddDevice("d", DeviceKind::Gpu, 0), "t");
    Span s;
    s.startNs = 10;
    s.endNs = 5;
    s.name = b.Intern("backwards");
    CHECK_THROWS_WITH(b.AddSpan(t, s), Catch::Contains("backwards") && Catch::Contains("before it starts"));
    CHECK_THROWS_AS(b.AddTrack(7, "no such device"), Error);
}

TEST_CASE("string table interns and survives copies", "[core][trace]")
{
    StringTable a;
    StringId x = a.Intern("hello");
    CHECK(a.Intern("hello") == x);
    CHECK(a.Get(0).empty());
    StringTable b = a;
    CHECK(b.Get(x) == "hello");
    CHECK(b.Intern("hello") == x);
    StringTable c = std::move(b);
    CHECK(c.Get(x) == "hello");
    CHECK(c.Intern("world") == x + 1);
}

TEST_CASE("string table copies share their text and both go on interning apart", "[core][trace]")
{
    // A live run copies its table for every snapshot while it goes on interning: the copies share
    // the text (a chunk is written only by a table holding it alone), so neither may see the
    // other's later strings, and every id must keep its text however the chunks were cut.
    StringTable source;
    std::vector<std::string> expected{""};
    std::vector<StringTable> copies;
    std::vector<size_t> sizeAtCopy;
    for (int i = 0; i < 20000; ++i) {
        const std::string text = "iteration " + std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'x');
        CHECK(source.Intern(text) == expected.size());
        expected.push_back(text);
        if (i % 1500 == 0) {
            copies.push_back(source);
            sizeAtCopy.push_back(source.Size());
            CHECK(copies.back().Intern("copy " + std::to_string(i)) == source.Size()); // the copy's own next id
        }
    }
    CHECK(source.Intern(std::string(20000, 'L')) == expected.size()); // longer than a chunk
    expected.push_back(std::string(20000, 'L'));
    for (size_t id = 0; id < expected.size(); ++id) REQUIRE(source.Get(static_cast<StringId>(id)) == expected[id]);
    for (size_t k = 0; k < copies.size(); ++k) {
        REQUIRE(copies[k].Size() == sizeAtCopy[k] + 1);
        for (size_t id = 0; id < sizeAtCopy[k]; ++id) REQUIRE(copies[k].Get(static_cast<StringId>(id)) == expected[id]);
        CHECK(copies[k].Get(static_cast<StringId>(sizeAtCopy[k])) == "copy " + std::to_string(k * 1500));
        CHECK(copies[k].Intern(expected[1]) == 1); // found through the index the copy built
    }
}

TEST_CASE("metadata sections keep order and types", "[core][trace]")
{
    MetaSection s;
    s.Set("b", int64_t{2});
    s.Set("a", std::string("x"));
    s.Set("b", 2.5);
    REQUIRE(s.Entries().size() == 2);
    CHECK(s.Entries()[0].first == "b");
    CHECK(s.GetNumber("b") == 2.5);
    CHECK(s.GetString("a") == "x");
    CHECK(s.GetString("missing", "fallback") == "fallback");
}

TEST_CASE("StableOrderByKey sorts by key and keeps equal keys in their order", "[core][trace]")
{
    // Against std::stable_sort on keys spread over a range, crowded into few values, in two
    // clusters far apart, negative, at both ends of int64, and none or one.
    std::mt19937_64 rng(7);
    std::vector<std::vector<int64_t>> cases;
    auto add = [&](size_t n, auto draw) {
        std::vector<int64_t> k(n);
        for (int64_t& x : k) x = draw();
        cases.push_back(std::move(k));
    };
    add(20000, [&] { return static_cast<int64_t>(rng() % 1'000'000'000); });
    add(20000, [&] { return static_cast<int64_t>(rng() % 5); });
    add(20000, [&] { return static_cast<int64_t>(rng() % 100) + (rng() % 2 ? int64_t{1'700'000'000'000'000'000} : 0); });
    add(5000, [&] { return -static_cast<int64_t>(rng() % 3000); });
    add(3, [] { return int64_t{42}; });
    cases.push_back({std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::min()});
    cases.push_back({});
    cases.push_back({-1});
    for (const std::vector<int64_t>& keys : cases) {
        INFO(keys.size() << " keys");
        std::vector<uint32_t> want(keys.size());
        std::iota(want.begin(), want.end(), 0u);
        std::stable_sort(want.begin(), want.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
        CHECK(StableOrderByKey(keys) == want);
    }
}
