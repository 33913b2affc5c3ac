// Small collective helpers of the MPI backend, each with the run's timeout (a dead rank is
// named instead of hanging the others).
#pragma once

#include "mpi/MpiContext.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace paralens::app::mpi {

// The largest `local` over all ranks, at every rank.
double MaxOverRanks(const Context& ctx, double local, double timeout);
void Barrier(const Context& ctx, double timeout, const std::string& what);
// At rank 0: the first non-empty `local` of the lowest rank that has one ("" when none has).
std::string GatherMismatch(const Context& ctx, const std::string& local, double timeout);
// At rank 0: every rank's `local` text, in rank order (empty elsewhere). Throws Failure when the
// texts together exceed 2 GiB (MPI's int counts).
std::vector<std::string> GatherText(const Context& ctx, const std::string& local, double timeout, const std::string& what);
// Rank 0's `bytes` to every rank (every rank passes a buffer of the same size).
void BroadcastBytes(const Context& ctx, std::span<uint8_t> bytes, double timeout, const std::string& what);

} // namespace paralens::app::mpi
