#include "CollectiveMath.hpp"

#include "common/Error.hpp"
#include "model/CostModel.hpp"

#include <algorithm>

namespace paralens::gpu {

static_assert(static_cast<int>(check::Coll::Broadcast) == static_cast<int>(core::Collective::Broadcast) &&
                  static_cast<int>(check::Coll::AllReduce) == static_cast<int>(core::Collective::AllReduce) &&
                  static_cast<int>(check::Coll::SendRecv) == static_cast<int>(core::Collective::SendRecv),
              "check::Coll must follow core::Collective");

check::Coll ToCheckColl(core::Collective c) { return static_cast<check::Coll>(static_cast<int>(c)); }

CollCounts CollectiveCounts(core::Collective c, uint64_t bytes, uint64_t eltBytes, int ranks, int root)
{
    Require(ranks >= 1 && eltBytes >= 1, "collective counts: ranks and element size must be positive");
    const uint64_t count = bytes / eltBytes;
    CollCounts out;
    out.shape.coll = ToCheckColl(c);
    out.shape.ranks = ranks;
    out.shape.root = root;
    switch (c) {
    case core::Collective::AllReduce:
    case core::Collective::Broadcast:
    case core::Collective::Reduce:
    case core::Collective::SendRecv: out.shape.base = count; break;
    default: out.shape.base = count / static_cast<uint64_t>(ranks); break;
    }
    if (out.shape.base == 0)
        throw Error("--bytes: " + std::to_string(bytes) + " B gives less than one element per rank for " +
                    std::string(core::Name(c)) + " over " + std::to_string(ranks) + " ranks (at least " +
                    std::to_string(eltBytes * static_cast<uint64_t>(c == core::Collective::AllReduce ? 1 : ranks)) +
                    " B needed)");
    out.sendCount = check::SendCount(out.shape);
    out.recvCount = check::RecvCount(out.shape);
    const bool split = out.shape.base != count;
    out.bytes = (split ? out.shape.base * static_cast<uint64_t>(ranks) : out.shape.base) * eltBytes;
    return out;
}

Bandwidth ComputeBandwidth(core::Collective c, int ranks, uint64_t bytes, double seconds)
{
    Bandwidth b;
    b.seconds = seconds;
    b.algbwGBps = core::AlgBwGBps(bytes, seconds);
    b.busbwGBps = b.algbwGBps * core::BusBwFactor(c, ranks);
    return b;
}

double IterationSeconds(const std::vector<double>& perRankTotalSec, int iters)
{
    if (perRankTotalSec.empty() || iters < 1) return 0.0;
    return *std::max_element(perRankTotalSec.begin(), perRankTotalSec.end()) / iters;
}

bool ExactCheckPossible(DType dtype, core::Collective c, int ranks)
{
    if (!core::Reduces(c)) return true; // copies are exact in every type
    const int maxSum = 8 * ranks;       // PatternValue is at most 8
    switch (dtype) {
    case DType::BFloat16: return maxSum <= 256;
    case DType::Half: return maxSum <= 2048;
    default: return true;
    }
}

} // namespace paralens::gpu
