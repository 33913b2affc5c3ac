// ReadTraceFile: which reader opens a file, decided by its content.
#include "common/Error.hpp"
#include "trace/ExecutionTrace.hpp"
#include "trace/FileIO.hpp"
#include "trace/NcclTestsLog.hpp"
#include "trace/NsysReader.hpp"
#include "trace/TraceFile.hpp"
#include "trace/TraceMerge.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

namespace paralens::core {

namespace {

constexpr size_t kSniffBytes = 64 * 1024;
// A text whose first kSniffBytes say nothing (a job script's echo of every command and srun's
// CPU bindings before nccl-tests' header: 4,000 lines on 512 nodes) is looked into this far.
constexpr size_t kTextSniffBytes = 8 * 1024 * 1024;

std::string_view SkipSpaceAndBom(std::string_view text)
{
    size_t i = 0;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t' ||
                               static_cast<unsigned char>(text[i]) == 0xEF || static_cast<unsigned char>(text[i]) == 0xBB ||
                               static_cast<unsigned char>(text[i]) == 0xBF))
        ++i;
    return text.substr(i);
}

bool Contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

bool LooksLikeKineto(std::string_view prefix)
{
    static constexpr std::array<std::string_view, 12> kMarks{
        "\"schemaVersion\"", "\"deviceProperties\"", "\"distributedInfo\"", "\"baseTimeNanoseconds\"",
        "\"cuda_runtime\"",  "\"cpu_op\"",           "\"ac2g\"",            "\"gpu_memcpy\"",
        "PyTorch Profiler",  "\"python_function\"",  "\"cuda_driver\"",     "\"gpu_user_annotation\"",
    };
    for (std::string_view m : kMarks)
        if (Contains(prefix, m)) return true;
    return Contains(prefix, "\"cat\": \"kernel\"") || Contains(prefix, "\"cat\":\"kernel\"");
}

std::string Printable(std::string_view text)
{
    std::string out;
    for (char c : text.substr(0, 24)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '.';
    return out;
}

Trace ReadByFormat(TraceFormat format, ByteSource& source, const std::string& origin, const ReadOptions& options,
                   std::string_view prefix)
{
    switch (format) {
    case TraceFormat::Chrome: return ReadChromeTrace(source, origin, options);
    case TraceFormat::Kineto: return ReadKinetoTrace(source, origin, options);
    case TraceFormat::NcclTests: break; // read whole by the callers (logs are small)
    case TraceFormat::Nsys:
        throw Error(origin + ": an SQLite database (an Nsight Systems export?) is read from a file, uncompressed: gunzip it first");
    case TraceFormat::ExecutionTrace:
        throw Error(origin + ": a PyTorch execution trace has no timeline of its own: open it together with the profiler "
                             "(Kineto) trace of the same process, e.g. `paralens whatif rank0.pt.trace.json rank0_et.json`");
    case TraceFormat::Unknown:
        throw Error(origin + ": not a trace paralens can read: expected Chrome/Perfetto trace JSON, a PyTorch "
                             "profiler (Kineto) trace, an nccl-tests log (optionally .gz) or an Nsight Systems report "
                             "(.nsys-rep or its SQLite export); it starts with '" +
                    Printable(prefix) + "'");
    }
    return {};
}

} // namespace

std::string_view Name(TraceFormat f)
{
    switch (f) {
    case TraceFormat::Chrome: return "chrome";
    case TraceFormat::Kineto: return "kineto";
    case TraceFormat::NcclTests: return "nccl-tests";
    case TraceFormat::Nsys: return "nsys";
    case TraceFormat::ExecutionTrace: return "execution-trace";
    case TraceFormat::Unknown: return "unknown";
    }
    return "unknown";
}

TraceFormat DetectTraceFormat(std::string_view prefix)
{
    if (LooksLikeSqlite(prefix)) return TraceFormat::Nsys;
    std::string_view start = SkipSpaceAndBom(prefix);
    if (start.empty()) return TraceFormat::Unknown;
    if (start[0] == '[' && LooksLikeNcclTestsLog(start)) return TraceFormat::NcclTests; // a launcher's "[time] [host:pid]" lines first
    if (start[0] == '{' || start[0] == '[') {
        if (Contains(prefix, "\"paralens-trace\"")) return TraceFormat::Chrome;
        if (LooksLikeExecutionTrace(prefix)) return TraceFormat::ExecutionTrace;
        return LooksLikeKineto(prefix) ? TraceFormat::Kineto : TraceFormat::Chrome;
    }
    if (LooksLikeNcclTestsLog(prefix)) return TraceFormat::NcclTests;
    return TraceFormat::Unknown;
}

namespace {

// Whether the first kSniffBytes of a longer input (`head`, found `format`) said nothing and are
// text (no NUL byte, not a binary format), so that more of it is looked into.
bool LookFurther(TraceFormat format, std::string_view head)
{
    return format == TraceFormat::Unknown && head.size() >= kSniffBytes && head.find('\0') == std::string_view::npos;
}

// DetectTraceFormat of a text's first bytes, and of more of them when those say nothing.
TraceFormat DetectTextFormat(std::string_view text)
{
    const std::string_view head = text.substr(0, kSniffBytes);
    const TraceFormat format = DetectTraceFormat(head);
    return LookFurther(format, head) && text.size() > kSniffBytes ? DetectTraceFormat(text.substr(0, kTextSniffBytes)) : format;
}

} // namespace

TraceFormat DetectFileFormat(const std::string& path, std::string* prefix)
{
    std::string head = ReadFilePrefix(path, kSniffBytes);
    TraceFormat format = DetectTraceFormat(head);
    if (LookFurther(format, head)) {
        head = ReadFilePrefix(path, kTextSniffBytes);
        format = DetectTraceFormat(head);
    }
    if (prefix) *prefix = std::move(head);
    return format;
}

Trace ReadTraceFile(const std::string& path, const ReadOptions& options)
{
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".nsys-rep" || ext == ".qdrep") return ReadNsysReport(path, options);
    std::string prefix;
    const TraceFormat format = DetectFileFormat(path, &prefix);
    if (SkipSpaceAndBom(prefix).empty())
        throw Error(path + (prefix.empty() ? ": the file is empty" : ": the file is empty (only blanks)"));
    if (format == TraceFormat::NcclTests) return NcclTestsTrace(ReadNcclTestsLogFile(path));
    if (format == TraceFormat::Nsys && ext != ".gz") return ReadNsysSqlite(path, path, options);
    auto source = OpenFileSource(path);
    return ReadByFormat(format, *source, path, options, prefix);
}

Trace ReadTraceText(const std::string& text, const std::string& origin, const ReadOptions& options)
{
    std::string_view prefix = std::string_view(text).substr(0, kSniffBytes);
    if (SkipSpaceAndBom(prefix).empty()) throw Error(origin + ": the file is empty");
    const TraceFormat format = DetectTextFormat(text);
    if (format == TraceFormat::NcclTests) return NcclTestsTrace(ReadNcclTestsLog(text, origin));
    auto source = TextSource(text);
    return ReadByFormat(format, *source, origin, options, prefix);
}

namespace {

// Each execution trace must have given its dependencies to one of the profiler traces.
void CheckExecutionTracesUsed(const std::vector<std::shared_ptr<const ExecutionTraceLinks>>& ets, const std::vector<Trace>& parts)
{
    for (const auto& et : ets) {
        const std::string name = std::filesystem::path(et->origin).filename().string();
        bool used = false;
        for (const Trace& t : parts) used |= t.Meta().extra.GetString("executionTrace") == name;
        if (!used)
            throw Error(et->origin + ": this execution trace (pid " + std::to_string(et->pid) +
                        ") matches none of the profiler traces given with it: give each process's execution trace beside "
                        "its own PyTorch profiler trace (the pids must agree)");
    }
}

// Thrown into the other readers once one has failed, so that they stop at their next block.
struct StopReading {};

// Each file read by ReadTraceFile, several at once (one per core, at most 8, each parsed on its
// own thread): a job's rank files load in about the time of their total size over the cores. Progress is the sum over the files
// (of their sizes on disk), reported from one thread at a time. The first failure in file order
// is thrown, after every reader has stopped.
std::vector<Trace> ReadConcurrently(const std::vector<std::string>& paths, const ReadOptions& options)
{
    const size_t n = paths.size();
    std::vector<std::optional<Trace>> read(n);
    std::vector<std::exception_ptr> errors(n);
    std::vector<uint64_t> done(n, 0);
    uint64_t total = 0;
    for (const std::string& p : paths) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(p, ec);
        total += ec ? 0 : size;
    }
    std::mutex mutex;
    std::atomic<bool> failed{false};
    std::atomic<size_t> next{0};
    const size_t cores = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
    auto work = [&] {
        for (size_t i = next++; i < n; i = next++) {
            ReadOptions o = options;
            if (o.parseWorkers < 0) o.parseWorkers = static_cast<int>(n >= cores ? 0 : cores / n); // a share of the cores each
            o.progress = [&, i](uint64_t d, uint64_t) {
                if (failed) throw StopReading{};
                if (!options.progress) return;
                std::lock_guard lock(mutex);
                done[i] = d;
                uint64_t sum = 0;
                for (uint64_t x : done) sum += x;
                options.progress(sum, total);
            };
            try {
                read[i] = ReadTraceFile(paths[i], o);
            } catch (const StopReading&) {
            } catch (...) {
                errors[i] = std::current_exception();
                failed = true;
            }
        }
    };
    const size_t threads = std::min(n, cores);
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
    std::vector<Trace> parts;
    parts.reserve(n);
    for (std::optional<Trace>& t : read) parts.push_back(std::move(*t));
    return parts;
}

} // namespace

Trace ReadTraceFiles(const std::vector<std::string>& paths, const ReadOptions& options)
{
    Require(!paths.empty(), "no trace files given");
    std::vector<std::string> traces;
    ReadOptions withEts = options;
    for (const std::string& p : paths) {
        if (std::filesystem::path(p).extension() == ".nsys-rep" || DetectFileFormat(p) != TraceFormat::ExecutionTrace) {
            traces.push_back(p);
            continue;
        }
        const ExecutionTrace et = ReadExecutionTrace(p);
        auto links = std::make_shared<ExecutionTraceLinks>();
        links->origin = p;
        links->pid = et.pid;
        links->dependencies = CrossThreadDataDependencies(et);
        withEts.executionTraces.push_back(std::move(links));
    }
    if (traces.empty()) return ReadTraceFile(paths.front(), options); // says what an execution trace is
    withEts.executionTraceByPid = traces.size() > 1;
    std::vector<Trace> parts = ReadConcurrently(traces, withEts);
    CheckExecutionTracesUsed(withEts.executionTraces, parts);
    return MergeTraces(std::move(parts), traces);
}

} // namespace paralens::core
