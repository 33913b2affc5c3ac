#include "common/Error.hpp"
#include "common/Units.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::core;

TEST_CASE("sizes parse with binary and decimal units", "[core]")
{
    CHECK(ParseBytes("8") == 8);
    CHECK(ParseBytes("4096B") == 4096);
    CHECK(ParseBytes("64KiB") == 64 * 1024);
    CHECK(ParseBytes("64MiB") == 64ull << 20);
    CHECK(ParseBytes("1GiB") == 1ull << 30);
    CHECK(ParseBytes("1GB") == 1000000000ull);
    CHECK(ParseBytes("128M") == 128ull << 20); // nccl-tests' -e 128M
    CHECK(ParseBytes("2 kib") == 2048);
    CHECK(ParseBytes("3TB") == 3000000000000ull);
}

TEST_CASE("bad sizes are rejected with the accepted forms", "[core]")
{
    CHECK_THROWS_WITH(ParseBytes("abc"), Catch::Contains("64MiB") && Catch::Contains("'abc'"));
    CHECK_THROWS_AS(ParseBytes(""), Error);
    CHECK_THROWS_AS(ParseBytes("12XB"), Error);
    CHECK_THROWS_AS(ParseBytes("1.5GiB"), Error);
    CHECK_THROWS_AS(ParseBytes("-8"), Error);
    CHECK_THROWS_WITH(ParseBytes("99999999999999999999"), Catch::Contains("too large"));
    CHECK_THROWS_WITH(ParseBytes("99999999999TiB"), Catch::Contains("too large"));
}

TEST_CASE("sizes and times format for tables", "[core]")
{
    CHECK(FormatBytes(8) == "8 B");
    CHECK(FormatBytes(64ull << 20) == "64 MiB");
    CHECK(FormatBytes(1536) == "1.5 KiB");
    CHECK(FormatSeconds(1.5e-6) == "1.5 us");
    CHECK(FormatSeconds(0.25) == "250 ms");
    CHECK(RoundToPicoseconds(1.0000000000004e-3) == 1e-3);
}
