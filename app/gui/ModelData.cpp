// The model view's data: closed-form curves (core/model PredictSeconds) per algorithm, simulated
// points (core/sim), measured points when the data has them, the ring/tree crossover, a fit of
// alpha and beta (core/model/Fit.hpp) and the measurements' regimes (core/model/RegimeFit.hpp).
#include "RunBuilder.hpp"

#include "analysis/Extrapolation.hpp"
#include "common/Error.hpp"
#include "model/Hardware.hpp"
#include "model/ProtocolFit.hpp"
#include "model/RegimeFit.hpp"
#include "sim/Simulator.hpp"
#include "sim/TwoLevelCost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

namespace paralens::app {

namespace {

constexpr int kMinLog2 = 3;   // 8 B
constexpr int kMaxLog2 = 30;  // 1 GiB
constexpr int kMaxMeasuredLog2 = 40; // 1 TiB: the farthest the axis follows measurements
constexpr int kSamplesPerOctave = 4;
constexpr int kPointStride = 3; // a simulated point every 8x

// The model of algorithm `a` at `bytes` on the cluster (two levels when it has them).
core::TwoLevelModel Model(const CollectiveParams& c, core::Algorithm a, double bytes, const core::ClusterModel& cluster, int ranksPerNode)
{
    core::CollectiveSpec spec{c.collective, a, c.ranks, static_cast<uint64_t>(std::llround(bytes)), 0, 1};
    spec.ranksPerNode = ranksPerNode;
    return core::ModelOnTwoLevels(spec, cluster);
}

// The size where the ring becomes faster than the tree, by bisection between samples.
double Crossover(const CollectiveParams& c, const core::ClusterModel& ring, const core::ClusterModel& tree, int ranksPerNode,
                 const std::vector<double>& sizes)
{
    if (!core::Supports(c.collective, core::Algorithm::Ring) || !core::Supports(c.collective, core::Algorithm::Tree)) return -1;
    auto diff = [&](double n) {
        return Model(c, core::Algorithm::Ring, n, ring, ranksPerNode).seconds - Model(c, core::Algorithm::Tree, n, tree, ranksPerNode).seconds;
    };
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

// The links algorithm `a` runs on: measured across nodes, the ring the fit's reading and the
// others the network per NIC (ModelData::nicBandwidthGBps), else `cluster` for every algorithm.
struct Links {
    core::ClusterModel cluster, perNic;
    bool split = false;
    const core::ClusterModel& For(core::Algorithm a) const { return split && a != core::Algorithm::Ring ? perNic : cluster; }
};

// Every algorithm's curve (on two levels the two-level ones too) and simulated points.
void Curves(ModelData& m, const CollectiveParams& c, const Links& links, int ranksPerNode)
{
    std::vector<core::Algorithm> algorithms(core::AlgorithmsFor(c.collective).begin(), core::AlgorithmsFor(c.collective).end());
    if (m.twoLevel)
        for (core::Algorithm a : core::TwoLevelAlgorithmsFor(c.collective))
            if (c.ranks % ranksPerNode == 0) algorithms.push_back(a);
    for (core::Algorithm a : algorithms) {
        const core::ClusterModel& cluster = links.For(a);
        ModelCurve curve;
        curve.algorithm = a;
        curve.formula = m.twoLevel && a == core::Algorithm::Ring && c.collective == core::Collective::AllReduce
                            ? "2(p-1) a' + (p-1)/p n (2b' + g)" // every step paced by the network
                            : core::FormulaText(c.collective, a);
        for (double n : m.sizes) {
            const core::TwoLevelModel model = Model(c, a, n, cluster, ranksPerNode);
            curve.seconds.push_back(model.seconds);
            if (m.twoLevel) curve.netSeconds.push_back(model.netSeconds);
        }
        for (double n : m.pointSizes) {
            core::CollectiveSpec spec{c.collective, a, c.ranks, static_cast<uint64_t>(n), 0, 1};
            spec.ranksPerNode = ranksPerNode;
            curve.simulatedSeconds.push_back(core::Simulate(core::BuildPlan(spec), cluster, {false}).seconds);
        }
        m.curves.push_back(std::move(curve));
    }
}

// The regimes of a fit to measurements, drawn beside the closed forms.
void Regimes(ModelData& m, const core::FitResult& fit)
{
    m.regimes = fit.segments;
    m.regimesMapePct = fit.segmentedMapePct;
    m.regimesHeldOutPct = fit.heldOutMapePct;
    m.noisePct = fit.noisePct;
    for (size_t i = 0; i + 1 < m.regimes.size(); ++i)
        m.regimeSwitchBytes.push_back(std::sqrt(std::max(1.0, static_cast<double>(m.regimes[i].toBytes)) *
                                                static_cast<double>(m.regimes[i + 1].fromBytes)));
    if (fit.protocols.size() >= 2) m.protocols = fit.protocols; // one line: nothing the fit and the regimes do not show
    m.protocolMapePct = fit.protocolMapePct;
    m.protocolHeldOutPct = fit.protocolHeldOutMapePct;
    for (size_t i = 0; i + 1 < m.protocols.size(); ++i)
        if (const double cross = core::SwitchBytes(m.protocols[i], m.protocols[i + 1]); cross > 0) m.protocolSwitchBytes.push_back(cross);
}

// alpha and beta through the formula of `algorithm` (core/model/Fit.hpp) to these samples; the
// fit, when there is one.
std::optional<core::FitResult> Fit(ModelData& m, core::Algorithm algorithm, std::vector<core::FitSample> samples, bool measured,
                                   double noise = 0)
{
    core::FitGroup group;
    group.noise = noise;
    group.collective = m.collective;
    group.ranks = m.ranks;
    group.algorithm = algorithm;
    group.samples = std::move(samples);
    try {
        const core::FitResult fit = core::FitAlphaBeta(group);
        m.fitNote = fit.note;
        if (!(fit.params.betaSecPerByte > 0)) return std::nullopt;
        m.fitted = true;
        m.fittedToMeasurements = measured;
        m.fitAlphaUs = fit.params.alphaSec * 1e6;
        m.fitBandwidthGBps = 1e-9 / fit.params.betaSecPerByte;
        m.fitMapePct = fit.mapePct;
        if (measured) Regimes(m, fit);
        return fit;
    } catch (const Error& e) {
        m.fitNote = e.what();
    }
    return std::nullopt;
}

} // namespace

std::optional<MeasuredNodes> NodesOf(const core::Trace& trace)
{
    std::set<core::StringId> hosts;
    int gpus = 0;
    for (const core::Device& d : trace.Devices())
        if (d.kind == core::DeviceKind::Gpu) {
            hosts.insert(d.host);
            ++gpus;
        }
    const std::string gpu = trace.Meta().hardware.GetString("gpu", "");
    const core::GpuSpec* spec = core::FindGpu(gpu);
    if (hosts.size() < 2 || gpus % static_cast<int>(hosts.size()) != 0 || !spec || !(spec->nvlinkUniGBps > 0)) return std::nullopt;
    return MeasuredNodes{gpus / static_cast<int>(hosts.size()), spec->nvlinkUniGBps, spec->name};
}

// Measured across nodes: the fit is the network's, within a node the GPU's NVLink (see RunBuilder.hpp).
void UseNodes(ModelData& m, core::ClusterModel& cluster, const MeasuredNodes& nodes)
{
    cluster.netAlphaSec = cluster.alphaSec;
    cluster.netBetaSecPerByte = cluster.betaSecPerByte;
    cluster.betaSecPerByte = 1.0 / (nodes.nvlinkGBps * 1e9);
    char bandwidth[32];
    std::snprintf(bandwidth, sizeof bandwidth, "%.0f", nodes.nvlinkGBps);
    m.twoLevelNote = "Measured on nodes of " + std::to_string(nodes.ranksPerNode) +
                     " GPUs (the log's hosts): a ring across them is paced by the network, so the fit stands for the network (per "
                     "GPU, all its channels and NICs together). Within a node: the " +
                     nodes.gpu + "'s NVLink, " + bandwidth + " GB/s per direction (GPU table), and the fit's alpha: assumed.";
}

// The network per NIC from the fit of a log across nodes, read as NCCL ran it at its largest size
// (NetworkLinkFromFit); the other algorithms than the ring run on it. Nothing when the log's
// collective or layout does not say it (ModelData::nicBandwidthGBps stays 0).
void UsePerNic(ModelData& m, Links& links, core::FitResult fit, const MeasuredNodes& nodes)
{
    fit.nodes = fit.ranks / nodes.ranksPerNode;
    fit.source = "the log";
    const double largest = m.measuredBytes.empty() ? 0 : *std::max_element(m.measuredBytes.begin(), m.measuredBytes.end());
    const double perNic = core::NetworkBytesPerNic(fit.collective, fit.nodes, fit.ranks, largest);
    core::FitFile file;
    file.fits.push_back(std::move(fit));
    std::string why;
    const std::optional<core::CostParams> nic = core::NetworkLinkFromFit(file, perNic, links.cluster.alphaSec, &why);
    if (!nic || !(nic->betaSecPerByte > 0)) return;
    links.perNic = links.cluster;
    links.perNic.netAlphaSec = nic->alphaSec;
    links.perNic.netBetaSecPerByte = nic->betaSecPerByte;
    links.split = true;
    m.nicAlphaUs = nic->alphaSec * 1e6;
    m.nicBandwidthGBps = 1e-9 / nic->betaSecPerByte;
    char text[64];
    std::snprintf(text, sizeof text, "%.3g GB/s", m.nicBandwidthGBps);
    m.twoLevelNote += std::string(" The other algorithms run each rank's messages between nodes through its own NIC: ") + text + " " +
                      why + ", as plan --network-fit and extrapolate read it.";
}

std::shared_ptr<const ModelData> BuildModelData(const CollectiveParams& c, const ClusterParams& clusterParams,
                                                double currentSeconds, const core::FitGroup* measured, const MeasuredNodes* nodes)
{
    auto m = std::make_shared<ModelData>();
    core::ClusterModel cluster = clusterParams.ToModel();
    std::optional<core::FitResult> fit;
    m->collective = c.collective;
    m->ranks = c.ranks;
    m->busBwFactor = core::BusBwFactor(c.collective, c.ranks);
    if (measured) {
        // The measurements decide alpha and beta; the curves and the simulator then use them.
        std::vector<core::FitSample> samples = measured->samples;
        for (const core::FitSample& s : samples) {
            m->measuredBytes.push_back(static_cast<double>(std::max<uint64_t>(s.bytes, 1)));
            m->measuredSeconds.push_back(s.seconds);
        }
        m->measuredLabel = measured->label.empty() ? measured->source : measured->source + ", " + measured->label;
        fit = Fit(*m, measured->algorithm, std::move(samples), true, measured->noise);
        if (m->fitted) {
            cluster.alphaSec = m->fitAlphaUs * 1e-6;
            cluster.betaSecPerByte = 1e-9 / m->fitBandwidthGBps;
            if (nodes && c.ranks % nodes->ranksPerNode == 0) UseNodes(*m, cluster, *nodes);
        }
    }
    Links links{cluster, cluster, false};
    if (fit && !m->twoLevelNote.empty()) UsePerNic(*m, links, *fit, *nodes);
    m->params = {cluster.alphaSec, cluster.betaSecPerByte, cluster.gammaSecPerByte};
    int maxLog2 = kMaxLog2; // up to the largest measurement (nccl-tests logs often end at 8 GiB)
    for (double b : m->measuredBytes) maxLog2 = std::clamp(static_cast<int>(std::ceil(std::log2(b))), maxLog2, kMaxMeasuredLog2);
    for (int i = kMinLog2 * kSamplesPerOctave; i <= maxLog2 * kSamplesPerOctave; ++i)
        m->sizes.push_back(std::round(std::exp2(static_cast<double>(i) / kSamplesPerOctave)));
    for (int l = kMinLog2; l <= maxLog2; l += kPointStride) m->pointSizes.push_back(std::exp2(l));
    if (!m->regimes.empty())
        for (double n : m->sizes) m->regimeSeconds.push_back(core::PredictSegmented(m->regimes, static_cast<uint64_t>(n)));
    if (!m->protocols.empty())
        for (double n : m->sizes) m->protocolSeconds.push_back(core::PredictProtocols(m->protocols, static_cast<uint64_t>(n)));
    const int ranksPerNode = clusterParams.TwoLevel() ? clusterParams.ranksPerNode : !m->twoLevelNote.empty() ? nodes->ranksPerNode : 0;
    m->twoLevel = ranksPerNode > 0;
    m->ranksPerNode = ranksPerNode;
    m->netAlphaUs = m->twoLevel ? cluster.netAlphaSec * 1e6 : 0.0;
    m->netBandwidthGBps = m->twoLevel && cluster.netBetaSecPerByte > 0 ? 1e-9 / cluster.netBetaSecPerByte : 0.0;
    Curves(*m, c, links, ranksPerNode);
    m->crossoverBytes = Crossover(c, links.For(core::Algorithm::Ring), links.For(core::Algorithm::Tree), ranksPerNode, m->sizes);
    m->currentAlgorithm = c.algorithm;
    m->currentBytes = static_cast<double>(c.bytes);
    m->currentSeconds = currentSeconds;
    if (!measured && !m->twoLevel) // one line through two levels' points would say nothing
        for (const ModelCurve& curve : m->curves)
            if (curve.algorithm == c.algorithm) {
                std::vector<core::FitSample> samples;
                for (size_t i = 0; i < m->pointSizes.size(); ++i)
                    samples.push_back({static_cast<uint64_t>(m->pointSizes[i]), curve.simulatedSeconds[i], 0});
                Fit(*m, c.algorithm, std::move(samples), false);
            }
    return m;
}

} // namespace paralens::app
