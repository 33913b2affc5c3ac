// Runs a collective's Plan on the Network: the engine under Simulate() and under collective
// tasks of workloads. A transfer starts when its bytes are ready at the sender (the last write to
// them has finished), both ranks have joined the collective and both ports are free. Readiness is
// tracked per "atom" (the pieces between the plan's segment boundaries).
#pragma once

#include "plan/Plan.hpp"
#include "sim/Network.hpp"

#include <span>
#include <vector>

namespace paralens::core {

// Told about every transfer as it is scheduled (to draw it).
class PlanObserver {
public:
    virtual ~PlanObserver() = default;
    virtual void OnTransfer(const Transfer& t, int srcDevice, int dstDevice, int step, int phase,
                            const MessageTiming& timing) = 0;
    // Only for reducing transfers whose reduction takes time (gamma > 0).
    virtual void OnReduction(const Transfer& t, int dstDevice, int step, int phase, double start, double end,
                             double ideal) = 0;
    // Observers that return true are told, before each OnTransfer, which earlier transfers (indices
    // into plan.transfers) wrote the bytes it sends (`data`) and, for a reduction, the bytes it
    // adds into (`accumulator`); a local copy passes on the writer of what it copied.
    virtual bool WantsInputs() const { return false; }
    virtual void OnInputs(const Transfer&, std::span<const uint32_t> /*data*/, std::span<const uint32_t> /*accumulator*/) {}
};

struct PlanRunResult {
    std::vector<double> rankEnd; // when each rank's last operation of the plan ends (its join time if none)
    size_t transfers = 0;        // messages on the wire (local copies excluded)
    uint64_t wireBytes = 0;
};

// `deviceOfRank[r]` is the Network device playing rank r; `rankJoin[r]` when rank r enters the
// collective (its input ready, its previous work done).
PlanRunResult RunPlan(const Plan& plan, Network& net, std::span<const int> deviceOfRank,
                      std::span<const double> rankJoin, PlanObserver* observer);

} // namespace paralens::core
