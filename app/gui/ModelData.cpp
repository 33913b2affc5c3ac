// The model view's data: closed-form curves (core/model PredictSeconds) per algorithm, simulated
// points (core/sim), the ring/tree crossover and a least-squares fit of alpha and beta.
#include "RunBuilder.hpp"

#include "sim/Simulator.hpp"

#include <cmath>

namespace paralens::app {

namespace {

constexpr int kMinLog2 = 3;   // 8 B
constexpr int kMaxLog2 = 30;  // 1 GiB
constexpr int kSamplesPerOctave = 4;
constexpr int kPointStride = 3; // a simulated point every 8x

double Predict(const CollectiveParams& c, core::Algorithm a, double bytes, const core::CostParams& k)
{
    core::CollectiveSpec spec{c.collective, a, c.ranks, static_cast<uint64_t>(std::llround(bytes)), 0, 1};
    return core::PredictSeconds(spec, k).seconds;
}

// The size where the ring becomes faster than the tree, by bisection between samples.
double Crossover(const CollectiveParams& c, const core::CostParams& k, const std::vector<double>& sizes)
{
    if (!core::Supports(c.collective, core::Algorithm::Ring) || !core::Supports(c.collective, core::Algorithm::Tree)) return -1;
    auto diff = [&](double n) { return Predict(c, core::Algorithm::Ring, n, k) - Predict(c, core::Algorithm::Tree, n, k); };
    for (size_t i = 1; i < sizes.size(); ++i) {
        if (!(diff(sizes[i - 1]) > 0 && diff(sizes[i]) <= 0)) continue;
        double lo = sizes[i - 1], hi = sizes[i];
        for (int it = 0; it < 60 && hi - lo > 1; ++it) {
            const double mid = std::floor((lo + hi) / 2);
            (diff(mid) > 0 ? lo : hi) = mid;
        }
        return hi;
    }
    return -1;
}

// Fits t = alpha A(n) + beta B(n) (+ the known gamma term) to the points, with A and B the
// formula's coefficients, minimising relative error (the points span eight decades).
void Fit(ModelData& m, const CollectiveParams& c, const ModelCurve& curve)
{
    double saa = 0, sab = 0, sbb = 0, sat = 0, sbt = 0;
    int used = 0;
    for (size_t i = 0; i < m.pointSizes.size(); ++i) {
        const double t = curve.simulatedSeconds[i];
        if (!(t > 0)) continue;
        const double n = m.pointSizes[i];
        const double a = Predict(c, curve.algorithm, n, {1.0, 0.0, 0.0}) / t;
        const double b = Predict(c, curve.algorithm, n, {0.0, 1.0, 0.0}) / t;
        const double g = Predict(c, curve.algorithm, n, {0.0, 0.0, m.params.gammaSecPerByte}) / t;
        const double y = 1.0 - g;
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        sat += a * y;
        sbt += b * y;
        ++used;
    }
    const double det = saa * sbb - sab * sab;
    if (used < 2 || !(std::abs(det) > 1e-12 * saa * sbb)) return;
    const double alpha = (sat * sbb - sbt * sab) / det;
    const double beta = (saa * sbt - sab * sat) / det;
    if (!(alpha >= 0) || !(beta > 0)) return;
    m.fitted = true;
    m.fitAlphaUs = alpha * 1e6;
    m.fitBandwidthGBps = 1e-9 / beta;
}

} // namespace

std::shared_ptr<const ModelData> BuildModelData(const CollectiveParams& c, const ClusterParams& clusterParams,
                                                double currentSeconds)
{
    auto m = std::make_shared<ModelData>();
    const core::ClusterModel cluster = clusterParams.ToModel();
    m->collective = c.collective;
    m->ranks = c.ranks;
    m->params = {cluster.alphaSec, cluster.betaSecPerByte, cluster.gammaSecPerByte};
    m->busBwFactor = core::BusBwFactor(c.collective, c.ranks);
    for (int i = kMinLog2 * kSamplesPerOctave; i <= kMaxLog2 * kSamplesPerOctave; ++i)
        m->sizes.push_back(std::round(std::exp2(static_cast<double>(i) / kSamplesPerOctave)));
    for (int l = kMinLog2; l <= kMaxLog2; l += kPointStride) m->pointSizes.push_back(std::exp2(l));
    for (core::Algorithm a : core::AlgorithmsFor(c.collective)) {
        ModelCurve curve;
        curve.algorithm = a;
        curve.formula = core::FormulaText(c.collective, a);
        for (double n : m->sizes) curve.seconds.push_back(Predict(c, a, n, m->params));
        for (double n : m->pointSizes) {
            core::CollectiveSpec spec{c.collective, a, c.ranks, static_cast<uint64_t>(n), 0, 1};
            curve.simulatedSeconds.push_back(core::Simulate(core::BuildPlan(spec), cluster, {false}).seconds);
        }
        m->curves.push_back(std::move(curve));
    }
    m->crossoverBytes = Crossover(c, m->params, m->sizes);
    m->currentAlgorithm = c.algorithm;
    m->currentBytes = static_cast<double>(c.bytes);
    m->currentSeconds = currentSeconds;
    for (const ModelCurve& curve : m->curves)
        if (curve.algorithm == c.algorithm) Fit(*m, c, curve);
    return m;
}

} // namespace paralens::app
