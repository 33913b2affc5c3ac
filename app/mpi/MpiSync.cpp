#include "mpi/MpiSync.hpp"

#include <algorithm>
#include <climits>
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
    for (const std::string& text : GatherText(ctx, local, timeout, "checking the results"))
        if (!text.empty()) return text;
    return {};
}

std::vector<std::string> GatherText(const Context& ctx, const std::string& local, double timeout, const std::string& what)
{
    if (local.size() > static_cast<size_t>(INT_MAX))
        throw Failure("rank " + std::to_string(ctx.Rank()) + ": too much to gather while " + what);
    int size = static_cast<int>(local.size());
    std::vector<int> sizes(ctx.Rank() == 0 ? static_cast<size_t>(ctx.Size()) : 0);
    MPI_Request req;
    const int any = 0;
    PARALENS_MPI_CHECK(MPI_Igather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &req));
    ctx.WaitAll(std::span<MPI_Request>(&req, 1), std::span<const int>(&any, 1), timeout, what);
    std::vector<int> displs(sizes.size(), 0);
    long long total = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
        displs[r] = static_cast<int>(std::min<long long>(total, INT_MAX));
        total += sizes[r];
    }
    const bool fits = total <= INT_MAX;
    std::string all(ctx.Rank() == 0 && fits ? static_cast<size_t>(total) : 0, '\0');
    if (ctx.Rank() == 0 && !fits)
        throw Failure("rank 0: the ranks' texts are too large to gather while " + what + " (over 2 GiB)");
    PARALENS_MPI_CHECK(MPI_Igatherv(local.data(), size, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR, 0,
                                    MPI_COMM_WORLD, &req));
    ctx.WaitAll(std::span<MPI_Request>(&req, 1), std::span<const int>(&any, 1), timeout, what);
    std::vector<std::string> out;
    for (size_t r = 0; r < sizes.size(); ++r) out.push_back(all.substr(static_cast<size_t>(displs[r]), static_cast<size_t>(sizes[r])));
    return out;
}

void BroadcastBytes(const Context& ctx, std::span<uint8_t> bytes, double timeout, const std::string& what)
{
    MPI_Request req;
    PARALENS_MPI_CHECK(MPI_Ibcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, MPI_COMM_WORLD, &req));
    const int any = 0;
    ctx.WaitAll(std::span<MPI_Request>(&req, 1), std::span<const int>(&any, 1), timeout, what);
}

} // namespace paralens::app::mpi
