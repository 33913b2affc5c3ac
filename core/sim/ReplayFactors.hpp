// What a what-if does to each node of a trace's graph: the factor its duration is multiplied by,
// from the scale rules and straggler removal (`scale`) and from the network change priced by the
// cost model (`network`), and the collective each communication node ran. Used by the replayer
// (TraceReplay.cpp). Pure functions; thread-safe.
#pragma once

#include "analysis/TraceGraph.hpp"
#include "model/CostModel.hpp"
#include "sim/TraceReplay.hpp"

#include <optional>
#include <vector>

namespace paralens::core {

struct NodeFactors {
    std::vector<double> scale;   // per node: scale rules x straggler removal
    std::vector<double> network; // per node: model(after) / model(before); 1 without a network change
    double Of(uint32_t n) const { return scale[n] * network[n]; }
};

// `before` is the network the trace ran on (required when changes.networkAfter is set).
NodeFactors ComputeFactors(const TraceGraph& graph, const WhatIfChanges& changes, const std::optional<CostParams>& before);

// The collective a node ran as the cost model knows it (its tag, else its name; the group's size
// as the ranks when the tag does not say), or nullopt for a node that is not a collective.
std::optional<CollectiveSpec> CollectiveOfNode(const TraceGraph& graph, uint32_t node);

} // namespace paralens::core
