// ReadTraceFile: which reader opens a file, decided by its content.
#include "common/Error.hpp"
#include "trace/FileIO.hpp"
#include "trace/NcclTestsLog.hpp"
#include "trace/NsysReader.hpp"
#include "trace/TraceFile.hpp"
#include "trace/TraceMerge.hpp"

#include <array>
#include <cctype>
#include <filesystem>

namespace paralens::core {

namespace {

constexpr size_t kSniffBytes = 64 * 1024;

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
    case TraceFormat::Unknown: return "unknown";
    }
    return "unknown";
}

TraceFormat DetectTraceFormat(std::string_view prefix)
{
    if (LooksLikeSqlite(prefix)) return TraceFormat::Nsys;
    std::string_view start = SkipSpaceAndBom(prefix);
    if (start.empty()) return TraceFormat::Unknown;
    if (start[0] == '{' || start[0] == '[') {
        if (Contains(prefix, "\"paralens-trace\"")) return TraceFormat::Chrome;
        return LooksLikeKineto(prefix) ? TraceFormat::Kineto : TraceFormat::Chrome;
    }
    if (LooksLikeNcclTestsLog(prefix)) return TraceFormat::NcclTests;
    return TraceFormat::Unknown;
}

Trace ReadTraceFile(const std::string& path, const ReadOptions& options)
{
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".nsys-rep" || ext == ".qdrep") return ReadNsysReport(path, options);
    std::string prefix = ReadFilePrefix(path, kSniffBytes);
    if (SkipSpaceAndBom(prefix).empty())
        throw Error(path + (prefix.empty() ? ": the file is empty" : ": the file is empty (only blanks)"));
    TraceFormat format = DetectTraceFormat(prefix);
    if (format == TraceFormat::NcclTests) return NcclTestsTrace(ReadNcclTestsLogFile(path));
    if (format == TraceFormat::Nsys && ext != ".gz") return ReadNsysSqlite(path, path, options);
    auto source = OpenFileSource(path);
    return ReadByFormat(format, *source, path, options, prefix);
}

Trace ReadTraceText(const std::string& text, const std::string& origin, const ReadOptions& options)
{
    std::string_view prefix = std::string_view(text).substr(0, kSniffBytes);
    if (SkipSpaceAndBom(prefix).empty()) throw Error(origin + ": the file is empty");
    TraceFormat format = DetectTraceFormat(prefix);
    if (format == TraceFormat::NcclTests) return NcclTestsTrace(ReadNcclTestsLog(text, origin));
    auto source = TextSource(text);
    return ReadByFormat(format, *source, origin, options, prefix);
}

Trace ReadTraceFiles(const std::vector<std::string>& paths, const ReadOptions& options)
{
    Require(!paths.empty(), "no trace files given");
    std::vector<Trace> parts;
    parts.reserve(paths.size());
    for (const std::string& p : paths) parts.push_back(ReadTraceFile(p, options));
    return MergeTraces(std::move(parts), paths);
}

} // namespace paralens::core
