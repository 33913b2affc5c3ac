// What the alpha-beta model predicts for one measured span, from the span and its trace's
// workload metadata: a message (send, recv) alpha + n beta, a collective span its
// PredictSeconds (collective, algorithm, ranks from the workload; n from the span), a compute
// span with FLOPs its FLOPs at the peak the trace's hardware metadata names (cpuPeakFlops).
// Pure; thread-safe.
#pragma once

#include "model/CostModel.hpp"
#include "trace/Trace.hpp"

namespace paralens::core {

// Seconds, or a negative number when the model says nothing about this span.
double PredictSpanSeconds(const Span& span, const Metadata& meta, const CostParams& model);

} // namespace paralens::core
