// The price of a Plan on a two-level cluster, step by step (the lectures' way of counting: steps
// one after another, each as long as its slowest rank): a rank's share of a step is the sum of its
// messages sent or received there, each alpha + m beta of its link (the network's between nodes
// of spec.ranksPerNode ranks when the cluster has two levels; link overrides win) plus m gamma
// for a reduction; the step goes to the network's share when its slowest rank's messages cross
// nodes. Stragglers are left out (the simulator has them). For the ring and the hierarchical
// allreduce it equals PredictTwoLevel (model/CostModel.hpp); the simulator, which lets a rank run
// ahead into the next step, can only be faster.
// Pure function; thread-safe.
#pragma once

#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "sim/ClusterModel.hpp"

#include <cstddef>

namespace paralens::core {

// The link a message from rank src to rank dst takes: the network's alpha and beta between nodes
// of spec.ranksPerNode ranks when the cluster has two levels, else the cluster's; a link override
// for that pair wins (its alpha and beta, still counted to the network when it crosses nodes).
struct LinkCost {
    double alphaSec = 0.0, betaSecPerByte = 0.0;
    bool network = false;
};
LinkCost LinkBetween(const ClusterModel& cluster, const CollectiveSpec& spec, int src, int dst);

struct PlanPrice {
    double seconds = 0.0;
    double intraSeconds = 0.0, netSeconds = 0.0; // the steps paced within nodes, and between them
    size_t netSteps = 0;                         // steps paced by a message between nodes
};

PlanPrice PricePlan(const Plan& plan, const ClusterModel& cluster);

// The model's time of a collective on a two-level cluster, what `simulate` and the window show
// beside the simulation: PredictTwoLevel's formula where there is one (the ring and the
// hierarchical allreduce), else PricePlan of its Plan (`plan` when given, else built). On one
// level (no network, or no placement) PredictSeconds.
struct TwoLevelModel {
    bool twoLevel = false;  // the cluster has a network and the spec a placement
    bool formula = false;   // from a closed form (else step by step)
    bool exact = false;     // the simulated time (see PredictTwoLevel and PredictSeconds)
    double seconds = 0.0, intraSeconds = 0.0, netSeconds = 0.0;
};
TwoLevelModel ModelOnTwoLevels(const CollectiveSpec& spec, const ClusterModel& cluster, const Plan* plan = nullptr);

} // namespace paralens::core
