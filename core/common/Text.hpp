// Small text helpers shared by the readers and the planner.
#pragma once

#include <string>
#include <string_view>

namespace paralens::core {

// ASCII lower case (kernel and op names, dtypes): other bytes unchanged. Not std::tolower, a call
// into the locale for each byte (a Kineto trace's kernel names are hundreds of bytes each).
inline std::string LowerAscii(std::string_view s)
{
    std::string out(s);
    for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    return out;
}

} // namespace paralens::core
