// paralens trace files: Chrome Trace Event JSON (opens as it is in Perfetto and chrome://tracing)
// with our metadata in a top-level "paralens" object, so that a trace round-trips exactly:
// pid = device index, tid = track index, ts/dur = exact decimal microseconds (ns resolution),
// span fields in args, messages as s/f flow pairs, counters as C events, names as M events.
// Paths ending in .gz are compressed; reading detects gzip by content.
//
// Reading also opens other tools' files, told apart by content (DetectTraceFormat): Chrome and
// Perfetto JSON of any producer, PyTorch profiler (Kineto) traces, nccl-tests logs and Nsight
// Systems reports (their SQLite export, or a .nsys-rep exported with nsys: NsysReader.hpp).
#pragma once

#include "trace/FileIO.hpp"
#include "trace/Trace.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paralens::core {

// Writes atomically (temporary name, then rename). Throws Error naming the path on failure.
void WriteTraceFile(const Trace& trace, const std::string& path);
// The same document as text (small traces, tests).
std::string TraceToJsonText(const Trace& trace);

// The data dependencies of one PyTorch execution trace (ExecutionTrace.hpp), for the Kineto
// reader to add to the profiler trace of the same process.
struct ExecutionTraceLinks {
    std::string origin;
    int64_t pid = -1;
    std::vector<std::pair<int64_t, int64_t>> dependencies; // (producer rf_id, consumer rf_id)
};

struct ReadOptions {
    ProgressFn progress;   // called after each block of a large JSON file (optional)
    // Kineto: execution traces given beside the profiler traces; a reader adds the dependencies of
    // the one whose pid is its host process's (or of the only one, when a single trace is read)
    // and names it in the metadata (extra.executionTrace).
    std::vector<std::shared_ptr<const ExecutionTraceLinks>> executionTraces;
    bool executionTraceByPid = false; // several profiler traces: never the only one by default
    bool keepCpu = true;   // Kineto, Nsight Systems: keep host threads (CPU ops, NVTX ranges, runtime calls) as Cpu devices
    bool apiSpans = false; // Nsight Systems: CUDA runtime calls as host spans, with an arrow to what each launched
    size_t blockBytes = 0; // JSON read block (0: 4 MiB); see ChromeEvents.hpp
    int parseWorkers = -1; // JSON: threads parsing blocks (-1: one per core; 0: the reading thread parses)
};

enum class TraceFormat { Chrome, Kineto, NcclTests, Nsys, ExecutionTrace, Unknown };
std::string_view Name(TraceFormat f);
// The format of a file from its first bytes (decompressed): a JSON object or array is Chrome
// unless Kineto's keys or categories show in it (and ours do not); text with nccl-tests' table
// header is an nccl-tests log; an SQLite database is taken for an Nsight Systems export; a JSON
// object with "schema" and "nodes" is a PyTorch execution trace (no timeline: read it beside a
// profiler trace with ReadTraceFiles).
TraceFormat DetectTraceFormat(std::string_view prefix);
// The format of a file (decompressed) by DetectTraceFormat of its first 64 KiB, and of its first
// 8 MiB when those are text that says nothing yet (a job's long preamble before nccl-tests'
// header). `prefix`, when given, receives the bytes it looked at.
TraceFormat DetectFileFormat(const std::string& path, std::string* prefix = nullptr);

// Reads a Chrome Trace Event JSON document, ours or another tool's (array or object form).
// `origin` names the input in error messages ("trace.json"). Throws Error with the event index
// and byte offset of the first event it cannot read, and when the document holds no event
// paralens can show.
Trace ReadChromeJson(const std::string& json, const std::string& origin);
Trace ReadChromeTrace(ByteSource& source, const std::string& origin, const ReadOptions& options = {});

// A PyTorch profiler trace (KinetoReader.cpp has the details). Same errors as ReadChromeJson.
Trace ReadKinetoJson(const std::string& json, const std::string& origin, const ReadOptions& options = {});
Trace ReadKinetoTrace(ByteSource& source, const std::string& origin, const ReadOptions& options = {});

// Reads a trace file of any format paralens knows, recognised by content. Throws Error naming
// the file and the place in it.
Trace ReadTraceFile(const std::string& path, const ReadOptions& options = {});
// The same for text in memory (tests, fuzzing); `origin` names it in errors.
Trace ReadTraceText(const std::string& text, const std::string& origin, const ReadOptions& options = {});

// Several files of one job on one timeline: each read with ReadTraceFile, then merged with
// MergeTraces (TraceMerge.hpp). One file is returned as it is. PyTorch execution traces among
// the files are not timelines: each gives its data dependencies to the profiler trace of the
// same process (by pid; a lone execution trace to a lone profiler trace). Throws Error naming an
// execution trace that matches no profiler trace, or one given alone.
Trace ReadTraceFiles(const std::vector<std::string>& paths, const ReadOptions& options = {});

} // namespace paralens::core
