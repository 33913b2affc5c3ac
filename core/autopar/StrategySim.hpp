// A chosen intra-op assignment run on the simulator: its steps (IntraOpProblem::Steps) as a
// Workload on the mesh's devices (compute spans per op, forward and backward; each collective over
// the groups of its mesh axis, run through its Plan), the mesh's links as a ClusterModel (fast
// inside a row, slow between rows). Every existing view then shows the strategy.
#pragma once

#include "autopar/Sharding.hpp"
#include "schedule/Workload.hpp"
#include "sim/ClusterModel.hpp"
#include "sim/WorkloadSimulator.hpp"

#include <string>
#include <vector>

namespace paralens::core {

// Alpha and bandwidth of the fast links; LinkOverrides for every pair in different rows.
ClusterModel MeshCluster(const DeviceMesh& mesh);

// The devices of each group along `axis`: rows' members for axis 1, columns' for axis 0.
std::vector<std::vector<int>> MeshGroups(const DeviceMesh& mesh, int axis);

// Steps in order, each after the previous one on its devices (one stream per device, as the
// solver's cost assumes).
Workload StrategyWorkload(const IntraOpProblem& p, const std::vector<int>& choice);

// Simulates it; the Trace's metadata names the graph, mesh, solver and predicted cost.
WorkloadResult SimulateStrategy(const IntraOpProblem& p, const std::vector<int>& choice, const std::string& solver, bool buildTrace = true);

} // namespace paralens::core
