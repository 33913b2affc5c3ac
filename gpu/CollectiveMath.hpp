// nccl-tests' conventions for the collective workload, as pure functions: element counts per
// collective, effective sizes, time per iteration, algbw and busbw (core/model's factors), and
// when an exact check is possible. Thread-safe.
#pragma once

#include "CheckPattern.hpp"
#include "RunRequest.hpp"

#include "model/Collective.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::gpu {

struct CollCounts {
    check::CollShape shape;
    uint64_t sendCount = 0; // elements per rank
    uint64_t recvCount = 0;
    uint64_t bytes = 0;     // n actually run: the full vector (FORMULAS.md), after rounding like nccl-tests
};

// Counts for `bytes` of `eltBytes` elements over `ranks` ranks. Split collectives round n down to
// a multiple of ranks x eltBytes. Throws Error when n is less than one element per rank.
CollCounts CollectiveCounts(core::Collective c, uint64_t bytes, uint64_t eltBytes, int ranks, int root);

check::Coll ToCheckColl(core::Collective c);

struct Bandwidth {
    double seconds = 0;
    double algbwGBps = 0;
    double busbwGBps = 0;
};
Bandwidth ComputeBandwidth(core::Collective c, int ranks, uint64_t bytes, double seconds);

// nccl-tests' time per iteration: the slowest rank's total over the timed iterations / iters.
double IterationSeconds(const std::vector<double>& perRankTotalSec, int iters);

// Whether the pattern's results are exact in a dtype for this many ranks (bf16 holds integers
// up to 256 exactly, half up to 2048); when not, the check is skipped and the report says so.
bool ExactCheckPossible(DType dtype, core::Collective c, int ranks);

} // namespace paralens::gpu
