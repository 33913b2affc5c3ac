// ReadTraceFile: which reader opens a file, decided by its content.
#include "common/Error.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceFile.hpp"

#include <simdjson.h>

namespace paralens::core {

namespace {

std::string_view FirstNonSpace(std::string_view text, size_t limit)
{
    size_t i = 0;
    while (i < text.size() && i < limit && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t' ||
                                            static_cast<unsigned char>(text[i]) == 0xEF ||
                                            static_cast<unsigned char>(text[i]) == 0xBB ||
                                            static_cast<unsigned char>(text[i]) == 0xBF))
        ++i;
    return text.substr(i);
}

} // namespace

Trace ReadTraceFile(const std::string& path)
{
    std::string text = ReadFileDecompressed(path);
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    std::string_view start = FirstNonSpace(text, 4096);
    if (start.empty()) throw Error(path + ": the file is empty");
    if (start[0] == '{' || start[0] == '[') return ReadChromeJson(text, path);
    throw Error(path + ": not a trace paralens can read: expected Chrome/Perfetto trace JSON (paralens traces "
                       "are JSON, optionally .gz)");
}

} // namespace paralens::core
