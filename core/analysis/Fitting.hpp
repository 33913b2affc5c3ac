// From measurements to fits (model/Fit.hpp): the fit groups of an nccl-tests log or of the
// collective spans of a trace, and fit files on disk. Pure functions apart from the file I/O;
// thread-safe.
#pragma once

#include "model/Fit.hpp"
#include "trace/NcclTestsLog.hpp"
#include "trace/Trace.hpp"

#include <optional>
#include <string>
#include <vector>

namespace paralens::core {

enum class LogHalf { OutOfPlace, InPlace, Both };

// One group per block of the log (collective, ranks), each row one sample (both halves: two).
// The algorithm is `algorithm` when given and it applies to the collective, else ring (else the
// collective's only one: pairwise for alltoall, direct for sendrecv). Rows of 0 bytes are
// kept (they measure the latency alone).
std::vector<FitGroup> FitGroupsFromLog(const NcclTestsLog& log, LogHalf half, std::optional<Algorithm> algorithm = {});

// One group per (collective, ranks, algorithm) of the trace's collective spans with bytes. When
// collectives match across ranks (CollectiveMatch.hpp) each matched operation is one sample
// timed from the last rank's arrival to the last end (waiting excluded); otherwise each span is
// one sample. The algorithm is `algorithm` when given, else NCCL's (ring, tree) from the tag,
// else ring, else the collective's first. `source` names the trace in the groups. Collectives paralens
// does not model (unknown names) are left out.
std::vector<FitGroup> FitGroupsFromTrace(const Trace& trace, const std::string& source,
                                         std::optional<Algorithm> algorithm = {});

// Writes atomically; throws Error naming the path.
void SaveFitFile(const FitFile& file, const std::string& path);
// A fit file (paralens fit --out), or an nccl-tests log fitted as `paralens fit LOG` fits it (its
// out-of-place columns; every option that takes a fit file takes a log so). Throws Error naming the
// path and what is wrong.
FitFile LoadFitFile(const std::string& path);
// The fits `paralens fit` makes of one source's groups (each group's line and regimes, and their
// joint fit), `origin` the source. Throws Error naming it when there is no group to fit.
FitFile FitFileOfGroups(const std::vector<FitGroup>& groups, const std::string& origin);

} // namespace paralens::core
