#include "trace/JsonText.hpp"

#include "common/CharConv.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace paralens::core {

void AppendJsonString(std::string& out, std::string_view text)
{
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    size_t plain = 0; // the start of the bytes not written yet, none of them escaped
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        out.append(text.data() + plain, i - plain); // a run of plain bytes at once (kernel names are long)
        plain = i + 1;
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    out.append(text.data() + plain, text.size() - plain);
    out += '"';
}

void AppendInt(std::string& out, int64_t value)
{
    char buf[24];
    auto r = paralens::ToChars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
}

void AppendUint(std::string& out, uint64_t value)
{
    char buf[24];
    auto r = paralens::ToChars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
}

void AppendDouble(std::string& out, double value)
{
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    char buf[32];
    auto r = paralens::ToChars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
}

void AppendMicrosFromNs(std::string& out, int64_t ns)
{
    uint64_t mag = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
    if (ns < 0) out += '-';
    AppendUint(out, mag / 1000);
    uint64_t frac = mag % 1000;
    if (frac != 0) {
        char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
        size_t len = 4;
        while (digits[len - 1] == '0') --len;
        out.append(digits, len);
    }
}

namespace {

// Parses [-]digits[.digits][e[+-]digits] into value * 10^scale, exactly, rounded half away from
// zero at the last kept digit. `scale` = 3 for microseconds to nanoseconds, 0 for nanoseconds.
// No allocation: it runs for every timestamp of a trace.
bool ParseScaledDecimal(std::string_view text, int scale, int64_t& result)
{
    size_t i = 0;
    bool negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
    const size_t start = i;
    size_t intEnd = i;
    while (intEnd < text.size() && text[intEnd] >= '0' && text[intEnd] <= '9') ++intEnd;
    size_t fracBegin = intEnd, fracEnd = intEnd;
    if (intEnd < text.size() && text[intEnd] == '.') {
        fracBegin = intEnd + 1;
        fracEnd = fracBegin;
        while (fracEnd < text.size() && text[fracEnd] >= '0' && text[fracEnd] <= '9') ++fracEnd;
    }
    const size_t intDigitCount = intEnd - start, fracDigitCount = fracEnd - fracBegin;
    if (intDigitCount + fracDigitCount == 0) return false;
    i = fracEnd;
    int exponent = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        bool expNeg = false;
        if (i < text.size() && (text[i] == '-' || text[i] == '+')) expNeg = text[i++] == '-';
        size_t expStart = i;
        int e = 0;
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
            if (e > 10000) return false;
            e = e * 10 + (text[i] - '0');
        }
        if (i == expStart) return false;
        exponent = expNeg ? -e : e;
    }
    if (i != text.size()) return false;
    // The k-th significant digit (integer digits, then fraction digits), 0 beyond the end.
    const size_t total = intDigitCount + fracDigitCount;
    auto digit = [&](long k) -> int {
        if (k < 0 || static_cast<size_t>(k) >= total) return 0;
        size_t u = static_cast<size_t>(k);
        return (u < intDigitCount ? text[start + u] : text[fracBegin + u - intDigitCount]) - '0';
    };
    // The integer part of value*10^scale has (intDigitCount + exponent + scale) digits.
    const long intDigits = static_cast<long>(intDigitCount) + exponent + scale;
    uint64_t mag = 0;
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    for (long k = 0; k < intDigits; ++k) {
        auto d = static_cast<uint64_t>(digit(k));
        if (mag > (limit - d) / 10) return false;
        mag = mag * 10 + d;
    }
    if (intDigits >= 0 && digit(intDigits) >= 5) {
        if (mag >= limit) return false;
        ++mag; // round half away from zero
    }
    result = negative ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
    return true;
}

} // namespace

bool ParseMicrosToNs(std::string_view text, int64_t& ns) { return ParseScaledDecimal(text, 3, ns); }

bool ParseDecimalNs(std::string_view text, int64_t& ns) { return ParseScaledDecimal(text, 0, ns); }

} // namespace paralens::core
