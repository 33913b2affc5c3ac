// The live channel's messages (app/live/LiveProtocol) and the collector that turns them into a
// merged Trace (app/live/LiveCollector): round trips, and refusals that name the rank.
#include "live/LiveCollector.hpp"
#include "live/LiveProtocol.hpp"

#include "common/Error.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::app::live;

namespace {

std::string SpansLine(const std::string& track, int64_t start, int64_t end, const char* category, const std::string& detail, int step)
{
    core::TraceBuilder b;
    core::Span s;
    s.startNs = start;
    s.endNs = end;
    s.bytes = 1024;
    s.step = step;
    s.name = b.Intern("reduce-scatter");
    s.detail = b.Intern(detail);
    s.category = core::ParseSpanCategory(category);
    return EncodeSpans(track, b, {s});
}

} // namespace

TEST_CASE("live messages round-trip through their encoders", "[live]")
{
    const LiveMessage hello = ParseLiveMessage(EncodeHello("s3cret", 2, 4, 1234, "node1"), "test");
    CHECK(hello.type == MessageType::Hello);
    CHECK(hello.rank == 2);
    CHECK(hello.size == 4);
    CHECK(hello.pid == 1234);
    CHECK(hello.secret == "s3cret");
    const LiveMessage spans = ParseLiveMessage(SpansLine("send", 100, 250, "send", "iteration 0, to rank 1", 3), "test");
    REQUIRE(spans.spans.size() == 1);
    CHECK(spans.track == "send");
    CHECK(spans.spans[0].span.startNs == 100);
    CHECK(spans.spans[0].span.endNs == 250);
    CHECK(spans.spans[0].span.bytes == 1024);
    CHECK(spans.spans[0].span.step == 3);
    CHECK(spans.spans[0].span.category == core::SpanCategory::Send);
    CHECK(spans.spans[0].detail == "iteration 0, to rank 1");
    const LiveMessage clock = ParseLiveMessage(EncodeClock(true, 10, -5, 2), "test");
    CHECK(clock.clockEnd);
    CHECK(clock.offsetNs == -5);
    core::MetaSection row;
    row.Set("collective", std::string("allreduce"));
    row.Set("correct", true);
    const LiveMessage result = ParseLiveMessage(EncodeResult(true, {row}), "test");
    REQUIRE(result.rows.size() == 1);
    CHECK(result.rows[0].GetString("collective") == "allreduce");
}

TEST_CASE("live messages that do not validate are refused with the sender named", "[live]")
{
    auto refusal = [](const std::string& line) {
        try {
            ParseLiveMessage(line, "rank 3, message 7");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK_THAT(refusal("not json"), Catch::Contains("rank 3, message 7") && Catch::Contains("not JSON"));
    CHECK_THAT(refusal(R"({"t":"launch"})"), Catch::Contains("unknown message type 'launch'"));
    CHECK_THAT(refusal(R"({"t":"hello","v":1,"secret":"x","rank":4,"size":4,"pid":1,"host":"h"})"), Catch::Contains("'rank' = 4 is out of range"));
    CHECK_THAT(refusal(R"({"t":"spans","track":"send","spans":[[5,4,0,0,-1,"a","b","send",-1,-1,-1]]})"), Catch::Contains("ends before it starts"));
    CHECK_THAT(refusal(R"({"t":"spans","track":"send","spans":[[1,2,3]]})"), Catch::Contains("11 values"));
    CHECK_THAT(refusal(R"({"t":"progress","phase":"x","fraction":2})"), Catch::Contains("[0, 1]"));
    CHECK_THAT(refusal(std::string(kMaxLineBytes + 1, ' ')), Catch::Contains("longer than"));
}

TEST_CASE("the collector checks hellos and merges the ranks on rank 0's clock", "[live]")
{
    LiveCollector c(2, "secret");
    CHECK_THROWS_WITH(c.Apply(1, EncodeClock(false, 0, 0, 0)), Catch::Contains("first message must be a hello"));
    CHECK_THROWS_WITH(c.Apply(2, EncodeHello("wrong", 0, 2, 10, "h")), Catch::Contains("wrong secret"));
    CHECK_THROWS_WITH(c.Apply(3, EncodeHello("secret", 0, 3, 10, "h")), Catch::Contains("3 ranks, the launcher started 2"));
    c.Apply(4, EncodeHello("secret", 0, 2, 10, "h"));
    c.Apply(5, EncodeHello("secret", 1, 2, 11, "h"));
    CHECK_THROWS_WITH(c.Apply(6, EncodeHello("secret", 1, 2, 12, "h")), Catch::Contains("said hello twice"));
    CHECK(c.Merge("t") == nullptr); // no clock yet
    c.Apply(4, EncodeClock(false, 0, 0, 0));
    c.Apply(5, EncodeClock(false, 0, 1000, 10)); // rank 1's clock runs 1000 ns ahead
    c.Apply(4, SpansLine("send", 100, 200, "send", "iteration 0, to rank 1", 0));
    c.Apply(5, SpansLine("recv", 1100, 1300, "recv", "iteration 0, from rank 0", 0));
    auto t = c.Merge("live test");
    REQUIRE(t);
    CHECK(t->Meta().title == "live test");
    CHECK(t->Meta().extra.GetString("rankPids") == "10,11");
    REQUIRE(t->Devices().size() == 2);
    REQUIRE(t->Flows().size() == 1);
    CHECK(t->Flows()[0].srcNs == 100);
    CHECK(t->Flows()[0].dstNs == 300); // 1300 on rank 1's clock = 300 on rank 0's
    CHECK_THROWS_WITH(c.Apply(5, EncodeResult(true, {})), Catch::Contains("only rank 0 reports the result"));
    c.Apply(4, EncodeDone());
    CHECK_FALSE(c.AllDone());
    c.Apply(5, EncodeDone());
    CHECK(c.AllDone());
    CHECK_THROWS_WITH(c.Apply(5, EncodeDone()), Catch::Contains("after 'done'"));
}
