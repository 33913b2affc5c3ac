// Chrome Trace Event JSON from other tools: every phase, both forms, block boundaries, errors.
#include "common/Error.hpp"
#include "trace/ChromeEvents.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <map>

using namespace paralens;
using namespace paralens::core;

namespace {

Trace Read(const std::string& text, size_t blockBytes = 0, int parseWorkers = -1)
{
    auto source = TextSource(text);
    ReadOptions o;
    o.blockBytes = blockBytes;
    o.parseWorkers = parseWorkers;
    return ReadChromeTrace(*source, "test.json", o);
}

// The same spans, by start and name, on the same tracks.
void RequireSameSpans(const Trace& t, const Trace& whole)
{
    REQUIRE(t.SpanCount() == whole.SpanCount());
    REQUIRE(t.Tracks().size() == whole.Tracks().size());
    for (size_t k = 0; k < t.Tracks().size(); ++k)
        for (size_t i = 0; i < t.Tracks()[k].spans.size(); ++i) {
            CHECK(t.Tracks()[k].spans[i].startNs == whole.Tracks()[k].spans[i].startNs);
            CHECK(t.Str(t.Tracks()[k].spans[i].name) == whole.Str(whole.Tracks()[k].spans[i].name));
        }
}

const Track* FindTrack(const Trace& t, std::string_view name)
{
    for (const Track& track : t.Tracks())
        if (t.Str(track.name) == name) return &track;
    return nullptr;
}

std::map<std::string, const Span*> SpansByName(const Trace& t)
{
    std::map<std::string, const Span*> out;
    for (const Track& track : t.Tracks())
        for (const Span& s : track.spans) out[std::string(t.Str(s.name))] = &s;
    return out;
}

const char* kAllPhases = R"({"traceEvents":[
  {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},
  {"ph":"B","name":"outer","pid":1,"tid":2,"ts":10},
  {"ph":"B","name":"inner","pid":1,"tid":2,"ts":12.5},
  {"ph":"E","pid":1,"tid":2,"ts":14},
  {"ph":"E","pid":1,"tid":2,"ts":20},
  {"ph":"E","pid":1,"tid":2,"ts":21},
  {"ph":"X","name":"overlap","pid":1,"tid":2,"ts":11,"dur":3},
  {"ph":"i","name":"mark","pid":1,"tid":2,"ts":15,"s":"t"},
  {"ph":"I","name":"global","pid":1,"ts":16,"s":"g"},
  {"ph":"b","name":"req","cat":"net","id":"0x1","pid":1,"ts":10},
  {"ph":"n","name":"step","cat":"net","id":"0x1","pid":1,"ts":12},
  {"ph":"b","name":"req","cat":"net","id":"0x2","pid":1,"ts":11},
  {"ph":"e","name":"req","cat":"net","id":"0x1","pid":1,"ts":30},
  {"ph":"S","name":"legacy","cat":"old","id":7,"pid":1,"ts":5},
  {"ph":"F","name":"legacy","cat":"old","id":7,"pid":1,"ts":9},
  {"ph":"f","name":"msg","cat":"flow","id":5,"pid":3,"tid":1,"ts":40,"bp":"e"},
  {"ph":"t","name":"msg","cat":"flow","id":5,"pid":1,"tid":2,"ts":35},
  {"ph":"s","name":"msg","cat":"flow","id":5,"pid":1,"tid":2,"ts":30,"args":{"bytes":64}},
  {"ph":"X","name":"sink","pid":3,"tid":1,"ts":40,"dur":1},
  {"ph":"C","name":"mem","pid":1,"ts":10,"args":{"value":5}},
  {"ph":"P","name":"sample","pid":1,"tid":2,"ts":10}
]})";

} // namespace

TEST_CASE("Chrome phases: B/E per thread, instants, async spans, flow steps, counters", "[io]")
{
    Trace t = Read(kAllPhases);
    CHECK(t.Meta().source == TraceSource::Chrome);
    auto spans = SpansByName(t);
    REQUIRE(spans.count("outer"));
    CHECK(spans["outer"]->startNs == 10000);
    CHECK(spans["outer"]->endNs == 20000);  // E closes the latest open B
    CHECK(spans["inner"]->startNs == 12500);
    CHECK(spans["inner"]->endNs == 14000);
    CHECK(spans["mark"]->DurationNs() == 0); // instants are zero-length spans
    CHECK(spans["global"]->startNs == 16000);
    const Track* main = FindTrack(t, "main");
    REQUIRE(main);
    CHECK(main->DepthCount() >= 2); // overlapping spans on one thread: separate depths, none dropped
    CHECK(main->spans.size() == 4);
    const Track* async = FindTrack(t, "async net");
    REQUIRE(async);
    CHECK(async->spans.size() == 3); // req 0x1 [10, 30], the n instant, req 0x2 left open
    CHECK(spans["legacy"]->startNs == 5000);
    CHECK(spans["legacy"]->endNs == 9000);
    CHECK(t.Meta().extra.GetNumber("unclosedSpans") == 1); // req 0x2, closed at the last time seen
    CHECK(t.Meta().extra.GetNumber("skippedEvents") == 1); // the P sample
    REQUIRE(t.Flows().size() == 2); // s -> t -> f: two arrows, whatever the order in the file
    CHECK(t.Flows()[0].srcNs == 30000);
    CHECK(t.Flows()[0].dstNs == 35000);
    CHECK(t.Flows()[0].bytes == 64);
    CHECK(t.Flows()[1].srcNs == 35000);
    CHECK(t.Flows()[1].dstNs == 40000);
    CHECK(t.Flows()[1].dstDevice != t.Flows()[1].srcDevice);
    REQUIRE(t.Counters().size() == 1);
    CHECK(t.Counters()[0].samples.at(0).value == 5);
}

TEST_CASE("any block size gives the same trace: events cut anywhere, strings with brackets", "[io]")
{
    std::string text = "[";
    for (int i = 0; i < 300; ++i) {
        text += i ? "," : "";
        text += R"({"ph":"X","name":"k},{\"x\":[1,2]}\\ )" + std::to_string(i) + R"(","pid":0,"tid":)" +
                std::to_string(i % 3) + R"(,"ts":)" + std::to_string(1700000000000000 + i) + ".123" +
                R"(,"dur":0.5,"args":{"list":[{"a":"]}"},{"b":[]}],"s":"\"quoted\""}})";
        text += "\n";
    }
    text += "]";
    Trace whole = Read(text);
    REQUIRE(whole.SpanCount() == 300);
    for (size_t block : {8, 61, 100, 1000, 4096}) {
        INFO("block " << block);
        RequireSameSpans(Read(text, block), whole);
    }
    CHECK(whole.Tracks()[0].spans[0].startNs == 1700000000000000123); // ns-exact at epoch scale
    CHECK(whole.Str(whole.Tracks()[0].spans[0].name) == "k},{\"x\":[1,2]}\\ 0");
}

TEST_CASE("blocks parsed on any number of threads give the same trace, wrong guessed cuts included", "[io]")
{
    // Pretty-printed nested objects: ",\n{" inside an event's args looks like an event boundary to
    // the guessed cut, so blocks are cut wrong, found out by their parse, and cut again exactly
    // while later blocks are already being parsed.
    std::string text = "{\"traceEvents\":[\n";
    for (int i = 0; i < 400; ++i) {
        text += i ? ",\n" : "";
        text += "{\"ph\":\"X\",\"name\":\"op" + std::to_string(i) + "\",\"pid\":0,\"tid\":" + std::to_string(i % 4) +
                ",\"ts\":" + std::to_string(10 * i) + ",\"dur\":5,\"args\":{\"list\":[\n{\"a\":" + std::to_string(i) +
                "},\n{\"b\":[1,\n2]}\n]}}";
    }
    text += "\n],\"displayTimeUnit\":\"ns\"}";
    const Trace whole = Read(text, 0, 0);
    REQUIRE(whole.SpanCount() == 400);
    for (int workers : {0, 1, 3})
        for (size_t block : {8, 50, 333, 4096}) {
            INFO("workers " << workers << ", block " << block);
            RequireSameSpans(Read(text, block, workers), whole);
        }
    // An error after many blocks names the event's index and place whatever the threads.
    std::string bad = text;
    bad.replace(bad.find("\"ts\":3000"), 9, "\"ts\":\"x\"");
    for (int workers : {0, 2})
        CHECK_THROWS_WITH(Read(bad, 64, workers), Catch::Contains("traceEvents[300]") && Catch::Contains("\"ts\" must be a number"));
}

TEST_CASE("the array form may lack its closing bracket, the object form may not", "[io]")
{
    Trace t = Read(R"([{"ph":"X","name":"a","pid":0,"tid":0,"ts":1,"dur":1},
                       {"ph":"X","name":"b","pid":0,"tid":0,"ts":3,"dur":1}
                     )");
    CHECK(t.SpanCount() == 2);
    CHECK(Read(R"([{"ph":"X","name":"a","pid":0,"tid":0,"ts":1,"dur":1},)", 16).SpanCount() == 1);
    CHECK_THROWS_WITH(Read(R"({"traceEvents":[{"ph":"X","name":"a","pid":0,"tid":0,"ts":1,"dur":1}])"),
                      Catch::Contains("test.json") && Catch::Contains("byte") && Catch::Contains("'}'"));
}

TEST_CASE("bad Chrome JSON gets one error with the file, the byte offset and what was expected", "[io]")
{
    struct Case {
        std::string text;
        std::vector<std::string> mention;
    };
    const std::vector<Case> cases = {
        {R"({"traceEvents":[{"ph":"X","name":"a","pid":0,"ts":1,"dur":1},{"ph":"X","na)", {"ends inside the event array", "after 1 complete events", "byte 61"}},
        {R"({"traceEvents":[{"ph":"X","ts":{"a":1},"pid":0}]})", {"traceEvents[0]", "\"ts\""}},
        {R"({"traceEvents":[{"ph":"X","ts":1e300,"pid":0}]})", {"fits 64-bit"}},
        {R"({"traceEvents":[{"ph":"X","ts":1,"dur":9e12,"pid":0},{"ph":"X","ts":9223372036854775,"dur":9e12,"pid":0}]})", {"traceEvents[1]"}},
        {R"({"traceEvents":[{"ph":"X","ts":1,"pid":[1]}]})", {"\"pid\" must be a number or a string"}},
        {R"({"traceEvents":[{"ph":"X","ts":-5e15,"dur":1,"pid":0}]})", {"traceEvents[0]", "\"ts\" is out of range"}},
        {R"({"traceEvents":[{"ph":"X","ts":3e15,"dur":2e15,"pid":0}]})", {"\"dur\" is too large"}},
        {R"({"traceEvents":[1,2]})", {"traceEvents[0]", "must be a JSON object"}},
        {R"({"traceEvents":{}})", {"expected an array of events"}},
        {R"({"traceEvents":[]})", {"no events"}},
        {R"({"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}}]})", {"none of the trace's 1 events"}},
        {R"({"traceEvents":[{"ph":"X","ts":1,"pid":0}]} xyz)", {"unexpected 'x' after the end"}},
        {"\x89PNG\r\n\x1a\n", {"expected a Chrome trace"}},
        {R"({"traceEvents":[{"ph":"X" "ts":1}]})", {"traceEvents[0]", "cannot read"}},
    };
    for (const Case& c : cases) {
        INFO(c.text);
        try {
            Read(c.text);
            FAIL("no error");
        } catch (const Error& e) {
            std::string what = e.what();
            CHECK_THAT(what, Catch::StartsWith("test.json"));
            for (const std::string& m : c.mention) CHECK_THAT(what, Catch::Contains(m));
        }
    }
}

TEST_CASE("string pids and tids, decimal and integer microseconds", "[io]")
{
    Trace t = Read(R"({"traceEvents":[
      {"ph":"X","name":"a","pid":"host-1","tid":"worker","ts":"1712195495505582.988","dur":4.928},
      {"ph":"X","name":"b","pid":"host-1","tid":"worker","ts":1712195495519695.812,"dur":1},
      {"ph":"X","name":"c","pid":2,"tid":1,"ts":1695835583881571,"dur":4}
    ], "displayTimeUnit":"ns"})");
    auto spans = SpansByName(t);
    CHECK(spans["a"]->startNs == 1712195495505582988);
    CHECK(spans["a"]->endNs == 1712195495505587916);
    CHECK(spans["b"]->startNs == 1712195495519695812); // float64 would give ...695800
    CHECK(spans["c"]->startNs == 1695835583881571000);
    CHECK(t.Devices().size() == 2);
}

TEST_CASE("deeply nested spans on one thread keep every span", "[io]")
{
    std::string text = "[";
    const int n = 20000; // all open at once: depth 20000, assigned in O(n log n)
    for (int i = 0; i < n; ++i) text += (i ? "," : "") + std::string(R"({"ph":"B","name":"x","pid":0,"tid":0,"ts":)") + std::to_string(i) + "}";
    for (int i = 0; i < n; ++i) text += std::string(R"(,{"ph":"E","pid":0,"tid":0,"ts":)") + std::to_string(2 * n - i) + "}";
    text += "]";
    Trace t = Read(text);
    REQUIRE(t.SpanCount() == static_cast<size_t>(n));
    CHECK(t.Tracks()[0].DepthCount() == n);
}
