#include "plan/SharedMemoryCost.hpp"

namespace paralens::core {

SharedMemoryCost SharedMemoryPlanCost(const Plan& plan, double alphaSec, double memoryBytesPerSec)
{
    SharedMemoryCost cost;
    for (const PlanStep& step : plan.steps) {
        uint64_t moved = 0;
        for (const Transfer& t : plan.TransfersOf(step))
            if (t.src != t.dst) moved += t.bytes * (t.op == TransferOp::Reduce ? 3 : 2);
        cost.memoryBytes += moved;
        cost.seconds += alphaSec + (memoryBytesPerSec > 0 ? static_cast<double>(moved) / memoryBytesPerSec : 0.0);
    }
    return cost;
}

} // namespace paralens::core
