// `paralens plan --validate` (PlanValidation.hpp): the tables and their summary.
#include "PlanValidation.hpp"

#include "CliCommon.hpp"

#include "common/Statistics.hpp"
#include "common/Units.hpp"
#include "planner/PublishedRuns.hpp"
#include "planner/PublishedSet.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace paralens::app {

namespace {

using Json = nlohmann::json;

// The validation set's summary: per group (each source, all, held out; the held-out runs by kind
// and by GPU) its runs, median |error|, how many within 15% and how many in the planner's top 5 or
// within 5% of its best. The modelled runs that fit, in the set's order.
struct GroupStats {
    std::string group, by; // by: "source", "all", "held out", "kind", "gpu"
    size_t runs = 0, within15 = 0, nearBest = 0;
    double medianAbsErrorPct = 0;
};

std::vector<GroupStats> SummarizeSet(const std::vector<core::PublishedSetRun>& set)
{
    std::vector<GroupStats> out;
    std::map<std::string, std::vector<const core::PublishedSetRun*>> members;
    std::vector<std::pair<std::string, std::string>> order; // (group, by), first seen first
    auto add = [&](const std::string& group, const std::string& by, const core::PublishedSetRun& r) {
        if (members[group].empty()) order.push_back({group, by});
        members[group].push_back(&r);
    };
    for (const core::PublishedSetRun& r : set) {
        if (!r.skipped.empty() || !r.fits) continue;
        add(r.source, "source", r);
        add("all", "all", r);
        if (r.fittedOn) continue;
        add("held out", "held out", r);
        add(r.request.model.IsMoe() ? "mixture of experts" : "dense", "kind", r);
        add(r.request.cluster.gpu.id, "gpu", r);
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { // sources in their order: S9 before S10
        const bool xs = x.second == "source", ys = y.second == "source";
        if (xs != ys) return xs;
        return xs && (x.first.size() != y.first.size() ? x.first.size() < y.first.size() : x.first < y.first);
    });
    const char* bys[] = {"source", "all", "held out", "kind", "gpu"};
    for (const char* by : bys)
        for (const auto& [group, groupBy] : order) {
            if (groupBy != by || (groupBy == "held out" && members[group].size() == members["all"].size())) continue;
            GroupStats g{group, groupBy};
            std::vector<double> a;
            for (const core::PublishedSetRun* r : members[group]) {
                a.push_back(std::abs(r->errorPct));
                g.nearBest += r->rank <= 5 || r->vsBestPct <= 5.0;
            }
            g.runs = a.size();
            g.medianAbsErrorPct = core::Median(a);
            g.within15 = static_cast<size_t>(std::count_if(a.begin(), a.end(), [](double x) { return x <= 15; }));
            out.push_back(g);
        }
    return out;
}

void PrintSummary(const std::vector<GroupStats>& groups)
{
    std::printf("\n# per source: runs predicted, median |error|, within 15%%, in the planner's top 5 or within 5%% of its best\n"
                "# (* a run a number of the model was fitted on: its GPU's attention rate; 'held out' leaves them out)\n");
    for (const GroupStats& g : groups) {
        if (g.by == "kind" && g.group == "dense") std::printf("# held out, by kind and by GPU:\n");
        std::printf("  %-18s %3zu runs  median %5.1f%%  within 15%%: %zu of %zu  near the best: %zu of %zu\n", g.group.c_str(), g.runs,
                    g.medianAbsErrorPct, g.within15, g.runs, g.nearBest, g.runs);
    }
}

// The validation set of tests/data/published-runs.csv: each modelled run, then the summary, then
// why the others are not modelled.
void PrintPublishedSet(const std::vector<core::PublishedSetRun>& set)
{
    std::printf("\n# the published set (tests/data/published-runs.csv, sources in tests/data/published-runs.md)\n");
    std::printf("%-6s %-4s %-16s %6s %-9s %-7s %10s %10s %8s %5s %8s  %s\n", "run", "src", "model", "GPUs", "GPU", "prec", "published",
                "predicted", "error", "rank", "vs best", "configuration (predicted)");
    std::map<std::string, int> skipped;
    int unfit = 0;
    for (const core::PublishedSetRun& r : set) {
        if (!r.skipped.empty()) {
            ++skipped[r.skipped];
            continue;
        }
        if (!r.fits) {
            ++unfit;
            std::printf("%-6s %-4s %-16.16s %6d %-9.9s %-7.7s %10s %10s %8s  %s (does not fit: %s)\n", r.id.c_str(), r.source.c_str(),
                        r.model.c_str(), r.gpus, r.gpu.c_str(), r.precision.c_str(), core::FormatSeconds(r.publishedSeconds).c_str(), "-", "-",
                        r.config.c_str(), r.rejected.c_str());
            continue;
        }
        std::printf("%-6s %-4s %-16.16s %6d %-9.9s %-7.7s %10s %10s %+7.1f%%%s %5zu %+7.1f%%  %s\n", r.id.c_str(), r.source.c_str(),
                    r.model.c_str(), r.gpus, r.gpu.c_str(), r.precision.c_str(), core::FormatSeconds(r.publishedSeconds).c_str(),
                    core::FormatSeconds(r.predictedSeconds).c_str(), r.errorPct, r.fittedOn ? "*" : " ", r.rank, r.vsBestPct,
                    r.config.c_str());
    }
    PrintSummary(SummarizeSet(set));
    if (unfit > 0) std::printf("  %d modelled runs do not fit in the planner's memory model (rows above)\n", unfit);
    std::printf("# not modelled:\n");
    for (const auto& [why, n] : skipped) std::printf("  %3d  %s\n", n, why.c_str());
    std::printf("# one run in the planner, its own row among the planner's choices: paralens plan --published ID\n");
}

} // namespace

void RunPlanValidate(bool json)
{
    Json rows = Json::array();
    if (!json)
        std::printf("%-18s %6s %-32s %10s %10s %8s %6s %8s  %s\n", "run", "GPUs", "configuration (predicted)", "published", "predicted",
                    "error", "rank", "vs best", "source");
    for (const core::PublishedRun& run : core::PublishedRuns()) {
        const core::PublishedCheck c = core::CheckPublishedRun(run);
        if (json) {
            rows.push_back({{"id", run.id}, {"source", run.source}, {"gpus", run.request.cluster.gpus}, {"gpu", run.request.cluster.gpu.id},
                            {"publishedTflopsPerGpu", run.tflopsPerGpu}, {"publishedStepSeconds", c.publishedSeconds},
                            {"predictedStepSeconds", c.predicted.time.step}, {"errorPct", c.errorPct}, {"rank", c.rank},
                            {"vsBestPct", c.vsBestPct}, {"config", core::ConfigText(c.predicted.config)},
                            {"bestConfig", core::ConfigText(c.best.config)}});
            continue;
        }
        std::printf("%-18s %6d %-32s %10s %10s %+7.1f%% %6zu %+7.1f%%  %.40s\n", run.id.c_str(), run.request.cluster.gpus,
                    core::ConfigText(c.predicted.config).c_str(), core::FormatSeconds(c.publishedSeconds).c_str(),
                    core::FormatSeconds(c.predicted.time.step).c_str(), c.errorPct, c.rank, c.vsBestPct, run.source.c_str());
    }
    const std::vector<core::PublishedSetRun> set =
        core::CheckPublishedSet(core::PublishedSetCsv(), ProgressOnStderr("--validate: planning the published set,"));
    if (json) {
        Json setRows = Json::array();
        for (const core::PublishedSetRun& r : set) {
            Json j = {{"id", r.id}, {"source", r.source}, {"model", r.model}, {"gpu", r.gpu}, {"gpus", r.gpus}, {"precision", r.precision}};
            if (!r.skipped.empty()) j["notModelled"] = r.skipped;
            else if (!r.fits) j["doesNotFit"] = r.config + ": " + r.rejected;
            else j.update({{"config", r.config}, {"publishedStepSeconds", r.publishedSeconds}, {"publishedFrom", r.publishedFrom},
                           {"predictedStepSeconds", r.predictedSeconds}, {"errorPct", r.errorPct}, {"rank", r.rank},
                           {"vsBestPct", r.vsBestPct}, {"bestConfig", r.bestConfig},
                           {"memoryBytesPerGpu", r.memoryBytes}, {"hbmBytes", r.hbmBytes}, {"fittedOn", r.fittedOn},
                           {"microBatchInDoubt", r.microBatchInDoubt}});
            setRows.push_back(j);
        }
        Json summary = Json::array();
        for (const GroupStats& g : SummarizeSet(set))
            summary.push_back({{"group", g.group}, {"by", g.by}, {"runs", g.runs}, {"medianAbsErrorPct", g.medianAbsErrorPct},
                               {"within15", g.within15}, {"nearBest", g.nearBest}});
        PrintJson({{"runs", rows}, {"publishedSet", setRows}, {"publishedSetSummary", summary}});
        return;
    }
    PrintPublishedSet(set);
}


} // namespace paralens::app
