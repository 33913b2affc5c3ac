// The planner calibrated from a profile of the user's own training step: the GEMM kernels of a
// trace (their FLOPs from the matmul ops that launched them: record_shapes in the PyTorch
// profiler, or spans with FLOPs in any trace paralens reads) give the efficiency the GPU reached,
// as a fraction of its dtype's peak, by GEMM size (FLOPs per kernel, one point per decade). The
// planner then times each layer's GEMMs at the efficiency of their size (PlanCluster::gemmCurve)
// instead of one efficiency for all. Attention kernels with FLOPs (the attention ops' shapes, the
// full square as the planner counts it) give attention's efficiency the same way, which the
// planner uses for attention's products. What else the trace holds is reported as shares of its
// GPU time (other compute, communication), not yet used by the planner.
#pragma once

#include "model/Hardware.hpp"

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
    // Shares of the GPUs' busy kernel time.
    double gemmShare = 0, attentionShare = 0, collectiveShare = 0, otherShare = 0;
    std::vector<std::string> dtypes;   // the GEMMs' dtypes, most FLOPs first
    std::vector<std::string> notes;

    static constexpr size_t kMinKernels = 3;
    // (FLOPs per GEMM, efficiency), ascending: PlanCluster::gemmCurve.
    std::vector<std::pair<double, double>> Curve() const;
};

// Throws Error naming `origin` when the trace has no GPU kernel with FLOPs that is a GEMM (a
// profile recorded without shapes). `fallback`: the GPU when neither the devices' names nor the
// kernels' architecture (sm80, sm90, sm100) say which.
Calibration CalibrateFromTrace(const Trace& trace, const std::string& origin, const GpuSpec& fallback);

// The efficiency of a GEMM of `flops` on `curve`: linear in log10(flops) between its points, the
// end points' beyond them.
double EfficiencyAt(const std::vector<std::pair<double, double>>& curve, double flops);

} // namespace paralens::core
