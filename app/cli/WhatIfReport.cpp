#include "WhatIfReport.hpp"

#include "common/Units.hpp"

#include <algorithm>
#include <cstdio>

namespace paralens::app {

namespace {

using Json = nlohmann::json;

double Sec(int64_t ns) { return static_cast<double>(ns) * 1e-9; }
std::string Time(int64_t ns) { return core::FormatSeconds(Sec(ns)); }

std::string Printf(const char* format, auto... args)
{
    char buf[512];
    std::snprintf(buf, sizeof buf, format, args...);
    return buf;
}

// The `top` longest segments of a path, ops and gaps alike, longest first.
std::vector<const core::PathSegment*> Longest(const core::StepPath& p, size_t top)
{
    std::vector<const core::PathSegment*> longest;
    for (const auto& s : p.segments) longest.push_back(&s);
    std::stable_sort(longest.begin(), longest.end(), [](auto* a, auto* b) { return a->endNs - a->startNs > b->endNs - b->startNs; });
    if (longest.size() > top) longest.resize(top);
    return longest;
}

std::string EdgeCounts(const core::WhatIfAnalysis& a)
{
    std::string out;
    for (int k = 0; k < core::kEdgeKindCount; ++k)
        out += Printf("%s%s %zu", k ? ", " : "", std::string(core::Name(static_cast<core::EdgeKind>(k))).c_str(), a.edgesByKind[k]);
    return out;
}

// Time each rank spent in collectives waiting for the last rank to arrive.
std::string Waits(const core::StepPath& p, const core::Trace& t)
{
    std::string out;
    for (size_t d = 0; d < p.waitNsByDevice.size(); ++d)
        if (p.waitNsByDevice[d] > 0)
            out += Printf("%s%s %s", out.empty() ? "" : ", ", std::string(t.Str(t.Devices()[d].name)).c_str(), Time(p.waitNsByDevice[d]).c_str());
    return out;
}

std::string Breakdown(const core::StepPath& p)
{
    std::string out;
    const double total = static_cast<double>(std::max<int64_t>(1, p.DurationNs()));
    for (int c = 0; c < core::kPathCategoryCount; ++c) {
        const int64_t ns = p.byCategory[static_cast<size_t>(c)];
        if (ns == 0) continue;
        out += Printf("%s%s %s (%.1f%%)", out.empty() ? "" : ", ", std::string(core::Name(static_cast<core::PathCategory>(c))).c_str(),
                      Time(ns).c_str(), 100.0 * static_cast<double>(ns) / total);
    }
    return out;
}

std::string Figures(const core::RunFigures& f)
{
    return Printf("idle %.1f%%, MFU %s", f.idleFraction * 100, f.mfu ? Printf("%.1f%%", *f.mfu * 100).c_str() : "-");
}

Json PathJson(const core::StepPath& p, const core::Trace& t, size_t top)
{
    Json categories = Json::object();
    for (int c = 0; c < core::kPathCategoryCount; ++c)
        categories[std::string(core::Name(static_cast<core::PathCategory>(c)))] = Sec(p.byCategory[static_cast<size_t>(c)]);
    Json ops = Json::array();
    for (const auto* s : Longest(p, top))
        ops.push_back({{"name", core::SegmentName(t, *s)}, {"category", core::Name(s->category)}, {"device", s->device},
                       {"rank", t.Devices()[s->device].rank}, {"startNs", s->startNs}, {"endNs", s->endNs}});
    Json waits = Json::object();
    for (size_t d = 0; d < p.waitNsByDevice.size(); ++d)
        if (p.waitNsByDevice[d] > 0) waits[std::string(t.Str(t.Devices()[d].name))] = Sec(p.waitNsByDevice[d]);
    return {{"seconds", Sec(p.DurationNs())}, {"startNs", p.startNs}, {"endNs", p.endNs}, {"byCategorySeconds", categories},
            {"segments", p.segments.size()}, {"rankCrossings", p.rankCrossings}, {"longest", ops},
            {"collectiveWaitSeconds", waits}};
}

} // namespace

std::string WhatIfText(const core::WhatIfAnalysis& a, const core::Trace& t, size_t top)
{
    std::string out = Printf("%s: %zu ops, %zu dependencies (%s), %zu transfers, %zu collectives matched across ranks\n",
                             a.title.c_str(), a.nodes, a.edges, EdgeCounts(a).c_str(), a.transfers, a.collectives);
    out += Printf("\n  %-22s %12s %12s %9s\n", "step", "measured", a.changed ? "what-if" : "replayed", "change");
    for (size_t i = 0; i < a.measured.size(); ++i) {
        const int64_t m = a.measured[i].DurationNs(), r = a.replayed[i].DurationNs();
        out += Printf("  %-22s %12s %12s %+8.2f%%\n", a.measured[i].label.c_str(), Time(m).c_str(), Time(r).c_str(),
                      m > 0 ? 100.0 * static_cast<double>(r - m) / static_cast<double>(m) : 0.0);
    }
    const auto& paths = a.changed ? a.replayed : a.measured;
    for (const core::StepPath& p : paths) {
        out += Printf("\n  critical path of %s%s: %s; crosses ranks %zu times\n", p.label.c_str(), a.changed ? " (what-if)" : "",
                      Breakdown(p).c_str(), p.rankCrossings);
        if (const std::string w = Waits(p, t); !w.empty()) out += "    waiting in collectives for the last rank: " + w + "\n";
        for (const auto* s : Longest(p, top))
            out += Printf("    %10s  %-14s %-20s %s\n", Time(s->endNs - s->startNs).c_str(), std::string(core::Name(s->category)).c_str(),
                          std::string(t.Str(t.Devices()[s->device].name)).substr(0, 20).c_str(), core::SegmentName(t, *s).substr(0, 70).c_str());
    }
    out += "\n  measured: " + Figures(a.measuredFigures) + (a.changed ? "; what-if: " + Figures(a.replayedFigures) : "") + "\n";
    if (a.changed) out += Printf("  %zu ops changed their duration\n", a.changedNodes);
    if (!a.changed) out += "  (no change asked for: the replay reproduces the measured steps, as a check of the graph)\n";
    if (a.cyclesBroken > 0) out += Printf("  note: %zu ops were replayed out of order: the graph had cycles (mismatched collectives?)\n", a.cyclesBroken);
    if (a.unresolvedFlows > 0) out += Printf("  note: %zu flows named no op and were left out\n", a.unresolvedFlows);
    for (const core::StepPath& p : a.measured) // a thread's first op with no recorded cause
        if (!p.segments.empty() && p.segments.front().category == core::PathCategory::Idle &&
            t.Devices()[p.segments.front().device].kind == core::DeviceKind::Cpu &&
            p.segments.front().endNs - p.segments.front().startNs > p.DurationNs() / 10) {
            out += "  note: a path begins with a host thread waiting on nothing the trace records (another thread, such as "
                   "autograd's, started it): give the PyTorch execution trace beside the profiler trace for the dependencies "
                   "between threads\n";
            break;
        }
    return out;
}

Json WhatIfJson(const core::WhatIfAnalysis& a, const core::Trace& t, size_t top)
{
    Json steps = Json::array();
    for (size_t i = 0; i < a.measured.size(); ++i)
        steps.push_back({{"label", a.measured[i].label},
                         {"measuredSeconds", Sec(a.measured[i].DurationNs())},
                         {"whatIfSeconds", Sec(a.replayed[i].DurationNs())},
                         {"measuredPath", PathJson(a.measured[i], t, top)},
                         {"whatIfPath", PathJson(a.replayed[i], t, top)}});
    Json edges = Json::object();
    for (int k = 0; k < core::kEdgeKindCount; ++k) edges[std::string(core::Name(static_cast<core::EdgeKind>(k)))] = a.edgesByKind[k];
    auto figures = [](const core::RunFigures& f) {
        return Json{{"idleFraction", f.idleFraction}, {"mfu", f.mfu ? Json(*f.mfu) : Json(nullptr)}};
    };
    return {{"title", a.title},
            {"ops", a.nodes},
            {"dependencies", edges},
            {"transfers", a.transfers},
            {"collectives", a.collectives},
            {"changed", a.changed},
            {"changedOps", a.changedNodes},
            {"cyclesBroken", a.cyclesBroken},
            {"simulatedCollectives", a.simulatedCollectives},
            {"unresolvedFlows", a.unresolvedFlows},
            {"steps", steps},
            {"measured", figures(a.measuredFigures)},
            {"whatIf", figures(a.replayedFigures)}};
}

std::string DiffText(const core::TraceDiffResult& d, size_t top)
{
    if (d.Empty()) return "no difference: every op is paired, at the same time, with the same duration\n";
    std::string out = Printf("%zu ops paired (%zu changed duration), %zu only in the first run, %zu only in the second\n"
                             "  their starts moved by %s .. %s (median %s) on the clock, %s .. %s (median %s) from each run's beginning\n",
                             d.matched, d.durationChanged, d.onlyA, d.onlyB, Time(d.minShiftNs).c_str(), Time(d.maxShiftNs).c_str(),
                             Time(d.medianShiftNs).c_str(), Time(d.minRelativeShiftNs).c_str(), Time(d.maxRelativeShiftNs).c_str(),
                             Time(d.medianRelativeShiftNs).c_str());
    if (!d.steps.empty()) {
        out += Printf("\n  %-22s %12s %12s %9s\n", "step", "first", "second", "change");
        for (const core::StepDelta& s : d.steps) {
            const bool both = s.durationNsA >= 0 && s.durationNsB >= 0;
            out += Printf("  %-22s %12s %12s %9s\n", s.label.c_str(), s.durationNsA >= 0 ? Time(s.durationNsA).c_str() : "-",
                          s.durationNsB >= 0 ? Time(s.durationNsB).c_str() : "-",
                          both && s.durationNsA > 0 ? Printf("%+.2f%%", 100.0 * static_cast<double>(s.durationNsB - s.durationNsA) / static_cast<double>(s.durationNsA)).c_str() : "-");
        }
    }
    out += Printf("\n  %-14s %12s %12s %12s\n", "category", "first", "second", "delta");
    for (int c = 0; c < core::kPathCategoryCount; ++c) {
        const int64_t x = d.categoryNsA[static_cast<size_t>(c)], y = d.categoryNsB[static_cast<size_t>(c)];
        if (x == 0 && y == 0) continue;
        out += Printf("  %-14s %12s %12s %12s\n", std::string(core::Name(static_cast<core::PathCategory>(c))).c_str(), Time(x).c_str(),
                      Time(y).c_str(), (y >= x ? "+" + Time(y - x) : "-" + Time(x - y)).c_str());
    }
    if (d.ops.empty()) return out;
    out += Printf("\n  largest changes per op (regressions first, then improvements):\n  %12s %7s %7s %-14s %s\n", "delta", "count", "count2", "category", "op");
    const size_t n = std::min(top, d.ops.size());
    for (size_t i = 0; i < n; ++i) {
        const core::OpDelta& o = d.ops[i];
        const int64_t delta = o.DeltaNs();
        out += Printf("  %12s %7zu %7zu %-14s %s\n", (delta >= 0 ? "+" + Time(delta) : "-" + Time(-delta)).c_str(), o.countA, o.countB,
                      std::string(core::Name(o.category)).c_str(), o.name.substr(0, 80).c_str());
    }
    return out;
}

Json DiffJson(const core::TraceDiffResult& d, size_t top)
{
    Json ops = Json::array(), steps = Json::array(), categories = Json::array();
    for (size_t i = 0; i < std::min(top, d.ops.size()); ++i) {
        const core::OpDelta& o = d.ops[i];
        ops.push_back({{"name", o.name}, {"category", core::Name(o.category)}, {"countFirst", o.countA}, {"countSecond", o.countB},
                       {"firstSeconds", Sec(o.totalNsA)}, {"secondSeconds", Sec(o.totalNsB)}, {"deltaSeconds", Sec(o.DeltaNs())}});
    }
    for (const core::StepDelta& s : d.steps)
        steps.push_back({{"label", s.label},
                         {"firstSeconds", s.durationNsA >= 0 ? Json(Sec(s.durationNsA)) : Json(nullptr)},
                         {"secondSeconds", s.durationNsB >= 0 ? Json(Sec(s.durationNsB)) : Json(nullptr)}});
    for (int c = 0; c < core::kPathCategoryCount; ++c)
        categories.push_back({{"category", core::Name(static_cast<core::PathCategory>(c))},
                              {"firstSeconds", Sec(d.categoryNsA[static_cast<size_t>(c)])},
                              {"secondSeconds", Sec(d.categoryNsB[static_cast<size_t>(c)])}});
    return {{"empty", d.Empty()},       {"paired", d.matched},          {"durationChanged", d.durationChanged},
            {"onlyFirst", d.onlyA},     {"onlySecond", d.onlyB},        {"minShiftNs", d.minShiftNs},
            {"medianShiftNs", d.medianShiftNs}, {"maxShiftNs", d.maxShiftNs}, {"minRelativeShiftNs", d.minRelativeShiftNs},
            {"medianRelativeShiftNs", d.medianRelativeShiftNs}, {"maxRelativeShiftNs", d.maxRelativeShiftNs}, {"steps", steps},
            {"categories", categories}, {"ops", ops},                   {"opsDiffering", d.ops.size()}};
}

} // namespace paralens::app
