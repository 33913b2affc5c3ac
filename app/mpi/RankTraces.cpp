#include "mpi/RankTraces.hpp"

#include "mpi/MpiRun.hpp"
#include "mpi/MpiSync.hpp"
#include "trace/RankTraceMerge.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

namespace paralens::app::mpi {

void SetClockMeta(core::Metadata& m, const ClockModel& clock, bool haveEnd)
{
    m.extra.Set("clockStartLocalNs", clock.start.localNs);
    m.extra.Set("clockStartOffsetNs", clock.start.offsetNs);
    m.extra.Set("clockStartBoundNs", clock.start.boundNs);
    if (!haveEnd) return;
    m.extra.Set("clockEndLocalNs", clock.end.localNs);
    m.extra.Set("clockEndOffsetNs", clock.end.offsetNs);
    m.extra.Set("clockEndBoundNs", clock.end.boundNs);
}

void BeginRankTrace(const Context& ctx, live::LiveStream& stream, ClockModel& clock, double timeout)
{
    clock.start = MeasureClockOffset(ctx, kClockRounds, timeout);
    stream.Send(live::EncodeClock(false, clock.start.localNs, clock.start.offsetNs, clock.start.boundNs));
}

void EndRankTrace(const Context& ctx, live::LiveStream& stream, core::TraceBuilder&& b, const core::Metadata& meta, ClockModel& clock,
                  const std::string& out, double timeout)
{
    clock.end = MeasureClockOffset(ctx, kClockRounds, timeout);
    stream.Send(live::EncodeClock(true, clock.end.localNs, clock.end.offsetNs, clock.end.boundNs));
    core::Metadata& m = b.Meta();
    m = meta;
    m.source = core::TraceSource::Mpi;
    m.extra.Set("rank", int64_t{ctx.Rank()});
    SetClockMeta(m, clock, true);
    core::Trace mine = std::move(b).Finish();
    if (out.empty()) return;
    core::WriteTraceFile(mine, RankTracePath(out, ctx.Rank()));
    MergeAtRankZero(ctx, out, mine, timeout);
}

std::vector<ClockModel> GatherClocks(const Context& ctx, const ClockModel& mine, double timeout)
{
    const std::array<int64_t, 6> local{mine.start.localNs, mine.start.offsetNs, mine.start.boundNs,
                                       mine.end.localNs,   mine.end.offsetNs,   mine.end.boundNs};
    std::vector<int64_t> all(ctx.Rank() == 0 ? 6 * static_cast<size_t>(ctx.Size()) : 0);
    MPI_Request req;
    PARALENS_MPI_CHECK(MPI_Igather(local.data(), 6, MPI_INT64_T, all.data(), 6, MPI_INT64_T, 0, MPI_COMM_WORLD, &req));
    const int any = 0;
    ctx.WaitAll(std::span<MPI_Request>(&req, 1), std::span<const int>(&any, 1), timeout, "gathering the clocks");
    std::vector<ClockModel> out;
    for (size_t r = 0; r * 6 < all.size(); ++r)
        out.push_back({{all[r * 6], all[r * 6 + 1], all[r * 6 + 2]}, {all[r * 6 + 3], all[r * 6 + 4], all[r * 6 + 5]}});
    return out;
}

void MergeAtRankZero(const Context& ctx, const std::string& out, const core::Trace& mine, double timeout)
{
    const std::vector<std::string> texts = GatherText(ctx, core::TraceToJsonText(mine), timeout, "gathering the traces");
    if (ctx.Rank() != 0) return;
    std::vector<core::Trace> parts;
    std::vector<std::string> names;
    for (size_t r = 0; r < texts.size(); ++r) {
        names.push_back(RankTracePath(out, static_cast<int>(r)));
        parts.push_back(core::ReadChromeJson(texts[r], names.back()));
    }
    core::Trace merged = core::MergeRankTraces(std::move(parts), names);
    core::WriteTraceFile(merged, out);
}

void AbortRank(const Context& ctx, const std::string& path, const std::function<void()>& write)
{
    if (!path.empty()) {
        try {
            write();
            std::fprintf(stderr, "paralens: rank %d wrote its trace so far to %s\n", ctx.Rank(), path.c_str());
        } catch (const std::exception& w) {
            std::fprintf(stderr, "paralens: rank %d could not write its trace: %s\n", ctx.Rank(), w.what());
        }
    }
    std::fflush(stderr);
    std::fflush(stdout);
    if (!ctx.Terminated()) MPI_Abort(MPI_COMM_WORLD, 3); // stop the others; mpirun sends them SIGTERM
    std::_Exit(3); // no MPI_Finalize: it would wait for the dead rank
}

int64_t ClockBoundNs(const std::vector<ClockModel>& clocks)
{
    int64_t bound = 0;
    for (const ClockModel& c : clocks) bound = std::max(bound, c.BoundNs());
    return bound;
}

} // namespace paralens::app::mpi
