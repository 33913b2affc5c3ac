// Auto-parallelization experiments for RunBuilder: core/autopar's one runner (RunAutopar, as
// `paralens autopar` uses it) and the chosen strategy simulated into a Trace, so the timeline,
// Stats and MFU views show it like any other run. Pure functions of their inputs; thread-safe.
#pragma once

#include "RunResult.hpp"

#include <memory>
#include <string>

namespace paralens::app {

// "autopar: transformer x 24 on 2x4, ilp shown".
std::string AutoparTitle(const AutoparParams& a);
// Throws Error naming the parameter.
std::shared_ptr<RunResult> BuildAutopar(const Experiment& e);

} // namespace paralens::app
