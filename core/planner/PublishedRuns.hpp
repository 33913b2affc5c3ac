// Published large training runs the planner is checked against: each with its source, the model,
// the cluster, the degrees and batch it used, and the throughput it reported (converted to seconds
// per step by the source's own FLOP-counting convention). For each, what the planner predicts for
// that configuration (fields the source does not state, such as the micro-batch size, are left to
// the planner's best) and where that configuration ranks in the planner's whole search.
#pragma once

#include "planner/Planner.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace paralens::core {

enum class FlopConvention {
    Megatron96, // Narayanan et al. 2021 eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh), recomputation included
    ModelFlops, // 3 x forward as TransformerModel counts it (MFU as the Llama 3 report gives it)
};

// Choices a run could not make, held at its own value when ranking it among the planner's
// (context parallelism before Megatron-LM had it; a DP the experiment fixed; TP and PP in a
// framework that has only FSDP, such as MosaicML's Composer).
struct HeldChoices {
    bool cp = false, dp = false;
    bool tpPp = false;
};

struct PublishedRun {
    std::string id;
    std::string source;
    PlanRequest request;                  // the model, cluster, batch; dp/tp/pp (and what else is stated) fixed
    std::vector<ScheduleKind> schedules;  // the schedules the run may have used (best taken)
    double tflopsPerGpu = 0;              // as published
    FlopConvention convention = FlopConvention::Megatron96;
    HeldChoices held;

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

// The search of `request` with each of `schedules` fixed in turn (where it fixes a pipeline; none
// given: as the request says): the result whose best fitting row is the fastest, else the first
// one's. Throws Error when the first cannot be planned; a later schedule that cannot is skipped.
PlanResult FastestOverSchedules(const PlanRequest& request, std::span<const ScheduleKind> schedules);

// `request` as a published recipe ran it: the stages split evenly or as Megatron-Bridge's flags
// split them (the ends counted as layers), without the search's lightened last stage, which no
// recipe of the set sets. Its own configuration is timed so; its rank among the choices is not.
PlanRequest AsRecipeSplits(const PlanRequest& request);

// Every configuration the planner would choose with `request`'s techniques (recomputation, ZeRO,
// sequence parallelism, precision kept; degrees, CP, micro-batch, chunks, stage split and schedule
// open, the schedule one of `schedules` where it pipelines; `held` kept at the request's value):
// the search, less the rows of other schedules, fitting rows fastest first, its Pareto front.
PlanResult ChoicesWithTechniques(const PlanRequest& request, std::span<const ScheduleKind> schedules, HeldChoices held = {});

// Where a configuration taking `seconds` ranks among ChoicesWithTechniques: 1 + the rows faster,
// and the fastest such row (unset when none fits). `held`: the choices the run could not make.
struct Ranking {
    size_t rank = 1;
    std::optional<PlanRow> best;
};
Ranking RankIn(const PlanResult& choices, double seconds); // `choices` from ChoicesWithTechniques
Ranking RankAmongChoices(const PlanRequest& request, double seconds, std::span<const ScheduleKind> schedules, HeldChoices held = {});

} // namespace paralens::core
