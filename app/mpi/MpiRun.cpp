#include "mpi/MpiRun.hpp"

#include "common/Units.hpp"
#include "model/CostModel.hpp"
#include "mpi/ClockSync.hpp"
#include "mpi/MpiBaseline.hpp"
#include "mpi/MpiContext.hpp"
#include "mpi/MpiPlanExecutor.hpp"
#include "mpi/MpiSync.hpp"
#include "mpi/RankTraces.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/RankTraceMerge.hpp"
#include "trace/TraceFile.hpp"
#include "live/LiveProtocol.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>

namespace paralens::app::mpi {

namespace {

struct CaseResult {
    core::Collective collective;
    core::Algorithm algorithm;
    std::vector<double> seconds;    // per iteration: the slowest rank's time
    std::vector<double> mpiSeconds; // MPI's own collective
    std::string mismatch;           // first wrong byte on any rank ("" = correct)
    size_t steps = 0, transfers = 0;
};

double Median(std::vector<double> v)
{
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

class RankRecorder {
public:
    RankRecorder(const Context& ctx)
    {
        const uint32_t d = m_b.AddDevice("rank " + std::to_string(ctx.Rank()), core::DeviceKind::Cpu, ctx.Rank(), ctx.Host());
        m_tracks.send = m_b.AddTrack(d, "send");
        m_tracks.recv = m_b.AddTrack(d, "recv");
        m_tracks.reduce = m_b.AddTrack(d, "reduce");
        m_collective = m_b.AddTrack(d, "collective");
        m_mpi = m_b.AddTrack(d, "MPI library");
    }
    core::TraceBuilder& Builder() { return m_b; }
    const RankTracks& Tracks() const { return m_tracks; }

    void Operation(uint32_t track, const std::string& name, const std::string& detail, uint64_t bytes, int iteration,
                   std::pair<int64_t, int64_t> span)
    {
        core::Span s;
        s.startNs = span.first;
        s.endNs = span.second;
        s.name = m_b.Intern(name);
        s.detail = m_b.Intern(detail);
        s.bytes = bytes;
        s.step = iteration;
        s.category = core::SpanCategory::Collective;
        m_b.AddSpan(track, s);
    }
    uint32_t CollectiveTrack() const { return m_collective; }
    uint32_t MpiTrack() const { return m_mpi; }

private:
    core::TraceBuilder m_b;
    RankTracks m_tracks;
    uint32_t m_collective = 0, m_mpi = 0;
};

// Runs one collective x algorithm; `checkpoint` saves the trace so far when its traced iterations
// are done and when the case ends.
// `onIteration(label, done, total)` runs after each iteration, outside the timed region (it
// streams the spans recorded so far to a live launcher).
CaseResult RunCase(const Context& ctx, const MpiRunOptions& o, core::Collective c, core::Algorithm a, RankRecorder& rec,
                   const std::function<void()>& checkpoint, const std::function<void(const std::string&, int, int)>& onIteration)
{
    const core::CollectiveSpec spec{c, a, ctx.Size(), o.bytes, core::HasRoot(c) ? o.root : 0, 1};
    const core::Plan plan = core::BuildPlan(spec);
    PlanExecutor exec(ctx, plan, o.seed, o.timeoutSec);
    CaseResult r{c, a, {}, {}, {}, plan.steps.size(), plan.transfers.size()};
    const std::string label = std::string(core::Name(c)) + "/" + std::string(core::Name(a));
    for (int i = 0; i < o.warmup + o.iterations; ++i) {
        const bool timed = i >= o.warmup;
        const bool fresh = o.check && i == o.warmup;
        Barrier(ctx, o.timeoutSec, "the barrier before " + label);
        const bool traced = timed && i - o.warmup < o.traceIterations;
        const auto span = exec.Run(traced ? &rec.Builder() : nullptr, rec.Tracks(), i - o.warmup, fresh);
        if (!timed) continue;
        if (traced) rec.Operation(rec.CollectiveTrack(), std::string(core::Name(c)), std::string(core::Name(a)), o.bytes, i - o.warmup, span);
        r.seconds.push_back(MaxOverRanks(ctx, static_cast<double>(span.second - span.first) * 1e-9, o.timeoutSec));
        if (fresh) r.mismatch = GatherMismatch(ctx, exec.Check(), o.timeoutSec);
        if (traced && i - o.warmup == o.traceIterations - 1) checkpoint();
        onIteration(label, i - o.warmup + 1, o.iterations);
    }
    if (!o.compareMpi) {
        checkpoint();
        return r;
    }
    MpiBaseline lib(ctx, plan, o.timeoutSec);
    for (int i = 0; i < o.warmup + o.iterations; ++i) {
        Barrier(ctx, o.timeoutSec, std::string("the barrier before ") + lib.FunctionName());
        const auto span = lib.Run();
        if (i < o.warmup) continue;
        if (i - o.warmup < o.traceIterations)
            rec.Operation(rec.MpiTrack(), lib.FunctionName(), std::string(core::Name(c)), o.bytes, i - o.warmup, span);
        r.mpiSeconds.push_back(MaxOverRanks(ctx, static_cast<double>(span.second - span.first) * 1e-9, o.timeoutSec));
        onIteration(std::string(lib.FunctionName()), i - o.warmup + 1, o.iterations);
    }
    checkpoint();
    return r;
}

// Writes this rank's trace (FILE.rankN.json) and returns it; an empty Trace without --out. A
// checkpoint writes a copy of the trace so far, marked incomplete, while the run goes on: Open MPI
// itself aborts a process whose connection to a dead peer breaks (no chance to write then), and
// the checkpoint is what such a rank leaves. The final write replaces it.
core::Trace WriteRankTrace(const Context& ctx, const MpiRunOptions& o, RankRecorder& rec, const ClockModel& clock, bool haveEnd,
                           const std::string& failure, bool checkpoint = false)
{
    if (o.out.empty()) return {};
    core::Metadata& m = rec.Builder().Meta();
    m.source = core::TraceSource::Mpi;
    m.title = "MPI run, rank " + std::to_string(ctx.Rank()) + " of " + std::to_string(ctx.Size());
    m.workload.Set("kind", std::string("collective"));
    m.workload.Set("ranks", int64_t{ctx.Size()});
    m.workload.Set("bytes", static_cast<int64_t>(o.bytes));
    m.hardware.Set("host", ctx.Host());
    m.extra.Set("rank", int64_t{ctx.Rank()});
    SetClockMeta(m, clock, haveEnd);
    if (!failure.empty()) m.extra.Set("incomplete", failure);
    core::Trace trace;
    if (checkpoint) {
        core::TraceBuilder copy = rec.Builder();
        copy.Meta().extra.Set("incomplete", std::string("a checkpoint written while the run went on; the rank did not finish"));
        trace = std::move(copy).Finish();
    } else {
        trace = std::move(rec.Builder()).Finish();
    }
    core::WriteTraceFile(trace, RankTracePath(o.out, ctx.Rank()));
    return trace;
}

void Report(const MpiRunOptions& o, int ranks, const std::vector<CaseResult>& results, const std::vector<ClockModel>& clocks)
{
    const int64_t bound = ClockBoundNs(clocks);
    nlohmann::json clockRows = nlohmann::json::array();
    for (size_t r = 0; r < clocks.size(); ++r) {
        clockRows.push_back({{"rank", r}, {"startLocalNs", clocks[r].start.localNs}, {"startOffsetNs", clocks[r].start.offsetNs},
                             {"startBoundNs", clocks[r].start.boundNs}, {"endLocalNs", clocks[r].end.localNs},
                             {"endOffsetNs", clocks[r].end.offsetNs}, {"endBoundNs", clocks[r].end.boundNs}});
    }
    nlohmann::json rows = nlohmann::json::array();
    if (!o.json)
        std::printf("# paralens run --backend mpi: %d ranks, %s, %d iterations (median of the slowest rank)\n"
                    "%-16s %-19s %6s %12s %10s %10s %12s %8s\n",
                    ranks, core::FormatBytes(o.bytes).c_str(), o.iterations, "collective", "algorithm", "steps", "time (us)",
                    "algbw", "busbw", "MPI lib (us)", "check");
    for (const CaseResult& r : results) {
        const double t = Median(r.seconds), lib = Median(r.mpiSeconds);
        const double algbw = core::AlgBwGBps(o.bytes, t), busbw = algbw * core::BusBwFactor(r.collective, ranks);
        const std::string check = !o.check ? "-" : r.mismatch.empty() ? "ok" : "WRONG";
        rows.push_back({{"collective", core::Name(r.collective)}, {"algorithm", core::Name(r.algorithm)}, {"steps", r.steps},
                        {"transfers", r.transfers}, {"seconds", t}, {"iterationSeconds", r.seconds}, {"algbwGBps", algbw},
                        {"busbwGBps", busbw}, {"mpiLibrarySeconds", o.compareMpi ? nlohmann::json(lib) : nlohmann::json(nullptr)},
                        {"correct", o.check ? nlohmann::json(r.mismatch.empty()) : nlohmann::json(nullptr)}});
        if (!r.mismatch.empty()) rows.back()["mismatch"] = r.mismatch;
        char libText[32] = "-";
        if (o.compareMpi) std::snprintf(libText, sizeof libText, "%.2f", lib * 1e6);
        if (!o.json)
            std::printf("%-16s %-19s %6zu %12.2f %10.3f %10.3f %12s %8s\n", std::string(core::Name(r.collective)).c_str(),
                        std::string(core::Name(r.algorithm)).c_str(), r.steps, t * 1e6, algbw, busbw, libText, check.c_str());
    }
    if (o.json) {
        nlohmann::json j{{"backend", "mpi"}, {"ranks", ranks}, {"bytes", o.bytes}, {"iterations", o.iterations}, {"rows", rows},
                         {"clockBoundNs", bound}, {"clocks", clockRows}};
        if (!o.out.empty()) j["out"] = o.out;
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        std::printf("# clocks aligned to rank 0 within %s (ping-pong at start and end)\n",
                    core::FormatSeconds(static_cast<double>(bound) * 1e-9).c_str());
        for (const CaseResult& r : results)
            if (!r.mismatch.empty()) std::printf("# WRONG %s/%s: %s\n", std::string(core::Name(r.collective)).c_str(),
                                                 std::string(core::Name(r.algorithm)).c_str(), r.mismatch.c_str());
    }
    std::fflush(stdout);
}

constexpr int64_t kStreamIntervalNs = 100'000'000;

// What the live launcher shows about the run: the workload (the first case; a Plan's flow view
// comes back from it) and one row per case.
core::Metadata LiveMeta(const MpiRunOptions& o, int ranks)
{
    core::Metadata m;
    m.workload.Set("kind", std::string("collective"));
    if (!o.cases.empty()) {
        m.workload.Set("collective", std::string(core::Name(o.cases.front().first)));
        m.workload.Set("algorithm", std::string(core::Name(o.cases.front().second)));
    }
    m.workload.Set("ranks", int64_t{ranks});
    m.workload.Set("bytes", static_cast<int64_t>(o.bytes));
    m.workload.Set("root", int64_t{o.root});
    m.workload.Set("iterations", int64_t{o.iterations});
    m.workload.Set("warmup", int64_t{o.warmup});
    return m;
}

std::vector<core::MetaSection> LiveRows(const MpiRunOptions& o, int ranks, const std::vector<CaseResult>& results)
{
    std::vector<core::MetaSection> rows;
    for (const CaseResult& r : results) {
        core::MetaSection row;
        const double t = Median(r.seconds), algbw = core::AlgBwGBps(o.bytes, t);
        row.Set("collective", std::string(core::Name(r.collective)));
        row.Set("algorithm", std::string(core::Name(r.algorithm)));
        row.Set("bytes", static_cast<int64_t>(o.bytes));
        row.Set("seconds", t);
        row.Set("algbwGBps", algbw);
        row.Set("busbwGBps", algbw * core::BusBwFactor(r.collective, ranks));
        if (o.compareMpi) row.Set("mpiLibrarySeconds", Median(r.mpiSeconds));
        if (o.check) row.Set("correct", r.mismatch.empty());
        if (!r.mismatch.empty()) row.Set("mismatch", r.mismatch);
        rows.push_back(std::move(row));
    }
    return rows;
}

} // namespace

std::string RankTracePath(const std::string& out, int rank)
{
    const std::string tag = ".rank" + std::to_string(rank);
    for (const char* ext : {".json.gz", ".json"})
        if (core::EndsWith(out, ext)) return out.substr(0, out.size() - std::string(ext).size()) + tag + ext;
    return out + tag;
}

int RunMpiBackend(const MpiRunOptions& o)
{
    Context ctx(nullptr, nullptr);
    RankRecorder rec(ctx);
    live::LiveStream stream(ctx.Rank(), ctx.Size(), ctx.Host());
    ClockModel clock;
    bool haveEnd = false;
    std::vector<CaseResult> results;
    std::vector<ClockModel> clocks;
    try {
        clock.start = MeasureClockOffset(ctx, kClockRounds, o.timeoutSec);
        stream.Send(live::EncodeClock(false, clock.start.localNs, clock.start.offsetNs, clock.start.boundNs));
        if (ctx.Rank() == 0) stream.Send(live::EncodeMeta(LiveMeta(o, ctx.Size())));
        const auto checkpoint = [&] { WriteRankTrace(ctx, o, rec, clock, false, {}, true); };
        const double cases = static_cast<double>(o.cases.size()) * (o.compareMpi ? 2.0 : 1.0);
        int caseIndex = 0;
        // Streamed at most every kStreamIntervalNs (and at each case's end): the launcher's latency
        // budget is 250 ms, and every message costs the ranks' shared cores something.
        int64_t lastStreamNs = 0;
        const auto onIteration = [&](const std::string& label, int done, int total) {
            const int64_t now = ctx.NowNs();
            if (stream.Enabled() && (done == total || now - lastStreamNs >= kStreamIntervalNs)) {
                lastStreamNs = now;
                stream.FlushSpans(rec.Builder());
                // Every rank says where it is (rank 0's is shown): the launcher's proof of life once
                // the traced iterations are over and no spans come any more.
                stream.Send(live::EncodeProgress(label + ": iteration " + std::to_string(done) + " of " + std::to_string(total),
                                                     std::min(1.0, (caseIndex + static_cast<double>(done) / total) / cases)));
            }
            if (done == total) ++caseIndex;
        };
        for (const auto& [c, a] : o.cases) results.push_back(RunCase(ctx, o, c, a, rec, checkpoint, onIteration));
        clock.end = MeasureClockOffset(ctx, kClockRounds, o.timeoutSec);
        haveEnd = true;
        stream.Send(live::EncodeClock(true, clock.end.localNs, clock.end.offsetNs, clock.end.boundNs));
        stream.FlushSpans(rec.Builder());
        const core::Trace mine = WriteRankTrace(ctx, o, rec, clock, haveEnd, {});
        clocks = GatherClocks(ctx, clock, o.timeoutSec);
        if (!o.out.empty()) MergeAtRankZero(ctx, o.out, mine, o.timeoutSec);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "paralens: %s\n", e.what());
        stream.FlushSpans(rec.Builder());
        stream.Send(live::EncodeError(e.what()));
        AbortRank(ctx, o.out.empty() ? std::string() : RankTracePath(o.out, ctx.Rank()),
                  [&] { WriteRankTrace(ctx, o, rec, clock, haveEnd, e.what()); });
    }
    if (ctx.Rank() == 0) {
        Report(o, ctx.Size(), results, clocks);
        bool ok = true;
        for (const CaseResult& r : results) ok = ok && r.mismatch.empty();
        stream.Send(live::EncodeResult(ok, LiveRows(o, ctx.Size(), results)));
    }
    stream.Send(live::EncodeDone());
    for (const CaseResult& r : results)
        if (!r.mismatch.empty()) return 4;
    return 0;
}

} // namespace paralens::app::mpi
