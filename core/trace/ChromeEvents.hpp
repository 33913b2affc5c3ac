// A streaming reader of Chrome Trace Event JSON: it walks "traceEvents" (object form) or the
// top-level array (array form) once and hands each event to a callback as a ChromeEvent whose
// string views point into the document or the parser (valid during the callback only).
// Timestamps are parsed from their decimal text straight into int64 ns, so epoch-scale
// microsecond values keep every nanosecond.
//
// The input is read in blocks (4 MiB): the reading thread cuts each block after its last
// complete event (where a line starts a new event, checked by the parse; else by a scanner that
// follows strings and nesting exactly), simdjson parses the blocks' events on worker threads, one
// per core (ChromeBlock.hpp), and the callback gets them in file order on the calling thread. So
// memory stays at a few blocks however large the file, and the byte offsets in errors are those
// of the whole file. The array form may lack its closing ']' (the format allows it).
#pragma once

#include "trace/FileIO.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

enum class JsonKind : uint8_t { Null, Bool, Number, String, Object, Array };

struct ChromeArg {
    std::string_view key;
    std::string_view text; // number text, unescaped string, "true"/"false", or raw JSON of objects/arrays
    JsonKind kind = JsonKind::Null;

    bool AsInt64(int64_t& out) const;
    bool AsUint64(uint64_t& out) const;
    bool AsDouble(double& out) const;
};

struct ChromeEvent {
    size_t index = 0;      // position in the event array
    size_t byteOffset = 0; // where the event starts in the document
    char ph = 0;
    std::string_view name, cat, id, bp, scope;
    std::string_view pid, tid; // number text or string contents; empty when absent
    bool pidIsString = false, tidIsString = false;
    bool hasTs = false, hasDur = false;
    int64_t tsNs = 0, durNs = 0;
    std::span<const ChromeArg> args; // the top-level fields of "args" (valid during the callback)

    const ChromeArg* Arg(std::string_view key) const;
};

// Called for each top-level field of the object form other than "traceEvents", with its raw JSON
// (parse small ones such as our "paralens" metadata with nlohmann::json).
using TopLevelFieldFn = std::function<void(std::string_view key, std::string_view rawJson, JsonKind kind)>;
using ChromeEventFn = std::function<void(const ChromeEvent&)>;

// Walks a document read from `source`. Throws Error naming `origin`, the event index and the
// byte offset when the document is not JSON, has no event array, is truncated, or an event has a
// field of the wrong type. `progress` (optional) is called after each block. `blockBytes` sets
// the block (0: 4 MiB; tests use tiny ones to put block boundaries everywhere); `parseWorkers`
// the parsing threads (-1: one per core; 0: none, the calling thread parses).
void ReadChromeEvents(ByteSource& source, const std::string& origin, const ChromeEventFn& onEvent,
                      const TopLevelFieldFn& onTopLevelField = {}, const ProgressFn& progress = {},
                      size_t blockBytes = 0, int parseWorkers = -1);

// The same over text in memory.
void ReadChromeEvents(const std::string& json, const std::string& origin, const ChromeEventFn& onEvent,
                      const TopLevelFieldFn& onTopLevelField = {});

} // namespace paralens::core
