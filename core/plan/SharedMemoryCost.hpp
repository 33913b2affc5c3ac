// The cost of a Plan whose ranks are virtual: p ranks on one GPU, so that every transfer is a copy
// within one memory and the transfers of a step run at once, sharing that memory's bandwidth.
// Where the alpha-beta model gives each rank its own links, this one gives the whole step one
// memory: a step costs alpha (its launches) plus the bytes its transfers move through memory over
// the memory's bandwidth. A copy reads and writes each byte (2 bytes of traffic per byte sent), a
// reduction reads both operands and writes the sum (3). Local copies (src == dst) cost nothing, as
// in the alpha-beta model.
#pragma once

#include "plan/Plan.hpp"

#include <cstdint>

namespace paralens::core {

struct SharedMemoryCost {
    double seconds = 0;
    uint64_t memoryBytes = 0; // read and written, over all steps
};

SharedMemoryCost SharedMemoryPlanCost(const Plan& plan, double alphaSec, double memoryBytesPerSec);
// One step's part of it (the flow view explains a step so).
SharedMemoryCost SharedMemoryStepCost(const Plan& plan, const PlanStep& step, double alphaSec, double memoryBytesPerSec);

} // namespace paralens::core
