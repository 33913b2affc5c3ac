// Small text helpers shared by the readers and the planner.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace paralens::core {

// ASCII lower case (kernel and op names, dtypes): other bytes unchanged.
inline std::string LowerAscii(std::string_view s)
{
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

} // namespace paralens::core
