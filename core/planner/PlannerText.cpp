// The planner's configurations as text: ConfigText ("dp 6 tp 8 pp 64 ... sp"), its parts, the
// recomputation names and the GB amounts of a rejected candidate's reason.
#include "planner/Planner.hpp"
#include "planner/PlannerInternal.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace paralens::core {

std::string_view Name(Recompute r)
{
    switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    }
    return "none";
}

std::optional<Recompute> ParseRecompute(std::string_view name)
{
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
        if (Name(r) == name) return r;
    return std::nullopt;
}

RecomputeModules ParseRecomputeModules(std::string_view text, std::string_view option)
{
    RecomputeModules m;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t end = std::min(text.find(',', at), text.size());
        std::string_view name = text.substr(at, end - at);
        while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
        while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
        if (name == "layernorm") m.layernorm = true;
        else if (name == "moe_act") m.moeAct = true;
        else if (name == "mla_up_proj") m.mlaUpProj = true;
        else if (!name.empty())
            throw Error(std::string(option) + ": '" + std::string(name) +
                        "' is not a module the planner recomputes (layernorm, moe_act or mla_up_proj, comma-separated)");
        at = end + 1;
    }
    return m;
}

std::string RecomputeModulesText(const RecomputeModules& m)
{
    std::string out;
    for (const auto& [on, name] : {std::pair{m.layernorm, "layernorm"}, std::pair{m.moeAct, "moe_act"}, std::pair{m.mlaUpProj, "mla_up_proj"}})
        if (on) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

std::string GbText(double bytes)
{
    // printf's "%.1f GB" without printf (a search writes three for each candidate that does not
    // fit, and printf's exact decimal conversion was a tenth of a slider's re-search). x * 10 is
    // exact in a long double of 64 bits or more (a double's 53 bits times 10's 4), so its
    // fraction decides as printf does: nearest, an exact half to even. Not std::to_chars: the web
    // build's libc++ has no floating-point to_chars.
    const double x = bytes / 1e9;
    const long double tenths = static_cast<long double>(x) * 10;
    if (std::numeric_limits<long double>::digits < 64 || !(x >= 0) || tenths >= 1e17L) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%.1f GB", x);
        return buf;
    }
    long double whole = std::floor(tenths);
    const long double fraction = tenths - whole;
    auto t = static_cast<unsigned long long>(whole);
    if (fraction > 0.5L || (fraction == 0.5L && t % 2 == 1)) ++t;
    std::string out = std::to_string(t / 10);
    out += '.';
    out += static_cast<char>('0' + t % 10);
    out += " GB";
    return out;
}

std::string OverText(double bytes)
{
    // Below 0.05 GB, "%.1f GB" would read "0.0 GB over" for a row that does not fit: whole MB,
    // rounded up so that an overage is never 0.
    if (!(bytes >= 0.05e9)) return std::to_string(static_cast<long long>(std::ceil(std::max(bytes, 1.0) / 1e6))) + " MB";
    return GbText(bytes);
}

std::string ScheduleText(const TrainingConfig& c)
{
    if (c.pp == 1) return "-";
    return std::string(Name(c.schedule)) + (c.chunks > 1 ? " v" + Num(c.chunks) : "");
}

std::string EndStagesText(const TrainingConfig& c)
{
    if (c.layout || !c.Uneven()) return "";
    std::string s; // the fixed ends; the other stages share the rest
    if (c.firstStageLayers > 0) s.append(Num(c.firstStageLayers)).append("+");
    s.append("..");
    if (c.lastStageLayers > 0) s.append("+").append(Num(c.lastStageLayers));
    return s;
}

std::string StageSplitText(const TrainingConfig& c)
{
    if (c.layout) return "layout " + c.layout->text;
    return c.Uneven() ? "layers " + EndStagesText(c) : "";
}

std::string ConfigText(const TrainingConfig& c)
{
    std::string s = "dp " + Num(c.dp) + " tp " + Num(c.tp) + " pp " + Num(c.pp);
    if (const std::string split = StageSplitText(c); !split.empty()) s += " " + split;
    if (c.cp > 1) s += " cp " + Num(c.cp);
    if (c.ep > 1) s += " ep " + Num(c.ep);
    s += " mb " + Num(c.microBatch);
    if (c.pp > 1) {
        s += ' ';
        s += ScheduleText(c);
    }
    s += " recompute " + std::string(Name(c.recompute));
    if (c.zero > 0) s += " zero" + Num(c.zero);
    if (c.sequenceParallel) s += " sp";
    return s;
}

} // namespace paralens::core
