// The what-if analysis (core/sim/WhatIf.hpp) and a run comparison (TraceDiff.hpp) as text
// tables and JSON: what `paralens whatif` and `paralens diff` print.
#pragma once

#include "analysis/TraceDiff.hpp"
#include "sim/WhatIf.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace paralens::app {

std::string WhatIfText(const core::WhatIfAnalysis& a, const core::Trace& source, size_t top);
nlohmann::json WhatIfJson(const core::WhatIfAnalysis& a, const core::Trace& source, size_t top);

std::string DiffText(const core::TraceDiffResult& d, size_t top);
nlohmann::json DiffJson(const core::TraceDiffResult& d, size_t top);

} // namespace paralens::app
