#include "mpi/CpuGemm.hpp"

#include "common/Error.hpp"
#include "mpi/MpiSync.hpp"

#include <chrono>
#include <string>
#include <vector>

#if PARALENS_HAVE_BLAS
#include <cblas.h>
#endif

namespace paralens::app::mpi {

#if PARALENS_HAVE_BLAS
void Gemm(bool transA, bool transB, int m, int n, int k, const float* a, const float* b, float* c)
{
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
                transA ? m : k, b, transB ? k : n, 0.0f, c, n);
}
#else
void Gemm(bool, bool, int, int, int, const float*, const float*, float*)
{
    throw Unavailable("the processes backend's GEMMs: this paralens was built without OpenBLAS (install libopenblas-dev, then rebuild)");
}
#endif

double ProbePeakFlops()
{
    constexpr int n = 256;
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    Gemm(false, false, n, n, n, a.data(), b.data(), c.data()); // warm-up
    const auto start = std::chrono::steady_clock::now();
    int reps = 0;
    double seconds = 0;
    while (seconds < 0.1) {
        Gemm(false, false, n, n, n, a.data(), b.data(), c.data());
        ++reps;
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return 2.0 * n * n * n * reps / seconds;
}

double ProbeInTurn(const Context& ctx, double timeout)
{
    double mine = 0;
    for (int r = 0; r < ctx.Size(); ++r) {
        if (r == ctx.Rank()) mine = ProbePeakFlops();
        Barrier(ctx, timeout, "the GEMM probe of rank " + std::to_string(r));
    }
    return MaxOverRanks(ctx, mine, timeout);
}

} // namespace paralens::app::mpi
