// The cost formulas. Notation as in FORMULAS.md: p ranks, n bytes, a = alpha, b = beta,
// g = gamma. The generalised forms (PredictSeconds) use L = ceil(log2 p), c = the largest block
// (ceil(n/p) on element boundaries), cr = the root's block, and for halving/doubling P = the
// largest power of two <= p with e = p - P ranks folded in and out.
//
// PredictSeconds is the exact simulated time of paralens's Plan (checked by tests over p = 2..40,
// several n, roots and alpha/beta/gamma) whenever every block holds at least one element
// (n >= p elements), except for the rooted scatter-based algorithms (scatter and gather, ring
// and halving-doubling broadcast and reduce) with root != 0 and p not a power of two or n not
// divisible by p: there the formula assumes the largest blocks sit next to the root, and the
// simulation differs by a fraction of one block's transfer time. With empty blocks (n < p
// elements) later phases can start early because empty messages carry no data.
#include "model/CostModel.hpp"

#include <algorithm>
#include <cmath>

namespace paralens::core {

namespace {

bool IsPowerOfTwo(int p) { return p > 0 && (p & (p - 1)) == 0; }

int CeilLog2(int p)
{
    int l = 0;
    while ((1 << l) < p) ++l;
    return l;
}

int FloorPow2(int p)
{
    int q = 1;
    while (q * 2 <= p) q *= 2;
    return q;
}

struct Terms {
    double a, b, g;   // alpha, beta, gamma
    double n;         // bytes
    double p;         // ranks
    double L;         // ceil(log2 p)
    double c;         // largest block
    double cr;        // root's block
    double c0;        // rank 0's block
};

} // namespace

double LectureSeconds(Collective c, Algorithm al, int pi, double n, const CostParams& k)
{
    const double p = pi, a = k.alphaSec, b = k.betaSecPerByte, g = k.gammaSecPerByte;
    const double lp = std::log2(p);
    const double f = (p - 1) / p * n;
    switch (al) {
    case Algorithm::Tree:
        switch (c) {
        case Collective::Broadcast: return lp * (a + n * b);
        case Collective::Reduce: return lp * (a + n * b + n * g);
        case Collective::Scatter:
        case Collective::Gather: return lp * a + f * b;
        case Collective::AllGather: return 2 * lp * a + lp * n * b + f * b;
        case Collective::ReduceScatter: return 2 * lp * a + lp * n * (b + g) + f * b;
        case Collective::AllReduce: return 2 * lp * a + lp * n * (2 * b + g);
        default: return 0;
        }
    case Algorithm::Ring:
        switch (c) {
        case Collective::ReduceScatter: return (p - 1) * a + f * (b + g);
        case Collective::AllGather: return (p - 1) * a + f * b;
        case Collective::AllReduce: return 2 * (p - 1) * a + f * (2 * b + g);
        case Collective::Broadcast: return (lp + p - 1) * a + 2 * f * b;
        case Collective::Reduce: return (p - 1 + lp) * a + f * (2 * b + g);
        case Collective::Scatter:
        case Collective::Gather: return lp * a + f * b;
        default: return 0;
        }
    case Algorithm::HalvingDoubling:
        switch (c) {
        case Collective::ReduceScatter: return lp * a + f * (b + g);
        case Collective::AllGather: return lp * a + f * b;
        case Collective::AllReduce: return 2 * lp * a + f * (2 * b + g);
        case Collective::Broadcast: return 2 * lp * a + 2 * f * b;      // scatter + allgather
        case Collective::Reduce: return 2 * lp * a + f * (2 * b + g);   // reduce-scatter + gather
        default: return 0;
        }
    case Algorithm::RecursiveDoubling: return lp * (a + n * b + n * g);
    case Algorithm::Naive:
        switch (c) {
        case Collective::Broadcast: return (p - 1) * (a + n * b);
        case Collective::Reduce: return (p - 1) * (a + n * b + n * g);
        case Collective::Scatter:
        case Collective::Gather: return (p - 1) * a + f * b;
        case Collective::AllGather: return (p - 1) * a + f * b + (p - 1) * (a + n * b);
        case Collective::ReduceScatter: return (p - 1) * (a + n * b + n * g) + (p - 1) * a + f * b;
        case Collective::AllReduce: return 2 * (p - 1) * (a + n * b) + (p - 1) * n * g;
        default: return 0;
        }
    case Algorithm::Pairwise: return (p - 1) * (a + n / p * b);
    case Algorithm::Direct: return a + n * b;
    case Algorithm::Hierarchical:
    case Algorithm::HierarchicalTree: return c == Collective::AllReduce ? 2 * (p - 1) * a + f * (2 * b + g) : 0; // one node: the ring
    }
    return 0;
}

std::string FormulaText(Collective c, Algorithm al)
{
    switch (al) {
    case Algorithm::Tree:
        switch (c) {
        case Collective::Broadcast: return "log(p) (a + n b)";
        case Collective::Reduce: return "log(p) (a + n b + n g)";
        case Collective::Scatter:
        case Collective::Gather: return "log(p) a + (p-1)/p n b";
        case Collective::AllGather: return "2 log(p) a + log(p) n b + (p-1)/p n b";
        case Collective::ReduceScatter: return "2 log(p) a + log(p) n (b + g) + (p-1)/p n b";
        case Collective::AllReduce: return "2 log(p) a + log(p) n (2b + g)";
        default: return "";
        }
    case Algorithm::Ring:
        switch (c) {
        case Collective::ReduceScatter: return "(p-1) a + (p-1)/p n (b + g)";
        case Collective::AllGather: return "(p-1) a + (p-1)/p n b";
        case Collective::AllReduce: return "2(p-1) a + (p-1)/p n (2b + g)";
        case Collective::Broadcast: return "(log(p) + p - 1) a + 2 (p-1)/p n b";
        case Collective::Reduce: return "(p - 1 + log(p)) a + (p-1)/p n (2b + g)";
        case Collective::Scatter:
        case Collective::Gather: return "log(p) a + (p-1)/p n b";
        default: return "";
        }
    case Algorithm::HalvingDoubling:
        switch (c) {
        case Collective::ReduceScatter: return "log(p) a + (p-1)/p n (b + g)";
        case Collective::AllGather: return "log(p) a + (p-1)/p n b";
        case Collective::AllReduce: return "2 log(p) a + (p-1)/p n (2b + g)";
        case Collective::Broadcast: return "2 log(p) a + 2 (p-1)/p n b";
        case Collective::Reduce: return "2 log(p) a + (p-1)/p n (2b + g)";
        default: return "";
        }
    case Algorithm::RecursiveDoubling: return "log(p) (a + n b + n g)";
    case Algorithm::Naive:
        switch (c) {
        case Collective::Broadcast: return "(p-1) (a + n b)";
        case Collective::Reduce: return "(p-1) (a + n b + n g)";
        case Collective::Scatter:
        case Collective::Gather: return "(p-1) a + (p-1)/p n b";
        case Collective::AllGather: return "(p-1) a + (p-1)/p n b + (p-1) (a + n b)";
        case Collective::ReduceScatter: return "(p-1) (a + n b + n g) + (p-1) a + (p-1)/p n b";
        case Collective::AllReduce: return "2 (p-1) (a + n b) + (p-1) n g";
        default: return "";
        }
    case Algorithm::Pairwise: return "(p-1) (a + n/p b)";
    case Algorithm::Direct: return "a + n b";
    case Algorithm::Hierarchical:
        return c == Collective::AllReduce ? "2(q-1) a + (q-1)/q n (2b + g) + 2(N-1) a' + (N-1)/p n (2b' + g)" : "";
    case Algorithm::HierarchicalTree:
        return c == Collective::AllReduce ? "2(q-1) a + (q-1)/q n (2b + g) + log(N) (2a' + n/q (2b' + g))" : "";
    }
    return "";
}

namespace {

// Halving/doubling with P = FloorPow2(p) and e folded pairs: the inner algorithm works on P
// super-blocks; its largest messages carry the first (largest) super-blocks.
double HalvingDoublingSeconds(Collective c, const CollectiveSpec& s, const Terms& t)
{
    const int p = s.ranks;
    const int P = FloorPow2(p);
    const int e = p - P;
    const double lP = std::log2(static_cast<double>(P));
    const uint64_t units = s.bytes / s.alignBytes;
    auto block = [&](int i) {
        return static_cast<double>((units / static_cast<uint64_t>(p) + (static_cast<uint64_t>(i) < units % static_cast<uint64_t>(p) ? 1 : 0)) * s.alignBytes);
    };
    // Bytes of the first `count` super-blocks (the largest run of that many).
    auto superBytes = [&](int count) {
        int blocks = count <= e ? 2 * count : count + e;
        double sum = 0;
        for (int i = 0; i < blocks; ++i) sum += block(i);
        return sum;
    };
    double halving = 0, doubling = 0;
    for (int d = P / 2; d >= 1; d /= 2) halving += t.a + superBytes(d) * (t.b + t.g);
    for (int d = 1; d < P; d *= 2) doubling += t.a + superBytes(d) * t.b;
    (void)lP;
    const double foldInReduce = e > 0 ? t.a + t.n * (t.b + t.g) : 0;
    const double foldInCopy = e > 0 ? t.a + block(1) * t.b : 0;
    switch (c) {
    case Collective::ReduceScatter: return foldInReduce + halving + (e > 0 ? t.a + block(1) * t.b : 0);
    case Collective::AllGather: return foldInCopy + doubling + (e > 0 ? t.a + (t.n - block(2 * e - 1)) * t.b : 0);
    case Collective::AllReduce: return foldInReduce + halving + doubling + (e > 0 ? t.a + t.n * t.b : 0);
    default: return 0;
    }
}

double TreeScatterSeconds(const Terms& t, double rootBlock) { return t.L * t.a + (t.n - rootBlock) * t.b; }

} // namespace

Prediction PredictSeconds(const CollectiveSpec& s, const CostParams& k)
{
    Prediction out;
    const int p = s.ranks;
    if (p <= 1) {
        out.exact = true;
        return out;
    }
    const uint64_t units = s.bytes / std::max<uint64_t>(s.alignBytes, 1);
    const uint64_t per = units / static_cast<uint64_t>(p), extra = units % static_cast<uint64_t>(p);
    auto block = [&](int i) { return static_cast<double>((per + (static_cast<uint64_t>(i) < extra ? 1 : 0)) * s.alignBytes); };
    Terms t{k.alphaSec, k.betaSecPerByte, k.gammaSecPerByte, static_cast<double>(s.bytes), static_cast<double>(p),
            static_cast<double>(CeilLog2(p)), block(0), block(s.root), block(0)};
    const double a = t.a, b = t.b, g = t.g, n = t.n, L = t.L, c = t.c, pm1 = p - 1.0;
    const bool nonEmpty = units >= static_cast<uint64_t>(p);
    const bool regular = IsPowerOfTwo(p) && extra == 0;
    const bool scatterBased =
        s.collective == Collective::Scatter || s.collective == Collective::Gather ||
        ((s.collective == Collective::Broadcast || s.collective == Collective::Reduce) &&
         (s.algorithm == Algorithm::Ring || s.algorithm == Algorithm::HalvingDoubling));
    const bool rootSensitive = scatterBased && s.algorithm != Algorithm::Naive && s.root != 0 && !regular;
    double sec = 0;
    switch (s.algorithm) {
    case Algorithm::Tree:
        switch (s.collective) {
        case Collective::Broadcast: sec = L * (a + n * b); break;
        case Collective::Reduce: sec = L * (a + n * b + n * g); break;
        case Collective::Scatter:
        case Collective::Gather: sec = TreeScatterSeconds(t, t.cr); break;
        case Collective::AllGather: sec = TreeScatterSeconds(t, t.c0) + L * (a + n * b); break;
        case Collective::ReduceScatter: sec = L * (a + n * (b + g)) + TreeScatterSeconds(t, t.c0); break;
        case Collective::AllReduce: sec = L * (a + n * (b + g)) + L * (a + n * b); break;
        default: break;
        }
        break;
    case Algorithm::Ring:
        switch (s.collective) {
        case Collective::ReduceScatter: sec = pm1 * (a + c * (b + g)); break;
        case Collective::AllGather: sec = pm1 * (a + c * b); break;
        case Collective::AllReduce: sec = pm1 * (a + c * (b + g)) + pm1 * (a + c * b); break;
        case Collective::Broadcast: sec = TreeScatterSeconds(t, t.cr) + pm1 * (a + c * b); break;
        case Collective::Reduce: sec = pm1 * (a + c * (b + g)) + TreeScatterSeconds(t, t.cr); break;
        case Collective::Scatter:
        case Collective::Gather: sec = TreeScatterSeconds(t, t.cr); break;
        default: break;
        }
        break;
    case Algorithm::HalvingDoubling:
        switch (s.collective) {
        case Collective::Broadcast:
            sec = TreeScatterSeconds(t, t.cr) + HalvingDoublingSeconds(Collective::AllGather, s, t);
            break;
        case Collective::Reduce:
            sec = HalvingDoublingSeconds(Collective::ReduceScatter, s, t) + TreeScatterSeconds(t, t.cr);
            break;
        default: sec = HalvingDoublingSeconds(s.collective, s, t); break;
        }
        break;
    case Algorithm::RecursiveDoubling: {
        const int P = FloorPow2(p);
        const double fold = P < p ? (a + n * (b + g)) + (a + n * b) : 0.0;
        sec = std::log2(static_cast<double>(P)) * (a + n * (b + g)) + fold;
        break;
    }
    case Algorithm::Naive:
        switch (s.collective) {
        case Collective::Broadcast: sec = pm1 * (a + n * b); break;
        case Collective::Reduce: sec = pm1 * (a + n * (b + g)); break;
        case Collective::Scatter:
        case Collective::Gather: sec = pm1 * a + (n - t.cr) * b; break;
        case Collective::AllGather: sec = pm1 * a + (n - t.c0) * b + pm1 * (a + n * b); break;
        case Collective::ReduceScatter: sec = pm1 * (a + n * (b + g)) + pm1 * a + (n - t.c0) * b; break;
        case Collective::AllReduce: sec = pm1 * (a + n * (b + g)) + pm1 * (a + n * b); break;
        default: break;
        }
        break;
    case Algorithm::Pairwise:
        sec = pm1 * (a + c * b);
        break;
    case Algorithm::Direct:
        sec = a + n * b;
        break;
    case Algorithm::Hierarchical:
    case Algorithm::HierarchicalTree: {
        const TwoLevelPrediction two = PredictTwoLevel(s, k, k);
        out.seconds = two.seconds;
        out.exact = two.exact;
        return out;
    }
    }
    out.seconds = sec;
    out.exact = nonEmpty && !rootSensitive;
    return out;
}

TwoLevelPrediction PredictTwoLevel(const CollectiveSpec& s, const CostParams& intra, const CostParams& net)
{
    TwoLevelPrediction out;
    const int p = s.ranks;
    const int q = s.ranksPerNode > 0 && s.ranksPerNode < p ? s.ranksPerNode : p, nodes = p / q;
    if (p <= 1 || s.collective != Collective::AllReduce || p % q != 0) return out;
    const uint64_t align = std::max<uint64_t>(s.alignBytes, 1), units = s.bytes / align;
    const uint64_t per = units / static_cast<uint64_t>(p), extra = units % static_cast<uint64_t>(p);
    auto block = [&](uint64_t i) { return static_cast<double>((per + (i < extra ? 1 : 0)) * align); };
    double shard = 0; // the largest shard, shard 0: blocks 0 .. N-1
    for (int i = 0; i < nodes; ++i) shard += block(static_cast<uint64_t>(i));
    const double c = block(0);
    const bool crosses = nodes > 1;
    if (s.algorithm == Algorithm::Hierarchical || s.algorithm == Algorithm::HierarchicalTree) {
        out.intraSeconds = (q - 1.0) * (2 * intra.alphaSec + shard * (2 * intra.betaSecPerByte + intra.gammaSecPerByte));
        if (s.algorithm == Algorithm::Hierarchical)
            out.netSeconds = (nodes - 1.0) * (2 * net.alphaSec + c * (2 * net.betaSecPerByte + intra.gammaSecPerByte));
        else // binomial trees of whole shards: ceil(log2 N) steps up, as many down
            out.netSeconds = CeilLog2(nodes) * (2 * net.alphaSec + shard * (2 * net.betaSecPerByte + intra.gammaSecPerByte));
        out.exact = extra == 0 && per > 0;
    } else if (s.algorithm == Algorithm::Ring) {
        // Every step of a ring over nodes has a message between nodes, the slowest: it sets the pace.
        const CostParams& link = crosses ? net : intra;
        (crosses ? out.netSeconds : out.intraSeconds) =
            (p - 1.0) * (2 * link.alphaSec + c * (2 * link.betaSecPerByte + intra.gammaSecPerByte));
        out.exact = extra == 0 && per > 0;
    } else {
        return out;
    }
    out.seconds = out.intraSeconds + out.netSeconds;
    return out;
}

double BusBwFactor(Collective c, int p)
{
    const double q = p;
    switch (c) {
    case Collective::AllReduce: return p > 0 ? 2.0 * (q - 1) / q : 0;
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll:
    case Collective::Scatter:
    case Collective::Gather: return p > 0 ? (q - 1) / q : 0;
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv: return 1.0;
    }
    return 1.0;
}

double AlgBwGBps(uint64_t bytes, double seconds) { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0; }

double MessageSeconds(double bytes, const CostParams& k) { return k.alphaSec + bytes * k.betaSecPerByte; }

} // namespace paralens::core
