// Runs a core Plan for real between MPI processes: each rank holds the plan's working buffer in
// host memory; every transfer of a step is a real MPI message (segments packed into one), every
// reduce a byte-wise addition; transfers of a step read the buffer as it was before the step, as
// the Plan's semantics say. Each message and reduction is recorded as a span with host
// timestamps. The result is checked against the collective's definition (core/plan/Reference.hpp):
// initial bytes are the low 8 bits of ReferenceValue, so sums wrap exactly as in the reference.
#pragma once

#include "mpi/MpiContext.hpp"
#include "plan/Plan.hpp"
#include "trace/TraceBuilder.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::app::mpi {

// Where a rank's spans go in its Trace.
struct RankTracks {
    uint32_t send = 0, recv = 0, reduce = 0;
};

class PlanExecutor {
public:
    // The plan's ranks must equal the communicator's size.
    PlanExecutor(const Context& ctx, const core::Plan& plan, uint64_t seed, double timeoutSec);

    // Runs every step; with `fresh`, first resets the buffer to the initial values (needed before
    // Check(); timing-only runs skip it). Records spans when `rec` is given (`iteration` goes into
    // their details). Returns this rank's [start, end] in NowNs.
    std::pair<int64_t, int64_t> Run(core::TraceBuilder* rec, const RankTracks& tracks, int iteration, bool fresh);

    // The first byte of this rank's result that differs from the definition, or "" when all match.
    std::string Check() const;

private:
    void Reset();

    const Context& m_ctx;
    const core::Plan& m_plan;
    uint64_t m_seed;
    double m_timeoutSec;
    std::vector<uint8_t> m_buffer;
    std::vector<std::vector<uint8_t>> m_staging; // one per transfer of a step that touches this rank
};

} // namespace paralens::app::mpi
