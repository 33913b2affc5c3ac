#include "PlanProgram.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace paralens::gpu {

namespace {

constexpr uint64_t Align(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

bool Overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) { return a0 < b1 && b0 < a1; }

// Per byte range of every buffer: who last wrote it and who read it since. A write supersedes the
// accesses it covers (it waited for them), so the lists stay short.
class RangeTracker {
public:
    void Read(const BufferRef& b, uint64_t bytes, uint32_t op, std::vector<uint32_t>& deps)
    {
        auto& list = m_buffers[Key(b)];
        for (const Access& a : list)
            if (a.write && a.op != op && Overlap(a.begin, a.end, b.offset, b.offset + bytes)) deps.push_back(a.op);
        list.push_back({b.offset, b.offset + bytes, op, false});
    }

    void Write(const BufferRef& b, uint64_t bytes, uint32_t op, std::vector<uint32_t>& deps)
    {
        auto& list = m_buffers[Key(b)];
        const uint64_t begin = b.offset, end = b.offset + bytes;
        std::vector<Access> kept;
        kept.reserve(list.size() + 2);
        for (const Access& a : list) {
            if (!Overlap(a.begin, a.end, begin, end)) {
                kept.push_back(a);
                continue;
            }
            if (a.op != op) deps.push_back(a.op);
            if (a.begin < begin) kept.push_back({a.begin, begin, a.op, a.write});
            if (a.end > end) kept.push_back({end, a.end, a.op, a.write});
        }
        kept.push_back({begin, end, op, true});
        list = std::move(kept);
    }

private:
    struct Access {
        uint64_t begin, end;
        uint32_t op;
        bool write;
    };
    static std::pair<int32_t, bool> Key(const BufferRef& b) { return {b.rank, b.staging}; }
    std::map<std::pair<int32_t, bool>, std::vector<Access>> m_buffers;
};

// Which transfers of a step must go through staging: reductions, and copies whose destination
// bytes the same step also reads (from the receiver) or writes (another transfer).
std::vector<char> StagedTransfers(const core::Plan& plan, const core::PlanStep& step)
{
    struct Region {
        int32_t rank;
        uint64_t begin, end;
        uint32_t transfer;
    };
    std::vector<Region> reads, writes;
    for (uint32_t t = step.firstTransfer; t < step.firstTransfer + step.transferCount; ++t) {
        const core::Transfer& tr = plan.transfers[t];
        for (const core::Segment& s : plan.SegmentsOf(tr)) {
            reads.push_back({tr.src, s.srcOffset, s.srcOffset + s.bytes, t});
            writes.push_back({tr.dst, s.dstOffset, s.dstOffset + s.bytes, t});
        }
    }
    std::vector<char> staged(step.transferCount, 0);
    for (const Region& w : writes) {
        char& st = staged[w.transfer - step.firstTransfer];
        if (plan.transfers[w.transfer].op == core::TransferOp::Reduce) st = 1;
        for (const Region& r : reads)
            if (r.rank == w.rank && Overlap(r.begin, r.end, w.begin, w.end)) st = 1;
        for (const Region& o : writes)
            if (o.transfer != w.transfer && o.rank == w.rank && Overlap(o.begin, o.end, w.begin, w.end)) st = 1;
    }
    return staged;
}

class ProgramBuilder {
public:
    explicit ProgramBuilder(const core::Plan& plan) : m_plan(plan)
    {
        m_prog.ranks = plan.Ranks();
        m_prog.bufferBytes = plan.bufferBytes;
    }

    PlanProgram Build()
    {
        for (size_t s = 0; s < m_plan.steps.size(); ++s) AddStep(static_cast<int32_t>(s), m_plan.steps[s]);
        return std::move(m_prog);
    }

private:
    void AddStep(int32_t stepIndex, const core::PlanStep& step)
    {
        const std::vector<char> staged = StagedTransfers(m_plan, step);
        std::map<int32_t, uint64_t> stagingUsed; // per receiving rank, this step
        struct Later {
            uint32_t transfer;
            uint32_t firstPiece;
        };
        std::vector<Later> applies;
        for (uint32_t i = 0; i < step.transferCount; ++i) {
            const uint32_t t = step.firstTransfer + i;
            const core::Transfer& tr = m_plan.transfers[t];
            GpuOp op = MakeOp(GpuOpKind::Transfer, stepIndex, t, SendStream(tr.src));
            op.src = tr.src;
            op.dst = tr.dst;
            const uint32_t stagingPieces = static_cast<uint32_t>(m_prog.pieces.size());
            for (const core::Segment& s : m_plan.SegmentsOf(tr)) {
                Piece p;
                p.src = {tr.src, false, s.srcOffset};
                p.bytes = s.bytes;
                if (staged[i]) {
                    uint64_t& used = stagingUsed[tr.dst];
                    p.dst = {tr.dst, true, used};
                    used = Align(used + s.bytes, 16); // 16-byte aligned pieces keep the kernels vectorised
                    m_prog.stagingBytes = std::max(m_prog.stagingBytes, used);
                } else {
                    p.dst = {tr.dst, false, s.dstOffset};
                }
                m_prog.pieces.push_back(p);
            }
            op.pieceCount = static_cast<uint32_t>(m_prog.pieces.size()) - op.firstPiece;
            Commit(op);
            if (staged[i]) {
                ++m_prog.stagedTransfers;
                applies.push_back({t, stagingPieces});
            }
        }
        // Applies and reductions after every transfer of the step: they write what the step read.
        for (const Later& l : applies) {
            const core::Transfer& tr = m_plan.transfers[l.transfer];
            const GpuOpKind kind = tr.op == core::TransferOp::Reduce ? GpuOpKind::Reduce : GpuOpKind::Apply;
            GpuOp op = MakeOp(kind, stepIndex, l.transfer, RecvStream(tr.dst));
            op.src = op.dst = tr.dst;
            uint32_t piece = l.firstPiece;
            for (const core::Segment& s : m_plan.SegmentsOf(tr)) {
                const Piece& in = m_prog.pieces[piece++];
                m_prog.pieces.push_back(Piece{in.dst, BufferRef{tr.dst, false, s.dstOffset}, s.bytes});
            }
            op.pieceCount = static_cast<uint32_t>(m_prog.pieces.size()) - op.firstPiece;
            Commit(op);
        }
    }

    GpuOp MakeOp(GpuOpKind kind, int32_t step, uint32_t transfer, int32_t stream)
    {
        const core::Transfer& tr = m_plan.transfers[transfer];
        GpuOp op;
        op.kind = kind;
        op.step = step;
        op.transfer = transfer;
        op.stream = stream;
        op.block = tr.block;
        op.bytes = tr.bytes;
        op.firstPiece = static_cast<uint32_t>(m_prog.pieces.size());
        return op;
    }

    // Records the op's accesses, derives its dependencies and appends it.
    void Commit(GpuOp op)
    {
        const uint32_t index = static_cast<uint32_t>(m_prog.ops.size());
        std::vector<uint32_t> deps;
        for (uint32_t p = op.firstPiece; p < op.firstPiece + op.pieceCount; ++p) {
            const Piece& piece = m_prog.pieces[p];
            m_tracker.Read(piece.src, piece.bytes, index, deps);
            if (op.kind == GpuOpKind::Reduce) m_tracker.Read(piece.dst, piece.bytes, index, deps); // += reads it too
        }
        for (uint32_t p = op.firstPiece; p < op.firstPiece + op.pieceCount; ++p) {
            const Piece& piece = m_prog.pieces[p];
            m_tracker.Write(piece.dst, piece.bytes, index, deps);
        }
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        op.firstDep = static_cast<uint32_t>(m_prog.deps.size());
        for (uint32_t d : deps)
            if (d != index && m_prog.ops[d].stream != op.stream) m_prog.deps.push_back(d); // same stream: already in order
        op.depCount = static_cast<uint32_t>(m_prog.deps.size()) - op.firstDep;
        m_prog.ops.push_back(op);
    }

    const core::Plan& m_plan;
    PlanProgram m_prog;
    RangeTracker m_tracker;
};

} // namespace

uint64_t PlanProgram::BytesPerRank() const { return Align(bufferBytes, kDeviceAlign) + Align(stagingBytes, kDeviceAlign); }

PlanProgram BuildPlanProgram(const core::Plan& plan)
{
    Require(plan.Ranks() >= 1, "plan program: the plan has no ranks");
    return ProgramBuilder(plan).Build();
}

OpLabelParts DescribeOp(const GpuOp& op, double alphaSec, double betaSecPerByte)
{
    OpLabelParts out;
    switch (op.kind) {
    case GpuOpKind::Transfer:
        out.name = std::to_string(op.src) + ">" + std::to_string(op.dst);
        out.category = core::SpanCategory::Send;
        if (alphaSec > 0 || betaSecPerByte > 0)
            out.predictedNs = static_cast<int64_t>(std::llround((alphaSec + static_cast<double>(op.bytes) * betaSecPerByte) * 1e9));
        break;
    case GpuOpKind::Apply:
        out.name = "apply";
        out.category = core::SpanCategory::Memcpy;
        break;
    case GpuOpKind::Reduce:
        out.name = "reduce";
        out.category = core::SpanCategory::Compute;
        break;
    }
    return out;
}

} // namespace paralens::gpu
