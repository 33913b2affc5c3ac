// CPU reference execution of a Plan on real arrays, checked against the collective's definition.
// Each byte position of each rank's buffer holds a distinct pseudo-random 64-bit value; a reduce
// adds with wrap-around, so sums are exact and any missing, doubled or misplaced contribution
// shows. Memory: ranks x bufferBytes x 8 bytes. Thread-safe (no shared state).
#pragma once

#include "plan/Plan.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::core {

struct ReferenceResult {
    bool ok = false;
    std::string message; // the first mismatch: rank, byte, expected and found values
};

// Runs the plan step by step (transfers of a step read the state before the step) and checks
// every rank's result region.
ReferenceResult CheckPlanOnCpu(const Plan& plan, uint64_t seed = 1);

// The initial value of byte `offset` of `rank`'s buffer for a seed (exposed for GPU checks).
uint64_t ReferenceValue(uint64_t seed, int rank, uint64_t offset);

} // namespace paralens::core
