#include "planner/Calibration.hpp"

#include "analysis/Fitting.hpp"
#include "common/Error.hpp"
#include "common/Text.hpp"
#include "planner/Planner.hpp"
#include "trace/KinetoGemm.hpp"
#include "trace/Trace.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace paralens::core {

namespace {

// The GPU model the efficiencies are against: a device's name, else the kernels' architecture.
const GpuSpec* GpuOf(const Trace& t, std::string& from)
{
    for (const Device& d : t.Devices())
        if (d.kind == DeviceKind::Gpu)
            if (const GpuSpec* g = FindGpu(t.Strings().Get(d.name))) {
                from = "device name";
                return g;
            }
    static const std::pair<const char*, const char*> kArch[] = {
        {"sm100", "b200"}, {"cutlass_100", "b200"}, {"sm90", "h100-sxm"}, {"cutlass_90", "h100-sxm"}, {"nvjet", "h100-sxm"},
        {"sm80", "a100-sxm"}, {"cutlass_80", "a100-sxm"}, {"ampere", "a100-sxm"}};
    for (const Track& track : t.Tracks()) {
        if (t.Devices()[track.device].kind != DeviceKind::Gpu) continue;
        for (const Span& s : track.spans) {
            if (s.flops <= 0) continue;
            const std::string name = LowerAscii(t.Strings().Get(s.name));
            for (const auto& [arch, gpu] : kArch)
                if (name.find(arch) != std::string::npos) {
                    from = std::string("kernel names (") + arch + ")";
                    return FindGpu(gpu);
                }
        }
    }
    return nullptr;
}

// The dtype a kernel ran in: the last word of its "gemm MxNxK DTYPE" or "attention BxHxSxSKxD
// DTYPE" detail; "" when not said.
std::string DtypeOf(std::string_view detail)
{
    if (detail.rfind("gemm ", 0) != 0 && detail.rfind("attention ", 0) != 0) return "";
    const size_t space = detail.rfind(' ');
    const std::string_view last = detail.substr(space + 1);
    return last.find('x') == std::string_view::npos ? std::string(last) : std::string();
}

struct Totals {
    double gemm = 0, attention = 0, collective = 0, other = 0;
};

struct Bin {
    double work = 0, peakSeconds = 0, seconds = 0, logSum = 0; // work: FLOPs or bytes
    size_t kernels = 0;
    void Add(double w, double atPeak, double sec)
    {
        work += w, peakSeconds += atPeak, seconds += sec, logSum += std::log10(w);
        ++kernels;
    }
};

// The bins (by decade of work per kernel) with at least kMinKernels kernels as points, each at its
// kernels' geometric mean; returns all the bins' time at peak (their work / the peak rate).
template <class Point>
double PointsOf(const std::map<int, Bin>& bins, std::vector<Point>& out)
{
    double peakSeconds = 0;
    for (const auto& [decade, b] : bins) {
        peakSeconds += b.peakSeconds;
        if (b.kernels < Calibration::kMinKernels) continue;
        out.push_back({std::pow(10.0, decade), std::pow(10.0, decade + 1), std::pow(10.0, b.logSum / b.kernels), b.kernels, b.seconds,
                       b.peakSeconds / b.seconds});
    }
    return peakSeconds;
}

} // namespace

std::vector<std::pair<double, double>> Calibration::Curve() const
{
    std::vector<std::pair<double, double>> out;
    for (const CalibrationPoint& p : points) out.push_back({p.flops, p.efficiency});
    return out;
}

std::vector<std::pair<double, double>> Calibration::HbmCurve() const
{
    std::vector<std::pair<double, double>> out;
    for (const BandwidthPoint& p : hbmPoints) out.push_back({p.bytes, p.efficiency});
    return out;
}

void ApplyCalibration(const Calibration& c, PlanCluster& k)
{
    k.gemmCurve = c.Curve();
    k.attentionEfficiency = c.attentionEfficiency;
    k.hbmCurve = c.HbmCurve();
    k.calibratedOn = c.gpu;
    k.nvlinkFromProfile = c.nvlinkFit && !k.nvlinkFit; // a fit given by option wins
    k.networkFromProfile = c.networkFit && !k.networkFit;
    if (k.nvlinkFromProfile) k.nvlinkFit = c.nvlinkFit;
    if (k.networkFromProfile) k.networkFit = c.networkFit;
}

std::string CalibratedOnOtherGpu(const PlanCluster& k)
{
    if (k.calibratedOn.empty() || k.calibratedOn == k.gpu.id) return "";
    std::string text = "the profile ran on " + k.calibratedOn + ", the plan is for " + k.gpu.id + ": the efficiencies it measured (fractions of " +
                       k.calibratedOn + "'s peaks and HBM bandwidth) are taken as " + k.gpu.id + "'s";
    if (k.nvlinkFromProfile || k.networkFromProfile) text += ", and its collectives' fits as its links";
    return text;
}

namespace {

// The trace's collectives fitted per group; those with enough sizes go to the level they ran on.
void FitCollectives(const Trace& t, const std::string& origin, int gpusPerNode, Calibration& c)
{
    FitFile inside, between;
    for (const FitGroup& g : FitGroupsFromTrace(t, origin)) {
        std::set<uint64_t> sizes;
        for (const FitSample& s : g.samples)
            if (s.bytes > 0) sizes.insert(s.bytes);
        const bool node = g.ranks <= gpusPerNode;
        std::string line = std::string(Name(g.collective)) + " on " + std::to_string(g.ranks) + " ranks: " + std::to_string(sizes.size()) +
                           (sizes.size() == 1 ? " size" : " sizes");
        if (sizes.size() < Calibration::kMinFitSizes) {
            c.collectiveFits.push_back(line + ", too few to fit (at least " + std::to_string(Calibration::kMinFitSizes) + ")");
            continue;
        }
        FitResult f = FitAlphaBeta(g);
        if (!(f.busBwGBps > 0)) {
            c.collectiveFits.push_back(line + ", no bandwidth fits them");
            continue;
        }
        char bw[64];
        std::snprintf(bw, sizeof bw, ", %.1f GB/s bus bandwidth (%s)", f.busBwGBps, node ? "inside a node" : "network");
        c.collectiveFits.push_back(line + bw);
        (node ? inside : between).fits.push_back(std::move(f));
    }
    if (!inside.fits.empty()) c.nvlinkFit = std::make_shared<const FitFile>(std::move(inside));
    if (!between.fits.empty()) c.networkFit = std::make_shared<const FitFile>(std::move(between));
}

} // namespace

namespace {

// One pass over a trace's GPU kernels: each GEMM, attention and memory-bound kernel measured into
// the calibration, the busy time by kind.
class Measurer {
public:
    Measurer(const Trace& t, const GpuSpec& gpu, Calibration& c) : m_t(t), m_gpu(gpu), m_c(c) {}
    void Run();
    void Finish(); // points, efficiencies, shares, dtypes, notes

private:
    void Gemm(const Span& s, double sec);
    void Other(const Span& s, double sec, bool attention, bool gemmName);
    std::string DtypeOfSpan(const Span& s) const { return DtypeOf(m_t.Strings().Get(s.detail)); }

    const Trace& m_t;
    const GpuSpec& m_gpu;
    Calibration& m_c;
    std::map<int, Bin> m_bins, m_memoryBins; // by floor(log10(FLOPs)), floor(log10(bytes))
    std::map<std::string, double> m_flopsByDtype;
    Totals m_busy;
    bool m_unsaid = false;
    double m_attentionPeakSeconds = 0;
};

void Measurer::Run()
{
    for (const Track& track : m_t.Tracks()) {
        if (m_t.Devices()[track.device].kind != DeviceKind::Gpu) continue;
        for (const Span& s : track.spans) {
            const double sec = static_cast<double>(s.DurationNs()) * 1e-9;
            if (s.category == SpanCategory::Collective || s.category == SpanCategory::Send || s.category == SpanCategory::Recv) {
                m_busy.collective += sec;
                continue;
            }
            if (s.category == SpanCategory::Annotation || s.category == SpanCategory::Idle || sec <= 0) continue;
            const std::string name = LowerAscii(m_t.Strings().Get(s.name));
            const bool attention = IsAttentionKernelName(name), gemmName = IsGemmKernelName(name);
            const bool gemm = s.flops > 0 && !attention;
            if (gemm || gemmName) ++m_c.gemmKernels;
            if (gemm) Gemm(s, sec);
            else Other(s, sec, attention, gemmName);
        }
    }
}

void Measurer::Gemm(const Span& s, double sec)
{
    m_busy.gemm += sec;
    std::string dtype = DtypeOfSpan(s);
    if (dtype.empty() || m_gpu.PeakFlops(dtype) <= 0) {
        m_unsaid |= dtype.empty();
        dtype = "bf16";
    }
    const double peak = m_gpu.PeakFlops(dtype);
    if (peak <= 0) return;
    ++m_c.gemmKernelsWithFlops;
    m_c.gemmFlops += s.flops;
    m_c.gemmSeconds += sec;
    m_flopsByDtype[dtype] += s.flops;
    m_bins[static_cast<int>(std::floor(std::log10(s.flops)))].Add(s.flops, s.flops / peak, sec);
}

// Attention kernels with FLOPs, and the memory-bound rest with bytes (copies and memsets aside).
void Measurer::Other(const Span& s, double sec, bool attention, bool gemmName)
{
    (attention ? m_busy.attention : gemmName ? m_busy.gemm : m_busy.other) += sec;
    const bool copy = s.category == SpanCategory::Memcpy || s.category == SpanCategory::Memset;
    if (!attention && !gemmName && !copy && s.bytes > 0 && m_gpu.hbmGBps > 0) {
        const double bytes = static_cast<double>(s.bytes);
        ++m_c.memoryKernelsWithBytes;
        m_c.memoryBytes += bytes;
        m_c.memorySeconds += sec;
        m_memoryBins[static_cast<int>(std::floor(std::log10(bytes)))].Add(bytes, bytes / (m_gpu.hbmGBps * 1e9), sec);
    }
    if (s.flops > 0 && attention) {
        std::string dtype = DtypeOfSpan(s);
        if (dtype.empty() || m_gpu.PeakFlops(dtype) <= 0) dtype = "bf16";
        ++m_c.attentionKernelsWithFlops;
        m_c.attentionFlops += s.flops;
        m_c.attentionSeconds += sec;
        m_attentionPeakSeconds += s.flops / m_gpu.PeakFlops(dtype);
    }
}

void Measurer::Finish()
{
    Calibration& c = m_c;
    c.efficiency = PointsOf(m_bins, c.points) / c.gemmSeconds;
    if (c.attentionSeconds > 0) c.attentionEfficiency = m_attentionPeakSeconds / c.attentionSeconds;
    if (c.points.empty()) // too few kernels per size: one point for all
        c.points.push_back({0, 0, c.gemmFlops / c.gemmKernelsWithFlops, c.gemmKernelsWithFlops, c.gemmSeconds, c.efficiency});
    if (c.memorySeconds > 0) {
        c.hbmEfficiency = PointsOf(m_memoryBins, c.hbmPoints) / c.memorySeconds;
        if (c.hbmPoints.empty()) // too few kernels per size: one point for all
            c.hbmPoints.push_back({0, 0, c.memoryBytes / c.memoryKernelsWithBytes, c.memoryKernelsWithBytes, c.memorySeconds, c.hbmEfficiency});
    }
    const double total = m_busy.gemm + m_busy.attention + m_busy.collective + m_busy.other;
    if (total > 0) {
        c.gemmShare = m_busy.gemm / total;
        c.attentionShare = m_busy.attention / total;
        c.collectiveShare = m_busy.collective / total;
        c.otherShare = m_busy.other / total;
    }
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [d, f] : m_flopsByDtype) order.push_back({-f, d});
    std::sort(order.begin(), order.end());
    for (const auto& [f, d] : order) c.dtypes.push_back(d);
    if (m_unsaid) c.notes.push_back("some GEMMs do not say their dtype: counted against the bf16 peak");
}

} // namespace

Calibration CalibrateFromTrace(const Trace& t, const std::string& origin, const GpuSpec& fallback, int gpusPerNode)
{
    Calibration c;
    const GpuSpec* gpu = GpuOf(t, c.gpuFrom);
    if (!gpu) {
        gpu = &fallback;
        c.gpuFrom = "--gpu";
        c.notes.push_back("the trace names no GPU model: efficiencies are against " + fallback.id + "'s peaks (--gpu)");
    }
    c.gpu = gpu->id;
    Measurer m(t, *gpu, c);
    m.Run();
    Require(c.gemmKernelsWithFlops > 0, origin + ": no GEMM kernel with FLOPs to calibrate from (" + std::to_string(c.gemmKernels) +
                                            " GEMM kernels without shapes; record the PyTorch profile with record_shapes=True)");
    m.Finish();
    FitCollectives(t, origin, gpusPerNode, c);
    if (c.gemmKernelsWithFlops < c.gemmKernels)
        c.notes.push_back(std::to_string(c.gemmKernels - c.gemmKernelsWithFlops) + " GEMM kernels without a shape are left out");
    return c;
}

double EfficiencyAt(const std::vector<std::pair<double, double>>& curve, double flops)
{
    if (curve.empty()) return 0.0;
    if (flops <= curve.front().first) return curve.front().second;
    if (flops >= curve.back().first) return curve.back().second;
    auto hi = std::upper_bound(curve.begin(), curve.end(), flops, [](double f, const std::pair<double, double>& p) { return f < p.first; });
    auto lo = hi - 1;
    const double x = (std::log10(flops) - std::log10(lo->first)) / (std::log10(hi->first) - std::log10(lo->first));
    return lo->second + x * (hi->second - lo->second);
}

} // namespace paralens::core
