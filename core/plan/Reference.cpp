#include "plan/Reference.hpp"

#include <sstream>

namespace paralens::core {

uint64_t ReferenceValue(uint64_t seed, int rank, uint64_t offset)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + (static_cast<uint64_t>(rank) << 40) + offset;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

namespace {

using Buffers = std::vector<std::vector<uint64_t>>;

struct Pending {
    int dst;
    uint64_t offset;
    TransferOp op;
    std::vector<uint64_t> data;
};

void Execute(const Plan& plan, Buffers& buf)
{
    std::vector<Pending> pending;
    for (const PlanStep& step : plan.steps) {
        pending.clear();
        for (const Transfer& t : plan.TransfersOf(step)) {
            for (const Segment& s : plan.SegmentsOf(t)) {
                const auto& src = buf[t.src];
                pending.push_back({t.dst, s.dstOffset, t.op,
                                   std::vector<uint64_t>(src.begin() + static_cast<ptrdiff_t>(s.srcOffset),
                                                         src.begin() + static_cast<ptrdiff_t>(s.srcOffset + s.bytes))});
            }
        }
        for (const Pending& p : pending) {
            auto& dst = buf[p.dst];
            for (size_t i = 0; i < p.data.size(); ++i) {
                if (p.op == TransferOp::Reduce) dst[p.offset + i] += p.data[i];
                else dst[p.offset + i] = p.data[i];
            }
        }
    }
}

class Checker {
public:
    Checker(const Plan& plan, const Buffers& initial, const Buffers& final)
        : m_plan(plan), m_init(initial), m_final(final)
    {
    }

    // Expects final[rank][dstOff + i] == source(i) for i in [0, bytes).
    template <class Source>
    bool Expect(int rank, uint64_t dstOff, uint64_t bytes, Source&& source, const char* what)
    {
        for (uint64_t i = 0; i < bytes; ++i) {
            uint64_t want = source(i);
            uint64_t got = m_final[rank][dstOff + i];
            if (want != got) {
                std::ostringstream os;
                os << Name(m_plan.spec.collective) << " / " << Name(m_plan.spec.algorithm) << " p=" << m_plan.spec.ranks
                   << " n=" << m_plan.spec.bytes << ": rank " << rank << " byte " << dstOff + i << " (" << what
                   << "): expected " << want << ", found " << got;
                m_message = os.str();
                return false;
            }
        }
        return true;
    }

    uint64_t Sum(uint64_t offset) const
    {
        uint64_t s = 0;
        for (const auto& b : m_init) s += b[offset];
        return s;
    }

    bool Run();
    const std::string& Message() const { return m_message; }

private:
    const Plan& m_plan;
    const Buffers& m_init;
    const Buffers& m_final;
    std::string m_message;
};

bool Checker::Run()
{
    for (int r = 0; r < m_plan.spec.ranks; ++r) {
        for (const ExpectedRegion& e : ExpectedRegions(m_plan, r)) {
            const bool ok = e.kind == ExpectedRegion::Kind::SumOfAll
                                ? Expect(r, e.offset, e.bytes, [&](uint64_t i) { return Sum(e.sourceOffset + i); }, e.what)
                                : Expect(r, e.offset, e.bytes, [&](uint64_t i) { return m_init[e.sourceRank][e.sourceOffset + i]; }, e.what);
            if (!ok) return false;
        }
    }
    return true;
}

} // namespace

ReferenceResult CheckPlanOnCpu(const Plan& plan, uint64_t seed)
{
    const int p = plan.spec.ranks;
    Buffers initial(static_cast<size_t>(p), std::vector<uint64_t>(plan.bufferBytes));
    for (int r = 0; r < p; ++r)
        for (uint64_t i = 0; i < plan.bufferBytes; ++i) initial[r][i] = ReferenceValue(seed, r, i);
    Buffers work = initial;
    Execute(plan, work);
    Checker checker(plan, initial, work);
    ReferenceResult result;
    result.ok = checker.Run();
    result.message = checker.Message();
    return result;
}

std::vector<ExpectedRegion> ExpectedRegions(const Plan& pl, int rank)
{
    using Kind = ExpectedRegion::Kind;
    const int p = pl.spec.ranks, root = pl.spec.root;
    const uint64_t n = pl.spec.bytes;
    const auto& off = pl.blockOffsets;
    std::vector<ExpectedRegion> out;
    auto copy = [&](uint64_t at, uint64_t bytes, int src, uint64_t from, const char* what) {
        out.push_back({at, bytes, Kind::CopyOf, src, from, what});
    };
    auto sum = [&](uint64_t at, uint64_t bytes, const char* what) { out.push_back({at, bytes, Kind::SumOfAll, 0, at, what}); };
    switch (pl.spec.collective) {
    case Collective::Broadcast: copy(0, n, root, 0, "root's vector"); break;
    case Collective::Reduce:
        if (rank == root) sum(0, n, "sum of all ranks");
        break;
    case Collective::AllReduce: sum(0, n, "sum of all ranks"); break;
    case Collective::Scatter: copy(off[rank], pl.BlockBytes(rank), root, off[rank], "root's block"); break;
    case Collective::Gather:
        if (rank == root)
            for (int r = 0; r < p; ++r) copy(off[r], pl.BlockBytes(r), r, off[r], "block of its owner");
        break;
    case Collective::AllGather:
        for (int r = 0; r < p; ++r) copy(off[r], pl.BlockBytes(r), r, off[r], "block of its owner");
        break;
    case Collective::ReduceScatter: sum(off[rank], pl.BlockBytes(rank), "sum of its block"); break;
    case Collective::AllToAll:
        for (int i = 0; i < p; ++i)
            copy(n + static_cast<uint64_t>(i) * pl.BlockBytes(rank), pl.BlockBytes(rank), i, off[rank], "piece from sender");
        break;
    case Collective::SendRecv: copy(n, n, (rank + p - 1) % p, 0, "left neighbour's input"); break;
    }
    return out;
}

uint64_t ExpectedValue(const ExpectedRegion& e, uint64_t i, int ranks, uint64_t seed)
{
    if (e.kind == ExpectedRegion::Kind::CopyOf) return ReferenceValue(seed, e.sourceRank, e.sourceOffset + i);
    uint64_t s = 0;
    for (int r = 0; r < ranks; ++r) s += ReferenceValue(seed, r, e.sourceOffset + i);
    return s;
}

} // namespace paralens::core
