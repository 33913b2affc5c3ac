// Least-squares alpha-beta(-gamma) fits of measured collective times, and fit files.
//
// For one collective, rank count p and algorithm, every formula of FORMULAS.md is a line in the
// size n: T(n) = A alpha + n (b beta + g gamma), with A, b, g the formula's coefficients
// (LectureSeconds with unit parameters). A fit finds the line T = c0 + c1 n (c0, c1 >= 0) by
// least squares on *relative* errors, weights 1/T_i^2, so the small sizes (which fix the latency)
// and the large ones (which fix the bandwidth) count alike; then iteratively reweighted (by
// 1/|relative error|) until it minimises the mean absolute percentage error, so one noisy row
// (nccl-tests' protocol switch-overs) does not pull the line as a plain least-squares fit. Then
// alpha = c0 / A and beta = c1 / b; gamma cannot be told from beta within one collective (both
// scale with n), so it stays folded into beta (gammaSeparated = false). FitJoint fits alpha, beta
// and gamma together over several collectives of one machine, which separates gamma when a
// reducing and a non-reducing collective are both measured.
//
// Besides the one line, FitAlphaBeta fits the regimes (RegimeFit.hpp): a line per size range
// where NCCL changes protocol or algorithm, with their own alpha and beta.
//
// Reported too: latencySec = c0 (an empty collective's time) and busBwGBps = f / c1 with f
// nccl-tests' busbw factor: the bus bandwidth large messages approach, comparable with the
// busbw column of nccl-tests. For a ring allreduce, allgather or reduce-scatter, 1/beta equals
// it; for other algorithms the model's link bandwidth and the bus bandwidth differ by design.
//
// Pure functions; thread-safe.
#pragma once

#include "model/Collective.hpp"
#include "model/CostModel.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

struct FitSample {
    uint64_t bytes = 0;  // n, nccl-tests' size
    double seconds = 0;  // measured time, > 0
    size_t line = 0;     // where it came from (log line, or 0)
};

// The measurements of one collective on one rank count, and the algorithm whose formula maps
// the fitted line to alpha and beta.
struct FitGroup {
    Collective collective = Collective::AllReduce;
    int ranks = 2;
    Algorithm algorithm = Algorithm::Ring;
    std::string dtype;  // informative
    std::string label;  // "out-of-place", "in-place", "matched collectives", ...
    std::string source; // file name
    std::vector<FitSample> samples;
    double noise = 0;   // the measurements' own relative disagreement (nccl-tests' two halves), 0: unknown
    int nodes = 0;      // the hosts the log's header names (0: not named)
};

// One regime of a segmented fit (RegimeFit.hpp): the measurements from fromBytes to toBytes and
// their own line.
struct FitSegment {
    uint64_t fromBytes = 0, toBytes = 0; // its first and last measured size
    size_t rows = 0;
    double latencySec = 0, secPerByte = 0; // T = latency + secPerByte n
    CostParams params;                   // alpha and beta through the algorithm's formula
    double busBwGBps = 0;                // the bus bandwidth its line approaches
    double mapePct = 0;                  // over its own rows
    std::string protocol;                // NCCL's likely protocol: "LL", "LL128" or "Simple"

    double PredictSeconds(uint64_t bytes) const { return latencySec + secPerByte * static_cast<double>(bytes); }
};

// One of NCCL's ways to move the bytes in a protocol envelope (ProtocolFit.hpp): its own line,
// lowest from fromBytes to toBytes of the measured sizes.
struct ProtocolLine {
    double latencySec = 0, secPerByte = 0; // T = latency + secPerByte n (both > 0)
    uint64_t fromBytes = 0, toBytes = 0;   // the measured sizes where it is the lowest
    std::string protocol;                  // NCCL's likely protocol from those sizes: "LL", "LL/LL128", ...
    double PredictSeconds(uint64_t bytes) const { return latencySec + secPerByte * static_cast<double>(bytes); }
};

struct FitRow {
    uint64_t bytes = 0;
    double measuredSec = 0, predictedSec = 0;
    double errorPct = 0; // (predicted - measured) / measured x 100
    size_t line = 0;
    double segmentedSec = 0, segmentedErrorPct = 0; // the same by the regimes' lines
    double protocolSec = 0;                         // by the protocol envelope (0 for 0 bytes)
};

struct FitResult {
    Collective collective = Collective::AllReduce;
    int ranks = 2;
    int nodes = 0; // the hosts its log named (0: not named)
    Algorithm algorithm = Algorithm::Ring;
    std::string dtype, label, source;
    CostParams params;           // alpha per message, beta per byte per link (gamma folded unless separated)
    bool gammaSeparated = false;
    double latencySec = 0;       // c0
    double secPerByte = 0;       // c1
    double busBwGBps = 0;        // busbw factor / c1 (0 when c1 = 0)
    double alphaCoefficient = 0; // A: messages in the formula's critical path
    double betaCoefficient = 0;  // b: bytes on the critical path per byte of n
    std::vector<FitRow> rows;
    double mapePct = 0;          // mean absolute percentage error over the rows
    double maxErrorPct = 0;      // the largest absolute one
    std::string note;            // why a parameter could not be fitted, when one could not
    // The regimes (RegimeFit.hpp): one segment per size range with its own line, and their errors.
    std::vector<FitSegment> segments;
    double segmentedMapePct = 0, segmentedMaxErrorPct = 0; // over the rows of more than 0 bytes
    double noisePct = 0;         // the measurements' own disagreement (0: unknown)
    double heldOutMapePct = 0;   // the regimes' error on sizes held out of their fit (0: too few rows)
    // NCCL's protocols as a mechanism (ProtocolFit.hpp): the lower envelope of a few lines.
    std::vector<ProtocolLine> protocols;
    double protocolMapePct = 0, protocolHeldOutMapePct = 0;

    double PredictSeconds(uint64_t bytes) const { return latencySec + secPerByte * static_cast<double>(bytes); }
};

// Throws Error when the group has no sample with a positive time.
FitResult FitAlphaBeta(const FitGroup& group);

// The relative, MAPE-minimising line T = c0 + c1 n of `samples` (times > 0; see above); `note`
// says what could not be fitted, when something could not.
void FitRelativeLine(const std::vector<FitSample>& samples, double& c0, double& c1, std::string& note);
// Alpha and beta of a line T = c0 + c1 n through the formula of `collective` with `algorithm` on
// `ranks` ranks (0 where the formula has no such term).
CostParams ParamsFromLine(Collective collective, Algorithm algorithm, int ranks, double c0, double c1);

struct JointFit {
    CostParams params;
    bool gammaSeparated = false;
    double mapePct = 0;
    size_t samples = 0;
    std::vector<std::string> groups; // "allreduce/8/ring", ...
};

// One alpha, beta, gamma for several groups (same machine); nullopt with fewer than two groups.
std::optional<JointFit> FitJoint(const std::vector<FitGroup>& groups);

// A fit file: what `paralens fit --out` writes and `simulate --model`, the Model view read.
struct FitFile {
    std::vector<std::string> sources;
    std::vector<FitResult> fits;
    std::optional<JointFit> joint;
};

std::string FitFileToJson(const FitFile& file);
// Throws Error naming `origin` and what is wrong.
FitFile ParseFitFile(std::string_view json, const std::string& origin);

// The fit of `collective` on `ranks` ranks, else of the same collective with the nearest rank
// count; nullptr when the file has none of that collective.
const FitResult* ChooseFit(const FitFile& file, Collective collective, int ranks);

// The parameters to model `collective` on `ranks` ranks with: those of ChooseFit, else the joint
// fit's, else the first fit's. `why` says which were chosen. nullopt when the file holds none.
std::optional<CostParams> ModelFromFit(const FitFile& file, Collective collective, int ranks, std::string* why = nullptr);
// The same for a size: when the chosen fit has a protocol envelope, its line lowest at `bytes`
// through the fit's formula (ProtocolFit.hpp: what a size the log did not measure is best
// predicted by); else, with regimes, the parameters of the one for `bytes` (SegmentFor); a fit
// with neither (a file of an older paralens) gives its one line.
std::optional<CostParams> ModelFromFit(const FitFile& file, Collective collective, int ranks, uint64_t bytes, std::string* why);

} // namespace paralens::core
