// Nsight Systems reports, read from their SQLite export (`nsys export --type sqlite`): one GPU
// device per (process, CUDA device) with a track per stream holding its kernels, copies, sets and
// synchronisations; host threads as CPU devices with their NVTX ranges and marks (and, with
// ReadOptions::apiSpans, their CUDA runtime calls, each linked to the work it launched by an
// arrow). NCCL kernels are collectives (core/trace/NcclKernelName), tagged as the Kineto reader
// tags them; every other kernel names, in its detail, the NVTX range open on the thread that
// launched it. Times are the session's clock plus its absolute start
// (TARGET_INFO_SESSION_START_TIME), so the files of several ranks line up; the rank is read from
// the file name ("rank-1", as for Kineto traces) or the NVTX thread name "MPI Rank N".
//
// Tables and columns change between Nsight Systems versions: everything is read by column name;
// a missing optional table or column is absent, a missing required one (StringIds, a present
// activity table's start, end, deviceId, streamId) is named in the error. Reading is one pass per
// table through prepared statements.
#pragma once

#include "trace/TraceFile.hpp"

#include <string>
#include <string_view>

namespace paralens::core {

// The SQLite file header ("SQLite format 3\0").
bool LooksLikeSqlite(std::string_view prefix);

// Reads an Nsight Systems SQLite export at `path`; `origin` names it in errors. Throws Error for
// a file SQLite cannot open or read (truncated, not a database) and for a database that is not
// an Nsight Systems export, naming what is missing.
Trace ReadNsysSqlite(const std::string& path, const std::string& origin, const ReadOptions& options = {});

// A report (.nsys-rep, .qdrep) exported with the `nsys` found on PATH (or $PARALENS_NSYS) to a
// temporary SQLite file, read, and the temporary removed. Throws Error saying how to export it
// when there is no nsys.
Trace ReadNsysReport(const std::string& path, const ReadOptions& options = {});

} // namespace paralens::core
