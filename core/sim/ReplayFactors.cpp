#include "sim/ReplayFactors.hpp"

#include "common/Error.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/NcclKernelName.hpp"

#include <algorithm>
#include <map>

namespace paralens::core {

namespace {

bool IsComm(SpanCategory c) { return c == SpanCategory::Collective || c == SpanCategory::Send || c == SpanCategory::Recv; }

bool CategoryMatches(std::string_view pattern, const Span& s, bool cpu)
{
    if (pattern == "cpu") return cpu;
    if (cpu) return false;
    if (pattern == "comm" || pattern == "communication") return IsComm(s.category);
    if (pattern == "compute")
        return s.category == SpanCategory::Compute || s.category == SpanCategory::Forward ||
               s.category == SpanCategory::Backward || s.category == SpanCategory::WeightGrad;
    return pattern == Name(s.category);
}

bool IsCategoryPattern(std::string_view p)
{
    static constexpr std::string_view kNames[] = {"cpu", "comm", "communication", "compute", "collective", "send",
                                                  "recv", "memcpy", "memset", "forward", "backward", "weight-grad"};
    return std::find(std::begin(kNames), std::end(kNames), p) != std::end(kNames);
}

// A communication node's time after / before the network change, by the cost model.
double NetworkRatio(const TraceGraph& g, uint32_t n, const CostParams& before, const CostParams& after)
{
    const Span& s = g.SpanOf(n);
    if (!IsComm(s.category) || s.bytes == 0) return 1.0;
    double old = MessageSeconds(static_cast<double>(s.bytes), before);
    double now = MessageSeconds(static_cast<double>(s.bytes), after);
    if (s.category == SpanCategory::Collective) {
        if (std::optional<CollectiveSpec> spec = CollectiveOfNode(g, n)) {
            try {
                old = PredictSeconds(*spec, before).seconds;
                now = PredictSeconds(*spec, after).seconds;
            } catch (const Error&) { // a collective/algorithm pair the model lacks: priced as one message
            }
        }
    }
    return old > 0 ? now / old : 1.0;
}

// The scale rules: glob rules cached per name, category rules per node.
std::vector<double> ScaleFactors(const TraceGraph& g, const std::vector<ScaleRule>& rules)
{
    const Trace& t = g.Source();
    const auto& nodes = g.Nodes();
    std::vector<double> f(nodes.size(), 1.0);
    if (rules.empty()) return f;
    std::vector<double> byName(t.Strings().Size(), -1.0);
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        const Span& s = g.SpanOf(n);
        const bool cpu = t.Devices()[nodes[n].device].kind == DeviceKind::Cpu;
        double& named = byName[s.name];
        if (named < 0) {
            named = 1.0;
            for (const ScaleRule& r : rules)
                if (!IsCategoryPattern(r.pattern) && GlobMatch(r.pattern, t.Str(s.name))) named *= r.factor;
        }
        f[n] = named;
        for (const ScaleRule& r : rules)
            if (IsCategoryPattern(r.pattern) && CategoryMatches(r.pattern, s, cpu)) f[n] *= r.factor;
    }
    return f;
}

// A straggler's device ops (not collectives: their time is the others' wait) take the median
// duration of the same op name on the other ranks.
void RemoveStragglers(const TraceGraph& g, const std::vector<int32_t>& ranks, std::vector<double>& f)
{
    if (ranks.empty()) return;
    const Trace& t = g.Source();
    const auto& nodes = g.Nodes();
    auto counts = [&](uint32_t n) { return t.Devices()[nodes[n].device].kind != DeviceKind::Cpu && nodes[n].group == UINT32_MAX; };
    auto isStraggler = [&](uint32_t n) {
        return std::find(ranks.begin(), ranks.end(), t.Devices()[nodes[n].device].rank) != ranks.end();
    };
    std::map<StringId, std::vector<int64_t>> others;
    for (uint32_t n = 0; n < nodes.size(); ++n)
        if (counts(n) && !isStraggler(n)) others[g.SpanOf(n).name].push_back(nodes[n].endNs - nodes[n].startNs);
    for (auto& [name, d] : others) std::nth_element(d.begin(), d.begin() + static_cast<ptrdiff_t>(d.size() / 2), d.end());
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        if (!counts(n) || !isStraggler(n)) continue;
        auto it = others.find(g.SpanOf(n).name);
        const int64_t dur = nodes[n].endNs - nodes[n].startNs;
        if (it != others.end() && dur > 0) f[n] *= static_cast<double>(it->second[it->second.size() / 2]) / static_cast<double>(dur);
    }
}

} // namespace

std::optional<CollectiveSpec> CollectiveOfNode(const TraceGraph& g, uint32_t n)
{
    const Span& s = g.SpanOf(n);
    if (s.category != SpanCategory::Collective) return std::nullopt;
    const Trace& t = g.Source();
    const std::optional<CollectiveTag> tag = ParseCollectiveTag(t.Str(s.detail));
    const std::optional<Collective> c = tag ? ParseCollective(tag->collective) : CollectiveFromName(t.Str(s.name));
    if (!c) return std::nullopt;
    CollectiveSpec spec;
    spec.collective = *c;
    if (tag)
        if (auto a = ParseAlgorithm(tag->algorithm)) spec.algorithm = *a;
    const uint32_t group = g.Nodes()[n].group;
    const int members = group != UINT32_MAX ? static_cast<int>(g.Groups()[group].members.size()) : 2;
    spec.ranks = std::max(2, tag && tag->ranks > 0 ? tag->ranks : members);
    spec.bytes = s.bytes;
    return spec;
}

NodeFactors ComputeFactors(const TraceGraph& g, const WhatIfChanges& c, const std::optional<CostParams>& before)
{
    NodeFactors f;
    f.scale = ScaleFactors(g, c.scale);
    RemoveStragglers(g, c.removeStragglers, f.scale);
    f.network.assign(g.Nodes().size(), 1.0);
    if (c.networkAfter && before)
        for (uint32_t n = 0; n < g.Nodes().size(); ++n) f.network[n] = NetworkRatio(g, n, *before, *c.networkAfter);
    return f;
}

} // namespace paralens::core
