// paralens trace files: Chrome Trace Event JSON (opens as it is in Perfetto and chrome://tracing)
// with our metadata in a top-level "paralens" object, so that a trace round-trips exactly:
// pid = device index, tid = track index, ts/dur = exact decimal microseconds (ns resolution),
// span fields in args, messages as s/f flow pairs, counters as C events, names as M events.
// Paths ending in .gz are compressed; reading detects gzip by content.
#pragma once

#include "trace/Trace.hpp"

#include <string>
#include <string_view>

namespace paralens::core {

// Writes atomically (temporary name, then rename). Throws Error naming the path on failure.
void WriteTraceFile(const Trace& trace, const std::string& path);
// The same document as text (small traces, tests).
std::string TraceToJsonText(const Trace& trace);

// Reads a Chrome Trace Event JSON document, ours or another tool's (array or object form).
// `origin` names the input in error messages ("trace.json"). Throws Error with the event index
// and byte offset of the first event it cannot read.
Trace ReadChromeJson(const std::string& json, const std::string& origin);

// Reads a trace file of any format paralens knows, recognised by content (TraceFormats.cpp holds
// the list). Throws Error naming the file and the place in it.
Trace ReadTraceFile(const std::string& path);

} // namespace paralens::core
