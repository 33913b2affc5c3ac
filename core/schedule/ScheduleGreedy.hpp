// Internal: the zb-h1 op order, built by list-scheduling 1F1B's forwards and backwards in order
// and slotting each deferred weight-gradient pass (W) into the first moment its device would
// otherwise idle (remaining Ws run at the end), after ZB-H1 (Qi et al., Zero Bubble Pipeline
// Parallelism, 2023). The forwards and backwards keep 1F1B's order, so the activations held (F
// start to B end) stay 1F1B's D - s. Uses the spec's times and stage slowdowns.
#pragma once

#include "schedule/Schedule.hpp"

#include <vector>

namespace paralens::core {

std::vector<std::vector<PipeOp>> ZeroBubbleOrder(const PipelineSpec& spec);

} // namespace paralens::core
