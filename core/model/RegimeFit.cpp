#include "model/RegimeFit.hpp"

#include "common/Statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace paralens::core {

namespace {

constexpr double kOverfitRatio = 2.0;  // held-out error above this times the fit's: fitting noise
constexpr double kTieTolerance = 1.02; // held-out errors within 2 % of the best: fewer segments win
constexpr double kNearlyAsWell = 1.25, kNearlyAsWellPoints = 1.0; // within a quarter and a percentage point

struct Line {
    double c0 = 0, c1 = 0;
    double sumAbs = 0; // sum of |relative error| over its rows
};

} // namespace

std::vector<FitSample> OneRowPerSize(const std::vector<FitSample>& samples)
{
    std::vector<FitSample> all;
    for (const FitSample& s : samples) // an empty collective is no regime (NCCL returns at once from a count of 0)
        if (s.seconds > 0 && std::isfinite(s.seconds) && s.bytes > 0) all.push_back(s);
    std::stable_sort(all.begin(), all.end(), [](const FitSample& a, const FitSample& b) { return a.bytes < b.bytes; });
    std::vector<std::pair<uint64_t, std::vector<double>>> sizes;
    for (const FitSample& s : all) {
        if (sizes.empty() || sizes.back().first != s.bytes) sizes.push_back({s.bytes, {}});
        sizes.back().second.push_back(s.seconds);
    }
    std::vector<FitSample> rows;
    const size_t runs = std::min(sizes.size(), kMaxRegimeSizes);
    for (size_t r = 0; r < runs; ++r) {
        const size_t first = r * sizes.size() / runs, last = (r + 1) * sizes.size() / runs; // [first, last)
        std::vector<double> bytes, seconds;
        for (size_t i = first; i < last; ++i) {
            bytes.push_back(static_cast<double>(sizes[i].first));
            seconds.push_back(Median(sizes[i].second));
        }
        rows.push_back({static_cast<uint64_t>(std::llround(Median(bytes))), Median(seconds), 0});
    }
    return rows;
}

namespace {

Line FitRows(const std::vector<FitSample>& rows, size_t first, size_t last)
{
    std::vector<FitSample> part(rows.begin() + static_cast<ptrdiff_t>(first), rows.begin() + static_cast<ptrdiff_t>(last) + 1);
    Line l;
    std::string note;
    FitRelativeLine(part, l.c0, l.c1, note);
    for (const FitSample& s : part) l.sumAbs += std::fabs(l.c0 + l.c1 * static_cast<double>(s.bytes) - s.seconds) / s.seconds;
    return l;
}

FitSegment MakeSegment(const std::vector<FitSample>& rows, size_t first, size_t last, const Line& l, Collective collective,
                       int ranks, Algorithm algorithm)
{
    FitSegment s;
    s.fromBytes = rows[first].bytes;
    s.toBytes = rows[last].bytes;
    s.rows = last - first + 1;
    s.latencySec = l.c0;
    s.secPerByte = l.c1;
    s.params = ParamsFromLine(collective, algorithm, ranks, l.c0, l.c1);
    const double factor = BusBwFactor(collective, ranks);
    s.busBwGBps = l.c1 > 0 && factor > 0 ? factor / l.c1 / 1e9 : 0;
    s.mapePct = l.sumAbs / static_cast<double>(s.rows) * 100.0;
    s.protocol = LikelyProtocol(s.fromBytes, s.toBytes);
    return s;
}

struct Model {
    Collective collective;
    int ranks;
    Algorithm algorithm;
};

} // namespace

// By dynamic programming: cost[k][j] is the least summed error of rows 0..j in k segments,
// from[k][j] the row where the last of them begins.
std::vector<std::vector<FitSegment>> BestSegmentations(const std::vector<FitSample>& rows, Collective collective, int ranks,
                                                       Algorithm algorithm)
{
    const Model m{collective, ranks, algorithm};
    const size_t n = rows.size();
    std::vector<std::vector<FitSegment>> out(kMaxRegimes);
    if (n == 0) return out;
    if (n < kMinRegimeRows) {
        out[0] = {MakeSegment(rows, 0, n - 1, FitRows(rows, 0, n - 1), m.collective, m.ranks, m.algorithm)};
        return out;
    }
    std::vector<std::vector<Line>> lines(n, std::vector<Line>(n)); // lines[i][j]: rows i..j
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + kMinRegimeRows - 1; j < n; ++j) lines[i][j] = FitRows(rows, i, j);
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const size_t maxK = std::min<size_t>(kMaxRegimes, n / kMinRegimeRows);
    std::vector<std::vector<double>> cost(maxK + 1, std::vector<double>(n, kInf));
    std::vector<std::vector<size_t>> from(maxK + 1, std::vector<size_t>(n, 0));
    for (size_t j = kMinRegimeRows - 1; j < n; ++j) cost[1][j] = lines[0][j].sumAbs;
    for (size_t k = 2; k <= maxK; ++k)
        for (size_t j = 0; j < n; ++j)
            for (size_t i = kMinRegimeRows * (k - 1); i + kMinRegimeRows <= j + 1; ++i)
                if (const double v = cost[k - 1][i - 1] + lines[i][j].sumAbs; v < cost[k][j]) {
                    cost[k][j] = v;
                    from[k][j] = i;
                }
    for (size_t k = 1; k <= maxK; ++k) {
        if (!std::isfinite(cost[k][n - 1])) continue;
        std::vector<FitSegment>& segments = out[k - 1];
        for (size_t kk = k, end = n; kk >= 1; --kk) {
            const size_t begin = kk == 1 ? 0 : from[kk][end - 1];
            segments.push_back(MakeSegment(rows, begin, end - 1, lines[begin][end - 1], m.collective, m.ranks, m.algorithm));
            end = begin;
        }
        std::reverse(segments.begin(), segments.end());
    }
    return out;
}

namespace {

double MeanError(const std::vector<FitSegment>& segments, const std::vector<FitSample>& rows)
{
    double sum = 0;
    for (const FitSample& r : rows) sum += std::fabs(PredictSegmented(segments, r.bytes) - r.seconds) / r.seconds;
    return rows.empty() ? 0 : sum / static_cast<double>(rows.size()) * 100.0;
}

// For each number of segments, the mean error of predicting the inner rows from segments fitted
// without them (see the header).
std::vector<double> HeldOutErrors(const std::vector<FitSample>& rows, const Model& m)
{
    return CrossValidatedErrors(rows, [&](const std::vector<FitSample>& train, const std::vector<FitSample>& test) {
        std::vector<double> out(kMaxRegimes, -1.0);
        const std::vector<std::vector<FitSegment>> fits = BestSegmentations(train, m.collective, m.ranks, m.algorithm);
        for (size_t k = 0; k < fits.size(); ++k)
            if (!fits[k].empty()) out[k] = MeanError(fits[k], test);
        return out;
    });
}

} // namespace

std::vector<double> CrossValidatedErrors(
    const std::vector<FitSample>& rows,
    const std::function<std::vector<double>(const std::vector<FitSample>& train, const std::vector<FitSample>& test)>& errors)
{
    std::vector<double> sum(kMaxRegimes, 0.0);
    if (rows.size() < 3) return sum;
    const size_t inner = rows.size() - 2, folds = std::min(inner, kRegimeFolds);
    for (size_t f = 0; f < folds; ++f) {
        std::vector<FitSample> train, test;
        for (size_t i = 0; i < rows.size(); ++i)
            (i > 0 && i + 1 < rows.size() && (i - 1) % folds == f ? test : train).push_back(rows[i]);
        const std::vector<double> e = errors(train, test);
        for (size_t k = 0; k < sum.size(); ++k) {
            if (k >= e.size() || e[k] < 0 || sum[k] < 0) sum[k] = -1;
            else sum[k] += e[k] * static_cast<double>(test.size());
        }
    }
    for (double& s : sum)
        if (s >= 0) s /= static_cast<double>(inner);
    return sum;
}

std::string LikelyProtocol(uint64_t fromBytes, uint64_t toBytes)
{
    constexpr uint64_t kLL = uint64_t{64} << 10, kLL128 = uint64_t{16} << 20;
    std::string out;
    auto add = [&](const char* p) { out += (out.empty() ? "" : "/") + std::string(p); };
    if (fromBytes < kLL) add("LL");
    if (fromBytes < kLL128 && toBytes >= kLL) add("LL128");
    if (toBytes >= kLL128) add("Simple");
    return out;
}

RegimeFit FitRegimes(const std::vector<FitSample>& samples, Collective collective, int ranks, Algorithm algorithm)
{
    const Model m{collective, ranks, algorithm};
    const std::vector<FitSample> rows = OneRowPerSize(samples);
    const std::vector<std::vector<FitSegment>> fits = BestSegmentations(rows, collective, ranks, algorithm);
    RegimeFit best;
    if (rows.empty()) return best;
    const std::vector<double> heldOut = HeldOutErrors(rows, m);
    // The best predictions, then the best of the numbers that do not fit noise, taken when
    // they predict nearly as well.
    size_t bestAny = 0, chosen = 0;
    for (size_t k = 1; k < fits.size(); ++k) {
        if (fits[k].empty() || heldOut[k] < 0) continue;
        if (heldOut[k] * kTieTolerance < heldOut[bestAny]) bestAny = k;
        const bool overfits = heldOut[k] > kOverfitRatio * MeanError(fits[k], rows);
        if (!overfits && heldOut[k] * kTieTolerance < heldOut[chosen]) chosen = k;
    }
    if (heldOut[chosen] > std::max(heldOut[bestAny] * kNearlyAsWell, heldOut[bestAny] + kNearlyAsWellPoints)) chosen = bestAny;
    best.segments = fits[chosen];
    best.fitMapePct = MeanError(best.segments, rows);
    best.heldOutMapePct = std::max(0.0, heldOut[chosen]);
    return best;
}

const FitSegment* SegmentFor(const std::vector<FitSegment>& segments, uint64_t bytes)
{
    if (segments.empty()) return nullptr;
    const double x = static_cast<double>(bytes);
    for (size_t i = 0; i + 1 < segments.size(); ++i) {
        const double switchAt = std::sqrt(std::max(1.0, static_cast<double>(segments[i].toBytes)) *
                                          std::max(1.0, static_cast<double>(segments[i + 1].fromBytes)));
        if (x < switchAt) return &segments[i];
    }
    return &segments.back();
}

double PredictSegmented(const std::vector<FitSegment>& segments, uint64_t bytes)
{
    for (size_t i = 0; i + 1 < segments.size(); ++i) {
        const FitSegment &a = segments[i], &b = segments[i + 1];
        if (bytes <= a.toBytes || bytes >= b.fromBytes) continue;
        const double t0 = a.PredictSeconds(a.toBytes), t1 = b.PredictSeconds(b.fromBytes);
        if (!(t0 > 0 && t1 > 0) || a.toBytes == 0) return std::min(a.PredictSeconds(bytes), b.PredictSeconds(bytes));
        const double f = std::log(static_cast<double>(bytes) / static_cast<double>(a.toBytes)) /
                         std::log(static_cast<double>(b.fromBytes) / static_cast<double>(a.toBytes));
        return t0 * std::pow(t1 / t0, f);
    }
    const FitSegment* s = SegmentFor(segments, bytes);
    return s ? s->PredictSeconds(bytes) : 0;
}

double RelativeNoise(const std::vector<std::pair<double, double>>& pairs)
{
    double sum = 0;
    size_t n = 0;
    for (const auto& [a, b] : pairs)
        if (a > 0 && b > 0) {
            sum += std::fabs(a - b) / ((a + b) / 2);
            ++n;
        }
    return n ? sum / static_cast<double>(n) : 0;
}

} // namespace paralens::core
