#include "common/Error.hpp"
#include "trace/TraceBuilder.hpp"

#include <catch2/catch.hpp>

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
