// Small collective helpers of the MPI backend, each with the run's timeout (a dead rank is
// named instead of hanging the others).
#pragma once

#include "mpi/MpiContext.hpp"

#include <string>

namespace paralens::app::mpi {

// The largest `local` over all ranks, at every rank.
double MaxOverRanks(const Context& ctx, double local, double timeout);
void Barrier(const Context& ctx, double timeout, const std::string& what);
// At rank 0: the first non-empty `local` of the lowest rank that has one ("" when none has).
std::string GatherMismatch(const Context& ctx, const std::string& local, double timeout);

} // namespace paralens::app::mpi
