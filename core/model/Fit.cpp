#include "model/Fit.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/ProtocolFit.hpp"
#include "model/RegimeFit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

namespace paralens::core {

namespace {

struct Coefficients {
    double a = 0, b = 0, g = 0; // T = a alpha + n (b beta + g gamma)
};

Coefficients CoefficientsOf(Collective c, Algorithm al, int p)
{
    Coefficients k;
    k.a = LectureSeconds(c, al, p, 0.0, {1, 0, 0});
    k.b = LectureSeconds(c, al, p, 1.0, {0, 1, 0});
    k.g = LectureSeconds(c, al, p, 1.0, {0, 0, 1});
    return k;
}

// Weighted least squares of T = c0 + c1 n with c0, c1 >= 0.
void FitLineWeighted(const std::vector<FitSample>& samples, const std::vector<double>& w, double& c0, double& c1,
                     std::string& note)
{
    double sw = 0, sn = 0, st = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        sw += w[i];
        sn += w[i] * static_cast<double>(samples[i].bytes);
        st += w[i] * samples[i].seconds;
    }
    const double nMean = sn / sw, tMean = st / sw;
    double snn = 0, snt = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        double dn = static_cast<double>(samples[i].bytes) - nMean;
        snn += w[i] * dn * dn;
        snt += w[i] * dn * (samples[i].seconds - tMean);
    }
    note.clear();
    if (snn <= 0) { // one size only
        c0 = nMean > 0 ? 0 : tMean;
        c1 = nMean > 0 ? tMean / nMean : 0;
        note = "all samples have the same size: alpha and beta cannot be told apart (" +
               std::string(nMean > 0 ? "fitted with alpha = 0" : "only alpha fitted") + ")";
        return;
    }
    c1 = snt / snn;
    c0 = tMean - c1 * nMean;
    if (c1 < 0) {
        c1 = 0;
        c0 = tMean;
        note = "the time does not grow with the size: bandwidth not fitted";
    } else if (c0 < 0) {
        double num = 0, den = 0; // c0 = 0: least squares through the origin
        for (size_t i = 0; i < samples.size(); ++i) {
            double n = static_cast<double>(samples[i].bytes);
            num += w[i] * n * samples[i].seconds;
            den += w[i] * n * n;
        }
        c0 = 0;
        c1 = den > 0 ? num / den : 0;
        note = "the latency fitted below zero: fitted with alpha = 0";
    }
}

// Relative errors weighted alike (weights 1/T^2), then iteratively reweighted by 1/|relative
// error| so that the fit minimises the mean absolute percentage error: one noisy row cannot pull
// the line as it would a least-squares one.
void FitLine(const std::vector<FitSample>& samples, double& c0, double& c1, std::string& note)
{
    std::vector<double> base(samples.size()), w(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) base[i] = w[i] = 1.0 / (samples[i].seconds * samples[i].seconds);
    FitLineWeighted(samples, w, c0, c1, note);
    constexpr double kFloor = 1e-4; // relative errors below 0.01 % count as 0.01 %
    for (int iteration = 0; iteration < 100; ++iteration) {
        for (size_t i = 0; i < samples.size(); ++i) {
            double e = std::fabs(c0 + c1 * static_cast<double>(samples[i].bytes) - samples[i].seconds) / samples[i].seconds;
            w[i] = base[i] / std::max(e, kFloor);
        }
        double old0 = c0, old1 = c1;
        FitLineWeighted(samples, w, c0, c1, note);
        if (std::fabs(c0 - old0) <= 1e-12 * std::max(std::fabs(c0), 1e-30) + 1e-18 &&
            std::fabs(c1 - old1) <= 1e-12 * std::max(std::fabs(c1), 1e-30))
            break;
    }
}

// Every row with the line's prediction; the errors' mean and maximum over the rows the line was
// fitted to (rows of 0 bytes are shown, not fitted, unless there is nothing else).
void FillRows(FitResult& r, const std::vector<FitSample>& samples, bool zeroFitted)
{
    double sum = 0;
    size_t n = 0;
    for (const FitSample& s : samples) {
        FitRow row;
        row.bytes = s.bytes;
        row.line = s.line;
        row.measuredSec = s.seconds;
        row.predictedSec = r.PredictSeconds(s.bytes);
        row.errorPct = (row.predictedSec - s.seconds) / s.seconds * 100.0;
        if (s.bytes > 0 || zeroFitted) {
            sum += std::fabs(row.errorPct);
            ++n;
            r.maxErrorPct = std::max(r.maxErrorPct, std::fabs(row.errorPct));
        }
        r.rows.push_back(row);
    }
    r.mapePct = n == 0 ? 0 : sum / static_cast<double>(n);
}

// The regimes' prediction of each row; rows of 0 bytes are no regime's (segmentedSec stays 0)
// and are left out of their errors.
void FillSegmentedRows(FitResult& r)
{
    double sum = 0;
    size_t n = 0;
    r.segmentedMaxErrorPct = 0;
    for (FitRow& row : r.rows) {
        if (row.bytes == 0 || r.segments.empty()) continue;
        row.segmentedSec = PredictSegmented(r.segments, row.bytes);
        row.segmentedErrorPct = (row.segmentedSec - row.measuredSec) / row.measuredSec * 100.0;
        sum += std::fabs(row.segmentedErrorPct);
        ++n;
        r.segmentedMaxErrorPct = std::max(r.segmentedMaxErrorPct, std::fabs(row.segmentedErrorPct));
    }
    r.segmentedMapePct = n ? sum / static_cast<double>(n) : 0;
}

// Says where one line misses the measurements by more than 20 % (NCCL switches protocols and
// chunk sizes between small and large messages, so the curve bends there).
void NoteMisfit(FitResult& r)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t n = 0;
    for (const FitRow& row : r.rows)
        if (row.bytes > 0 && std::fabs(row.errorPct) > 20.0) {
            lo = std::min(lo, row.bytes);
            hi = std::max(hi, row.bytes);
            ++n;
        }
    if (n == 0) return;
    const std::string worst = std::to_string(static_cast<int>(std::lround(r.maxErrorPct)));
    std::string text = n == 1 ? "the row of " + std::to_string(lo) + " bytes is " + worst +
                                    " % off the line (an outlier: a noisy measurement or a protocol switch)"
                              : std::to_string(n) + " of " + std::to_string(r.rows.size()) + " rows, between " +
                                    std::to_string(lo) + " and " + std::to_string(hi) +
                                    " bytes, are more than 20 % off the line (up to " + worst +
                                    " %): the measured curve bends there (the library switches protocol or chunking, or caches stop helping), which "
                                    "one alpha-beta line cannot follow";
    r.note += (r.note.empty() ? "" : "; ") + text;
}

std::string GroupName(const FitGroup& g)
{
    return std::string(Name(g.collective)) + "/" + std::to_string(g.ranks) + "/" + std::string(Name(g.algorithm));
}

// Solves the k x k system m x = v (k <= 3) by Gaussian elimination; false when singular.
bool Solve(std::array<std::array<double, 3>, 3> m, std::array<double, 3> v, int k, std::array<double, 3>& x)
{
    for (int c = 0; c < k; ++c) {
        int pivot = c;
        for (int r = c + 1; r < k; ++r)
            if (std::fabs(m[r][c]) > std::fabs(m[pivot][c])) pivot = r;
        if (std::fabs(m[pivot][c]) < 1e-300) return false;
        std::swap(m[c], m[pivot]);
        std::swap(v[c], v[pivot]);
        for (int r = c + 1; r < k; ++r) {
            double f = m[r][c] / m[c][c];
            for (int j = c; j < k; ++j) m[r][j] -= f * m[c][j];
            v[r] -= f * v[c];
        }
    }
    for (int c = k - 1; c >= 0; --c) {
        double s = v[c];
        for (int j = c + 1; j < k; ++j) s -= m[c][j] * x[j];
        x[c] = s / m[c][c];
    }
    return true;
}

} // namespace

void FitRelativeLine(const std::vector<FitSample>& samples, double& c0, double& c1, std::string& note) { FitLine(samples, c0, c1, note); }

CostParams ParamsFromLine(Collective collective, Algorithm algorithm, int ranks, double c0, double c1)
{
    const Coefficients k = CoefficientsOf(collective, algorithm, ranks);
    return {k.a > 0 ? c0 / k.a : 0, k.b > 0 ? c1 / k.b : 0, 0};
}

FitResult FitAlphaBeta(const FitGroup& group)
{
    std::vector<FitSample> samples;
    for (const FitSample& s : group.samples)
        if (s.seconds > 0 && std::isfinite(s.seconds)) samples.push_back(s);
    if (samples.empty())
        throw Error(group.source + ": no measurement of " + std::string(Name(group.collective)) + " with a positive time to fit");
    FitResult r;
    r.collective = group.collective;
    r.ranks = group.ranks;
    r.nodes = group.nodes;
    r.algorithm = group.algorithm;
    r.dtype = group.dtype;
    r.label = group.label;
    r.source = group.source;
    // Rows of 0 bytes are no-ops in NCCL (about a microsecond of launch whatever the collective):
    // shown with the line's prediction, but left out of the fit and its errors.
    std::vector<FitSample> sized;
    for (const FitSample& s : samples)
        if (s.bytes > 0) sized.push_back(s);
    const bool zeroFitted = sized.empty();
    FitLine(zeroFitted ? samples : sized, r.latencySec, r.secPerByte, r.note);
    const double factor = BusBwFactor(group.collective, group.ranks);
    r.busBwGBps = r.secPerByte > 0 && factor > 0 ? factor / r.secPerByte / 1e9 : 0;
    Coefficients k = CoefficientsOf(group.collective, group.algorithm, group.ranks);
    r.alphaCoefficient = k.a;
    r.betaCoefficient = k.b;
    r.params.alphaSec = k.a > 0 ? r.latencySec / k.a : 0;
    r.params.betaSecPerByte = k.b > 0 ? r.secPerByte / k.b : 0;
    if (k.a <= 0 || k.b <= 0) r.note += std::string(r.note.empty() ? "" : "; ") + "the model has no message on one rank";
    FillRows(r, samples, zeroFitted);
    NoteMisfit(r);
    if (const size_t zero = samples.size() - sized.size(); zero > 0 && !zeroFitted)
        r.note += std::string(r.note.empty() ? "" : "; ") + std::to_string(zero) + (zero == 1 ? " row" : " rows") +
                  " of 0 bytes shown, not fitted (NCCL does nothing for them but launch)";
    r.noisePct = group.noise * 100;
    RegimeFit regimes = FitRegimes(samples, group.collective, group.ranks, group.algorithm);
    r.segments = std::move(regimes.segments);
    r.heldOutMapePct = regimes.heldOutMapePct;
    FillSegmentedRows(r);
    ProtocolFit protocols = FitProtocols(samples);
    r.protocols = std::move(protocols.lines);
    r.protocolMapePct = protocols.fitMapePct;
    r.protocolHeldOutMapePct = protocols.heldOutMapePct;
    for (FitRow& row : r.rows)
        if (row.bytes > 0) row.protocolSec = PredictProtocols(r.protocols, row.bytes);
    return r;
}

namespace {

struct JointRow {
    std::array<double, 3> x; // coefficients of alpha, beta, gamma
    double t;                // measured seconds
};

// Non-negative weighted (1/t^2) least squares over the first k parameters, by trying every set
// of free parameters (at most 7) and keeping the feasible one with the smallest error.
std::array<double, 3> SolveNonNegative(const std::vector<JointRow>& rows, int k)
{
    double best = std::numeric_limits<double>::max();
    std::array<double, 3> bestX{0, 0, 0};
    for (int mask = 1; mask < (1 << k); ++mask) {
        std::array<int, 3> idx{};
        int m = 0;
        for (int j = 0; j < k; ++j)
            if (mask & (1 << j)) idx[m++] = j;
        std::array<std::array<double, 3>, 3> a{};
        std::array<double, 3> v{}, x{};
        for (const JointRow& r : rows) {
            double w = 1.0 / (r.t * r.t);
            for (int i = 0; i < m; ++i) {
                v[i] += w * r.x[idx[i]] * r.t;
                for (int j = 0; j < m; ++j) a[i][j] += w * r.x[idx[i]] * r.x[idx[j]];
            }
        }
        if (!Solve(a, v, m, x) || std::any_of(x.begin(), x.begin() + m, [](double q) { return q < 0; })) continue;
        std::array<double, 3> full{0, 0, 0};
        for (int i = 0; i < m; ++i) full[idx[i]] = x[i];
        double err = 0;
        for (const JointRow& r : rows) {
            double p = full[0] * r.x[0] + full[1] * r.x[1] + full[2] * r.x[2];
            err += (p - r.t) * (p - r.t) / (r.t * r.t);
        }
        if (err < best) {
            best = err;
            bestX = full;
        }
    }
    return bestX;
}

} // namespace

std::optional<JointFit> FitJoint(const std::vector<FitGroup>& groups)
{
    if (groups.size() < 2) return std::nullopt;
    std::vector<JointRow> rows; // T = A alpha + (b n) beta + (g n) gamma
    std::vector<std::string> names;
    double ratioMin = std::numeric_limits<double>::max(), ratioMax = std::numeric_limits<double>::lowest();
    for (const FitGroup& g : groups) {
        Coefficients k = CoefficientsOf(g.collective, g.algorithm, g.ranks);
        if (k.a <= 0 || k.b <= 0) continue;
        names.push_back(GroupName(g));
        ratioMin = std::min(ratioMin, k.g / k.b);
        ratioMax = std::max(ratioMax, k.g / k.b);
        for (const FitSample& s : g.samples)
            if (s.seconds > 0) rows.push_back({{k.a, k.b * static_cast<double>(s.bytes), k.g * static_cast<double>(s.bytes)}, s.seconds});
    }
    if (names.size() < 2 || rows.size() < 3) return std::nullopt;
    // Gamma separates only when the groups reduce in different proportions to what they send;
    // otherwise only alpha and beta are fitted, and beta includes that share of gamma.
    const bool separable = ratioMax - ratioMin > 1e-9;
    std::array<double, 3> x = SolveNonNegative(rows, separable ? 3 : 2);
    JointFit fit;
    fit.groups = names;
    fit.samples = rows.size();
    fit.params = {x[0], x[1], separable ? x[2] : 0.0};
    fit.gammaSeparated = separable;
    double sum = 0;
    for (const JointRow& r : rows) sum += std::fabs(x[0] * r.x[0] + x[1] * r.x[1] + x[2] * r.x[2] - r.t) / r.t * 100.0;
    fit.mapePct = sum / static_cast<double>(rows.size());
    return fit;
}

namespace {

using Json = nlohmann::json;

Json ToJson(const FitResult& r)
{
    Json rows = Json::array();
    for (const FitRow& row : r.rows)
        rows.push_back({{"bytes", row.bytes}, {"measuredUs", row.measuredSec * 1e6}, {"predictedUs", row.predictedSec * 1e6},
                        {"errorPct", row.errorPct}, {"line", row.line}, {"segmentedUs", row.segmentedSec * 1e6},
                        {"segmentedErrorPct", row.segmentedErrorPct}, {"protocolUs", row.protocolSec * 1e6}});
    Json segments = Json::array();
    for (const FitSegment& s : r.segments)
        segments.push_back({{"fromBytes", s.fromBytes}, {"toBytes", s.toBytes}, {"rows", s.rows}, {"latencyUs", s.latencySec * 1e6},
                            {"secondsPerByte", s.secPerByte}, {"alphaUs", s.params.alphaSec * 1e6},
                            {"bandwidthGBps", s.params.betaSecPerByte > 0 ? 1.0 / s.params.betaSecPerByte / 1e9 : 0.0},
                            {"busBandwidthGBps", s.busBwGBps}, {"mapePct", s.mapePct}, {"protocol", s.protocol}});
    Json protocols = Json::array();
    for (const ProtocolLine& l : r.protocols)
        protocols.push_back({{"protocol", l.protocol},
                             {"latencyUs", l.latencySec * 1e6},
                             {"secondsPerByte", l.secPerByte},
                             {"busBandwidthGBps", l.secPerByte > 0 ? BusBwFactor(r.collective, r.ranks) / l.secPerByte / 1e9 : 0.0},
                             {"fromBytes", l.fromBytes},
                             {"toBytes", l.toBytes}});
    Json j{{"collective", Name(r.collective)},
           {"ranks", r.ranks},
           {"nodes", r.nodes},
           {"algorithm", Name(r.algorithm)},
           {"dtype", r.dtype},
           {"label", r.label},
           {"source", r.source},
           {"alphaUs", r.params.alphaSec * 1e6},
           {"bandwidthGBps", r.params.betaSecPerByte > 0 ? 1.0 / r.params.betaSecPerByte / 1e9 : 0.0},
           {"gammaGBps", r.params.gammaSecPerByte > 0 ? 1.0 / r.params.gammaSecPerByte / 1e9 : 0.0},
           {"gammaSeparated", r.gammaSeparated},
           {"latencyUs", r.latencySec * 1e6},
           {"secondsPerByte", r.secPerByte},
           {"busBandwidthGBps", r.busBwGBps},
           {"alphaCoefficient", r.alphaCoefficient},
           {"betaCoefficient", r.betaCoefficient},
           {"mapePct", r.mapePct},
           {"maxErrorPct", r.maxErrorPct},
           {"segments", segments},
           {"segmentedMapePct", r.segmentedMapePct},
           {"segmentedMaxErrorPct", r.segmentedMaxErrorPct},
           {"noisePct", r.noisePct},
           {"heldOutMapePct", r.heldOutMapePct},
           {"protocols", protocols},
           {"protocolMapePct", r.protocolMapePct},
           {"protocolHeldOutMapePct", r.protocolHeldOutMapePct},
           {"rows", rows}};
    if (!r.note.empty()) j["note"] = r.note;
    return j;
}

double GBpsToSecPerByte(double gbps) { return gbps > 0 ? 1.0 / (gbps * 1e9) : 0.0; }

template <class T> T Field(const Json& j, const char* key, const std::string& where)
{
    auto it = j.find(key);
    if (it == j.end()) throw Error(where + ": missing \"" + key + "\"");
    try {
        return it->get<T>();
    } catch (const Json::exception&) {
        throw Error(where + ": \"" + key + "\" has the wrong type");
    }
}

FitSegment SegmentFromJson(const Json& j, const std::string& where)
{
    if (!j.is_object()) throw Error(where + ": expected an object");
    FitSegment s;
    s.fromBytes = Field<uint64_t>(j, "fromBytes", where);
    s.toBytes = Field<uint64_t>(j, "toBytes", where);
    if (s.toBytes < s.fromBytes) throw Error(where + ": \"toBytes\" is below \"fromBytes\"");
    s.rows = j.value("rows", size_t{0});
    s.latencySec = Field<double>(j, "latencyUs", where) * 1e-6;
    s.secPerByte = Field<double>(j, "secondsPerByte", where);
    if (!(s.latencySec >= 0) || !(s.secPerByte >= 0)) throw Error(where + ": \"latencyUs\" and \"secondsPerByte\" must be >= 0");
    s.params.alphaSec = j.value("alphaUs", 0.0) * 1e-6;
    s.params.betaSecPerByte = GBpsToSecPerByte(j.value("bandwidthGBps", 0.0));
    s.busBwGBps = j.value("busBandwidthGBps", 0.0);
    s.mapePct = j.value("mapePct", 0.0);
    s.protocol = j.value("protocol", "");
    return s;
}

FitResult FromJson(const Json& j, const std::string& where)
{
    if (!j.is_object()) throw Error(where + ": expected an object");
    FitResult r;
    std::string collective = Field<std::string>(j, "collective", where);
    auto c = ParseCollective(collective);
    if (!c) throw Error(where + ": unknown collective '" + collective + "'");
    r.collective = *c;
    r.ranks = Field<int>(j, "ranks", where);
    if (r.ranks < 1) throw Error(where + ": \"ranks\" must be at least 1");
    std::string algorithm = Field<std::string>(j, "algorithm", where);
    auto a = ParseAlgorithm(algorithm);
    if (!a) throw Error(where + ": unknown algorithm '" + algorithm + "'");
    r.algorithm = *a;
    r.params.alphaSec = Field<double>(j, "alphaUs", where) * 1e-6;
    r.params.betaSecPerByte = GBpsToSecPerByte(Field<double>(j, "bandwidthGBps", where));
    r.params.gammaSecPerByte = GBpsToSecPerByte(j.value("gammaGBps", 0.0));
    if (r.params.alphaSec < 0 || !std::isfinite(r.params.alphaSec)) throw Error(where + ": \"alphaUs\" must be >= 0");
    r.gammaSeparated = j.value("gammaSeparated", false);
    r.latencySec = j.value("latencyUs", 0.0) * 1e-6;
    r.secPerByte = j.value("secondsPerByte", 0.0);
    r.busBwGBps = j.value("busBandwidthGBps", 0.0);
    r.alphaCoefficient = j.value("alphaCoefficient", 0.0);
    r.betaCoefficient = j.value("betaCoefficient", 0.0);
    r.mapePct = j.value("mapePct", 0.0);
    r.maxErrorPct = j.value("maxErrorPct", 0.0);
    r.dtype = j.value("dtype", "");
    r.label = j.value("label", "");
    r.source = j.value("source", "");
    r.note = j.value("note", "");
    r.segmentedMapePct = j.value("segmentedMapePct", 0.0);
    r.segmentedMaxErrorPct = j.value("segmentedMaxErrorPct", 0.0);
    r.noisePct = j.value("noisePct", 0.0);
    r.nodes = j.value("nodes", 0);
    if (auto lines = j.find("protocols"); lines != j.end() && lines->is_array())
        for (const Json& l : *lines) {
            ProtocolLine line;
            line.latencySec = l.value("latencyUs", 0.0) * 1e-6;
            line.secPerByte = l.value("secondsPerByte", 0.0);
            line.fromBytes = l.value("fromBytes", uint64_t{0});
            line.toBytes = l.value("toBytes", uint64_t{0});
            line.protocol = l.value("protocol", "");
            r.protocols.push_back(line);
        }
    r.protocolMapePct = j.value("protocolMapePct", 0.0);
    r.protocolHeldOutMapePct = j.value("protocolHeldOutMapePct", 0.0);
    r.heldOutMapePct = j.value("heldOutMapePct", 0.0);
    if (auto segments = j.find("segments"); segments != j.end() && segments->is_array())
        for (const Json& s : *segments) r.segments.push_back(SegmentFromJson(s, where + ": segments[" + std::to_string(r.segments.size()) + "]"));
    if (auto rows = j.find("rows"); rows != j.end() && rows->is_array())
        for (const Json& row : *rows)
            if (row.is_object())
                r.rows.push_back({row.value("bytes", uint64_t{0}), row.value("measuredUs", 0.0) * 1e-6,
                                  row.value("predictedUs", 0.0) * 1e-6, row.value("errorPct", 0.0), row.value("line", size_t{0})});
    return r;
}

} // namespace

std::string FitFileToJson(const FitFile& file)
{
    Json fits = Json::array();
    for (const FitResult& r : file.fits) fits.push_back(ToJson(r));
    Json doc{{"format", "paralens-fit"}, {"version", 1}, {"sources", file.sources}, {"fits", fits}};
    if (file.joint) {
        const JointFit& j = *file.joint;
        doc["joint"] = {{"alphaUs", j.params.alphaSec * 1e6},
                        {"bandwidthGBps", j.params.betaSecPerByte > 0 ? 1.0 / j.params.betaSecPerByte / 1e9 : 0.0},
                        {"gammaGBps", j.params.gammaSecPerByte > 0 ? 1.0 / j.params.gammaSecPerByte / 1e9 : 0.0},
                        {"gammaSeparated", j.gammaSeparated},
                        {"mapePct", j.mapePct},
                        {"samples", j.samples},
                        {"groups", j.groups}};
    }
    return doc.dump(2) + "\n";
}

FitFile ParseFitFileJson(std::string_view text, const std::string& origin);

FitFile ParseFitFile(std::string_view text, const std::string& origin)
{
    try {
        return ParseFitFileJson(text, origin);
    } catch (const Json::exception& e) { // a field of the wrong type
        throw Error(origin + ": not a valid fit file: " + e.what());
    }
}

FitFile ParseFitFileJson(std::string_view text, const std::string& origin)
{
    Json doc;
    try {
        doc = Json::parse(text);
    } catch (const Json::parse_error& e) {
        throw Error(origin + " (byte " + std::to_string(e.byte) + "): not a fit file: invalid JSON");
    }
    if (!doc.is_object() || doc.value("format", "") != "paralens-fit")
        throw Error(origin + ": not a paralens fit file (expected \"format\": \"paralens-fit\", as `paralens fit --out` writes)");
    FitFile file;
    if (auto s = doc.find("sources"); s != doc.end() && s->is_array())
        for (const Json& x : *s)
            if (x.is_string()) file.sources.push_back(x.get<std::string>());
    auto fits = doc.find("fits");
    if (fits == doc.end() || !fits->is_array()) throw Error(origin + ": missing the \"fits\" array");
    for (size_t i = 0; i < fits->size(); ++i) file.fits.push_back(FromJson((*fits)[i], origin + ": fits[" + std::to_string(i) + "]"));
    if (auto j = doc.find("joint"); j != doc.end() && j->is_object()) {
        JointFit joint;
        std::string where = origin + ": joint";
        joint.params.alphaSec = Field<double>(*j, "alphaUs", where) * 1e-6;
        joint.params.betaSecPerByte = GBpsToSecPerByte(Field<double>(*j, "bandwidthGBps", where));
        joint.params.gammaSecPerByte = GBpsToSecPerByte(j->value("gammaGBps", 0.0));
        joint.gammaSeparated = j->value("gammaSeparated", false);
        joint.mapePct = j->value("mapePct", 0.0);
        joint.samples = j->value("samples", size_t{0});
        if (auto g = j->find("groups"); g != j->end() && g->is_array())
            for (const Json& x : *g)
                if (x.is_string()) joint.groups.push_back(x.get<std::string>());
        file.joint = joint;
    }
    if (file.fits.empty() && !file.joint) throw Error(origin + ": the fit file holds no fit");
    return file;
}

const FitResult* ChooseFit(const FitFile& file, Collective collective, int ranks)
{
    const FitResult* best = nullptr;
    for (const FitResult& r : file.fits) {
        if (r.collective != collective) continue;
        if (!best || std::abs(r.ranks - ranks) < std::abs(best->ranks - ranks)) best = &r;
    }
    return best;
}

std::optional<CostParams> ModelFromFit(const FitFile& file, Collective collective, int ranks, uint64_t bytes, std::string* why)
{
    const FitResult* r = ChooseFit(file, collective, ranks);
    if (r && !r->protocols.empty()) { // the protocol envelope's line lowest at this size (ProtocolFit.hpp)
        const ProtocolLine* l = LowestLine(r->protocols, bytes);
        if (why) {
            char text[240];
            std::snprintf(text, sizeof text, "the protocol line lowest at %s (likely %s, the lowest from %s to %s) of the fit of %s on %d ranks%s",
                          FormatBytes(bytes).c_str(), l->protocol.c_str(), FormatBytes(l->fromBytes).c_str(), FormatBytes(l->toBytes).c_str(),
                          Name(r->collective).data(), r->ranks, r->ranks == ranks ? "" : ", the nearest rank count");
            *why = text;
        }
        return ParamsFromLine(r->collective, r->algorithm, r->ranks, l->latencySec, l->secPerByte);
    }
    const FitSegment* s = r ? SegmentFor(r->segments, bytes) : nullptr;
    if (!s) return ModelFromFit(file, collective, ranks, why); // a fit file without regimes
    if (why) {
        char text[240];
        std::snprintf(text, sizeof text, "the regime of %s from %s to %s (likely %s) of the fit of %s on %d ranks%s", Name(r->algorithm).data(),
                      FormatBytes(s->fromBytes).c_str(), FormatBytes(s->toBytes).c_str(), s->protocol.c_str(), Name(r->collective).data(),
                      r->ranks, r->ranks == ranks ? "" : ", the nearest rank count");
        *why = text;
    }
    return s->params;
}

std::optional<CostParams> ModelFromFit(const FitFile& file, Collective collective, int ranks, std::string* why)
{
    auto say = [&](const std::string& text) {
        if (why) *why = text;
    };
    auto describe = [](const FitResult& r) {
        return "the fit of " + std::string(Name(r.collective)) + " on " + std::to_string(r.ranks) + " ranks (" +
               std::string(Name(r.algorithm)) + " model)";
    };
    if (const FitResult* r = ChooseFit(file, collective, ranks)) {
        say(describe(*r) + (r->ranks == ranks ? "" : ", the nearest rank count"));
        return r->params;
    }
    if (file.joint) {
        say("the joint fit of " + std::to_string(file.joint->groups.size()) + " collectives (no fit of " +
            std::string(Name(collective)) + ")");
        return file.joint->params;
    }
    if (file.fits.empty()) return std::nullopt;
    say(describe(file.fits.front()) + " (no fit of " + std::string(Name(collective)) + ")");
    return file.fits.front().params;
}

} // namespace paralens::core
