// MPI's own implementation of each collective (MPI_Bcast, MPI_Ireduce, ... in their nonblocking
// forms, so that a dead peer still times out), on the same buffer layout as paralens's Plans, for
// comparison with the Plans run by PlanExecutor.
#pragma once

#include "mpi/MpiContext.hpp"
#include "plan/Plan.hpp"

#include <cstdint>
#include <vector>

namespace paralens::app::mpi {

class MpiBaseline {
public:
    MpiBaseline(const Context& ctx, const core::Plan& plan, double timeoutSec);
    // Runs the library's collective once; returns this rank's [start, end] in NowNs.
    std::pair<int64_t, int64_t> Run();
    const char* FunctionName() const;

private:
    const Context& m_ctx;
    const core::Plan& m_plan;
    double m_timeoutSec;
    std::vector<uint8_t> m_in, m_out;
    std::vector<int> m_counts, m_displs, m_recvCounts, m_recvDispls;
};

} // namespace paralens::app::mpi
