#include "plan/SharedMemoryCost.hpp"

namespace paralens::core {

SharedMemoryCost SharedMemoryStepCost(const Plan& plan, const PlanStep& step, double alphaSec, double memoryBytesPerSec)
{
    SharedMemoryCost cost;
    for (const Transfer& t : plan.TransfersOf(step))
        if (t.src != t.dst) cost.memoryBytes += t.bytes * (t.op == TransferOp::Reduce ? 3 : 2);
    cost.seconds = alphaSec + (memoryBytesPerSec > 0 ? static_cast<double>(cost.memoryBytes) / memoryBytesPerSec : 0.0);
    return cost;
}

SharedMemoryCost SharedMemoryPlanCost(const Plan& plan, double alphaSec, double memoryBytesPerSec)
{
    SharedMemoryCost cost;
    for (const PlanStep& step : plan.steps) {
        const SharedMemoryCost s = SharedMemoryStepCost(plan, step, alphaSec, memoryBytesPerSec);
        cost.memoryBytes += s.memoryBytes;
        cost.seconds += s.seconds;
    }
    return cost;
}

} // namespace paralens::core
