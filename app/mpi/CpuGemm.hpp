// Real CPU work for the processes backend: a single-thread OpenBLAS sgemm, this process's probed
// sgemm peak, and the probe run rank by rank (so that the ranks sharing the cores do not slow one
// another's probe). Without OpenBLAS (PARALENS_HAVE_BLAS=0) Gemm throws paralens::Unavailable.
#pragma once

#include "mpi/MpiContext.hpp"

namespace paralens::app::mpi {

// C[m x n] = A[m x k] B[k x n] (row-major; `transA`: A is given as k x m, `transB`: B as n x k).
void Gemm(bool transA, bool transB, int m, int n, int k, const float* a, const float* b, float* c);

// This process's single-thread sgemm rate in FLOP/s: 256^3 products for about 100 ms.
double ProbePeakFlops();

// Every rank probes in turn (a barrier between); returns the fastest rank's rate, at every rank.
double ProbeInTurn(const Context& ctx, double timeout);

} // namespace paralens::app::mpi
