// Traces written one per rank by a multi-process run (`paralens run --backend mpi`), merged into
// one Trace with a row per rank: each rank's clock is mapped to rank 0's with the linear model
// its metadata holds (extra: clockStartLocalNs/OffsetNs/BoundNs, clockEnd...), and every message
// becomes an arrow by pairing the sender's span with the receiver's (their details name the peer
// and the iteration, in the form MessageDetail writes).
#pragma once

#include "trace/Trace.hpp"
#include "trace/TraceMerge.hpp"

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

// A rank's clock against rank 0's, measured at the start and (optionally) the end of its run:
// its local time, the offset (rank minus rank 0) and the offset's error bound, in ns.
struct RankClock {
    int64_t startLocalNs = 0, startOffsetNs = 0, startBoundNs = 0;
    bool haveEnd = false;
    int64_t endLocalNs = 0, endOffsetNs = 0, endBoundNs = 0;
};
// The map from the rank's clock to rank 0's: offset(t) = o0 + (o1 - o0) (t - t0) / (t1 - t0),
// t -> t - offset(t) (the offset alone without an end sample).
ClockMap ToRankZero(const RankClock& clock);

// The arrow of one message from its two spans, both on one clock (devices and tracks left unset).
Flow MessageFlow(const Span& send, const Span& recv);

struct RankMergeInfo {
    int64_t clockBoundNs = 0; // the largest alignment error bound of the ranks
    size_t pairedMessages = 0;
    size_t unpairedMessages = 0;
};

// Throws Error when a part lacks the clock metadata (the file names `origins[i]`).
Trace MergeRankTraces(std::vector<Trace>&& ranks, const std::vector<std::string>& origins, RankMergeInfo* info = nullptr);

} // namespace paralens::core
