// Parsing of what-if options, and the network a trace ran on.
#include "sim/TraceReplay.hpp"

#include "common/CharConv.hpp"
#include "common/Error.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace paralens::core {

bool GlobMatch(std::string_view glob, std::string_view name)
{
    size_t g = 0, s = 0, star = std::string_view::npos, mark = 0;
    auto eq = [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)); };
    while (s < name.size()) {
        if (g < glob.size() && (glob[g] == '?' || eq(glob[g], name[s]))) { ++g; ++s; }
        else if (g < glob.size() && glob[g] == '*') { star = g++; mark = s; }
        else if (star != std::string_view::npos) { g = star + 1; s = ++mark; }
        else return false;
    }
    while (g < glob.size() && glob[g] == '*') ++g;
    return g == glob.size();
}

ScaleRule ParseScaleRule(const std::string& text, const std::string& option)
{
    const size_t eq = text.rfind('=');
    ScaleRule r;
    if (eq == std::string::npos || eq == 0)
        throw Error(option + " '" + text + "': expected PATTERN=FACTOR, e.g. 'nccl*=0.5' or 'compute=0.8'");
    r.pattern = text.substr(0, eq);
    const std::string value = text.substr(eq + 1);
    const char* end = value.data() + value.size();
    auto [p, ec] = paralens::FromChars(value.data(), end, r.factor);
    if (ec != std::errc() || p != end || !(r.factor > 0) || !std::isfinite(r.factor))
        throw Error(option + " '" + text + "': the factor must be a number > 0, found '" + value + "'");
    for (char& ch : r.pattern) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return r;
}

std::pair<int32_t, int64_t> ParseSkew(const std::string& text, const std::string& option)
{
    const size_t colon = text.find(':');
    int32_t rank = -1;
    double us = 0;
    bool ok = colon != std::string::npos;
    if (ok) {
        auto [p1, e1] = paralens::FromChars(text.data(), text.data() + colon, rank);
        auto [p2, e2] = paralens::FromChars(text.data() + colon + 1, text.data() + text.size(), us);
        ok = e1 == std::errc() && p1 == text.data() + colon && e2 == std::errc() && p2 == text.data() + text.size() &&
             rank >= 0 && std::isfinite(us);
    }
    if (!ok) throw Error(option + " '" + text + "': expected RANK:MICROSECONDS, e.g. '3:500'");
    return {rank, static_cast<int64_t>(std::llround(us * 1e3))};
}

std::optional<CostParams> TraceNetwork(const Trace& trace)
{
    const MetaSection& m = trace.Meta().model;
    const double gbps = m.GetNumber("bandwidthGBps", 0);
    if (!(gbps > 0)) return std::nullopt;
    const double gamma = m.GetNumber("gammaGBps", 0);
    return CostParams{m.GetNumber("alphaUs", 0) * 1e-6, 1e-9 / gbps, gamma > 0 ? 1e-9 / gamma : 0.0};
}

} // namespace paralens::core
