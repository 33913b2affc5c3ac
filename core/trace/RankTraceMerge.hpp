// Traces written one per rank by a multi-process run (`paralens run --backend mpi`), merged into
// one Trace with a row per rank: each rank's clock is mapped to rank 0's with the linear model
// its metadata holds (extra: clockStartLocalNs/OffsetNs/BoundNs, clockEnd...), and every message
// becomes an arrow by pairing the sender's span with the receiver's (their details name the peer
// and the iteration, in the form MessageDetail writes).
#pragma once

#include "trace/Trace.hpp"

#include <optional>
#include <string>
#include <vector>

namespace paralens::core {

// The detail of a message span: "iteration 3, to rank 5" (send) or "iteration 3, from rank 2".
std::string MessageDetail(int iteration, bool sending, int peer);

struct MessageEnds {
    int iteration = 0;
    bool sending = false;
    int peer = 0;
};
std::optional<MessageEnds> ParseMessageDetail(std::string_view detail);

struct RankMergeInfo {
    int64_t clockBoundNs = 0; // the largest alignment error bound of the ranks
    size_t pairedMessages = 0;
    size_t unpairedMessages = 0;
};

// Throws Error when a part lacks the clock metadata (the file names `origins[i]`).
Trace MergeRankTraces(std::vector<Trace>&& ranks, const std::vector<std::string>& origins, RankMergeInfo* info = nullptr);

} // namespace paralens::core
