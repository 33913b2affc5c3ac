#include "analysis/TraceDiff.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace paralens::core {

namespace {

struct Side {
    const TraceGraph& graph;
    const TraceSteps& steps;
};

// Each device's place in its run: the rank's position among the run's ranks, and for a GPU its
// position among the rank's GPUs ("host" for host threads). Two single-rank traces of different
// ranks, or of different machines, then line up.
std::vector<std::string> DevicePlaces(const Trace& t)
{
    std::map<int32_t, std::vector<int32_t>> gpusOf; // rank -> its GPU indices
    for (const Device& d : t.Devices()) {
        auto& gpus = gpusOf[d.rank];
        if (d.kind != DeviceKind::Cpu && std::find(gpus.begin(), gpus.end(), d.gpuIndex) == gpus.end()) gpus.push_back(d.gpuIndex);
    }
    std::map<int32_t, size_t> rankOrdinal;
    for (auto& [rank, gpus] : gpusOf) {
        std::sort(gpus.begin(), gpus.end());
        rankOrdinal[rank] = rankOrdinal.size();
    }
    std::vector<std::string> out;
    for (const Device& d : t.Devices()) {
        const auto& gpus = gpusOf[d.rank];
        const size_t gpu = static_cast<size_t>(std::find(gpus.begin(), gpus.end(), d.gpuIndex) - gpus.begin());
        out.push_back(std::to_string(rankOrdinal[d.rank]) + (d.kind == DeviceKind::Cpu ? "/host" : "/gpu" + std::to_string(gpu)));
    }
    return out;
}

// step ordinal \x1f device place \x1f op name -> the nodes, by start. Lanes (threads, streams)
// are left out of the key: thread ids change from run to run.
std::unordered_map<std::string, std::vector<uint32_t>> Lanes(const Side& s)
{
    const Trace& t = s.graph.Source();
    const std::vector<std::string> places = DevicePlaces(t);
    std::map<std::tuple<int32_t, uint32_t, StringId>, std::vector<uint32_t>> byIds; // grouped by number first: cheap per op
    for (uint32_t n = 0; n < s.graph.Nodes().size(); ++n)
        byIds[{s.steps.stepOf[n], s.graph.Nodes()[n].device, s.graph.SpanOf(n).name}].push_back(n);
    std::unordered_map<std::string, std::vector<uint32_t>> out;
    for (auto& [ids, nodes] : byIds) {
        const auto& [step, device, name] = ids;
        std::vector<uint32_t>& lane = out[std::to_string(step) + '\x1f' + places[device] + '\x1f' + std::string(t.Str(name))];
        lane.insert(lane.end(), nodes.begin(), nodes.end());
    }
    for (auto& [k, v] : out)
        std::sort(v.begin(), v.end(), [&](uint32_t x, uint32_t y) { return s.graph.Nodes()[x].startNs < s.graph.Nodes()[y].startNs; });
    return out;
}

void Totals(const TraceGraph& g, std::map<std::pair<std::string, PathCategory>, OpDelta>& ops, bool second,
            std::array<int64_t, kPathCategoryCount>& byCategory)
{
    const Trace& t = g.Source();
    for (uint32_t n = 0; n < g.Nodes().size(); ++n) {
        const PathCategory c = OpCategory(g, n);
        const int64_t d = g.Nodes()[n].endNs - g.Nodes()[n].startNs;
        OpDelta& o = ops[{std::string(t.Str(g.SpanOf(n).name)), c}];
        (second ? o.countB : o.countA) += 1;
        (second ? o.totalNsB : o.totalNsA) += d;
        byCategory[static_cast<size_t>(c)] += d;
    }
}

// The runs' steps side by side, the i-th of one with the i-th of the other (step numbers differ
// from run to run).
std::vector<StepDelta> StepDeltas(const Side& a, const Side& b)
{
    auto durations = [](const Side& s) {
        std::vector<std::pair<int64_t, int64_t>> span(s.steps.steps.size(), {INT64_MAX, INT64_MIN}); // first start, last end
        for (uint32_t n = 0; n < s.graph.Nodes().size(); ++n) {
            const int32_t step = s.steps.stepOf[n];
            if (step < 0) continue;
            auto& [first, last] = span[static_cast<size_t>(step)];
            first = std::min(first, s.graph.Nodes()[n].startNs);
            last = std::max(last, s.graph.Nodes()[n].endNs);
        }
        std::vector<int64_t> out;
        for (const auto& [first, last] : span) out.push_back(last >= first ? last - first : -1);
        return out;
    };
    const std::vector<int64_t> da = durations(a), db = durations(b);
    std::vector<StepDelta> out;
    for (size_t i = 0; i < std::max(da.size(), db.size()); ++i) {
        const std::string la = i < da.size() ? a.steps.steps[i].label : "-", lb = i < db.size() ? b.steps.steps[i].label : "-";
        out.push_back({la == lb ? la : la + " / " + lb, i < da.size() ? da[i] : -1, i < db.size() ? db[i] : -1});
    }
    return out;
}

} // namespace

TraceDiffResult DiffTraces(const Trace& traceA, const Trace& traceB)
{
    const TraceGraph ga(traceA), gb(traceB);
    const TraceSteps sa = FindSteps(ga), sb = FindSteps(gb);
    const Side a{ga, sa}, b{gb, sb};
    TraceDiffResult r;
    auto lanesA = Lanes(a), lanesB = Lanes(b);
    std::vector<int64_t> shifts, relative;
    const int64_t rebase = traceB.BeginNs() - traceA.BeginNs();
    for (auto& [key, na] : lanesA) {
        auto it = lanesB.find(key);
        const size_t nb = it == lanesB.end() ? 0 : it->second.size();
        const size_t paired = std::min(na.size(), nb);
        r.onlyA += na.size() - paired;
        for (size_t i = 0; i < paired; ++i) {
            const GraphNode& x = ga.Nodes()[na[i]];
            const GraphNode& y = gb.Nodes()[it->second[i]];
            shifts.push_back(y.startNs - x.startNs);
            relative.push_back(y.startNs - x.startNs - rebase);
            r.durationChanged += (y.endNs - y.startNs) != (x.endNs - x.startNs);
        }
        r.matched += paired;
    }
    for (auto& [key, nb] : lanesB) {
        auto it = lanesA.find(key);
        r.onlyB += nb.size() - std::min(nb.size(), it == lanesA.end() ? size_t{0} : it->second.size());
    }
    if (!shifts.empty()) {
        std::sort(shifts.begin(), shifts.end());
        std::sort(relative.begin(), relative.end());
        r.minShiftNs = shifts.front();
        r.maxShiftNs = shifts.back();
        r.medianShiftNs = shifts[shifts.size() / 2];
        r.minRelativeShiftNs = relative.front();
        r.maxRelativeShiftNs = relative.back();
        r.medianRelativeShiftNs = relative[relative.size() / 2];
    }
    std::map<std::pair<std::string, PathCategory>, OpDelta> ops;
    Totals(ga, ops, false, r.categoryNsA);
    Totals(gb, ops, true, r.categoryNsB);
    for (auto& [key, o] : ops) {
        if (o.DeltaNs() == 0 && o.countA == o.countB) continue;
        o.name = key.first;
        o.category = key.second;
        r.ops.push_back(std::move(o));
    }
    // Regressions first, the largest first; then the improvements, the largest first.
    std::stable_sort(r.ops.begin(), r.ops.end(), [](const OpDelta& x, const OpDelta& y) {
        const int64_t a = x.DeltaNs(), b = y.DeltaNs();
        if ((a > 0) != (b > 0)) return a > 0;
        return a > 0 ? a > b : a < b;
    });
    r.steps = StepDeltas(a, b);
    return r;
}

} // namespace paralens::core
