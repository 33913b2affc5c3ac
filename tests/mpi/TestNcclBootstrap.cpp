// The bootstrap of NCCL across processes (app/mpi/NcclBootstrap), under mpirun with 3 processes:
// the unique id made on rank 0 reaches every rank intact, and a rank that cannot run (or a rank 0
// that cannot make the id) stops every rank with a message naming it, before anyone enters NCCL.
// No GPU needed: the id maker is the test's, and NCCL's own ncclGetUniqueId (which needs no GPU) when
// the GPU backend is built. Exit code 0 when every check passed on every rank.
#include "gpu/GpuBackend.hpp"
#include "mpi/MpiContext.hpp"
#include "mpi/NcclBootstrap.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <unistd.h>

using namespace paralens::app::mpi;

namespace {

int g_failures = 0;

void Check(bool ok, const Context& ctx, const std::string& what)
{
    if (ok) return;
    ++g_failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", ctx.Rank(), what.c_str());
}

int SumOverRanks(int local)
{
    int sum = 0;
    MPI_Allreduce(&local, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void TheIdReachesEveryRank(const Context& ctx)
{
    int made = 0;
    NcclId expected{};
    std::mt19937 random(static_cast<unsigned>(::getpid()) * 2654435761u);
    const Bootstrap b = ShareNcclId(ctx, "", [&] {
        ++made;
        for (uint8_t& byte : expected) byte = static_cast<uint8_t>(random());
        return expected;
    }, 20.0);
    Check(b.ok && b.problem.empty(), ctx, "every rank can run: the bootstrap goes ahead (" + b.problem + ")");
    Check(SumOverRanks(made) == 1, ctx, "the id is made once, on rank 0");
    Check(ctx.Rank() != 0 || made == 1, ctx, "rank 0 makes the id");
    // Every rank's copy equals rank 0's original, byte for byte.
    std::vector<uint8_t> all(kNcclIdBytes * static_cast<size_t>(ctx.Size()));
    MPI_Allgather(b.ncclId.data(), kNcclIdBytes, MPI_BYTE, all.data(), kNcclIdBytes, MPI_BYTE, MPI_COMM_WORLD);
    NcclId original = expected;
    MPI_Bcast(original.data(), kNcclIdBytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int r = 0; r < ctx.Size(); ++r)
        Check(std::equal(original.begin(), original.end(), all.begin() + static_cast<long>(r) * kNcclIdBytes), ctx,
              "rank " + std::to_string(r) + " holds rank 0's id");
}

// NCCL's own ncclGetUniqueId needs no GPU, so a build with the GPU backend hands a real id around.
void NcclsOwnIdReachesEveryRank(const Context& ctx)
{
    if (!paralens::gpu::BackendBuilt()) {
        if (ctx.Rank() == 0) std::printf("skipped: NCCL's own unique id (this build has no GPU backend)\n");
        return;
    }
    const Bootstrap b = ShareNcclId(ctx, "", [] { return paralens::gpu::NewNcclUniqueId(); }, 20.0);
    Check(b.ok, ctx, "NCCL made an id: " + b.problem);
    Check(std::any_of(b.ncclId.begin(), b.ncclId.end(), [](uint8_t x) { return x != 0; }), ctx, "NCCL's id is not all zeros");
    std::vector<uint8_t> all(kNcclIdBytes * static_cast<size_t>(ctx.Size()));
    MPI_Allgather(b.ncclId.data(), kNcclIdBytes, MPI_BYTE, all.data(), kNcclIdBytes, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 1; r < ctx.Size(); ++r)
        Check(std::equal(all.begin(), all.begin() + kNcclIdBytes, all.begin() + static_cast<long>(r) * kNcclIdBytes), ctx,
              "rank " + std::to_string(r) + " holds the same NCCL id as rank 0");
}

void ARankWithoutAGpuStopsEveryone(const Context& ctx)
{
    int made = 0;
    const std::string mine = ctx.Rank() == 1 ? "no CUDA device" : "";
    const Bootstrap b = ShareNcclId(ctx, mine, [&] { ++made; return NcclId{}; }, 20.0);
    Check(!b.ok, ctx, "one rank cannot run: nobody goes ahead");
    Check(SumOverRanks(made) == 0, ctx, "no id is made when a rank cannot run");
    Check(Contains(b.problem, "rank 1 (" + ctx.Host() + "): no CUDA device"), ctx, "the message names rank 1: " + b.problem);
    Check(!Contains(b.problem, "rank 0") && !Contains(b.problem, "rank 2"), ctx, "only rank 1 is named: " + b.problem);
}

void SeveralRanksWithTheSameProblemAreNamedTogether(const Context& ctx)
{
    const Bootstrap b = ShareNcclId(ctx, ctx.Rank() == 1 ? "" : "too few GPUs", [] { return NcclId{}; }, 20.0);
    Check(!b.ok, ctx, "two ranks cannot run");
    Check(b.problem == "ranks 0, 2 (" + ctx.Host() + "): too few GPUs", ctx, "grouped: " + b.problem);
}

void ARankZeroThatCannotMakeTheIdStopsEveryone(const Context& ctx)
{
    const Bootstrap b = ShareNcclId(ctx, "", [] () -> NcclId { throw std::runtime_error("ncclGetUniqueId failed: no network"); }, 20.0);
    Check(!b.ok, ctx, "no id: nobody goes ahead");
    Check(b.problem == "rank 0: ncclGetUniqueId failed: no network", ctx, "the message names rank 0: " + b.problem);
}

void GpusAreSharedOutByPlaceOnTheHost(const Context& ctx)
{
    const LocalPlace place = FindLocalPlace(ctx);
    Check(place.rank == ctx.Rank() && place.size == ctx.Size(), ctx, "one host: the local place is the world rank");
    Check(AssignGpu({1, 4}, {0, 1, 2, 3}, "").gpu == 1, ctx, "local rank 1 drives GPU 1");
    Check(AssignGpu({1, 2}, {5, 7}, "").gpu == 7, ctx, "local rank 1 drives the second GPU of --gpus");
    const GpuAssignment tooMany = AssignGpu({2, 3}, {0, 1}, "");
    Check(tooMany.gpu < 0 && Contains(tooMany.problem, "only 2 GPU(s)") && Contains(tooMany.problem, "process 3 of 3"), ctx,
          "a third process for two GPUs is refused: " + tooMany.problem);
    const GpuAssignment none = AssignGpu({0, 1}, {}, "the GPU backend is not built");
    Check(none.gpu < 0 && none.problem == "the GPU backend is not built", ctx, "no GPU: the reason given");
    Check(AssignGpu({0, 1}, {}, "").problem == "no CUDA device", ctx, "no GPU and no reason: no CUDA device");
}

} // namespace

int main(int argc, char** argv)
{
    Context ctx(&argc, &argv);
    if (ctx.Size() != 3) {
        if (ctx.Rank() == 0) std::fprintf(stderr, "run this test under mpirun -np 3 (got %d processes)\n", ctx.Size());
        return 2;
    }
    TheIdReachesEveryRank(ctx);
    NcclsOwnIdReachesEveryRank(ctx);
    ARankWithoutAGpuStopsEveryone(ctx);
    SeveralRanksWithTheSameProblemAreNamedTogether(ctx);
    ARankZeroThatCannotMakeTheIdStopsEveryone(ctx);
    GpusAreSharedOutByPlaceOnTheHost(ctx);
    const int failures = SumOverRanks(g_failures);
    if (ctx.Rank() == 0) std::printf("NCCL bootstrap over MPI: %s (%d failed checks over %d ranks)\n", failures ? "FAILED" : "ok", failures, ctx.Size());
    return failures == 0 ? 0 : 1;
}
