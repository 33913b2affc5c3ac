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
    const Plan& pl = m_plan;
    const int p = pl.spec.ranks;
    const int root = pl.spec.root;
    const uint64_t n = pl.spec.bytes;
    const auto& off = pl.blockOffsets;
    auto block = [&](int b) { return pl.BlockBytes(b); };
    auto sum = [&](uint64_t base) { return [this, base](uint64_t i) { return Sum(base + i); }; };
    auto from = [&](int rank, uint64_t base) { return [this, rank, base](uint64_t i) { return m_init[rank][base + i]; }; };
    switch (pl.spec.collective) {
    case Collective::Broadcast:
        for (int r = 0; r < p; ++r)
            if (!Expect(r, 0, n, from(root, 0), "root's vector")) return false;
        return true;
    case Collective::Reduce: return Expect(root, 0, n, sum(0), "sum of all ranks");
    case Collective::AllReduce:
        for (int r = 0; r < p; ++r)
            if (!Expect(r, 0, n, sum(0), "sum of all ranks")) return false;
        return true;
    case Collective::Scatter:
        for (int r = 0; r < p; ++r)
            if (!Expect(r, off[r], block(r), from(root, off[r]), "root's block")) return false;
        return true;
    case Collective::Gather:
        for (int r = 0; r < p; ++r)
            if (!Expect(root, off[r], block(r), from(r, off[r]), "block of its owner")) return false;
        return true;
    case Collective::AllGather:
        for (int d = 0; d < p; ++d)
            for (int r = 0; r < p; ++r)
                if (!Expect(d, off[r], block(r), from(r, off[r]), "block of its owner")) return false;
        return true;
    case Collective::ReduceScatter:
        for (int r = 0; r < p; ++r)
            if (!Expect(r, off[r], block(r), sum(off[r]), "sum of its block")) return false;
        return true;
    case Collective::AllToAll:
        for (int j = 0; j < p; ++j)
            for (int i = 0; i < p; ++i)
                if (!Expect(j, n + static_cast<uint64_t>(i) * block(j), block(j), from(i, off[j]), "piece from sender"))
                    return false;
        return true;
    case Collective::SendRecv:
        for (int r = 0; r < p; ++r)
            if (!Expect((r + 1) % p, n, n, from(r, 0), "left neighbour's input")) return false;
        return true;
    }
    return false;
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

} // namespace paralens::core
