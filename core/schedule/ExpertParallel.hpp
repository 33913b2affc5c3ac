// Expert parallelism (mixture of experts) as a Workload: every device routes its tokens to the
// top-k of E experts (E/D per device), an all-to-all dispatches them, the experts' FFNs run, an
// all-to-all combines the results. Routing is deterministic: expert e gets a share proportional to
// 1 / (e+1)^imbalance (0: uniform; 1: Zipf), so load imbalance is a parameter, not noise.
#pragma once

#include "schedule/ModelParallel.hpp"
#include "schedule/Workload.hpp"

#include <vector>

namespace paralens::core {

struct MoeSpec {
    int devices = 4;
    int experts = 8;             // a multiple of devices
    int topK = 2;
    double tokensPerDevice = 4096;
    double hidden = 4096;
    double ffnHidden = 14336;
    double imbalance = 0.0;
    DeviceSpeed speed;
};

struct MoeWorkload {
    Workload workload{1};
    std::vector<double> tokensPerExpertDevice; // tokens each device's experts process
    uint64_t allToAllBytes = 0;                // bytes crossing devices in dispatch + combine
};

// The routing shares of the experts (sum 1).
std::vector<double> ExpertShares(int experts, double imbalance);

MoeWorkload BuildMoe(const MoeSpec& spec);

} // namespace paralens::core
