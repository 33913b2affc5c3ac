// Bandwidth-optimal ring phases: block b of reduce-scatter starts at rank b+1 and accumulates on
// its way around the ring, arriving complete at rank b after p-1 hops.
#include "plan/PlanAlgorithms.hpp"

namespace paralens::core {

void AppendRingReduceScatter(PlanWriter& w)
{
    const int p = w.Ranks();
    for (int k = 0; k < p - 1; ++k) {
        w.BeginStep("reduce-scatter");
        for (int r = 0; r < p; ++r) w.SendBlocks(r, (r + 1) % p, TransferOp::Reduce, r - 1 - k, 1);
    }
}

void AppendRingAllGather(PlanWriter& w)
{
    const int p = w.Ranks();
    for (int k = 0; k < p - 1; ++k) {
        w.BeginStep("allgather");
        for (int r = 0; r < p; ++r) w.SendBlocks(r, (r + 1) % p, TransferOp::Copy, r - k, 1);
    }
}

} // namespace paralens::core
