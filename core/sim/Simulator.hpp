// Discrete-event simulation of a Plan on a ClusterModel, into a Trace.
//
// Every rank has a send port, a receive port (single-port, full-duplex) and posts its operations
// in plan order. A transfer starts when its data is ready at the sender (the last write to those
// bytes has finished), the sender's port is free and the receiver's port is free; it takes
// alpha + m*beta on both ports. A reducing transfer then keeps the receiver busy for m*gamma
// more while it adds, and its bytes are ready when the addition ends. Stragglers multiply the
// cost of everything their rank takes part in; link overrides replace alpha and beta for one
// direction of one pair. Local copies (src == dst) are free.
//
// Thread-safety: pure function of its inputs.
#pragma once

#include "plan/Plan.hpp"
#include "sim/ClusterModel.hpp"
#include "trace/Trace.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace paralens::core {

struct SimOptions {
    bool buildTrace = true; // false: times only (sweeps, benchmarks)
};

struct SimResult {
    double seconds = 0.0;               // makespan: when the last rank finishes
    std::vector<double> rankEndSeconds; // when each rank's last operation ends
    size_t transfers = 0;               // messages on the wire (local copies excluded)
    uint64_t wireBytes = 0;
    std::optional<Trace> trace;         // one device per rank; tracks send, recv (and reduce)
};

// Throws Error when a straggler or link override names a rank outside [0, p).
// The trace derives its dependencies from the plan when first asked (Trace::Dependencies()), so it
// keeps the plan: shared when given shared, else a copy.
SimResult Simulate(std::shared_ptr<const Plan> plan, const ClusterModel& cluster, const SimOptions& options = {});
SimResult Simulate(const Plan& plan, const ClusterModel& cluster, const SimOptions& options = {});

} // namespace paralens::core
