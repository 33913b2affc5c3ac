#include "mpi/ClockSync.hpp"

#include <array>
#include <limits>

namespace paralens::app::mpi {

namespace {
constexpr int kPingTag = 31001, kPongTag = 31002, kResultTag = 31003;
} // namespace

int64_t ClockModel::OffsetAt(int64_t t) const
{
    if (end.localNs == start.localNs) return start.offsetNs;
    const double slope = static_cast<double>(end.offsetNs - start.offsetNs) / static_cast<double>(end.localNs - start.localNs);
    return start.offsetNs + static_cast<int64_t>(slope * static_cast<double>(t - start.localNs));
}

ClockSample MeasureClockOffset(const Context& ctx, int rounds, double timeoutSec)
{
    ClockSample mine;
    mine.localNs = ctx.NowNs();
    auto exchange = [&](void* sendBuf, int sendTag, void* recvBuf, int recvTag, int peer, const std::string& what) {
        std::array<MPI_Request, 2> req{};
        PARALENS_MPI_CHECK(MPI_Irecv(recvBuf, 2, MPI_INT64_T, peer, recvTag, MPI_COMM_WORLD, &req[1]));
        PARALENS_MPI_CHECK(MPI_Isend(sendBuf, 2, MPI_INT64_T, peer, sendTag, MPI_COMM_WORLD, &req[0]));
        const std::array<int, 2> peers{peer, peer};
        return ctx.WaitAll(req, peers, timeoutSec, what);
    };
    if (ctx.Rank() == 0) {
        for (int peer = 1; peer < ctx.Size(); ++peer) {
            int64_t bestRtt = std::numeric_limits<int64_t>::max(), bestOffset = 0, bestPeerTime = 0;
            for (int k = 0; k < rounds; ++k) {
                std::array<int64_t, 2> ping{}, pong{};
                const int64_t t0 = ctx.NowNs();
                auto done = exchange(ping.data(), kPingTag, pong.data(), kPongTag, peer, "clock alignment");
                const int64_t t1 = done[1];
                if (t1 - t0 < bestRtt) {
                    bestRtt = t1 - t0;
                    bestOffset = pong[0] - (t0 + (t1 - t0) / 2);
                    bestPeerTime = pong[0];
                }
            }
            std::array<int64_t, 3> result{bestOffset, (bestRtt + 1) / 2, bestPeerTime};
            MPI_Request req;
            PARALENS_MPI_CHECK(MPI_Isend(result.data(), 3, MPI_INT64_T, peer, kResultTag, MPI_COMM_WORLD, &req));
            const std::array<int, 1> peers{peer};
            ctx.WaitAll(std::span<MPI_Request>(&req, 1), peers, timeoutSec, "clock alignment");
        }
        return mine;
    }
    for (int k = 0; k < rounds; ++k) {
        std::array<int64_t, 2> ping{}, pong{};
        MPI_Request req;
        PARALENS_MPI_CHECK(MPI_Irecv(ping.data(), 2, MPI_INT64_T, 0, kPingTag, MPI_COMM_WORLD, &req));
        const std::array<int, 1> zero{0};
        ctx.WaitAll(std::span<MPI_Request>(&req, 1), zero, timeoutSec, "clock alignment");
        pong[0] = ctx.NowNs();
        PARALENS_MPI_CHECK(MPI_Isend(pong.data(), 2, MPI_INT64_T, 0, kPongTag, MPI_COMM_WORLD, &req));
        ctx.WaitAll(std::span<MPI_Request>(&req, 1), zero, timeoutSec, "clock alignment");
    }
    std::array<int64_t, 3> result{};
    MPI_Request req;
    PARALENS_MPI_CHECK(MPI_Irecv(result.data(), 3, MPI_INT64_T, 0, kResultTag, MPI_COMM_WORLD, &req));
    const std::array<int, 1> zero{0};
    ctx.WaitAll(std::span<MPI_Request>(&req, 1), zero, timeoutSec, "clock alignment");
    mine.offsetNs = result[0];
    mine.boundNs = result[1];
    mine.localNs = result[2]; // when the best round was answered, on this rank's clock
    return mine;
}

} // namespace paralens::app::mpi
