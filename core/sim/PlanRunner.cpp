#include "sim/PlanRunner.hpp"

#include <algorithm>

namespace paralens::core {

namespace {

// Byte ranges are tracked per "atom": the pieces between consecutive segment boundaries of the
// plan, so readiness is one number per (rank, atom). Plans reuse a few offsets millions of times
// (block boundaries), so offsets are collected through a small direct-mapped cache and looked up
// in an open-addressing table instead of sorting every occurrence.
class AtomMap {
public:
    explicit AtomMap(const Plan& plan)
    {
        std::vector<uint64_t> seen(size_t{1} << kSeenBits, kEmpty);
        std::vector<uint64_t> bounds{0, plan.bufferBytes};
        auto note = [&](uint64_t offset) {
            uint64_t& slot = seen[Slot(offset, kSeenBits)];
            if (slot == offset) return;
            slot = offset;
            bounds.push_back(offset);
        };
        for (const Segment& s : plan.segments) {
            note(s.srcOffset);
            note(s.srcOffset + s.bytes);
            note(s.dstOffset);
            note(s.dstOffset + s.bytes);
        }
        std::sort(bounds.begin(), bounds.end());
        bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
        m_count = bounds.size();
        int bits = 4;
        while ((size_t{1} << bits) < 2 * bounds.size()) ++bits;
        m_bits = bits;
        const size_t cap = size_t{1} << bits;
        m_keys.assign(cap, kEmpty);
        m_values.assign(cap, 0);
        for (uint32_t i = 0; i < bounds.size(); ++i) {
            size_t h = Slot(bounds[i], m_bits);
            while (m_keys[h] != kEmpty) h = (h + 1) & (cap - 1);
            m_keys[h] = bounds[i];
            m_values[h] = i;
        }
        const size_t n = plan.segments.size();
        m_ranges.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const Segment& s = plan.segments[i];
            m_ranges[i] = {Index(s.srcOffset), Index(s.srcOffset + s.bytes), Index(s.dstOffset), Index(s.dstOffset + s.bytes)};
        }
    }
    struct Range {
        uint32_t srcBegin, srcEnd, dstBegin, dstEnd;
    };
    const Range& Of(uint32_t segment) const { return m_ranges[segment]; }
    size_t Count() const { return m_count; }

private:
    static constexpr uint64_t kEmpty = ~uint64_t{0};
    // Fibonacci hashing: the product's top bits. (Its middle bits, taken before, repeat with the
    // offsets' power-of-two strides: a 1 MiB block's multiples filled 512 of the cache's 4096 slots
    // and thrashed them, and the 1024-rank ring sorted millions of repeated offsets.)
    static constexpr int kSeenBits = 12;
    static size_t Slot(uint64_t x, int bits) { return static_cast<size_t>((x * 0x9E3779B97F4A7C15ull) >> (64 - bits)); }
    uint32_t Index(uint64_t offset) const
    {
        size_t h = Slot(offset, m_bits);
        while (m_keys[h] != offset) h = (h + 1) & (m_keys.size() - 1);
        return m_values[h];
    }

    size_t m_count = 0;
    int m_bits = 4;
    std::vector<uint64_t> m_keys;
    std::vector<uint32_t> m_values;
    std::vector<Range> m_ranges;
};

struct Write {
    int rank;
    uint32_t segment;
    double time;
    int32_t writer; // the transfer whose bytes these are (-1: the rank's input)
};

constexpr int32_t kInput = -1;

// Which transfers wrote the atoms [begin, end) of one rank (kept only for observers that ask).
class Writers {
public:
    Writers(bool wanted, size_t size) : m_wanted(wanted) { if (wanted) m_of.assign(size, kInput); }
    bool Wanted() const { return m_wanted; }
    void Collect(size_t base, uint32_t begin, uint32_t end, std::vector<uint32_t>& out) const
    {
        for (uint32_t a = begin; a < end; ++a)
            if (int32_t w = m_of[base + a]; w != kInput && (out.empty() || out.back() != static_cast<uint32_t>(w)))
                out.push_back(static_cast<uint32_t>(w));
    }
    // The writer of the latest-ready atom: what a free local copy passes on.
    int32_t Latest(const double* ready, size_t base, uint32_t begin, uint32_t end) const
    {
        int32_t w = kInput;
        double best = -1.0;
        for (uint32_t a = begin; a < end; ++a)
            if (ready[a] > best) { best = ready[a]; w = m_of[base + a]; }
        return w;
    }
    void Set(size_t index, int32_t w) { m_of[index] = w; }

private:
    bool m_wanted;
    std::vector<int32_t> m_of;
};

void Unique(std::vector<uint32_t>& v)
{
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

double MaxReady(const double* ready, uint32_t begin, uint32_t end, double init)
{
    for (uint32_t a = begin; a < end; ++a) init = std::max(init, ready[a]);
    return init;
}

} // namespace

PlanRunResult RunPlan(const Plan& plan, Network& net, std::span<const int> deviceOfRank,
                      std::span<const double> rankJoin, PlanObserver* observer)
{
    const int p = plan.spec.ranks;
    AtomMap atoms(plan);
    const size_t atomCount = atoms.Count();
    std::vector<double> ready(static_cast<size_t>(p) * atomCount);
    for (int r = 0; r < p; ++r)
        std::fill_n(ready.begin() + static_cast<ptrdiff_t>(r * atomCount), atomCount, rankJoin[r]);
    PlanRunResult result;
    result.rankEnd.assign(rankJoin.begin(), rankJoin.end());

    Writers writers(observer && observer->WantsInputs(), ready.size());
    std::vector<uint32_t> dataFrom, accFrom;
    std::vector<Write> writes;
    for (size_t stepIndex = 0; stepIndex < plan.steps.size(); ++stepIndex) {
        const PlanStep& step = plan.steps[stepIndex];
        writes.clear();
        for (const Transfer& t : plan.TransfersOf(step)) {
            const double* srcReady = &ready[static_cast<size_t>(t.src) * atomCount];
            double dataReady = 0.0;
            for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg)
                dataReady = MaxReady(srcReady, atoms.Of(sg).srcBegin, atoms.Of(sg).srcEnd, dataReady);
            const uint32_t index = static_cast<uint32_t>(&t - plan.transfers.data());
            const size_t srcBase = static_cast<size_t>(t.src) * atomCount, dstBase = static_cast<size_t>(t.dst) * atomCount;
            if (t.src == t.dst) { // local copy: free
                for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg) {
                    const int32_t from = writers.Wanted() ? writers.Latest(srcReady, srcBase, atoms.Of(sg).srcBegin, atoms.Of(sg).srcEnd) : kInput;
                    writes.push_back({t.dst, sg, dataReady, from});
                }
                continue;
            }
            if (writers.Wanted()) {
                dataFrom.clear();
                accFrom.clear();
                for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg) {
                    writers.Collect(srcBase, atoms.Of(sg).srcBegin, atoms.Of(sg).srcEnd, dataFrom);
                    if (t.op == TransferOp::Reduce) writers.Collect(dstBase, atoms.Of(sg).dstBegin, atoms.Of(sg).dstEnd, accFrom);
                }
                Unique(dataFrom);
                Unique(accFrom);
                observer->OnInputs(t, dataFrom, accFrom);
            }
            double accReady = 0.0; // a reduction needs every earlier write to its accumulator
            if (t.op == TransferOp::Reduce) {
                const double* dstReady = &ready[static_cast<size_t>(t.dst) * atomCount];
                for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg)
                    accReady = MaxReady(dstReady, atoms.Of(sg).dstBegin, atoms.Of(sg).dstEnd, accReady);
            }
            const int srcDev = deviceOfRank[t.src], dstDev = deviceOfRank[t.dst];
            const double posted = std::max(dataReady, rankJoin[t.dst]);
            MessageTiming m = net.Send(srcDev, dstDev, t.bytes, posted, t.op == TransferOp::Reduce, accReady);
            result.rankEnd[t.src] = std::max(result.rankEnd[t.src], m.end);
            result.rankEnd[t.dst] = std::max(result.rankEnd[t.dst], m.usable);
            ++result.transfers;
            result.wireBytes += t.bytes;
            if (observer) {
                observer->OnTransfer(t, srcDev, dstDev, static_cast<int>(stepIndex), step.phase, m);
                const double redStart = m.usable - net.Slowdown(dstDev) * m.idealReduce;
                if (m.usable > redStart && t.op == TransferOp::Reduce)
                    observer->OnReduction(t, dstDev, static_cast<int>(stepIndex), step.phase, redStart, m.usable, m.idealReduce);
            }
            for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg)
                writes.push_back({t.dst, sg, m.usable, static_cast<int32_t>(index)});
        }
        for (const Write& w : writes) {
            double* r = &ready[static_cast<size_t>(w.rank) * atomCount];
            const AtomMap::Range& range = atoms.Of(w.segment);
            const size_t base = static_cast<size_t>(w.rank) * atomCount;
            for (uint32_t a = range.dstBegin; a < range.dstEnd; ++a) {
                if (writers.Wanted() && w.time >= r[a]) writers.Set(base + a, w.writer);
                r[a] = std::max(r[a], w.time);
            }
        }
    }
    return result;
}

} // namespace paralens::core
