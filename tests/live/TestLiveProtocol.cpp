// The live channel's messages (app/live/LiveProtocol) and the collector that turns them into a
// merged Trace (app/live/LiveCollector): round trips, and refusals that name the rank.
#include "live/LiveCollector.hpp"
#include "live/LiveProtocol.hpp"

#include "common/Error.hpp"
#include "trace/RankTraceMerge.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

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
    return EncodeSpans(track, b, std::vector<core::Span>{s});
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
    REQUIRE(spans.spans[0].detail < spans.strings.size());
    CHECK(spans.strings[spans.spans[0].detail] == "iteration 0, to rank 1");
    CHECK(spans.strings[spans.spans[0].name] == "reduce-scatter");
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
    CHECK_THAT(refusal(R"({"t":"hello","v":2,"secret":"x","rank":4,"size":4,"pid":1,"host":"h"})"), Catch::Contains("'rank' = 4 is out of range"));
    CHECK_THAT(refusal(R"({"t":"spans","track":"send","strings":["a","b"],"spans":[[5,4,0,0,-1,0,1,"send",-1,-1,-1]]})"), Catch::Contains("ends before it starts"));
    CHECK_THAT(refusal(R"({"t":"spans","track":"send","strings":[],"spans":[[1,2,3]]})"), Catch::Contains("11 values"));
    CHECK_THAT(refusal(R"({"t":"spans","track":"send","strings":["a"],"spans":[[1,2,0,0,-1,0,1,"send",-1,-1,-1]]})"),
               Catch::Contains("span value 6 = 1 is not an index into 'strings'"));
    CHECK_THAT(refusal(R"({"t":"spans","track":"send","strings":["a"],"spans":[[1,2,-8,0,-1,0,0,"send",-1,-1,-1]]})"),
               Catch::Contains("bytes must be >= 0"));
    CHECK_THAT(refusal(R"({"t":"spans","track":"send","strings":["a"]})"), Catch::Contains("'spans' must be an array"));
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

namespace {

// What a rank of the equivalence test below sends, kept to build its per-rank trace file as well.
struct RankScript {
    int64_t offsetNs = 0, driftNs = 0; // clock against rank 0 at the start, and its change by the end
    core::TraceBuilder file;           // the same spans as a per-rank trace (what `paralens merge` reads)
    std::vector<std::pair<std::string, std::vector<core::Span>>> batches;
};

core::Span Message(core::TraceBuilder& b, int64_t start, int64_t dur, bool send, int iteration, int peer, int step)
{
    core::Span s;
    s.startNs = start;
    s.endNs = start + dur;
    s.bytes = 4096;
    s.step = step;
    s.chunk = step % 3;
    s.category = send ? core::SpanCategory::Send : core::SpanCategory::Recv;
    s.name = b.Intern(send ? "reduce-scatter" : "all-gather");
    s.detail = b.Intern(core::MessageDetail(iteration, send, peer));
    return s;
}

std::string Key(const core::Trace& t, const core::Span& s)
{
    return std::to_string(s.startNs) + "/" + std::to_string(s.endNs) + "/" + std::string(t.Str(s.name)) + "/" + std::string(t.Str(s.detail)) + "/" +
           std::to_string(s.step) + "/" + std::to_string(s.depth);
}

// Every span and flow of a trace as text, by device and track name (indices may differ).
std::vector<std::string> Contents(const core::Trace& t)
{
    std::vector<std::string> out;
    for (const core::Device& d : t.Devices())
        for (uint32_t tr : d.tracks)
            for (const core::Span& s : t.Tracks()[tr].spans)
                out.push_back(std::string(t.Str(d.name)) + ":" + std::string(t.Str(t.Tracks()[tr].name)) + ":" + Key(t, s));
    for (const core::Flow& f : t.Flows())
        out.push_back("flow " + std::string(t.Str(t.Devices()[f.srcDevice].name)) + ":" + std::string(t.Str(t.Tracks()[f.srcTrack].name)) + " -> " +
                      std::string(t.Str(t.Devices()[f.dstDevice].name)) + ":" + std::string(t.Str(t.Tracks()[f.dstTrack].name)) + " " +
                      std::to_string(f.srcNs) + ".." + std::to_string(f.dstNs) + " " + std::to_string(f.bytes) + " " + std::string(t.Str(f.name)));
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("the collector's incremental merge equals MergeRankTraces of the same ranks' files", "[live]")
{
    constexpr int kRanks = 3;
    std::vector<RankScript> ranks(kRanks);
    for (int r = 0; r < kRanks; ++r) ranks[static_cast<size_t>(r)].offsetNs = r * 1'000'000, ranks[static_cast<size_t>(r)].driftNs = r * 300;
    // A ring over 4 iterations of 2 steps, each rank's clock ahead by its offset; the last
    // iteration's receives go to a track ("late") first seen after the others.
    for (int it = 0; it < 4; ++it)
        for (int step = 0; step < 2; ++step)
            for (int r = 0; r < kRanks; ++r) {
                RankScript& me = ranks[static_cast<size_t>(r)];
                const int64_t t0 = 10'000 * (it * 2 + step) + me.offsetNs;
                const int next = (r + 1) % kRanks, prev = (r + kRanks - 1) % kRanks;
                const std::string recvTrack = it == 3 ? "late" : "recv";
                me.batches.push_back({"send", {Message(me.file, t0, 3000, true, it, next, step)}});
                me.batches.push_back({recvTrack, {Message(me.file, t0 + 500, 4000, false, it, prev, step)}});
            }
    LiveCollector c(kRanks, "s");
    for (int r = 0; r < kRanks; ++r) {
        c.Apply(r + 1, EncodeHello("s", r, kRanks, 100 + r, "host"));
        const RankScript& me = ranks[static_cast<size_t>(r)];
        c.Apply(r + 1, EncodeClock(false, 0, me.offsetNs, 5));
    }
    // Interleaved, the last rank first, so that receives often arrive before their sends; a
    // snapshot half-way must not disturb what follows.
    const size_t batches = ranks[0].batches.size();
    for (size_t i = 0; i < batches; ++i) {
        for (int r = kRanks - 1; r >= 0; --r) {
            const auto& [track, spans] = ranks[static_cast<size_t>(r)].batches[i];
            c.Apply(r + 1, EncodeSpans(track, ranks[static_cast<size_t>(r)].file, spans));
        }
        if (i == batches / 2) REQUIRE(c.Merge("half"));
    }
    for (int r = 0; r < kRanks; ++r) {
        const RankScript& me = ranks[static_cast<size_t>(r)];
        c.Apply(r + 1, EncodeClock(true, 100'000 + me.offsetNs, me.offsetNs + me.driftNs, 7));
    }
    auto live = c.Merge("live");
    REQUIRE(live);

    std::vector<core::Trace> files;
    std::vector<std::string> origins;
    for (int r = 0; r < kRanks; ++r) {
        RankScript& me = ranks[static_cast<size_t>(r)];
        core::TraceBuilder b;
        const uint32_t d = b.AddDevice("rank " + std::to_string(r), core::DeviceKind::Cpu, r, "host");
        std::map<std::string, uint32_t> tracks;
        for (const auto& [name, spans] : me.batches) {
            if (!tracks.count(name)) tracks[name] = b.AddTrack(d, name);
            for (core::Span s : spans) {
                s.name = b.Intern(me.file.Str(s.name));
                s.detail = b.Intern(me.file.Str(s.detail));
                b.AddSpan(tracks[name], s);
            }
        }
        core::MetaSection& x = b.Meta().extra;
        x.Set("clockStartLocalNs", int64_t{0}), x.Set("clockStartOffsetNs", me.offsetNs), x.Set("clockStartBoundNs", int64_t{5});
        x.Set("clockEndLocalNs", 100'000 + me.offsetNs), x.Set("clockEndOffsetNs", me.offsetNs + me.driftNs), x.Set("clockEndBoundNs", int64_t{7});
        files.push_back(std::move(b).Finish());
        origins.push_back("rank" + std::to_string(r) + ".json");
    }
    core::RankMergeInfo info;
    const core::Trace reference = core::MergeRankTraces(std::move(files), origins, &info);
    CHECK(info.pairedMessages == 4 * 2 * kRanks);
    CHECK(live->Meta().extra.GetNumber("pairedMessages") == static_cast<double>(info.pairedMessages));
    CHECK(live->Meta().extra.GetNumber("clockBoundNs") == static_cast<double>(info.clockBoundNs));
    CHECK(live->SpanCount() == reference.SpanCount());
    CHECK(Contents(*live) == Contents(reference));
    CHECK(live->BeginNs() == reference.BeginNs());
    CHECK(live->EndNs() == reference.EndNs());
}
