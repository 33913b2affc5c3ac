// Clock alignment between ranks: rank 0 ping-pongs with every other rank and takes, of several
// rounds, the one with the shortest round trip: offset = (the peer's clock when it answered) -
// (midpoint of rank 0's send and receive), error bound = half that round trip. Measured at the
// start and at the end of a run; between them the offset is interpolated linearly (drift).
#pragma once

#include "mpi/MpiContext.hpp"

#include <cstdint>

namespace paralens::app::mpi {

struct ClockSample {
    int64_t localNs = 0;  // when (on this rank's clock) the offset was measured
    int64_t offsetNs = 0; // this rank's clock minus rank 0's clock
    int64_t boundNs = 0;  // |error| of offsetNs is at most this
};

struct ClockModel {
    ClockSample start, end;

    // This rank's clock minus rank 0's at local time t (linear between the two samples).
    int64_t OffsetAt(int64_t localNs) const;
    int64_t BoundNs() const { return start.boundNs > end.boundNs ? start.boundNs : end.boundNs; }
};

// The ping-pong rounds of one measurement in a run (the shortest round trip of them wins).
inline constexpr int kClockRounds = 16;

// Collective over MPI_COMM_WORLD; every rank gets its own sample (rank 0: offset 0, bound 0).
ClockSample MeasureClockOffset(const Context& ctx, int rounds, double timeoutSec);

} // namespace paralens::app::mpi
