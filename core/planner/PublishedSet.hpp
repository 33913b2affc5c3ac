// The planner's validation set: the published training runs of tests/data/published-runs.csv
// (sources and caveats in tests/data/published-runs.md), built into the library. Each run the
// planner can model is predicted with the run's own degrees, batch, sequence, precision and what
// else it states (the rest, such as an unstated micro-batch or, for a pipeline, whether it
// interleaves, the planner's best of Megatron-LM's choices) and compared with
// its published step time; each other run says why it is not modelled (its GPU is not in the spec
// table, context parallelism, a mixture of experts, a shape the file does not give, ...).
#pragma once

#include "planner/Planner.hpp"
#include "planner/PublishedRuns.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

struct PublishedSetRun {
    std::string id, source, model, gpu, precision;
    std::string citation;       // the source as the file cites it
    int gpus = 0;
    std::string skipped;        // why it is not modelled (empty: modelled)
    PlanRequest request;        // the run's fixed choices
    bool scheduleUnstated = false; // a pipeline whose source prints no interleaving: 1F1B or interleaved, the faster
    bool microBatchInDoubt = false; // its printed accumulation disagrees with batch, DP and micro-batch: the planner's micro-batch
    HeldChoices held;              // what the run could not choose, held in its ranking
    bool fittedOn = false;         // a number of the model was fitted on this run (its GPU's attention rate): not a test
    double publishedSeconds = 0;
    std::string publishedFrom;  // "tokens/s", "step time" or "TFLOP/s"
    // The prediction:
    bool fits = false;
    std::string config;         // the predicted row's configuration, or the closest one when nothing fits
    std::string rejected;       // why the closest does not fit
    double predictedSeconds = 0;
    double errorPct = 0;        // (predicted - published) / published x 100
    double memoryBytes = 0;     // per GPU, the predicted row's heaviest stage (or the closest row's)
    double hbmBytes = 0;        // the GPU's memory
    // The published configuration among all the planner would choose with the run's techniques
    // (degrees, CP, micro-batch, Megatron-LM's two schedules, stage split open): its place by step
    // time (1: the fastest) and how much slower it is than the planner's best.
    size_t rank = 0;
    double vsBestPct = 0;
    std::string bestConfig;
};

// RFC 4180 text: fields separated by commas, quoted when they hold a comma, a quote or a newline.
// Throws Error when a quote is left open.
std::vector<std::vector<std::string>> ParseCsv(std::string_view text);

// A number as the set prints it, or 0 for a blank or a note in its place ("ZeRO-1 DP (size not stated)").
double CsvNumber(const std::string& field);

// The CSV text built into the library (tests/data/published-runs.csv at build time).
std::string_view PublishedSetCsv();

// Every run of `csv` (the file's format), modelled or not. Throws Error naming the row for a file
// that is not the set's format. `progress`, when given, hears the rows done and all of them
// after each row (a modelled one takes a search).
std::vector<PublishedSetRun> CheckPublishedSet(std::string_view csv, const std::function<void(size_t done, size_t rows)>& progress = {});

// Each run of `csv`, modelled or not, with a line naming it ("R091 MPT-70b, 128 x H100 80GB,
// amp_bf16 (S9)") and why it is not modelled (empty: it is); nothing is predicted.
struct PublishedSetEntry {
    std::string id, label, skipped;
};
std::vector<PublishedSetEntry> PublishedSetIndex(std::string_view csv);
// One of them by its id; throws Error as PublishedSetRunById does.
PublishedSetEntry PublishedSetEntryById(std::string_view csv, std::string_view id);

// The planner's choices for a run with its techniques (ChoicesWithTechniques, the search its rank
// is counted in) and the run's own configuration among them: where the search does not offer it
// (a micro-batch it does not try, chunks of unequal layers) its row is added in its place by step
// time; unset only when it does not fit.
struct PublishedRunChoices {
    PlanResult choices;
    std::optional<size_t> row;
};

// One run of `csv` by its id ("R091"), prepared and, when modelled, predicted as CheckPublishedSet
// does; with `choices`, those too, from the same search as its rank. Throws Error naming the id
// and the set's range when no row has it, and with `choices` for a run that is not modelled.
PublishedSetRun PublishedSetRunById(std::string_view csv, std::string_view id, PublishedRunChoices* choices = nullptr);

} // namespace paralens::core
