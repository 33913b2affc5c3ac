#include "WhatIfRuns.hpp"

#include "RunBuilder.hpp"

#include "analysis/Fitting.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/Fit.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace paralens::app {

namespace {

std::string Num(double x)
{
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
}

std::string Trim(std::string s)
{
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

// The network the trace ran on: its own model (paralens' simulations), else the fit file.
core::CostParams NetworkBefore(const WhatIfParams& p, const core::Trace& t, const WhatIfNames& names, std::string& from)
{
    if (!p.model.empty()) {
        const core::FitFile file = core::LoadFitFile(p.model);
        std::string why;
        const std::optional<core::CostParams> fit = core::ModelFromFit(file, core::Collective::AllReduce, 8, &why);
        Require(fit.has_value() && fit->betaSecPerByte > 0, names.model + ": " + p.model + " holds no fit with a bandwidth");
        from = why + " in " + std::filesystem::path(p.model).filename().string();
        return *fit;
    }
    const std::optional<core::CostParams> own = core::TraceNetwork(t);
    Require(own.has_value(), names.network + " need the network the trace ran on, and this trace does not say: give " + names.model +
                                 " (`paralens fit` of this machine's nccl-tests logs, or of traces of its collectives)");
    from = "the trace's own model";
    return *own;
}

std::string NetworkText(const core::CostParams& before, const core::CostParams& after, const std::string& from)
{
    char text[240];
    std::snprintf(text, sizeof text, "network alpha %s, %.4g GB/s -> alpha %s, %.4g GB/s (before: %s)",
                  core::FormatSeconds(before.alphaSec).c_str(), 1e-9 / before.betaSecPerByte, core::FormatSeconds(after.alphaSec).c_str(),
                  1e-9 / after.betaSecPerByte, from.c_str());
    return text;
}

} // namespace

core::WhatIfChanges ChangesOf(const WhatIfParams& p, const core::Trace& trace, const WhatIfNames& names, std::string* networkText)
{
    core::WhatIfChanges c;
    Require(p.computeX > 0 && p.commX > 0 && p.cpuX > 0 && p.bandwidthX > 0 && p.alphaX >= 0,
            "the compute, communication, host, bandwidth and alpha factors must be > 0");
    if (p.computeX != 1) c.scale.push_back({"compute", p.computeX});
    if (p.commX != 1) c.scale.push_back({"comm", p.commX});
    if (p.cpuX != 1) c.scale.push_back({"cpu", p.cpuX});
    for (size_t begin = 0; begin < p.scale.size();) {
        const size_t comma = std::min(p.scale.find(',', begin), p.scale.size());
        if (const std::string rule = Trim(p.scale.substr(begin, comma - begin)); !rule.empty())
            c.scale.push_back(core::ParseScaleRule(rule, names.scale));
        begin = comma + 1;
    }
    for (int rank : p.noStragglers) c.removeStragglers.push_back(rank);
    for (const auto& [rank, us] : p.skewUs) {
        Require(rank >= 0, "a skewed rank must be >= 0 (got " + std::to_string(rank) + ")");
        c.skewNs.push_back({rank, static_cast<int64_t>(std::llround(us * 1e3))});
    }
    if (!p.ChangesNetwork()) return c;
    std::string from;
    const core::CostParams before = NetworkBefore(p, trace, names, from);
    core::CostParams after = before;
    if (p.alphaUs >= 0) after.alphaSec = p.alphaUs * 1e-6;
    if (p.bandwidthGBps > 0) after.betaSecPerByte = 1e-9 / p.bandwidthGBps;
    after.alphaSec *= p.alphaX;
    after.betaSecPerByte /= p.bandwidthX;
    c.networkBefore = before;
    c.networkAfter = after;
    if (networkText) *networkText = NetworkText(before, after, from);
    return c;
}

std::string DescribeWhatIf(const WhatIfParams& p)
{
    std::string out;
    auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
    if (p.computeX != 1) add("compute x" + Num(p.computeX));
    if (p.commX != 1) add("communication x" + Num(p.commX));
    if (p.cpuX != 1) add("host ops x" + Num(p.cpuX));
    if (!p.scale.empty()) add(p.scale);
    if (p.bandwidthGBps > 0) add("bandwidth " + Num(p.bandwidthGBps) + " GB/s");
    if (p.alphaUs >= 0) add("alpha " + Num(p.alphaUs) + " us");
    if (p.bandwidthX != 1) add("bandwidth x" + Num(p.bandwidthX));
    if (p.alphaX != 1) add("alpha x" + Num(p.alphaX));
    for (int r : p.noStragglers) add("rank " + std::to_string(r) + " at the others' pace");
    for (const auto& [rank, us] : p.skewUs) add("rank " + std::to_string(rank) + " " + Num(us) + " us late");
    return out.empty() ? "no change" : out;
}

std::shared_ptr<const CriticalPathData> BuildCriticalPath(const core::Trace& trace)
{
    auto data = std::make_shared<CriticalPathData>();
    const core::TraceGraph graph(trace);
    const core::TraceSteps steps = core::FindSteps(graph);
    data->ops = graph.Nodes().size();
    data->dependencies = graph.Edges().size();
    data->stepsFromProfiler = !(steps.steps.size() == 1 && steps.steps[0].label == "whole trace");
    data->steps = core::CriticalPaths(graph, steps, core::MeasuredTimes(graph));
    for (const core::StepPath& p : data->steps) data->segments.insert(data->segments.end(), p.segments.begin(), p.segments.end());
    std::stable_sort(data->segments.begin(), data->segments.end(),
                     [](const core::PathSegment& a, const core::PathSegment& b) { return a.startNs < b.startNs; });
    return data;
}

std::shared_ptr<const RunResult> BuildWhatIfRun(const Experiment& e, std::shared_ptr<const core::Trace> source)
{
    std::string network;
    const core::WhatIfChanges changes = ChangesOf(e.whatIf, *source, {}, &network);
    auto analysis = std::make_shared<core::WhatIfAnalysis>(core::AnalyzeWhatIf(*source, changes, true));
    auto replayed = analysis->replayedTrace;
    analysis->replayedTrace.reset(); // the run holds it
    auto r = std::make_shared<RunResult>(*AnalyzeTrace(e, std::move(replayed)));
    r->whatIf = std::move(analysis);
    r->whatIfChanges = DescribeWhatIf(e.whatIf) + (network.empty() ? "" : "; " + network);
    r->title = "what-if (" + DescribeWhatIf(e.whatIf) + "): " + source->Meta().title;
    r->critical = BuildCriticalPath(*r->trace);
    return r;
}

std::vector<RunComparison> BuildComparisons(const Snapshot& snap, const Snapshot* previous)
{
    std::vector<RunComparison> out;
    auto add = [&](int a, int b) {
        const auto& ta = snap.runs[static_cast<size_t>(a)]->trace;
        const auto& tb = snap.runs[static_cast<size_t>(b)]->trace;
        if (!ta || !tb) return;
        RunComparison c{a, b, nullptr};
        if (previous)
            for (const RunComparison& old : previous->comparisons)
                if (old.diff && previous->runs[static_cast<size_t>(old.first)]->trace == ta && previous->runs[static_cast<size_t>(old.second)]->trace == tb)
                    c.diff = old.diff;
        if (!c.diff) c.diff = std::make_shared<const core::TraceDiffResult>(core::DiffTraces(*ta, *tb));
        out.push_back(std::move(c));
    };
    int firstFile = -1;
    for (size_t i = 0; i < snap.runs.size(); ++i) {
        const Experiment& e = snap.runs[i]->experiment;
        if (e.kind == ExperimentKind::File) {
            if (firstFile < 0) firstFile = static_cast<int>(i);
            else add(firstFile, static_cast<int>(i));
        }
        if (e.kind != ExperimentKind::WhatIf) continue;
        for (size_t j = 0; j < snap.runs.size(); ++j)
            if (snap.runs[j]->experiment.kind == ExperimentKind::File && snap.runs[j]->experiment.files == e.files) {
                add(static_cast<int>(j), static_cast<int>(i));
                break;
            }
    }
    return out;
}

} // namespace paralens::app
