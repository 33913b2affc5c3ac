// Regimes of a measured collective. NCCL changes protocol (LL, LL128, Simple) and algorithm
// (ring, tree, NVLS, ...) with the message size, so a collective's time against its size is not
// one alpha-beta line but a few, with a jump or a bend between them. A segmented least-squares
// fit finds them from the data: the measurements, sorted by size, are cut into consecutive
// segments of at least kMinRegimeRows sizes, each fitted with its own line T = c0 + c1 n by the
// same relative, MAPE-minimising fit as FitAlphaBeta (Fit.hpp); for each number of segments
// (1 to kMaxRegimes) dynamic programming finds the cuts with the least summed error.
//
// How many segments is decided by cross-validation: the sizes inside the range are dealt into at
// most kRegimeFolds folds (every one its own fold when there are that few), each fold's sizes are
// predicted from segments fitted on all the others, and the number whose predictions miss least
// wins, fewer segments where they miss within 2 % of the best. A number whose segments fit their
// own rows more than twice as well as they predict rows they have not seen is likely fitting the
// rows' noise (a 3-row segment passes through its rows whatever they are): the best number that
// does not is taken instead when it predicts nearly as well (within a quarter and a percentage
// point of the best). The chosen number's prediction error is reported beside its fit error: it
// is what to expect of a size the log did not measure.
//
// Several measurements of one size (the two halves of a log, a trace's instances) count as one
// row, their median; more than kMaxRegimeSizes sizes are pooled into that many runs of
// neighbouring sizes, each the median of its sizes and of its times.
//
// Each segment's protocol is a guess from its sizes, NCCL's defaults on NVLink and InfiniBand:
// LL below about 64 KiB, LL128 up to about 16 MiB, Simple above; a segment across a boundary
// names every protocol its sizes span ("LL/LL128"). Between two segments' sizes the prediction
// goes from the first segment's time at its last size to the second's at its first, a straight
// line on log-log axes (the bend where NCCL changes protocol or adds channels); below the first
// segment and above the last, the nearest segment's line goes on.
//
// Pure functions; thread-safe.
#pragma once

#include "model/Fit.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace paralens::core {

inline constexpr size_t kMinRegimeRows = 3;
inline constexpr int kMaxRegimes = 6;
inline constexpr size_t kRegimeFolds = 16;
inline constexpr size_t kMaxRegimeSizes = 64;

struct RegimeFit {
    std::vector<FitSegment> segments; // by size; none without a row of more than 0 bytes
    double fitMapePct = 0;            // their error on their own rows
    double heldOutMapePct = 0;        // their error on rows held out of the fit (0: too few rows to hold one out)
};

// The regimes of `samples` (any order; times > 0; rows of 0 bytes left out: NCCL returns at once
// from an empty collective, which says nothing of its regimes), each segment's line mapped to
// alpha and beta through the formula of `collective` with `algorithm` on `ranks` ranks.
RegimeFit FitRegimes(const std::vector<FitSample>& samples, Collective collective, int ranks, Algorithm algorithm);

// One row per size (the median of its measurements; 0-byte rows left out), by size, pooled as
// described above where there are more than kMaxRegimeSizes sizes.
std::vector<FitSample> OneRowPerSize(const std::vector<FitSample>& samples);

// For each number of segments k = 1..kMaxRegimes (index k - 1), the least-error segments of `rows`
// (sorted, distinct sizes: OneRowPerSize); empty where the rows are too few for k.
std::vector<std::vector<FitSegment>> BestSegmentations(const std::vector<FitSample>& rows, Collective collective, int ranks,
                                                       Algorithm algorithm);

// Cross-validation over the sizes (see above): the inner rows of `rows` (sorted, distinct sizes)
// dealt into at most kRegimeFolds folds; `errors(train, test)` gives, for each number of lines
// k = 1..kMaxRegimes, the mean error (%) on `test` of lines fitted to `train`, or -1 where it
// cannot. Returns, for each k, the error over all inner rows (-1 where any fold could not; all
// 0 with fewer than three rows).
std::vector<double> CrossValidatedErrors(
    const std::vector<FitSample>& rows,
    const std::function<std::vector<double>(const std::vector<FitSample>& train, const std::vector<FitSample>& test)>& errors);

// The time the segments predict for `bytes` (see above for sizes between and beyond them);
// 0 when there are none.
double PredictSegmented(const std::vector<FitSegment>& segments, uint64_t bytes);

// The segment whose parameters stand for `bytes`: its own, or between two segments the nearer on
// log axes; null when there are none.
const FitSegment* SegmentFor(const std::vector<FitSegment>& segments, uint64_t bytes);

// NCCL's likely protocols for a range of sizes (see above): "LL", "LL128", "Simple", "LL/LL128", ...
std::string LikelyProtocol(uint64_t fromBytes, uint64_t toBytes);

// The mean relative disagreement of two measurements of the same sizes (nccl-tests'
// out-of-place and in-place halves): |a - b| / ((a + b) / 2), averaged over the pairs given.
double RelativeNoise(const std::vector<std::pair<double, double>>& pairs);

} // namespace paralens::core
