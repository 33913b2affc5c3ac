// `paralens plan --validate`: the planner against published runs. The papers' table
// (core::PublishedRuns) and the published set of tests/data/published-runs.csv, each run with its
// predicted step, error and rank, then per-source and held-out summaries; or all of it as --json.
#pragma once

namespace paralens::app {

void RunPlanValidate(bool json);

} // namespace paralens::app
