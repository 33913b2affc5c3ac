// What every multi-process run does with its traces: the clock model in a rank trace's metadata
// (the form core/trace/RankTraceMerge reads), the clocks and traces gathered at rank 0, and the
// merged trace written there. Collective over MPI_COMM_WORLD, each wait under the run's timeout.
#pragma once

#include "mpi/ClockSync.hpp"
#include "mpi/MpiContext.hpp"
#include "live/LiveProtocol.hpp"
#include "trace/Trace.hpp"
#include "trace/TraceBuilder.hpp"

#include <functional>
#include <string>
#include <vector>

namespace paralens::app::mpi {

// extra.clockStart{Local,Offset,Bound}Ns, and clockEnd... when `haveEnd`.
void SetClockMeta(core::Metadata& m, const ClockModel& clock, bool haveEnd);

// Every rank's clock model, at rank 0 (empty elsewhere).
std::vector<ClockModel> GatherClocks(const Context& ctx, const ClockModel& mine, double timeout);

// Every rank's trace at rank 0, which merges them on its clock (one row per rank, by host) and
// writes `out`; the other ranks return once their part is sent.
void MergeAtRankZero(const Context& ctx, const std::string& out, const core::Trace& mine, double timeout);

// How a rank ends after a failure (already printed): `write` saves its trace so far to `path`
// (skipped when `path` is empty), the rank says where, and the job is aborted (mpirun stops the
// others with SIGTERM; they notice it in their waits). Exits with code 3; never returns.
[[noreturn]] void AbortRank(const Context& ctx, const std::string& path, const std::function<void()>& write);

// The start of a traced rank program (pipeline stages, training workers): the clock against
// rank 0's measured and streamed. Collective.
void BeginRankTrace(const Context& ctx, live::LiveStream& stream, ClockModel& clock, double timeout);

// The end of a traced rank program (pipeline stages, training workers): the clock measured again
// (and streamed), `meta` with the source, rank and clock model put on the builder's trace, which
// is written to the rank's file and merged at rank 0 when `out` is set. Collective.
void EndRankTrace(const Context& ctx, live::LiveStream& stream, core::TraceBuilder&& b, const core::Metadata& meta, ClockModel& clock,
                  const std::string& out, double timeout);

// The largest clock error bound of `clocks`.
int64_t ClockBoundNs(const std::vector<ClockModel>& clocks);

} // namespace paralens::app::mpi
