// The planner calibrated from a profile of the user's own training step: the GEMM kernels of a
// trace (their FLOPs from the matmul ops that launched them: record_shapes in the PyTorch
// profiler, or spans with FLOPs in any trace paralens reads) give the efficiency the GPU reached,
// as a fraction of its dtype's peak, by GEMM size (FLOPs per kernel, one point per decade). The
// planner then times each layer's GEMMs at the efficiency of their size (PlanCluster::gemmCurve)
// instead of one efficiency for all. Attention kernels with FLOPs (the attention ops' shapes, the
// full square as the planner counts it) give attention's efficiency the same way, which the
// planner uses for attention's products. Its collectives, fitted with their regimes (the fit of
// analysis/Fitting.hpp, matched across ranks), price the links: groups that fit in a node
// (ranks <= GPUs per node) NVLink's, larger ones the network's, each where at least
// kMinFitSizes sizes were measured. The memory-bound kernels with bytes (the elementwise, copy,
// norm and reduction ops' tensors: KinetoGemm.hpp, or spans with bytes in a paralens trace) give
// the fraction of the HBM bandwidth they reached by bytes per kernel, at which the planner runs
// its memory-bound ops (PlanCluster::hbmCurve).
#pragma once

#include "model/Fit.hpp"
#include "model/Hardware.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace paralens::core {

class Trace;

struct CalibrationPoint {
    double minFlops = 0, maxFlops = 0; // the decade of FLOPs per kernel
    double flops = 0;                  // the kernels' geometric mean FLOPs (where the point sits)
    size_t kernels = 0;
    double seconds = 0;
    double efficiency = 0;             // their FLOPs / (time x their dtype's peak)
};

struct BandwidthPoint {
    double minBytes = 0, maxBytes = 0; // the decade of bytes per kernel
    double bytes = 0;                  // the kernels' geometric mean bytes (where the point sits)
    size_t kernels = 0;
    double seconds = 0;
    double efficiency = 0;             // their bytes / (time x the GPU's HBM bandwidth)
};

struct Calibration {
    std::string gpu;                   // the spec table's id the efficiencies are against
    std::string gpuFrom;               // "device name", "kernel names (sm80)", "--gpu"
    size_t gemmKernels = 0;            // GEMM kernels in the trace
    size_t gemmKernelsWithFlops = 0;
    double gemmFlops = 0, gemmSeconds = 0;
    double efficiency = 0;             // all GEMMs with FLOPs: FLOPs / (time x peak)
    std::vector<CalibrationPoint> points; // ascending FLOPs; bins of at least kMinKernels kernels
    size_t attentionKernelsWithFlops = 0;
    double attentionFlops = 0, attentionSeconds = 0;
    double attentionEfficiency = 0;    // 0: no attention kernel with FLOPs
    size_t memoryKernelsWithBytes = 0;
    double memoryBytes = 0, memorySeconds = 0;
    double hbmEfficiency = 0;          // all memory-bound kernels with bytes: bytes / (time x HBM bandwidth); 0: none
    std::vector<BandwidthPoint> hbmPoints; // ascending bytes; bins of at least kMinKernels kernels
    // Shares of the GPUs' busy kernel time.
    double gemmShare = 0, attentionShare = 0, collectiveShare = 0, otherShare = 0;
    std::vector<std::string> dtypes;   // the GEMMs' dtypes, most FLOPs first
    // The links the trace's collectives measured (null: too few sizes, or none).
    std::shared_ptr<const FitFile> nvlinkFit, networkFit;
    std::vector<std::string> collectiveFits; // "allreduce on 16 ranks: 5 sizes, 42.1 GB/s bus bandwidth (network)"
    std::vector<std::string> notes;

    static constexpr size_t kMinKernels = 3;
    static constexpr size_t kMinFitSizes = 3;
    // (FLOPs per GEMM, efficiency), ascending: PlanCluster::gemmCurve.
    std::vector<std::pair<double, double>> Curve() const;
    // (bytes per kernel, fraction of HBM bandwidth), ascending: PlanCluster::hbmCurve.
    std::vector<std::pair<double, double>> HbmCurve() const;
};

struct PlanCluster;
// The calibration as the planner uses it: the GEMM curve, attention's and the memory-bound ops'
// efficiency, and the collectives' fits where `cluster` has none of its own.
void ApplyCalibration(const Calibration& c, PlanCluster& cluster);
// A line for a plan calibrated from a profile of another GPU than its own ("the profile ran on
// a100-sxm, the plan is for h100-sxm: ..."), or empty: the efficiencies carry over as fractions of
// the peaks, which a user who meant to plan the GPU the profile ran on should be told.
std::string CalibratedOnOtherGpu(const PlanCluster& cluster);

// Throws Error naming `origin` when the trace has no GPU kernel with FLOPs that is a GEMM (a
// profile recorded without shapes). `fallback`: the GPU when neither the devices' names nor the
// kernels' architecture (sm80, sm90, sm100) say which.
// `gpusPerNode`: which of the collectives' groups stay inside a node.
Calibration CalibrateFromTrace(const Trace& trace, const std::string& origin, const GpuSpec& fallback, int gpusPerNode = 8);

// The efficiency of a GEMM of `flops` on `curve`: linear in log10(flops) between its points, the
// end points' beyond them.
double EfficiencyAt(const std::vector<std::pair<double, double>>& curve, double flops);

} // namespace paralens::core
