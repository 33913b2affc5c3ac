// Critical paths, what-if replays and run comparisons for the window, `render` and
// `paralens whatif` alike: the one mapping from WhatIfParams to core's changes, a what-if
// experiment's run (its source trace replayed, core/sim/WhatIf.hpp), each finished run's
// critical path, and the comparisons a snapshot shows (core/analysis/TraceDiff.hpp).
// No ImGui or GL; pure functions of their inputs apart from reading a fit file. Thread-safe.
#pragma once

#include "AppState.hpp"
#include "RunResult.hpp"

#include "sim/TraceReplay.hpp"

#include <memory>
#include <string>

namespace paralens::app {

// What errors call the parameters: the window's controls, or the command line's options.
struct WhatIfNames {
    std::string scale = "scale rules";
    std::string network = "the bandwidth and alpha factors";
    std::string model = "the network fit file";
};

// core's changes for `p` on `trace`. A network change is priced against the trace's own model
// (paralens' simulations carry it) or, failing that, the fit file `p.model` (`paralens fit
// --out`); throws Error naming the parameter otherwise, and for a bad scale rule. `networkText`,
// when given, says what the network was and becomes.
core::WhatIfChanges ChangesOf(const WhatIfParams& p, const core::Trace& trace, const WhatIfNames& names = {},
                              std::string* networkText = nullptr);

// "compute x0.8, bandwidth x2, rank 3 at the others' pace" ("no change" for none).
std::string DescribeWhatIf(const WhatIfParams& p);

// Each step's critical path through a finished run's trace.
std::shared_ptr<const CriticalPathData> BuildCriticalPath(const core::Trace& trace);

// A what-if experiment's run: `source` (its files, read) replayed under its changes; the run
// shows the replayed trace with its critical path, the analysis beside it.
std::shared_ptr<const RunResult> BuildWhatIfRun(const Experiment& e, std::shared_ptr<const core::Trace> source);

// What the Stats view compares: every what-if against the trace it replays (when that trace is
// open too), and every opened trace after the first against the first. Those of `previous`
// whose two traces did not change are reused.
std::vector<RunComparison> BuildComparisons(const Snapshot& snap, const Snapshot* previous);

} // namespace paralens::app
