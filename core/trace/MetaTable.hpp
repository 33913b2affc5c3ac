// A run's headline numbers and table rows (MetaSections) as JSON and as the text table the
// command line prints (`paralens run`, with or without MPI). Keys keep their order. Pure
// functions; thread-safe.
#pragma once

#include "trace/Trace.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace paralens::core {

nlohmann::ordered_json ToJson(const MetaSection& section);

// One value as a table cell: yes/no, integers as they are, other numbers with 4 significant
// digits, strings as they are (anything else as JSON text).
std::string FormatCell(const nlohmann::ordered_json& value);

// An array of objects as a table: a "#" line of the first row's keys, then a line per row
// ("-" where a row lacks a key), columns right-aligned and at least 8 wide. "" for no rows.
std::string FormatTable(const nlohmann::ordered_json& rows);

} // namespace paralens::core
