// NCCL's protocol and chunking choices as a mechanism (issue "Predict NCCL at scale", between
// sizes). For one collective on one machine NCCL has a few ways to move n bytes, each a line
// T = a + b n: LL (least latency, a quarter of the bandwidth: flags in every 8 bytes), LL128, and
// Simple with chunks that grow with the message (then more bandwidth, more to fill the pipeline)
// until they reach their largest. Its tuner picks the fastest it predicts for each size, so a
// measured curve is the lower envelope of those lines: T(n) = min_i (a_i + b_i n), and the sizes
// where NCCL switches are where two lines cross, not cut points of their own.
//
// FitProtocols fits that envelope by the same relative error as FitAlphaBeta (Fit.hpp): starting
// from each number of lines' best segments (RegimeFit.hpp), rows are assigned to the line lowest
// at their size and each line is refitted on its rows until the assignment settles, then the lines
// are polished together by a pattern search on the envelope's mean relative error. How many lines
// is decided as the regimes' number is: by cross-validation over the sizes, fewer lines where they
// predict within 2 % (or 0.1 percentage points) as well. Each line's protocol is a guess from the
// sizes where it is the lowest, as the regimes' are (RegimeFit.hpp LikelyProtocol).
//
// Pure functions; thread-safe.
#pragma once

#include "model/Fit.hpp" // ProtocolLine

#include <vector>

namespace paralens::core {

struct ProtocolFit {
    std::vector<ProtocolLine> lines; // by the sizes where each is the lowest
    double fitMapePct = 0;           // the envelope's error on its rows
    double heldOutMapePct = 0;       // its error on sizes held out of the fit (0: too few rows)
};

// The envelope of `samples` (any order; times > 0; 0-byte rows left out), at most kMaxRegimes lines.
ProtocolFit FitProtocols(const std::vector<FitSample>& samples);

// min over the lines at `bytes`; 0 without lines.
double PredictProtocols(const std::vector<ProtocolLine>& lines, uint64_t bytes);

// The line lowest at `bytes` (the first of equals); null without lines.
const ProtocolLine* LowestLine(const std::vector<ProtocolLine>& lines, uint64_t bytes);

// Where NCCL switches from `a` to `b`: the size at which their lines cross; 0 when they do not
// cross at a positive size.
double SwitchBytes(const ProtocolLine& a, const ProtocolLine& b);

} // namespace paralens::core
