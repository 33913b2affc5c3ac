#include "mpi/MpiPlanExecutor.hpp"

#include "plan/Reference.hpp"
#include "trace/RankTraceMerge.hpp"

#include <algorithm>
#include <climits>

namespace paralens::app::mpi {

namespace {

constexpr int kTagBase = 1000; // tags 1000..31000: the step index (message order per pair does the rest)

int TagOf(size_t step) { return kTagBase + static_cast<int>(step % 30000); }

} // namespace

PlanExecutor::PlanExecutor(const Context& ctx, const core::Plan& plan, uint64_t seed, double timeoutSec)
    : m_ctx(ctx), m_plan(plan), m_seed(seed), m_timeoutSec(timeoutSec), m_buffer(plan.bufferBytes)
{
    if (plan.spec.ranks != ctx.Size())
        throw Failure("the plan has " + std::to_string(plan.spec.ranks) + " ranks but mpirun started " + std::to_string(ctx.Size()));
}

void PlanExecutor::Reset()
{
    for (uint64_t i = 0; i < m_buffer.size(); ++i)
        m_buffer[i] = static_cast<uint8_t>(core::ReferenceValue(m_seed, m_ctx.Rank(), i));
}

std::pair<int64_t, int64_t> PlanExecutor::Run(core::TraceBuilder* rec, const RankTracks& tracks, int iteration, bool fresh)
{
    if (fresh) Reset();
    const int me = m_ctx.Rank();
    std::vector<MPI_Request> requests;
    std::vector<int> peers;
    std::vector<const core::Transfer*> incoming, outgoing, local;
    const int64_t start = m_ctx.NowNs();
    for (size_t s = 0; s < m_plan.steps.size(); ++s) {
        const core::PlanStep& step = m_plan.steps[s];
        incoming.clear();
        outgoing.clear();
        local.clear();
        for (const core::Transfer& t : m_plan.TransfersOf(step)) {
            if (t.src == me && t.dst == me) local.push_back(&t);
            else if (t.src == me) outgoing.push_back(&t);
            else if (t.dst == me) incoming.push_back(&t);
        }
        const size_t n = incoming.size() + outgoing.size() + local.size();
        if (m_staging.size() < n) m_staging.resize(n);
        requests.assign(incoming.size() + outgoing.size(), MPI_REQUEST_NULL);
        peers.clear();
        // Pack everything this step sends (and copies locally) from the pre-step buffer.
        auto pack = [&](const core::Transfer& t, std::vector<uint8_t>& out) {
            out.resize(t.bytes);
            uint64_t at = 0;
            for (const core::Segment& seg : m_plan.SegmentsOf(t)) {
                std::copy_n(m_buffer.begin() + static_cast<ptrdiff_t>(seg.srcOffset), seg.bytes, out.begin() + static_cast<ptrdiff_t>(at));
                at += seg.bytes;
            }
        };
        const int64_t posted = m_ctx.NowNs();
        for (size_t i = 0; i < incoming.size(); ++i) {
            auto& buf = m_staging[i];
            buf.resize(incoming[i]->bytes);
            if (buf.size() > static_cast<size_t>(INT_MAX)) throw Failure("a single message of more than 2 GiB is not supported");
            PARALENS_MPI_CHECK(MPI_Irecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, incoming[i]->src, TagOf(s),
                                         MPI_COMM_WORLD, &requests[i]));
            peers.push_back(incoming[i]->src);
        }
        for (size_t i = 0; i < outgoing.size(); ++i) {
            auto& buf = m_staging[incoming.size() + i];
            pack(*outgoing[i], buf);
            PARALENS_MPI_CHECK(MPI_Isend(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, outgoing[i]->dst, TagOf(s),
                                         MPI_COMM_WORLD, &requests[incoming.size() + i]));
            peers.push_back(outgoing[i]->dst);
        }
        for (size_t i = 0; i < local.size(); ++i) pack(*local[i], m_staging[incoming.size() + outgoing.size() + i]);
        const std::string what = std::string(core::Name(m_plan.spec.collective)) + "/" + std::string(core::Name(m_plan.spec.algorithm)) +
                                 " step " + std::to_string(s);
        const std::vector<int64_t> done = m_ctx.WaitAll(requests, peers, m_timeoutSec, what);
        // Apply what arrived (and local copies): copy or add, after the whole step.
        auto apply = [&](const core::Transfer& t, const std::vector<uint8_t>& data) {
            uint64_t at = 0;
            for (const core::Segment& seg : m_plan.SegmentsOf(t)) {
                uint8_t* dst = m_buffer.data() + seg.dstOffset;
                if (t.op == core::TransferOp::Reduce)
                    for (uint64_t k = 0; k < seg.bytes; ++k) dst[k] = static_cast<uint8_t>(dst[k] + data[at + k]);
                else std::copy_n(data.begin() + static_cast<ptrdiff_t>(at), seg.bytes, dst);
                at += seg.bytes;
            }
        };
        for (size_t i = 0; i < incoming.size(); ++i) {
            const int64_t before = m_ctx.NowNs();
            apply(*incoming[i], m_staging[i]);
            if (!rec) continue;
            const core::Transfer& t = *incoming[i];
            core::Span sp;
            sp.startNs = posted;
            sp.endNs = std::max(done[i], posted);
            sp.bytes = t.bytes;
            sp.chunk = t.block;
            sp.step = static_cast<int32_t>(s);
            sp.name = rec->Intern(m_plan.phases[step.phase]);
            sp.detail = rec->Intern(core::MessageDetail(iteration, false, t.src));
            sp.category = core::SpanCategory::Recv;
            rec->AddSpan(tracks.recv, sp);
            if (t.op == core::TransferOp::Reduce) {
                sp.startNs = before;
                sp.endNs = m_ctx.NowNs();
                sp.category = core::SpanCategory::Compute;
                rec->AddSpan(tracks.reduce, sp);
            }
        }
        for (size_t i = 0; i < local.size(); ++i) apply(*local[i], m_staging[incoming.size() + outgoing.size() + i]);
        if (!rec) continue;
        for (size_t i = 0; i < outgoing.size(); ++i) {
            const core::Transfer& t = *outgoing[i];
            core::Span sp;
            sp.startNs = posted;
            sp.endNs = std::max(done[incoming.size() + i], posted);
            sp.bytes = t.bytes;
            sp.chunk = t.block;
            sp.step = static_cast<int32_t>(s);
            sp.name = rec->Intern(m_plan.phases[step.phase]);
            sp.detail = rec->Intern(core::MessageDetail(iteration, true, t.dst));
            sp.category = core::SpanCategory::Send;
            rec->AddSpan(tracks.send, sp);
        }
    }
    return {start, m_ctx.NowNs()};
}

std::string PlanExecutor::Check() const
{
    const int me = m_ctx.Rank();
    for (const core::ExpectedRegion& e : core::ExpectedRegions(m_plan, me)) {
        for (uint64_t i = 0; i < e.bytes; ++i) {
            const uint8_t want = static_cast<uint8_t>(core::ExpectedValue(e, i, m_plan.spec.ranks, m_seed));
            const uint8_t got = m_buffer[e.offset + i];
            if (want != got)
                return "rank " + std::to_string(me) + " byte " + std::to_string(e.offset + i) + " (" + e.what + "): expected " +
                       std::to_string(want) + ", found " + std::to_string(got);
        }
    }
    return {};
}

} // namespace paralens::app::mpi
