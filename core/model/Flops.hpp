// FLOP counting as the lectures do it: a (M x K)(K x N) matmul is 2MNK FLOPs; training counts the
// forward once and the backward twice (input and weight gradients); full activation
// recomputation re-runs the forward (hardware FLOPs, not model FLOPs).
#pragma once

namespace paralens::core {

constexpr double MatmulFlops(double m, double n, double k) { return 2.0 * m * n * k; }
constexpr double TrainingFlops(double forwardFlops) { return 3.0 * forwardFlops; }
constexpr double RecomputeHardwareFlops(double forwardFlops) { return 4.0 * forwardFlops; }

// Seconds to do `flops` at `peakFlops` x `efficiency` (0 < efficiency <= 1).
constexpr double ComputeSeconds(double flops, double peakFlops, double efficiency)
{
    return peakFlops > 0 && efficiency > 0 ? flops / (peakFlops * efficiency) : 0.0;
}

} // namespace paralens::core
