#include "mpi/MpiSweep.hpp"

#include "analysis/Fitting.hpp"
#include "common/Units.hpp"
#include "model/CostModel.hpp"
#include "model/Fit.hpp"
#include "mpi/MpiContext.hpp"
#include "mpi/MpiPlanExecutor.hpp"
#include "mpi/MpiSync.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace paralens::app::mpi {

namespace {

struct Row {
    uint64_t bytes = 0;
    double seconds = 0;
    std::string check; // "ok", "skipped", or the mismatch
};

Row MeasureSize(const Context& ctx, const MpiSweepOptions& o, uint64_t bytes)
{
    const core::CollectiveSpec spec{o.collective, o.algorithm, ctx.Size(), bytes, core::HasRoot(o.collective) ? o.root : 0, o.elementBytes};
    const core::Plan plan = core::BuildPlan(spec);
    PlanExecutor exec(ctx, plan, 1, o.timeoutSec);
    const bool check = bytes <= o.checkMaxBytes;
    std::vector<double> times;
    Row row{bytes, 0, check ? "ok" : "skipped"};
    for (int i = 0; i < o.warmup + o.iterations; ++i) {
        const bool fresh = check && i == o.warmup;
        Barrier(ctx, o.timeoutSec, "the barrier before " + core::FormatBytes(bytes));
        const auto span = exec.Run(nullptr, {}, i, fresh);
        if (i < o.warmup) continue;
        times.push_back(MaxOverRanks(ctx, static_cast<double>(span.second - span.first) * 1e-9, o.timeoutSec));
        if (fresh) {
            const std::string mismatch = GatherMismatch(ctx, exec.Check(), o.timeoutSec);
            if (!mismatch.empty()) row.check = mismatch;
        }
    }
    std::sort(times.begin(), times.end());
    row.seconds = times[times.size() / 2];
    return row;
}

void Report(const Context& ctx, const MpiSweepOptions& o, const std::vector<Row>& rows)
{
    core::FitGroup group;
    group.collective = o.collective;
    group.ranks = ctx.Size();
    group.algorithm = o.algorithm;
    group.dtype = o.dtype;
    group.label = "paralens sweep --backend mpi";
    group.source = ctx.Host();
    for (const Row& r : rows) group.samples.push_back({r.bytes, r.seconds, 0});
    const core::FitResult fit = core::FitAlphaBeta(group);
    const double factor = core::BusBwFactor(o.collective, ctx.Size());
    nlohmann::json out = nlohmann::json::array();
    if (!o.json)
        std::printf("# paralens sweep --backend mpi: %s / %s between %d processes on %s (median of %d iterations, slowest rank)\n"
                    "#%11s %13s %9s %11s %8s %8s | %11s %7s | %s\n#%11s %13s %9s %11s %8s %8s | %11s %7s |\n",
                    std::string(core::Name(o.collective)).c_str(), std::string(core::Name(o.algorithm)).c_str(), ctx.Size(),
                    ctx.Host().c_str(), o.iterations, "size", "count", "type", "time", "algbw", "busbw", "model", "error", "check",
                    "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)", "(us)", "(%)");
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const double algbw = core::AlgBwGBps(r.bytes, r.seconds);
        const double model = fit.PredictSeconds(r.bytes);
        const double err = r.seconds > 0 ? (model - r.seconds) / r.seconds * 100 : 0;
        out.push_back({{"bytes", r.bytes}, {"count", r.bytes / o.elementBytes}, {"timeSeconds", r.seconds}, {"algbwGBps", algbw},
                       {"busbwGBps", algbw * factor}, {"modelSeconds", model}, {"errorPct", err}, {"check", r.check}});
        if (!o.json)
            std::printf(" %11llu %13llu %9s %11.2f %8.3f %8.3f | %11.2f %+7.1f | %s\n", static_cast<unsigned long long>(r.bytes),
                        static_cast<unsigned long long>(r.bytes / o.elementBytes), o.dtype.c_str(), r.seconds * 1e6, algbw,
                        algbw * factor, model * 1e6, err, r.check.c_str());
    }
    const double bandwidth = fit.params.betaSecPerByte > 0 ? 1e-9 / fit.params.betaSecPerByte : 0;
    if (o.json) {
        nlohmann::json j{{"backend", "mpi"}, {"collective", core::Name(o.collective)}, {"algorithm", core::Name(o.algorithm)},
                         {"ranks", ctx.Size()}, {"rows", out},
                         {"fit", {{"alphaUs", fit.params.alphaSec * 1e6}, {"bandwidthGBps", bandwidth}, {"latencyUs", fit.latencySec * 1e6},
                                  {"busBwGBps", fit.busBwGBps}, {"mapePct", fit.mapePct}, {"note", fit.note}}}};
        if (!o.fitOut.empty()) j["fitOut"] = o.fitOut;
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        std::printf("# fit: alpha %.3f us per message, bandwidth %.3f GB/s per link (latency %.2f us, bus bandwidth %.3f GB/s); "
                    "mean error %.1f%%%s%s\n",
                    fit.params.alphaSec * 1e6, bandwidth, fit.latencySec * 1e6, fit.busBwGBps, fit.mapePct,
                    fit.note.empty() ? "" : "; ", fit.note.c_str());
        if (!o.fitOut.empty()) std::printf("# fit saved to %s (use it with paralens simulate --model %s)\n", o.fitOut.c_str(), o.fitOut.c_str());
    }
    if (!o.fitOut.empty()) {
        core::FitFile file;
        file.sources.push_back("paralens sweep --backend mpi on " + ctx.Host());
        file.fits.push_back(fit);
        core::SaveFitFile(file, o.fitOut);
    }
    std::fflush(stdout);
}

} // namespace

int RunMpiSweep(const MpiSweepOptions& o)
{
    Context ctx(nullptr, nullptr);
    std::vector<Row> rows;
    const bool progress = ctx.Rank() == 0 && isatty(STDERR_FILENO);
    try {
        for (uint64_t bytes : o.sizes) {
            rows.push_back(MeasureSize(ctx, o, bytes));
            if (progress) std::fprintf(stderr, "\rsweep: %zu/%zu sizes", rows.size(), o.sizes.size());
        }
        if (progress) std::fprintf(stderr, "\r%40s\r", "");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "paralens: %s\n", e.what());
        std::fflush(stderr);
        if (!ctx.Terminated()) MPI_Abort(MPI_COMM_WORLD, 3);
        std::_Exit(3);
    }
    if (ctx.Rank() == 0) {
        try {
            Report(ctx, o, rows);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "paralens: %s\n", e.what());
            return 2;
        }
    }
    for (const Row& r : rows)
        if (r.check != "ok" && r.check != "skipped") return 4;
    return 0;
}

} // namespace paralens::app::mpi
