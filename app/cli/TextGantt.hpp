// A terminal picture of a Trace's compute spans, one row per device, for headless runs: forward
// ops print their micro-batch (0-9, then A-Z), backward ops theirs as a-z, weight-gradient passes
// 'w', other compute '#', idle '.'.
#pragma once

#include "trace/Trace.hpp"

#include <string>

namespace paralens::app {

// At most `width` columns of time; returns several lines ending in '\n' (with a legend).
std::string TextGantt(const core::Trace& trace, int width, int64_t endNs);

} // namespace paralens::app
