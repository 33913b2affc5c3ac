#include "common/Units.hpp"

#include "common/Error.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace paralens::core {

namespace {

struct UnitName {
    std::string_view name;
    uint64_t factor;
};

constexpr uint64_t kKi = 1024ull;
constexpr std::array<UnitName, 17> kUnits{{
    {"", 1}, {"b", 1},
    {"k", kKi}, {"m", kKi * kKi}, {"g", kKi * kKi * kKi}, {"t", kKi * kKi * kKi * kKi},
    {"kib", kKi}, {"mib", kKi * kKi}, {"gib", kKi * kKi * kKi}, {"tib", kKi * kKi * kKi * kKi},
    {"kb", 1000ull}, {"mb", 1000000ull}, {"gb", 1000000000ull}, {"tb", 1000000000000ull},
    {"ki", kKi}, {"mi", kKi * kKi}, {"gi", kKi * kKi * kKi},
}};

std::string SizeHelp(std::string_view text)
{
    return "cannot read '" + std::string(text) +
           "' as a size: expected a whole number of bytes with an optional unit, e.g. 8, 4096B, "
           "64KiB, 64MiB, 1GiB (powers of 1024), 1GB (powers of 1000) or 128M (as nccl-tests)";
}

} // namespace

uint64_t ParseBytes(std::string_view text)
{
    size_t pos = 0;
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    size_t digitsStart = pos;
    uint64_t value = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
        uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
        Require(value <= (std::numeric_limits<uint64_t>::max() - digit) / 10, SizeHelp(text) + " (too large)");
        value = value * 10 + digit;
        ++pos;
    }
    Require(pos > digitsStart, SizeHelp(text));
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    std::string unit;
    for (; pos < text.size(); ++pos) {
        if (std::isspace(static_cast<unsigned char>(text[pos]))) break;
        unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[pos])));
    }
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    Require(pos == text.size(), SizeHelp(text));
    for (const UnitName& u : kUnits) {
        if (u.name == unit) {
            Require(value <= std::numeric_limits<uint64_t>::max() / u.factor, SizeHelp(text) + " (too large)");
            return value * u.factor;
        }
    }
    throw Error(SizeHelp(text));
}

std::string FormatBytes(uint64_t bytes)
{
    static constexpr std::array<const char*, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < kNames.size()) {
        value /= 1024.0;
        ++unit;
    }
    char buf[64];
    if (unit == 0 || value == std::floor(value))
        std::snprintf(buf, sizeof buf, "%.0f %s", value, kNames[unit]);
    else
        std::snprintf(buf, sizeof buf, "%.3g %s", value, kNames[unit]);
    return buf;
}

std::string FormatSeconds(double seconds)
{
    char buf[64];
    double a = std::fabs(seconds);
    if (a == 0.0) return "0 s";
    if (a < 1e-6) std::snprintf(buf, sizeof buf, "%.3g ns", seconds * 1e9);
    else if (a < 1e-3) std::snprintf(buf, sizeof buf, "%.3g us", seconds * 1e6);
    else if (a < 1.0) std::snprintf(buf, sizeof buf, "%.3g ms", seconds * 1e3);
    else std::snprintf(buf, sizeof buf, "%.3g s", seconds);
    return buf;
}

double RoundToPicoseconds(double seconds)
{
    return std::round(seconds * 1e12) / 1e12;
}

} // namespace paralens::core
