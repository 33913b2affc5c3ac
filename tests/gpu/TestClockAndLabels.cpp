// profiler/: clock mapping and drift, paralens's NVTX op labels.
#include "profiler/ClockMap.hpp"
#include "profiler/OpLabel.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::prof;

TEST_CASE("a clock sample takes the midpoint of the host readings around the GPU reading", "[prof]")
{
    int64_t host = 1000;
    auto readHost = [&] { return host += 10; }; // 1010, then 1020
    auto readGpu = [] { return uint64_t{500}; };
    const ClockSample s = TakeClockSample(readHost, readGpu);
    CHECK(s.gpuNs == 500);
    CHECK(s.hostNs == 1015);
    CHECK(s.uncertaintyNs == 5);
}

TEST_CASE("one sample maps GPU times by a constant offset", "[prof]")
{
    const ClockMap map(ClockSample{1'000'000, 5'000'000, 10});
    CHECK(map.ToHost(1'000'000) == 5'000'000);
    CHECK(map.ToHost(3'000'000) == 7'000'000);
    CHECK(map.ToHost(999'000) == 4'999'000); // before the sample too
    CHECK(map.DriftNs() == 0);
    CHECK_FALSE(map.DriftWarning(0).has_value());
}

TEST_CASE("two samples correct a drift linearly and report it", "[prof]")
{
    // The host clock gains 2 us over 1 s of GPU time (2 ppm).
    const ClockSample start{1'000'000'000, 50'000'000'000, 100};
    const ClockSample end{2'000'000'000, 51'000'002'000, 100};
    const ClockMap map(start, end);
    CHECK(map.DriftNs() == 2000);
    CHECK(map.DriftPpm() == Approx(2.0));
    CHECK(map.ToHost(1'000'000'000) == 50'000'000'000);
    CHECK(map.ToHost(2'000'000'000) == 51'000'002'000);
    CHECK(map.ToHost(1'500'000'000) == 50'500'001'000); // half the drift at the midpoint
    CHECK(map.UncertaintyNs() == 200);
    CHECK_FALSE(map.DriftWarning(5000).has_value());
    auto warning = map.DriftWarning(1000);
    REQUIRE(warning.has_value());
    CHECK(warning->find("2000 ns") != std::string::npos);
    CHECK(warning->find("2.00 ppm") != std::string::npos);
}

TEST_CASE("the identity map leaves host-clock records alone", "[prof]")
{
    const ClockMap identity;
    CHECK(identity.ToHost(123456789) == 123456789);
}

TEST_CASE("op labels round-trip through their NVTX text", "[prof]")
{
    OpLabel f;
    f.name = "F3";
    f.category = core::SpanCategory::Forward;
    f.microBatch = 3;
    f.chunk = 1;
    f.step = 0;
    f.flops = 68719476736.0 * 1.5;
    f.opId = 42;
    const std::string text = FormatOpLabel(f);
    CHECK(text.rfind("F3 cat=forward", 0) == 0);
    auto back = ParseOpLabel(text);
    REQUIRE(back);
    CHECK(back->name == "F3");
    CHECK(back->category == core::SpanCategory::Forward);
    CHECK(back->microBatch == 3);
    CHECK(back->chunk == 1);
    CHECK(back->step == 0);
    CHECK(back->flops == f.flops);
    CHECK(back->opId == 42);
    CHECK_FALSE(back->IsTransfer());

    OpLabel x;
    x.name = "0>1";
    x.category = core::SpanCategory::Send;
    x.srcRank = 0;
    x.dstRank = 1;
    x.bytes = 1048576;
    x.predictedNs = 15000;
    x.detail = "recompute me";
    auto xb = ParseOpLabel(FormatOpLabel(x));
    REQUIRE(xb);
    CHECK(xb->IsTransfer());
    CHECK(xb->bytes == 1048576);
    CHECK(xb->predictedNs == 15000);
    CHECK(xb->detail == "recompute_me");
    CHECK(xb->microBatch == core::kNone);
}

TEST_CASE("text that is not an op label is refused", "[prof]")
{
    CHECK_FALSE(ParseOpLabel("forward pass"));         // no key=value
    CHECK_FALSE(ParseOpLabel("F1 mb=1"));              // no category
    CHECK_FALSE(ParseOpLabel("F1 cat=forward mb=x"));  // a number that does not parse
    CHECK_FALSE(ParseOpLabel("F1 cat=nonsense"));      // an unknown category
    CHECK_FALSE(ParseOpLabel(""));
    auto future = ParseOpLabel("F1 cat=forward zz=7"); // unknown keys are skipped
    REQUIRE(future);
    CHECK(future->name == "F1");
}
