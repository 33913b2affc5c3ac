#include "model/ProtocolFit.hpp"

#include "model/RegimeFit.hpp"

#include <algorithm>
#include <cmath>

namespace paralens::core {

namespace {

constexpr double kFloorSec = 1e-9, kFloorSecPerByte = 1e-18; // lines stay positive, so they can be scaled
constexpr int kAssignRounds = 20, kPolishSweeps = 400;
constexpr double kTieTolerance = 1.02, kTiePoints = 0.1; // held-out errors within 2 % or 0.1 points of the best: fewer lines win

double EnvelopeError(const std::vector<ProtocolLine>& lines, const std::vector<FitSample>& rows)
{
    double sum = 0;
    for (const FitSample& r : rows) sum += std::fabs(PredictProtocols(lines, r.bytes) - r.seconds) / r.seconds;
    return rows.empty() ? 0 : sum / static_cast<double>(rows.size()) * 100.0;
}

size_t Lowest(const std::vector<ProtocolLine>& lines, uint64_t bytes)
{
    return static_cast<size_t>(LowestLine(lines, bytes) - lines.data());
}

void Clamp(ProtocolLine& l)
{
    l.latencySec = std::max(l.latencySec, kFloorSec);
    l.secPerByte = std::max(l.secPerByte, kFloorSecPerByte);
}

// Rows to the line lowest at their size, each line refitted on its rows, until nothing moves.
void Reassign(std::vector<ProtocolLine>& lines, const std::vector<FitSample>& rows)
{
    std::vector<size_t> owner(rows.size(), lines.size());
    for (int round = 0; round < kAssignRounds; ++round) {
        bool moved = false;
        for (size_t r = 0; r < rows.size(); ++r)
            if (const size_t o = Lowest(lines, rows[r].bytes); o != owner[r]) {
                owner[r] = o;
                moved = true;
            }
        if (!moved) return;
        for (size_t i = 0; i < lines.size(); ++i) {
            std::vector<FitSample> own;
            for (size_t r = 0; r < rows.size(); ++r)
                if (owner[r] == i) own.push_back(rows[r]);
            if (own.size() < 2) continue;
            std::string note;
            FitRelativeLine(own, lines[i].latencySec, lines[i].secPerByte, note);
            Clamp(lines[i]);
        }
    }
}

// Every parameter scaled up and down by a step that halves when no scaling helps.
void Polish(std::vector<ProtocolLine>& lines, const std::vector<FitSample>& rows)
{
    double err = EnvelopeError(lines, rows), step = 0.5;
    for (int sweep = 0; sweep < kPolishSweeps && step > 1e-4; ++sweep) {
        bool improved = false;
        for (ProtocolLine& l : lines)
            for (double* p : {&l.latencySec, &l.secPerByte})
                for (double f : {1 + step, 1 / (1 + step)}) {
                    const double old = *p;
                    *p = old * f;
                    if (const double e = EnvelopeError(lines, rows); e < err) {
                        err = e;
                        improved = true;
                    } else {
                        *p = old;
                    }
                }
        if (!improved) step /= 2;
    }
}

// The envelope of k lines fitted to `rows`, from the best k segments; empty when there are none.
std::vector<ProtocolLine> FitEnvelope(const std::vector<FitSample>& rows, const std::vector<FitSegment>& start)
{
    std::vector<ProtocolLine> lines;
    for (const FitSegment& s : start) {
        ProtocolLine l;
        l.latencySec = s.latencySec;
        l.secPerByte = s.secPerByte;
        Clamp(l);
        lines.push_back(l);
    }
    if (lines.empty()) return lines;
    Reassign(lines, rows);
    Polish(lines, rows);
    return lines;
}

// Lines lowest at no row dropped; the rest by the sizes they own, each named by its likely
// protocol (RegimeFit.hpp LikelyProtocol: a guess from the sizes, as for the regimes).
void Describe(std::vector<ProtocolLine>& lines, const std::vector<FitSample>& rows)
{
    for (ProtocolLine& l : lines) l.fromBytes = l.toBytes = 0;
    for (const FitSample& r : rows) {
        ProtocolLine& l = lines[Lowest(lines, r.bytes)];
        if (l.toBytes == 0) l.fromBytes = r.bytes;
        l.toBytes = r.bytes;
    }
    lines.erase(std::remove_if(lines.begin(), lines.end(), [](const ProtocolLine& l) { return l.toBytes == 0; }), lines.end());
    std::sort(lines.begin(), lines.end(), [](const ProtocolLine& a, const ProtocolLine& b) { return a.fromBytes < b.fromBytes; });
    for (ProtocolLine& l : lines) { // what stayed at the floors kept only for scaling is none
        if (l.latencySec <= 2 * kFloorSec) l.latencySec = 0;
        if (l.secPerByte <= 2 * kFloorSecPerByte) l.secPerByte = 0;
    }
    for (ProtocolLine& l : lines) l.protocol = LikelyProtocol(l.fromBytes, l.toBytes);
}

// For each number of lines, the mean error predicting the inner rows from envelopes fitted without
// them (the regimes' folds: RegimeFit.hpp).
std::vector<double> HeldOutErrors(const std::vector<FitSample>& rows)
{
    return CrossValidatedErrors(rows, [](const std::vector<FitSample>& train, const std::vector<FitSample>& test) {
        std::vector<double> out(kMaxRegimes, -1.0);
        const std::vector<std::vector<FitSegment>> starts = BestSegmentations(train, Collective::AllReduce, 2, Algorithm::Ring);
        for (size_t k = 0; k < starts.size(); ++k)
            if (!starts[k].empty()) out[k] = EnvelopeError(FitEnvelope(train, starts[k]), test);
        return out;
    });
}

} // namespace

const ProtocolLine* LowestLine(const std::vector<ProtocolLine>& lines, uint64_t bytes)
{
    const ProtocolLine* best = lines.empty() ? nullptr : &lines.front();
    for (const ProtocolLine& l : lines)
        if (l.PredictSeconds(bytes) < best->PredictSeconds(bytes)) best = &l;
    return best;
}

double PredictProtocols(const std::vector<ProtocolLine>& lines, uint64_t bytes)
{
    const ProtocolLine* l = LowestLine(lines, bytes);
    return l ? l->PredictSeconds(bytes) : 0;
}

double SwitchBytes(const ProtocolLine& a, const ProtocolLine& b)
{
    const double cross = (b.latencySec - a.latencySec) / (a.secPerByte - b.secPerByte);
    return cross > 0 && std::isfinite(cross) ? cross : 0;
}

ProtocolFit FitProtocols(const std::vector<FitSample>& samples)
{
    ProtocolFit out;
    const std::vector<FitSample> rows = OneRowPerSize(samples);
    if (rows.empty()) return out;
    const std::vector<std::vector<FitSegment>> starts = BestSegmentations(rows, Collective::AllReduce, 2, Algorithm::Ring);
    const std::vector<double> heldOut = HeldOutErrors(rows);
    size_t chosen = 0;
    for (size_t k = 1; k < starts.size(); ++k)
        if (!starts[k].empty() && heldOut[k] >= 0 && heldOut[k] * kTieTolerance + kTiePoints < heldOut[chosen]) chosen = k;
    out.lines = FitEnvelope(rows, starts[chosen]);
    Describe(out.lines, rows);
    out.fitMapePct = EnvelopeError(out.lines, rows);
    out.heldOutMapePct = std::max(0.0, heldOut[chosen]);
    return out;
}

} // namespace paralens::core
