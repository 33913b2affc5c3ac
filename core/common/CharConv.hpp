// std::from_chars and std::to_chars for every number type paralens reads and writes, with every
// standard library it builds with. libc++ before 17 (Debian's emscripten for the web page has 14)
// has neither for floating point: there doubles are read by strtod under from_chars' rules (no
// leading space or '+', no hexadecimal, the value untouched on failure) and written as the
// shortest of %.15g, %.16g and %.17g that reads back exactly. Everywhere else these are std's.
#pragma once

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <type_traits>

namespace paralens {

namespace detail {

template <class T>
std::from_chars_result StrtodChars(const char* first, const char* last, T& value)
{
    if (first == last || *first == '+' || std::isspace(static_cast<unsigned char>(*first))) return {first, std::errc::invalid_argument};
    char buf[257]; // longer than any number written in a trace or a log
    const size_t n = std::min<size_t>(static_cast<size_t>(last - first), sizeof buf - 1);
    std::memcpy(buf, first, n);
    buf[n] = '\0';
    const size_t sign = buf[0] == '-' ? 1 : 0;
    if (buf[sign] == '0' && (buf[sign + 1] == 'x' || buf[sign + 1] == 'X')) buf[sign + 1] = '\0'; // from_chars reads "0x1" as 0
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(buf, &end);
    if (end == buf) return {first, std::errc::invalid_argument};
    if (errno == ERANGE) return {first + (end - buf), std::errc::result_out_of_range};
    value = static_cast<T>(v);
    return {first + (end - buf), std::errc()};
}

template <class T>
std::to_chars_result PrintfChars(char* first, char* last, T value)
{
    char buf[32];
    int n = 0;
    for (int digits : {15, 16, 17}) {
        n = std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(value));
        if (static_cast<T>(std::strtod(buf, nullptr)) == value) break;
    }
    if (n < 0 || n > last - first) return {last, std::errc::value_too_large};
    std::memcpy(first, buf, static_cast<size_t>(n));
    return {first + n, std::errc()};
}

} // namespace detail

template <class T>
std::from_chars_result FromChars(const char* first, const char* last, T& value)
{
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 170000
    if constexpr (std::is_floating_point_v<T>) return detail::StrtodChars(first, last, value);
    else return std::from_chars(first, last, value);
#else
    return std::from_chars(first, last, value);
#endif
}

template <class T>
std::to_chars_result ToChars(char* first, char* last, T value)
{
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 170000
    if constexpr (std::is_floating_point_v<T>) return detail::PrintfChars(first, last, value);
    else return std::to_chars(first, last, value);
#else
    return std::to_chars(first, last, value);
#endif
}

} // namespace paralens
