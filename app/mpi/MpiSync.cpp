#include "mpi/MpiSync.hpp"

#include <algorithm>
#include <span>
#include <vector>

namespace paralens::app::mpi {

double MaxOverRanks(const Context& ctx, double local, double timeout)
{
    double result = 0;
    MPI_Request req;
    PARALENS_MPI_CHECK(MPI_Iallreduce(&local, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req));
    const int any = 0;
    ctx.WaitAll(std::span<MPI_Request>(&req, 1), std::span<const int>(&any, 1), timeout, "gathering the times");
    return result;
}

void Barrier(const Context& ctx, double timeout, const std::string& what)
{
    MPI_Request req;
    PARALENS_MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    const int any = 0;
    ctx.WaitAll(std::span<MPI_Request>(&req, 1), std::span<const int>(&any, 1), timeout, what);
}

std::string GatherMismatch(const Context& ctx, const std::string& local, double timeout)
{
    std::vector<char> buf(512, 0);
    std::copy_n(local.begin(), std::min(local.size(), buf.size() - 1), buf.begin());
    std::vector<char> all(ctx.Rank() == 0 ? buf.size() * static_cast<size_t>(ctx.Size()) : 0);
    MPI_Request req;
    PARALENS_MPI_CHECK(MPI_Igather(buf.data(), static_cast<int>(buf.size()), MPI_CHAR, all.data(), static_cast<int>(buf.size()),
                                   MPI_CHAR, 0, MPI_COMM_WORLD, &req));
    const int any = 0;
    ctx.WaitAll(std::span<MPI_Request>(&req, 1), std::span<const int>(&any, 1), timeout, "checking the results");
    for (int r = 0; r < ctx.Size() && ctx.Rank() == 0; ++r)
        if (all[static_cast<size_t>(r) * buf.size()] != 0) return std::string(&all[static_cast<size_t>(r) * buf.size()]);
    return {};
}

} // namespace paralens::app::mpi
