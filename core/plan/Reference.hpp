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

// The collective's definition as data: after the plan, bytes [offset, offset + bytes) of a rank's
// buffer must hold either a copy of `sourceRank`'s initial bytes from `sourceOffset`, or the sum
// over all ranks of their initial bytes from `sourceOffset`. Every executor (CPU reference, MPI,
// GPU) checks its result against these; bytes outside the regions are unspecified.
struct ExpectedRegion {
    enum class Kind { CopyOf, SumOfAll };
    uint64_t offset = 0;
    uint64_t bytes = 0;
    Kind kind = Kind::CopyOf;
    int sourceRank = 0;
    uint64_t sourceOffset = 0;
    const char* what = "";
};
std::vector<ExpectedRegion> ExpectedRegions(const Plan& plan, int rank);

// The expected value of byte i of a region, for initial values ReferenceValue(seed, ...).
// Executors that hold fewer bits per byte (bytes on the wire) compare the low bits: sums wrap.
uint64_t ExpectedValue(const ExpectedRegion& region, uint64_t i, int ranks, uint64_t seed);

} // namespace paralens::core
