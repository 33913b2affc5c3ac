// Small helpers to write JSON text fast into a std::string (for large trace files; small
// documents such as CLI output use nlohmann::json instead).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace paralens::core {

void AppendJsonString(std::string& out, std::string_view text); // with quotes and escapes
void AppendInt(std::string& out, int64_t value);
void AppendUint(std::string& out, uint64_t value);
void AppendDouble(std::string& out, double value); // shortest text that reads back exactly; null for NaN/inf
// Nanoseconds as exact decimal microseconds, as Chrome's "ts" and "dur" want: 1234567 -> 1234.567
void AppendMicrosFromNs(std::string& out, int64_t ns);

// Parses the decimal text of a JSON number of microseconds ("1234.5678", "-3", "1.5e3") into
// nanoseconds exactly where the text has at most 3 decimals, rounding half away from zero beyond.
// Returns false when the text is not a number or does not fit int64 nanoseconds.
bool ParseMicrosToNs(std::string_view text, int64_t& ns);
// Same for text already in nanoseconds ("1700000000123456789", "12.6").
bool ParseDecimalNs(std::string_view text, int64_t& ns);

} // namespace paralens::core
