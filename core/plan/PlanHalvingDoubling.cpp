// Recursive halving and doubling (Rabenseifner), and full-vector recursive doubling.
//
// With P the largest power of two <= p and e = p - P extra ranks, "active" rank a (0 <= a < P)
// is rank 2a for a < e and rank a + e otherwise. Active rank a owns a "super-block": blocks
// {2a, 2a+1} for a < e, block a + e otherwise; super-blocks tile the vector in order, so a run of
// active ranks always covers a contiguous run of blocks.
#include "plan/PlanAlgorithms.hpp"

namespace paralens::core {

namespace {

struct Fold {
    int p, power, extra;

    explicit Fold(int ranks) : p(ranks), power(1), extra(0)
    {
        while (power * 2 <= p) power *= 2;
        extra = p - power;
    }
    int Rank(int active) const { return active < extra ? 2 * active : active + extra; }
    // First block of active rank a's super-block; FirstBlock(power) == p.
    int FirstBlock(int active) const { return active < extra ? 2 * active : active + extra; }
    int BlockCount(int firstActive, int count) const { return FirstBlock(firstActive + count) - FirstBlock(firstActive); }
};

// Odd ranks of the extra pairs fold their whole vector (reduce) or their own block (copy) into
// the even partner.
void FoldIn(PlanWriter& w, const Fold& f, TransferOp op, bool wholeVector)
{
    w.BeginStep("fold-in");
    for (int i = 0; i < f.extra; ++i) {
        if (wholeVector) w.SendAll(2 * i + 1, 2 * i, op);
        else w.SendBlocks(2 * i + 1, 2 * i, op, 2 * i + 1, 1);
    }
}

void Halving(PlanWriter& w, const Fold& f)
{
    for (int d = f.power / 2; d >= 1; d /= 2) {
        w.BeginStep("reduce-scatter");
        for (int a = 0; a < f.power; ++a) {
            int lo = a & ~(2 * d - 1);
            int sendLo = (a & d) ? lo : lo + d; // send the half we do not keep
            w.SendBlocks(f.Rank(a), f.Rank(a ^ d), TransferOp::Reduce, f.FirstBlock(sendLo), f.BlockCount(sendLo, d));
        }
    }
}

void Doubling(PlanWriter& w, const Fold& f)
{
    for (int d = 1; d < f.power; d *= 2) {
        w.BeginStep("allgather");
        for (int a = 0; a < f.power; ++a) {
            int lo = a & ~(d - 1);
            w.SendBlocks(f.Rank(a), f.Rank(a ^ d), TransferOp::Copy, f.FirstBlock(lo), f.BlockCount(lo, d));
        }
    }
}

} // namespace

void AppendHalvingReduceScatter(PlanWriter& w)
{
    Fold f(w.Ranks());
    FoldIn(w, f, TransferOp::Reduce, true);
    Halving(w, f);
    w.BeginStep("fold-out");
    for (int i = 0; i < f.extra; ++i) w.SendBlocks(2 * i, 2 * i + 1, TransferOp::Copy, 2 * i + 1, 1);
}

void AppendDoublingAllGather(PlanWriter& w)
{
    Fold f(w.Ranks());
    FoldIn(w, f, TransferOp::Copy, false);
    Doubling(w, f);
    w.BeginStep("fold-out");
    for (int i = 0; i < f.extra; ++i) w.SendAllExceptBlock(2 * i, 2 * i + 1, TransferOp::Copy, 2 * i + 1);
}

void AppendHalvingDoublingAllReduce(PlanWriter& w)
{
    Fold f(w.Ranks());
    FoldIn(w, f, TransferOp::Reduce, true);
    Halving(w, f);
    Doubling(w, f);
    w.BeginStep("fold-out");
    for (int i = 0; i < f.extra; ++i) w.SendAll(2 * i, 2 * i + 1, TransferOp::Copy);
}

void AppendRecursiveDoublingAllReduce(PlanWriter& w)
{
    Fold f(w.Ranks());
    FoldIn(w, f, TransferOp::Reduce, true);
    for (int d = 1; d < f.power; d *= 2) {
        w.BeginStep("exchange");
        for (int a = 0; a < f.power; ++a) w.SendAll(f.Rank(a), f.Rank(a ^ d), TransferOp::Reduce);
    }
    w.BeginStep("fold-out");
    for (int i = 0; i < f.extra; ++i) w.SendAll(2 * i, 2 * i + 1, TransferOp::Copy);
}

} // namespace paralens::core
