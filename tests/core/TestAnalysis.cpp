#include "analysis/DeviceUsage.hpp"
#include "analysis/Intervals.hpp"
#include "trace/TraceBuilder.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace paralens::core;

TEST_CASE("interval unions merge overlaps and touching ranges", "[core][analysis]")
{
    IntervalSet u = UnionOf({{5, 10}, {0, 3}, {3, 4}, {8, 12}, {20, 20}});
    CHECK(u == IntervalSet{{0, 4}, {5, 12}});
    CHECK(TotalLength(u) == 11);
    CHECK(Intersect(u, {{2, 6}, {11, 30}}) == IntervalSet{{2, 4}, {5, 6}, {11, 12}});
    CHECK(Subtract(u, {{1, 2}, {6, 7}, {10, 40}}) == IntervalSet{{0, 1}, {2, 4}, {5, 6}, {7, 10}});
    CHECK(Gaps(u, -1, 15) == IntervalSet{{-1, 0}, {4, 5}, {12, 15}});
    CHECK(Clip(u, 2, 6) == IntervalSet{{2, 4}, {5, 6}});
    CHECK(Union({{0, 1}}, {{1, 2}}) == IntervalSet{{0, 2}});
    CHECK(Gaps({}, 3, 3).empty());
}

TEST_CASE("interval unions of sorted runs, few or many, equal those of sorted input", "[core][analysis]")
{
    std::mt19937 rng(7);
    for (int runs : {1, 2, 3, 7, 64, 65, 300}) {
        std::vector<Interval> v;
        for (int r = 0; r < runs; ++r) { // each run sorted by begin, as a track's lane is
            int64_t t = static_cast<int64_t>(rng() % 1000);
            for (int i = 0; i < 40; ++i) {
                t += static_cast<int64_t>(rng() % 50);
                v.push_back({t, t + static_cast<int64_t>(rng() % 40)});
            }
        }
        std::vector<Interval> sorted = v;
        std::sort(sorted.begin(), sorted.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
        IntervalSet expected;
        for (const Interval& i : sorted) {
            if (i.end <= i.begin) continue;
            if (!expected.empty() && i.begin <= expected.back().end) expected.back().end = std::max(expected.back().end, i.end);
            else expected.push_back(i);
        }
        INFO(runs << " runs");
        CHECK(UnionOf(v) == expected);
    }
}

TEST_CASE("device usage counts overlapping kernels once and finds exposed communication", "[core][analysis]")
{
    TraceBuilder b;
    uint32_t d = b.AddDevice("gpu", DeviceKind::Gpu, 0);
    uint32_t s1 = b.AddTrack(d, "stream 1");
    uint32_t s2 = b.AddTrack(d, "stream 2");
    auto span = [&](uint32_t t, int64_t s, int64_t e, SpanCategory c) {
        Span x;
        x.startNs = s;
        x.endNs = e;
        x.category = c;
        b.AddSpan(t, x);
    };
    span(s1, 0, 40, SpanCategory::Compute);
    span(s1, 10, 20, SpanCategory::Compute);   // nested: counts once
    span(s2, 30, 60, SpanCategory::Collective); // 10 ns overlap, 20 ns exposed
    span(s2, 70, 80, SpanCategory::Memcpy);
    span(s1, 80, 100, SpanCategory::Idle);      // idle spans are not busy
    uint32_t d2 = b.AddDevice("host", DeviceKind::Cpu, 0);
    span(b.AddTrack(d2, "thread"), 0, 100, SpanCategory::Other);
    Trace t = std::move(b).Finish();
    auto usage = ComputeDeviceUsage(t, WholeTrace(t), false);
    REQUIRE(usage.size() == 1);
    const DeviceUsage& u = usage[0];
    CHECK(u.windowNs == 100);
    CHECK(u.busyNs == 70);
    CHECK(u.idleNs == 30);
    CHECK(u.idle == IntervalSet{{60, 70}, {80, 100}});
    CHECK(u.computeNs == 40);
    CHECK(u.commNs == 30);
    CHECK(u.overlapNs == 10);
    CHECK(u.exposedCommNs == 20);
    CHECK(IdleFraction(usage) == Approx(0.3));
    CHECK(ComputeDeviceUsage(t, {50, 75}).at(0).busyNs == 15);
    CHECK(ComputeDeviceUsage(t, WholeTrace(t), true).size() == 2);
}
