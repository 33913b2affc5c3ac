#include "mpi/MpiBaseline.hpp"

#include <climits>

namespace paralens::app::mpi {

MpiBaseline::MpiBaseline(const Context& ctx, const core::Plan& plan, double timeoutSec)
    : m_ctx(ctx), m_plan(plan), m_timeoutSec(timeoutSec)
{
    const int p = plan.spec.ranks, me = ctx.Rank();
    const uint64_t n = plan.spec.bytes;
    if (n > static_cast<uint64_t>(INT_MAX)) throw Failure("MPI's own collectives take at most 2 GiB here");
    m_in.assign(n, static_cast<uint8_t>(me + 1));
    m_out.assign(n + plan.BlockBytes(0) * static_cast<uint64_t>(p), 0);
    for (int r = 0; r < p; ++r) {
        m_counts.push_back(static_cast<int>(plan.BlockBytes(r)));
        m_displs.push_back(static_cast<int>(plan.blockOffsets[r]));
        m_recvCounts.push_back(static_cast<int>(plan.BlockBytes(me))); // all-to-all: p pieces of my block size
        m_recvDispls.push_back(static_cast<int>(static_cast<uint64_t>(r) * plan.BlockBytes(me)));
    }
}

const char* MpiBaseline::FunctionName() const
{
    switch (m_plan.spec.collective) {
    case core::Collective::Broadcast: return "MPI_Ibcast";
    case core::Collective::Reduce: return "MPI_Ireduce";
    case core::Collective::Scatter: return "MPI_Iscatterv";
    case core::Collective::Gather: return "MPI_Igatherv";
    case core::Collective::AllGather: return "MPI_Iallgatherv";
    case core::Collective::ReduceScatter: return "MPI_Ireduce_scatter";
    case core::Collective::AllReduce: return "MPI_Iallreduce";
    case core::Collective::AllToAll: return "MPI_Ialltoallv";
    case core::Collective::SendRecv: return "MPI_Isend/MPI_Irecv";
    }
    return "?";
}

std::pair<int64_t, int64_t> MpiBaseline::Run()
{
    const int p = m_plan.spec.ranks, me = m_ctx.Rank(), root = m_plan.spec.root;
    const int n = static_cast<int>(m_plan.spec.bytes);
    const int mine = m_counts[static_cast<size_t>(me)], myOffset = m_displs[static_cast<size_t>(me)];
    uint8_t* in = m_in.data();
    uint8_t* out = m_out.data();
    std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
    std::vector<int> peers(1, me == root ? (root + 1) % p : root);
    const int64_t start = m_ctx.NowNs();
    switch (m_plan.spec.collective) {
    case core::Collective::Broadcast: PARALENS_MPI_CHECK(MPI_Ibcast(in, n, MPI_BYTE, root, MPI_COMM_WORLD, &req[0])); break;
    case core::Collective::Reduce:
        PARALENS_MPI_CHECK(MPI_Ireduce(in, out, n, MPI_UINT8_T, MPI_SUM, root, MPI_COMM_WORLD, &req[0]));
        break;
    case core::Collective::Scatter:
        PARALENS_MPI_CHECK(MPI_Iscatterv(in, m_counts.data(), m_displs.data(), MPI_BYTE, out + myOffset, mine, MPI_BYTE, root,
                                         MPI_COMM_WORLD, &req[0]));
        break;
    case core::Collective::Gather:
        PARALENS_MPI_CHECK(MPI_Igatherv(in + myOffset, mine, MPI_BYTE, out, m_counts.data(), m_displs.data(), MPI_BYTE, root,
                                        MPI_COMM_WORLD, &req[0]));
        break;
    case core::Collective::AllGather:
        PARALENS_MPI_CHECK(MPI_Iallgatherv(in + myOffset, mine, MPI_BYTE, out, m_counts.data(), m_displs.data(), MPI_BYTE,
                                           MPI_COMM_WORLD, &req[0]));
        break;
    case core::Collective::ReduceScatter:
        PARALENS_MPI_CHECK(MPI_Ireduce_scatter(in, out, m_counts.data(), MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD, &req[0]));
        break;
    case core::Collective::AllReduce:
        PARALENS_MPI_CHECK(MPI_Iallreduce(in, out, n, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD, &req[0]));
        break;
    case core::Collective::AllToAll: {
        std::vector<int> sendCounts(static_cast<size_t>(p)), sendDispls(static_cast<size_t>(p));
        for (int j = 0; j < p; ++j) {
            sendCounts[static_cast<size_t>(j)] = m_counts[static_cast<size_t>(j)];
            sendDispls[static_cast<size_t>(j)] = m_displs[static_cast<size_t>(j)];
        }
        PARALENS_MPI_CHECK(MPI_Ialltoallv(in, sendCounts.data(), sendDispls.data(), MPI_BYTE, out, m_recvCounts.data(),
                                          m_recvDispls.data(), MPI_BYTE, MPI_COMM_WORLD, &req[0]));
        break;
    }
    case core::Collective::SendRecv:
        req.assign(2, MPI_REQUEST_NULL);
        peers = {(me + p - 1) % p, (me + 1) % p};
        PARALENS_MPI_CHECK(MPI_Irecv(out, n, MPI_BYTE, peers[0], 77, MPI_COMM_WORLD, &req[0]));
        PARALENS_MPI_CHECK(MPI_Isend(in, n, MPI_BYTE, peers[1], 77, MPI_COMM_WORLD, &req[1]));
        break;
    }
    m_ctx.WaitAll(req, peers, m_timeoutSec, FunctionName());
    return {start, m_ctx.NowNs()};
}

} // namespace paralens::app::mpi
