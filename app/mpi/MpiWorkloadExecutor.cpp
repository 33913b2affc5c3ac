#include "mpi/MpiWorkloadExecutor.hpp"

#include "common/Error.hpp"
#include "mpi/CpuGemm.hpp"
#include "plan/Plan.hpp"
#include "trace/RankTraceMerge.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

namespace paralens::app::mpi {

namespace {

constexpr int kMessageTag = 77;  // the PlanExecutor's tags start at 1000
constexpr int kGemmRows = 256;   // compute tasks: [256 x 256] x [256 x n], n sized to the seconds

std::vector<int> Participants(const core::Workload& w, core::TaskId t)
{
    switch (w.KindOf(t)) {
    case core::TaskKind::Compute: return {w.ComputeOf(t).device};
    case core::TaskKind::Message: return {w.MessageOf(t).src, w.MessageOf(t).dst};
    case core::TaskKind::Collective: return w.CollectiveOf(t).devices;
    }
    return {};
}

// The processes whose having finished `dep` lets `t` start: a compute's device, a message's
// sender or receiver (the receiver waits for the sender), any member of a collective.
bool Carried(const core::Workload& w, core::TaskId t, core::TaskId dep)
{
    const std::vector<int> mine = Participants(w, t), theirs = Participants(w, dep);
    for (int p : mine)
        if (std::find(theirs.begin(), theirs.end(), p) != theirs.end()) return true;
    return false;
}

std::string Describe(const core::Workload& w, core::TaskId t)
{
    std::string who;
    for (int p : Participants(w, t)) who += (who.empty() ? "" : ",") + std::to_string(p);
    const core::TaskTags tags = w.KindOf(t) == core::TaskKind::Compute    ? w.ComputeOf(t).tags
                                : w.KindOf(t) == core::TaskKind::Message ? w.MessageOf(t).tags
                                                                          : w.CollectiveOf(t).tags;
    return "task " + std::to_string(t) + " (" + std::string(w.NameOf(tags.name)) + " on " + who + ")";
}

} // namespace

void CheckRunnable(const core::Workload& w, int processes)
{
    if (w.Devices() != processes)
        throw Error("the workload has " + std::to_string(w.Devices()) + " devices but mpirun started " + std::to_string(processes) +
                    " processes (one per device)");
    for (core::TaskId t = 0; t < w.TaskCount(); ++t) {
        if (w.KindOf(t) == core::TaskKind::Collective) {
            const std::vector<int>& d = w.CollectiveOf(t).devices;
            for (size_t r = 0; r < d.size(); ++r)
                if (d.size() != static_cast<size_t>(processes) || d[r] != static_cast<int>(r))
                    throw Error(Describe(w, t) + ": the processes backend runs collectives over every process in rank order only");
        }
        for (core::TaskId dep : w.DepsOf(t))
            if (!Carried(w, t, dep))
                throw Error(Describe(w, t) + " waits for " + Describe(w, dep) +
                            " but no process takes part in both: the processes backend cannot carry that dependency");
    }
}

WorkloadExecutor::WorkloadExecutor(const Context& ctx, const core::Workload& w, const WorkloadRunOptions& o, core::TraceBuilder& b,
                                   WorkloadTracks tracks)
    : m_ctx(ctx), m_w(w), m_o(o), m_b(b), m_tracks(tracks), m_a(kGemmRows * kGemmRows, 0.01f)
{
    Require(o.peakFlops > 0, "the processes backend needs the probed GEMM peak to size compute tasks");
}

bool WorkloadExecutor::Traced(core::TaskId t) const
{
    const core::TaskKind k = m_w.KindOf(t);
    const int step = k == core::TaskKind::Compute ? m_w.ComputeOf(t).tags.step
                     : k == core::TaskKind::Message ? m_w.MessageOf(t).tags.step
                                                    : m_w.CollectiveOf(t).tags.step;
    return step == core::kNone || step >= m_o.firstTracedStep;
}

core::Span WorkloadExecutor::Tagged(const core::TaskTags& tags, int64_t start, int64_t end)
{
    core::Span s;
    s.startNs = start;
    s.endNs = std::max(end, start);
    s.name = m_b.Intern(m_w.NameOf(tags.name));
    s.microBatch = tags.microBatch;
    s.chunk = tags.chunk;
    s.step = tags.step == core::kNone ? core::kNone : tags.step - m_o.firstTracedStep;
    return s;
}

void WorkloadExecutor::Ended(const core::TaskTags& tags, int64_t endNs)
{
    int64_t& e = m_stepEnd[tags.step];
    e = std::max(e, endNs);
}

void WorkloadExecutor::Compute(core::TaskId t)
{
    const core::ComputeTask& c = m_w.ComputeOf(t);
    const double flops = c.seconds * m_o.slowdown * m_o.peakFlops;
    const int n = static_cast<int>(std::lround(flops / (2.0 * kGemmRows * kGemmRows)));
    if (n < 1) return; // a task of no time (an optimizer step of 0 s)
    const size_t cells = static_cast<size_t>(kGemmRows) * static_cast<size_t>(n);
    if (m_x.size() < cells) m_x.assign(cells, 0.02f), m_y.assign(cells, 0.0f);
    const int64_t start = m_ctx.NowNs();
    Gemm(false, false, kGemmRows, n, kGemmRows, m_a.data(), m_x.data(), m_y.data());
    const int64_t end = m_ctx.NowNs();
    Ended(c.tags, end);
    if (!Traced(t)) return;
    core::Span s = Tagged(c.tags, start, end);
    s.category = c.category;
    s.flops = 2.0 * kGemmRows * kGemmRows * n;
    m_b.AddSpan(m_tracks.compute, s);
}

void WorkloadExecutor::Messages(const std::vector<core::TaskId>& batch)
{
    const int me = m_ctx.Rank();
    std::vector<MPI_Request> requests(batch.size(), MPI_REQUEST_NULL);
    std::vector<int> peers;
    if (m_buffers.size() < batch.size()) m_buffers.resize(batch.size());
    const int64_t posted = m_ctx.NowNs();
    for (size_t i = 0; i < batch.size(); ++i) {
        const core::MessageTask& m = m_w.MessageOf(batch[i]);
        if (m.bytes > static_cast<uint64_t>(INT_MAX)) throw Failure("a single message of more than 2 GiB is not supported");
        std::vector<uint8_t>& buf = m_buffers[i];
        buf.resize(m.bytes);
        const int peer = m.src == me ? m.dst : m.src;
        peers.push_back(peer);
        const uint8_t mark = static_cast<uint8_t>(batch[i] * 131u + 7u); // which task this message is, at both ends
        if (m.src == me && !buf.empty()) buf.front() = buf.back() = mark;
        if (m.src == me) PARALENS_MPI_CHECK(MPI_Isend(buf.data(), static_cast<int>(m.bytes), MPI_BYTE, peer, kMessageTag, MPI_COMM_WORLD, &requests[i]));
        else PARALENS_MPI_CHECK(MPI_Irecv(buf.data(), static_cast<int>(m.bytes), MPI_BYTE, peer, kMessageTag, MPI_COMM_WORLD, &requests[i]));
    }
    const std::vector<int64_t> done = m_ctx.WaitAll(requests, peers, m_o.timeoutSec, std::string(m_w.NameOf(m_w.MessageOf(batch[0]).tags.name)));
    for (size_t i = 0; i < batch.size(); ++i) {
        const core::MessageTask& m = m_w.MessageOf(batch[i]);
        const bool sending = m.src == me;
        Ended(m.tags, done[i]);
        const uint8_t mark = static_cast<uint8_t>(batch[i] * 131u + 7u);
        if (!sending && m.bytes > 0 && m_mismatch.empty() && (m_buffers[i].front() != mark || m_buffers[i].back() != mark))
            m_mismatch = "rank " + std::to_string(me) + ": the message of task " + std::to_string(batch[i]) + " from rank " +
                         std::to_string(m.src) + " is not the one sent for it";
        int64_t reduceStart = 0, reduceEnd = 0;
        if (!sending && m.reduce) { // the receiver adds what arrived into its copy
            reduceStart = m_ctx.NowNs();
            if (m_accumulated.size() < m.bytes) m_accumulated.resize(m.bytes);
            for (uint64_t k = 0; k < m.bytes; ++k) m_accumulated[k] = static_cast<uint8_t>(m_accumulated[k] + m_buffers[i][k]);
            reduceEnd = m_ctx.NowNs();
            Ended(m.tags, reduceEnd);
        }
        if (!Traced(batch[i])) continue;
        core::Span s = Tagged(m.tags, posted, done[i]);
        s.bytes = m.bytes;
        s.category = sending ? core::SpanCategory::Send : core::SpanCategory::Recv;
        s.detail = m_b.Intern(core::MessageDetail(static_cast<int>(batch[i]), sending, sending ? m.dst : m.src));
        m_b.AddSpan(sending ? m_tracks.send : m_tracks.recv, s);
        if (reduceEnd > reduceStart) {
            core::Span r = Tagged(m.tags, reduceStart, reduceEnd);
            r.bytes = m.bytes;
            r.category = core::SpanCategory::Compute;
            r.name = m_b.Intern("add " + std::string(m_w.NameOf(m.tags.name)));
            m_b.AddSpan(m_tracks.reduce, r);
        }
    }
}

void WorkloadExecutor::Collective(core::TaskId t, bool last)
{
    const core::CollectiveTask& c = m_w.CollectiveOf(t);
    auto& plan = m_plans[c.spec.bytes];
    if (!plan) plan = std::make_unique<core::Plan>(core::BuildPlan(c.spec));
    auto& exec = m_executors[c.spec.bytes];
    if (!exec) exec = std::make_unique<PlanExecutor>(m_ctx, *plan, m_o.seed, m_o.timeoutSec);
    const bool traced = Traced(t);
    const RankTracks tracks{m_tracks.send, m_tracks.recv, m_tracks.reduce};
    const auto [start, end] = exec->Run(traced ? &m_b : nullptr, tracks, static_cast<int>(t), last);
    if (last && m_mismatch.empty()) m_mismatch = exec->Check();
    Ended(c.tags, end);
    if (!traced) return;
    core::Span s = Tagged(c.tags, start, end);
    s.bytes = c.spec.bytes;
    s.category = core::SpanCategory::Collective;
    s.detail = m_b.Intern(std::string(core::Name(c.spec.collective)) + "/" + std::string(core::Name(c.spec.algorithm)) + " over " +
                          std::to_string(c.spec.ranks) + " processes");
    m_b.AddSpan(m_tracks.collective, s);
}

void WorkloadExecutor::Run(const std::function<void()>& afterTask)
{
    const int me = m_ctx.Rank();
    std::map<uint64_t, core::TaskId> lastOfSize; // each collective size's last run is checked
    for (core::TaskId t = 0; t < m_w.TaskCount(); ++t)
        if (m_w.KindOf(t) == core::TaskKind::Collective) lastOfSize[m_w.CollectiveOf(t).spec.bytes] = t;
    m_startNs = m_ctx.NowNs();
    std::vector<core::TaskId> batch;
    auto flush = [&] {
        if (batch.empty()) return;
        Messages(batch);
        batch.clear();
        afterTask();
    };
    for (core::TaskId t = 0; t < m_w.TaskCount(); ++t) {
        const std::vector<int> who = Participants(m_w, t);
        const bool mine = std::find(who.begin(), who.end(), me) != who.end();
        if (m_w.KindOf(t) == core::TaskKind::Message) {
            if (!mine) continue;
            for (core::TaskId dep : m_w.DepsOf(t))
                if (std::find(batch.begin(), batch.end(), dep) != batch.end()) flush();
            batch.push_back(t);
            continue;
        }
        if (!mine) continue;
        flush();
        if (m_w.KindOf(t) == core::TaskKind::Compute) Compute(t);
        else Collective(t, lastOfSize[m_w.CollectiveOf(t).spec.bytes] == t);
        afterTask();
    }
    flush();
}

std::vector<double> WorkloadExecutor::StepSeconds() const
{
    std::vector<double> out;
    int64_t before = m_startNs;
    for (const auto& [step, end] : m_stepEnd) {
        if (step == core::kNone) continue;
        if (step >= m_o.firstTracedStep) out.push_back(static_cast<double>(end - before) * 1e-9);
        before = end;
    }
    return out;
}

} // namespace paralens::app::mpi
