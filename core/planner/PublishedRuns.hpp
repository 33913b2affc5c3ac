// Published large training runs the planner is checked against: each with its source, the model,
// the cluster, the degrees and batch it used, and the throughput it reported (converted to seconds
// per step by the source's own FLOP-counting convention). For each, what the planner predicts for
// that configuration (fields the source does not state, such as the micro-batch size, are left to
// the planner's best) and where that configuration ranks in the planner's whole search.
#pragma once

#include "planner/Planner.hpp"

#include <span>
#include <string>
#include <vector>

namespace paralens::core {

enum class FlopConvention {
    Megatron96, // Narayanan et al. 2021 eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh), recomputation included
    ModelFlops, // 3 x forward as TransformerModel counts it (MFU as the Llama 3 report gives it)
};

struct PublishedRun {
    std::string id;
    std::string source;
    PlanRequest request;                  // the model, cluster, batch; dp/tp/pp (and what else is stated) fixed
    std::vector<ScheduleKind> schedules;  // the schedules the run may have used (best taken)
    double tflopsPerGpu = 0;              // as published
    FlopConvention convention = FlopConvention::Megatron96;

    double PublishedStepSeconds() const;
};

std::span<const PublishedRun> PublishedRuns();

struct PublishedCheck {
    const PublishedRun* run = nullptr;
    PlanRow predicted;            // the best row with the run's fixed choices
    double publishedSeconds = 0;
    double errorPct = 0;          // (predicted - published) / published x 100
    size_t rank = 0;              // 1-based, among the fitting rows of the search with the run's techniques and free degrees
    double vsBestPct = 0;         // how much slower than the search's best
    PlanRow best;                 // the search's best
};

// Throws Error when the run's configuration does not fit or cannot be built.
PublishedCheck CheckPublishedRun(const PublishedRun& run);

} // namespace paralens::core
