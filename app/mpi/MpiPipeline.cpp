#include "mpi/MpiPipeline.hpp"

#include "common/Error.hpp"
#include "live/LiveProtocol.hpp"
#include "mpi/ClockSync.hpp"
#include "mpi/CpuGemm.hpp"
#include "mpi/MpiContext.hpp"
#include "mpi/MpiRun.hpp"
#include "mpi/MpiSync.hpp"
#include "mpi/RankTraces.hpp"
#include "trace/RankTraceMerge.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>


namespace paralens::app::mpi {

namespace {

struct Shape {
    int tokens = 0, hidden = 0, chunkCols = 0; // activation tokens x hidden; a chunk's weight hidden x chunkCols
    double ChunkForwardFlops() const { return 2.0 * tokens * hidden * chunkCols; }
};

struct Tracks {
    uint32_t compute = 0, send = 0, recv = 0;
};

// One stage's program for one training step: its ops in schedule order, real GEMMs, real messages.
class StageRunner {
public:
    StageRunner(const Context& ctx, const core::Schedule& s, Shape shape, double timeoutSec, core::TraceBuilder& b, Tracks tracks)
        : m_ctx(ctx), m_s(s), m_shape(shape), m_timeout(timeoutSec), m_b(b), m_tracks(tracks),
          m_weights(static_cast<size_t>(s.spec.chunks), std::vector<float>(static_cast<size_t>(shape.hidden) * shape.chunkCols, 0.01f)),
          m_out(static_cast<size_t>(shape.tokens) * std::max(shape.hidden, shape.chunkCols)),
          m_dw(static_cast<size_t>(shape.hidden) * shape.chunkCols)
    {
    }

    // Runs every op of this stage; `afterOp` after each (streaming). Returns [start, end] in NowNs.
    std::pair<int64_t, int64_t> Step(int iteration, bool traced, const std::function<void()>& afterOp)
    {
        m_iteration = iteration;
        m_traced = traced;
        const int64_t start = m_ctx.NowNs();
        for (const core::PipeOp& op : m_s.stages[static_cast<size_t>(m_ctx.Rank())]) {
            if (op.kind == core::PipeOpKind::Forward) Forward(op);
            else if (op.kind == core::PipeOpKind::Backward) Backward(op);
            else WeightGrad(op);
            PollSends(false);
            afterOp();
        }
        PollSends(true);
        return {start, m_ctx.NowNs()};
    }
    const std::string& Mismatch() const { return m_mismatch; }

private:
    int Virtual(const core::PipeOp& op) const { return op.chunk * m_s.spec.stages + m_ctx.Rank(); }
    int Device(int virtualStage) const { return virtualStage % m_s.spec.stages; }
    int Last() const { return m_s.spec.VirtualStages() - 1; }
    size_t Elements() const { return static_cast<size_t>(m_shape.tokens) * m_shape.hidden; }
    int MessageKey(int m) const { return m_iteration * m_s.spec.TotalMicroBatches() + m; }
    int Tag(int m, int k, int dir) const { return 1 + (((m % 512) * (Last() + 1) + k) * 2 + dir) % 32000; }

    void Forward(const core::PipeOp& op)
    {
        const int k = Virtual(op);
        std::vector<float> x = k == 0 ? Input() : Receive(op, k, 0);
        Compute(core::SpanCategory::Forward, op, 1.0, "", [&] {
            Gemm(false, false, m_shape.tokens, m_shape.chunkCols, m_shape.hidden, x.data(), W(op), m_out.data());
        });
        if (k < Last()) Send(op, x, k + 1, 0);
        m_stash[{op.microBatch, op.chunk}] = std::move(x);
    }

    void Backward(const core::PipeOp& op)
    {
        const int k = Virtual(op);
        std::vector<float> dy = k == Last() ? std::vector<float>(Elements(), 1.0f) : Receive(op, k, 1);
        const std::vector<float>& x = m_stash.at({op.microBatch, op.chunk});
        if (m_s.spec.recompute)
            Compute(core::SpanCategory::Forward, op, 1.0, "recompute", [&] {
                Gemm(false, false, m_shape.tokens, m_shape.chunkCols, m_shape.hidden, x.data(), W(op), m_out.data());
            });
        const bool split = m_s.spec.SplitsWeightGrad();
        std::vector<float> dx(Elements());
        Compute(core::SpanCategory::Backward, op, split ? 1.0 : 2.0, "", [&] {
            Gemm(false, true, m_shape.tokens, m_shape.hidden, m_shape.chunkCols, dy.data(), W(op), dx.data());
            if (!split) Gemm(true, false, m_shape.hidden, m_shape.chunkCols, m_shape.tokens, x.data(), dy.data(), m_dw.data());
        });
        if (k > 0) Send(op, dx, k - 1, 1);
        if (split) m_grads[{op.microBatch, op.chunk}] = std::move(dy);
        else m_stash.erase({op.microBatch, op.chunk});
    }

    void WeightGrad(const core::PipeOp& op)
    {
        const std::vector<float>& x = m_stash.at({op.microBatch, op.chunk});
        const std::vector<float>& dy = m_grads.at({op.microBatch, op.chunk});
        Compute(core::SpanCategory::WeightGrad, op, 1.0, "", [&] {
            Gemm(true, false, m_shape.hidden, m_shape.chunkCols, m_shape.tokens, x.data(), dy.data(), m_dw.data());
        });
        m_stash.erase({op.microBatch, op.chunk});
        m_grads.erase({op.microBatch, op.chunk});
    }

    const float* W(const core::PipeOp& op) const { return m_weights[static_cast<size_t>(op.chunk)].data(); }

    std::vector<float> Input() const { return std::vector<float>(Elements(), 0.5f); }

    template <class Fn>
    void Compute(core::SpanCategory category, const core::PipeOp& op, double flopsFactor, const char* detail, Fn&& fn)
    {
        const int64_t start = m_ctx.NowNs();
        fn();
        if (!m_traced) return;
        core::Span s;
        s.startNs = start;
        s.endNs = m_ctx.NowNs();
        s.flops = flopsFactor * m_shape.ChunkForwardFlops();
        s.category = category;
        s.microBatch = op.microBatch;
        s.chunk = op.chunk;
        s.step = m_iteration;
        s.name = m_b.Intern(category == core::SpanCategory::Forward ? "F" : category == core::SpanCategory::Backward ? "B" : "W");
        if (*detail) s.detail = m_b.Intern(detail);
        m_b.AddSpan(m_tracks.compute, s);
    }

    // The activation (dir 0) or gradient (dir 1) of `op` for virtual stage k, checked: its first
    // three values say which virtual stage sent it, for which micro-batch and step.
    std::vector<float> Receive(const core::PipeOp& op, int k, int dir)
    {
        const int from = dir == 0 ? k - 1 : k + 1;
        std::vector<float> buf(Elements());
        MPI_Request req;
        const int64_t posted = m_ctx.NowNs();
        PARALENS_MPI_CHECK(MPI_Irecv(buf.data(), static_cast<int>(buf.size()), MPI_FLOAT, Device(from), Tag(op.microBatch, k, dir), MPI_COMM_WORLD, &req));
        const int peer = Device(from);
        const std::string what = std::string(dir == 0 ? "the activation" : "the gradient") + " of micro-batch " + std::to_string(op.microBatch) +
                                 " for virtual stage " + std::to_string(k);
        const int64_t done = m_ctx.WaitAll(std::span<MPI_Request>(&req, 1), std::span<const int>(&peer, 1), m_timeout, what)[0];
        if (m_mismatch.empty() && (buf[0] != static_cast<float>(from) || buf[1] != static_cast<float>(op.microBatch) || buf[2] != static_cast<float>(m_iteration)))
            m_mismatch = "rank " + std::to_string(m_ctx.Rank()) + ": " + what + " arrived marked virtual stage " + std::to_string(buf[0]) +
                         ", micro-batch " + std::to_string(buf[1]) + ", step " + std::to_string(buf[2]);
        if (m_traced) {
            // The wait is the stage's bubble (idle, hatched in the timeline); the message itself
            // is marked where it arrived, so that the sender's span pairs with it into an arrow.
            Message(core::SpanCategory::Idle, m_tracks.recv, posted, done, peer, k * 2 + dir, op, 0);
            Message(core::SpanCategory::Recv, m_tracks.recv, done, done, peer, k * 2 + dir, op, buf.size() * sizeof(float));
        }
        return buf;
    }

    void Send(const core::PipeOp& op, std::vector<float> data, int to, int dir)
    {
        data[0] = static_cast<float>(Virtual(op));
        data[1] = static_cast<float>(op.microBatch);
        data[2] = static_cast<float>(m_iteration);
        Pending p{MPI_REQUEST_NULL, std::move(data), m_ctx.NowNs(), Device(to), to * 2 + dir, op};
        PARALENS_MPI_CHECK(MPI_Isend(p.data.data(), static_cast<int>(p.data.size()), MPI_FLOAT, p.peer, Tag(op.microBatch, to, dir), MPI_COMM_WORLD, &p.req));
        // The send costs this stage only the posting; its completion waits on the receiver.
        if (m_traced) Message(core::SpanCategory::Send, m_tracks.send, p.posted, m_ctx.NowNs(), p.peer, p.step, op, p.data.size() * sizeof(float));
        m_pending.push_back(std::move(p));
    }

    void PollSends(bool all)
    {
        for (Pending& p : m_pending) {
            if (p.req == MPI_REQUEST_NULL) continue;
            if (all) {
                m_ctx.WaitAll(std::span<MPI_Request>(&p.req, 1), std::span<const int>(&p.peer, 1), m_timeout, "a send to rank " + std::to_string(p.peer));
            } else {
                int flag = 0;
                PARALENS_MPI_CHECK(MPI_Test(&p.req, &flag, MPI_STATUS_IGNORE));
                if (!flag) continue;
            }
            p.req = MPI_REQUEST_NULL;
        }
        std::erase_if(m_pending, [](const Pending& p) { return p.req == MPI_REQUEST_NULL; });
    }

    void Message(core::SpanCategory c, uint32_t track, int64_t start, int64_t end, int peer, int step, const core::PipeOp& op, uint64_t bytes)
    {
        core::Span s;
        s.startNs = start;
        s.endNs = std::max(start, end);
        s.bytes = bytes;
        s.category = c;
        s.microBatch = op.microBatch;
        s.chunk = op.chunk;
        s.step = step;
        s.name = m_b.Intern(c == core::SpanCategory::Idle ? (step % 2 == 0 ? "wait for activation" : "wait for gradient")
                                                           : (step % 2 == 0 ? "activation" : "gradient"));
        if (c != core::SpanCategory::Idle) s.detail = m_b.Intern(core::MessageDetail(MessageKey(op.microBatch), c == core::SpanCategory::Send, peer));
        m_b.AddSpan(track, s);
    }

    struct Pending {
        MPI_Request req;
        std::vector<float> data;
        int64_t posted;
        int peer, step;
        core::PipeOp op;
    };

    const Context& m_ctx;
    const core::Schedule& m_s;
    Shape m_shape;
    double m_timeout;
    core::TraceBuilder& m_b;
    Tracks m_tracks;
    std::vector<std::vector<float>> m_weights;
    std::vector<float> m_out, m_dw;
    std::map<std::pair<int, int>, std::vector<float>> m_stash, m_grads;
    std::vector<Pending> m_pending;
    std::string m_mismatch;
    int m_iteration = 0;
    bool m_traced = false;
};

} // namespace

namespace {

core::Schedule BuildStages(const MpiPipelineOptions& o, int stages)
{
    core::PipelineSpec spec;
    spec.kind = o.schedule;
    spec.stages = stages;
    spec.microBatches = o.microBatches;
    spec.chunks = o.schedule == core::ScheduleKind::Interleaved ? o.chunks : 1;
    spec.batches = o.schedule == core::ScheduleKind::PipeDream ? o.batches : 1;
    spec.forwardSec = o.forwardMs * 1e-3;
    spec.recompute = o.recompute;
    return core::BuildSchedule(spec); // throws Error naming the parameter
}

// Each rank probes in turn (so that no two share a core while measuring); the fastest rate wins.
Shape ShapeFor(const MpiPipelineOptions& o, const core::Schedule& s, double peakFlops)
{
    Shape shape;
    shape.tokens = o.tokens;
    // A forward through the whole stage (all its chunks) = 2 tokens hidden^2 FLOPs = forwardMs at the peak.
    const double h = o.hidden > 0 ? o.hidden : std::sqrt(o.forwardMs * 1e-3 * peakFlops / (2.0 * o.tokens));
    shape.hidden = std::max(16, static_cast<int>(std::lround(h / 16.0)) * 16);
    shape.chunkCols = std::max(1, shape.hidden / s.spec.chunks);
    return shape;
}

core::Metadata PipelineMeta(const MpiPipelineOptions& o, const core::Schedule& s, const Shape& shape, double peak)
{
    core::Metadata m;
    m.title = std::string(core::Name(o.schedule)) + " on " + std::to_string(s.spec.stages) + " processes";
    m.workload.Set("kind", std::string("pipeline"));
    m.workload.Set("schedule", std::string(core::Name(o.schedule)));
    m.workload.Set("stages", int64_t{s.spec.stages});
    m.workload.Set("microbatches", int64_t{s.spec.microBatches});
    m.workload.Set("chunks", int64_t{s.spec.chunks});
    m.workload.Set("recompute", o.recompute);
    m.workload.Set("tokens", int64_t{shape.tokens});
    m.workload.Set("hidden", int64_t{shape.hidden});
    m.workload.Set("forwardFlops", shape.ChunkForwardFlops() * s.spec.chunks);
    m.workload.Set("forwardMsTarget", o.forwardMs);
    m.workload.Set("activationBytes", static_cast<int64_t>(shape.tokens) * shape.hidden * 4);
    m.workload.Set("iterations", int64_t{o.iterations});
    m.hardware.Set("cpuPeakFlops", peak);
    m.hardware.Set("peakSource", std::string("single-thread OpenBLAS sgemm 256^3, probed on each rank in turn (the fastest)"));
    if (core::BubbleFractionFormula(s.spec) >= 0) m.results.Set("bubbleFractionFormula", core::BubbleFractionFormula(s.spec));
    return m;
}

void PrintPipeline(const MpiPipelineOptions& o, const core::Metadata& meta, const std::vector<double>& steps, const std::string& mismatch)
{
    std::vector<double> sorted = steps;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.empty() ? 0.0 : sorted[sorted.size() / 2];
    if (o.json) {
        nlohmann::json j{{"backend", "mpi"}, {"workload", "pipeline"}, {"schedule", core::Name(o.schedule)},
                         {"stages", meta.workload.GetNumber("stages")}, {"microBatches", o.microBatches},
                         {"hidden", meta.workload.GetNumber("hidden")}, {"tokens", o.tokens},
                         {"cpuPeakGflops", meta.hardware.GetNumber("cpuPeakFlops") * 1e-9}, {"stepSeconds", steps},
                         {"medianStepSeconds", median}, {"correct", mismatch.empty()}};
        if (!mismatch.empty()) j["mismatch"] = mismatch;
        if (!o.out.empty()) j["out"] = o.out;
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        std::printf("# paralens run --backend mpi --workload pipeline: %s, D=%g, N=%d, tokens %d x hidden %g, CPU sgemm peak %.1f GFLOP/s\n"
                    "# step time (median of %zu): %.3f ms; received tensors %s\n",
                    std::string(core::Name(o.schedule)).c_str(), meta.workload.GetNumber("stages"), o.microBatches, o.tokens,
                    meta.workload.GetNumber("hidden"), meta.hardware.GetNumber("cpuPeakFlops") * 1e-9, steps.size(), median * 1e3,
                    mismatch.empty() ? "as expected" : ("WRONG: " + mismatch).c_str());
    }
    std::fflush(stdout);
}

std::vector<core::MetaSection> PipelineRows(const core::Metadata& meta, const std::vector<double>& steps, const std::string& mismatch)
{
    std::vector<core::MetaSection> rows;
    for (size_t i = 0; i < steps.size(); ++i) {
        core::MetaSection row;
        row.Set("schedule", meta.workload.GetString("schedule"));
        row.Set("step", static_cast<int64_t>(i));
        row.Set("seconds", steps[i]);
        row.Set("correct", mismatch.empty());
        if (!mismatch.empty()) row.Set("mismatch", mismatch);
        rows.push_back(std::move(row));
    }
    return rows;
}

} // namespace

int RunMpiPipeline(const MpiPipelineOptions& o)
{
    Context ctx(nullptr, nullptr);
    const core::Schedule schedule = BuildStages(o, ctx.Size());
    core::TraceBuilder b;
    const uint32_t device = b.AddDevice("rank " + std::to_string(ctx.Rank()), core::DeviceKind::Process, ctx.Rank(), ctx.Host());
    const Tracks tracks{b.AddTrack(device, "compute"), b.AddTrack(device, "send"), b.AddTrack(device, "recv")};
    live::LiveStream stream(ctx.Rank(), ctx.Size(), ctx.Host(), core::DeviceKind::Process);
    ClockModel clock;
    std::vector<double> steps;
    std::string mismatch;
    core::Metadata meta;
    try {
        BeginRankTrace(ctx, stream, clock, o.timeoutSec);
        if (ctx.Rank() == 0) stream.Send(live::EncodeProgress("probing the CPU's GEMM peak", 0.0));
        const double peak = ProbeInTurn(ctx, o.timeoutSec);
        const Shape shape = ShapeFor(o, schedule, peak);
        meta = PipelineMeta(o, schedule, shape, peak);
        if (ctx.Rank() == 0) stream.Send(live::EncodeMeta(meta));
        StageRunner runner(ctx, schedule, shape, o.timeoutSec, b, tracks);
        const auto afterOp = [&] { stream.FlushSpans(b, 20'000'000); };
        for (int i = 0; i < o.warmup + o.iterations; ++i) {
            Barrier(ctx, o.timeoutSec, "the barrier before step " + std::to_string(i));
            const auto span = runner.Step(std::max(0, i - o.warmup), i >= o.warmup, afterOp);
            if (i < o.warmup) continue;
            steps.push_back(MaxOverRanks(ctx, static_cast<double>(span.second - span.first) * 1e-9, o.timeoutSec));
            stream.FlushSpans(b);
            if (ctx.Rank() == 0)
                stream.Send(live::EncodeProgress("step " + std::to_string(i - o.warmup + 1) + " of " + std::to_string(o.iterations),
                                                 static_cast<double>(i - o.warmup + 1) / o.iterations));
        }
        mismatch = GatherMismatch(ctx, runner.Mismatch(), o.timeoutSec);
        EndRankTrace(ctx, stream, std::move(b), meta, clock, o.out, o.timeoutSec);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "paralens: %s\n", e.what());
        stream.Send(live::EncodeError(e.what()));
        AbortRank(ctx, std::string(), [] {});
    }
    if (ctx.Rank() == 0) {
        PrintPipeline(o, meta, steps, mismatch);
        stream.Send(live::EncodeResult(mismatch.empty(), PipelineRows(meta, steps, mismatch)));
    }
    stream.Send(live::EncodeDone());
    return mismatch.empty() ? 0 : 4;
}

} // namespace paralens::app::mpi
