// common/CharConv.hpp: numbers read and written the same with every standard library. The
// strtod/printf fallback the web page's libc++ uses is tested here directly, on the desktop, too.
#include "common/CharConv.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <string_view>

namespace {

template <class Parse>
void ChecksFromCharsRules(Parse parse)
{
    double v = -1;
    std::string_view s = "12.5e3 rest";
    auto r = parse(s.data(), s.data() + s.size(), v);
    CHECK(r.ec == std::errc());
    CHECK(v == 12500.0);
    CHECK(r.ptr == s.data() + 6); // stops where the number ends
    for (std::string_view bad : {"", " 1", "+1", "x1", "."}) {
        INFO("'" << bad << "'");
        v = -1;
        CHECK(parse(bad.data(), bad.data() + bad.size(), v).ec == std::errc::invalid_argument);
        CHECK(v == -1); // untouched
    }
    std::string_view hex = "0x10";
    r = parse(hex.data(), hex.data() + hex.size(), v);
    CHECK(v == 0.0); // from_chars reads no hexadecimal: "0", then stops
    CHECK(r.ptr == hex.data() + 1);
    std::string_view neg = "-0.25,";
    parse(neg.data(), neg.data() + neg.size(), v);
    CHECK(v == -0.25);
    std::string_view bounded = "123456"; // only the first three characters are the field
    parse(bounded.data(), bounded.data() + 3, v);
    CHECK(v == 123.0);
}

template <class Print>
void ChecksShortestRoundTrip(Print print)
{
    for (double d : {0.1, 1.0 / 3.0, 5e-6, 1e300, 123456789.125, -2.5, 0.0, 6.02214076e23}) {
        char buf[40];
        auto r = print(buf, buf + sizeof buf, d);
        REQUIRE(r.ec == std::errc());
        const std::string text(buf, r.ptr);
        INFO(text);
        CHECK(std::strtod(text.c_str(), nullptr) == d);
        CHECK(text.size() <= 24);
    }
    char small[3];
    CHECK(print(small, small + sizeof small, 1.0 / 3.0).ec == std::errc::value_too_large);
}

} // namespace

TEST_CASE("numbers are read under from_chars' rules: the standard one and the web page's fallback", "[core]")
{
    ChecksFromCharsRules([](const char* a, const char* b, double& v) { return paralens::FromChars(a, b, v); });
    ChecksFromCharsRules([](const char* a, const char* b, double& v) { return paralens::detail::StrtodChars(a, b, v); });
    int i = 0;
    std::string_view s = "42x";
    CHECK(paralens::FromChars(s.data(), s.data() + s.size(), i).ptr == s.data() + 2);
    CHECK(i == 42);
}

TEST_CASE("doubles are written so that they read back exactly: the standard way and the web page's fallback", "[core]")
{
    ChecksShortestRoundTrip([](char* a, char* b, double v) { return paralens::ToChars(a, b, v); });
    ChecksShortestRoundTrip([](char* a, char* b, double v) { return paralens::detail::PrintfChars(a, b, v); });
    char buf[8];
    CHECK(std::string(buf, paralens::detail::PrintfChars(buf, buf + sizeof buf, 0.1).ptr) == "0.1");
}
