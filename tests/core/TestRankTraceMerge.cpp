// Per-rank traces of a multi-process run merged on rank 0's clock, messages paired into arrows.
#include "common/Error.hpp"
#include "trace/RankTraceMerge.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceMerge.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::core;

namespace {

// A rank whose clock reads offset(t) = offsetStart + drift x (t - 1000) ahead of rank 0's.
Trace RankTrace(int rank, int64_t offsetStart, double drift, bool sending, int64_t startNs, int64_t endNs)
{
    TraceBuilder b;
    uint32_t d = b.AddDevice("rank " + std::to_string(rank), DeviceKind::Cpu, rank, "node" + std::to_string(rank));
    uint32_t t = b.AddTrack(d, sending ? "send" : "recv");
    Span s;
    s.startNs = startNs;
    s.endNs = endNs;
    s.bytes = 4096;
    s.step = 2;
    s.category = sending ? SpanCategory::Send : SpanCategory::Recv;
    s.name = b.Intern("allgather");
    s.detail = b.Intern(MessageDetail(0, sending, 1 - rank));
    b.AddSpan(t, s);
    MetaSection& x = b.Meta().extra;
    x.Set("clockStartLocalNs", int64_t{1000});
    x.Set("clockStartOffsetNs", offsetStart);
    x.Set("clockStartBoundNs", int64_t{50});
    x.Set("clockEndLocalNs", int64_t{1000001000});
    x.Set("clockEndOffsetNs", offsetStart + static_cast<int64_t>(drift * 1e9));
    x.Set("clockEndBoundNs", int64_t{70});
    return std::move(b).Finish();
}

} // namespace

TEST_CASE("message details round-trip", "[core][io]")
{
    auto m = ParseMessageDetail(MessageDetail(7, true, 12));
    REQUIRE(m);
    CHECK(m->iteration == 7);
    CHECK(m->sending);
    CHECK(m->peer == 12);
    CHECK_FALSE(ParseMessageDetail("iteration 7, to rank"));
    CHECK_FALSE(ParseMessageDetail("algo=ring"));
    CHECK_FALSE(ParseMessageDetail(MessageDetail(1, false, 2) + "x"));
}

TEST_CASE("rank traces merge on rank 0's clock with drift, and messages become arrows", "[core][io]")
{
    // Rank 1's clock is 5 ms ahead at the start and gains 1e-6 s per second (1 us over the run).
    std::vector<Trace> parts;
    parts.push_back(RankTrace(0, 0, 0.0, true, 500001000, 500002000));
    const int64_t t = 500001000; // a local time of rank 1 halfway: offset = 5 ms + 0.5 us
    parts.push_back(RankTrace(1, 5000000, 1e-6, false, t + 5000500 + 800, t + 5000500 + 2500));
    RankMergeInfo info;
    Trace m = MergeRankTraces(std::move(parts), {"run.rank0.json", "run.rank1.json"}, &info);
    REQUIRE(m.Devices().size() == 2);
    CHECK(info.clockBoundNs == 70);
    CHECK(info.pairedMessages == 1);
    CHECK(info.unpairedMessages == 0);
    REQUIRE(m.Flows().size() == 1);
    const Flow& f = m.Flows()[0];
    CHECK(m.Devices()[f.srcDevice].rank == 0);
    CHECK(m.Devices()[f.dstDevice].rank == 1);
    CHECK(f.srcNs == 500001000);
    const double localEnd = t + 5000500 + 2500;
    const double onRankZero = localEnd - (5000000 + 1e-6 * (localEnd - 1000)); // minus offset(t)
    CHECK(std::abs(static_cast<double>(f.dstNs) - onRankZero) <= 1);
    CHECK(f.bytes == 4096);
    CHECK(f.step == 2);
}

TEST_CASE("a trace without clock metadata is refused by name", "[core][io]")
{
    TraceBuilder b;
    b.AddTrack(b.AddDevice("rank 0", DeviceKind::Cpu, 0), "send");
    std::vector<Trace> parts;
    parts.push_back(std::move(b).Finish());
    CHECK_THROWS_WITH(MergeRankTraces(std::move(parts), {"plain.json"}), Catch::Contains("plain.json") && Catch::Contains("clock"));
}

TEST_CASE("a linear clock map corrects drift", "[core][io]")
{
    ClockMap m{1000, -500, -0.001};
    CHECK(m.Apply(1000) == 500);
    CHECK(m.Apply(11000) == 11000 - 500 - 10);
}
