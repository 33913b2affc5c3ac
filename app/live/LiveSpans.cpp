// The live channel's bulk message, spans: written by hand with core's JSON appenders and read
// with simdjson, since a long run sends millions of them and both ends share the machine with the
// ranks being measured. Names and details travel once per message in "strings" (a ring's details
// repeat for every step of an iteration); each span refers to them by index.
#include "live/LiveProtocol.hpp"

#include "common/Error.hpp"
#include "trace/JsonText.hpp"

#include <simdjson.h>

#include <unordered_map>

namespace paralens::app::live {

namespace {

[[noreturn]] void Refuse(const std::string& who, const std::string& what)
{
    throw Error("live channel, " + who + ": " + what);
}

constexpr size_t kSpanValues = 11;
constexpr size_t kMaxStringBytes = 1024;

int64_t SpanInt(simdjson::dom::element v, size_t i, const std::string& who)
{
    int64_t x = 0;
    if (v.get_int64().get(x) != simdjson::SUCCESS) Refuse(who, "span value " + std::to_string(i) + " must be an integer");
    return x;
}

int32_t SmallInt(simdjson::dom::element v, size_t i, const std::string& who)
{
    const int64_t x = SpanInt(v, i, who);
    if (x < core::kNone || x > (int64_t{1} << 30)) Refuse(who, "span value " + std::to_string(i) + " is out of range");
    return static_cast<int32_t>(x);
}

uint32_t StringIndex(simdjson::dom::element v, size_t i, size_t strings, const std::string& who)
{
    const int64_t x = SpanInt(v, i, who);
    if (x < 0 || static_cast<uint64_t>(x) >= strings)
        Refuse(who, "span value " + std::to_string(i) + " = " + std::to_string(x) + " is not an index into 'strings'");
    return static_cast<uint32_t>(x);
}

LiveSpan ParseSpan(simdjson::dom::element e, size_t strings, const std::string& who)
{
    simdjson::dom::array a;
    if (e.get_array().get(a) != simdjson::SUCCESS || a.size() != kSpanValues) Refuse(who, "a span must be an array of 11 values");
    simdjson::dom::element v[kSpanValues];
    size_t n = 0;
    for (simdjson::dom::element x : a) v[n++] = x;
    LiveSpan out;
    core::Span& s = out.span;
    s.startNs = SpanInt(v[0], 0, who);
    s.endNs = SpanInt(v[1], 1, who);
    if (s.endNs < s.startNs) Refuse(who, "a span ends before it starts");
    const int64_t bytes = SpanInt(v[2], 2, who);
    if (bytes < 0) Refuse(who, "a span's bytes must be >= 0");
    s.bytes = static_cast<uint64_t>(bytes);
    if (v[3].get_double().get(s.flops) != simdjson::SUCCESS) Refuse(who, "span value 3 (FLOPs) must be a number");
    if (!(s.flops >= 0)) Refuse(who, "a span's FLOPs must be >= 0");
    s.predictedNs = SpanInt(v[4], 4, who);
    if (s.predictedNs < core::kNoPrediction) Refuse(who, "a span's predicted time must be >= 0 (or -1: none)");
    out.name = StringIndex(v[5], 5, strings, who);
    out.detail = StringIndex(v[6], 6, strings, who);
    std::string_view category;
    if (v[7].get_string().get(category) != simdjson::SUCCESS) Refuse(who, "span value 7 (category) must be a string");
    s.category = core::ParseSpanCategory(category);
    s.microBatch = SmallInt(v[8], 8, who);
    s.chunk = SmallInt(v[9], 9, who);
    s.step = SmallInt(v[10], 10, who);
    return out;
}

} // namespace

std::string EncodeSpans(const std::string& track, const core::TraceBuilder& b, std::span<const core::Span> spans)
{
    std::unordered_map<core::StringId, size_t> index; // the builder's id -> place in "strings"
    std::string strings, list;
    list.reserve(spans.size() * 64);
    auto ref = [&](core::StringId id) {
        auto [it, fresh] = index.try_emplace(id, index.size());
        if (fresh) {
            if (!strings.empty()) strings.push_back(',');
            core::AppendJsonString(strings, b.Str(id));
        }
        return it->second;
    };
    for (const core::Span& s : spans) {
        list += list.empty() ? "[" : ",[";
        for (int64_t x : {s.startNs, s.endNs}) core::AppendInt(list, x), list.push_back(',');
        core::AppendUint(list, s.bytes), list.push_back(',');
        core::AppendDouble(list, s.flops), list.push_back(',');
        core::AppendInt(list, s.predictedNs), list.push_back(',');
        core::AppendUint(list, ref(s.name)), list.push_back(',');
        core::AppendUint(list, ref(s.detail)), list.push_back(',');
        core::AppendJsonString(list, core::Name(s.category));
        for (int32_t x : {s.microBatch, s.chunk, s.step}) list.push_back(','), core::AppendInt(list, x);
        list.push_back(']');
    }
    std::string out = R"({"t":"spans","track":)";
    core::AppendJsonString(out, track);
    out += R"(,"strings":[)" + strings + R"(],"spans":[)" + list + "]}";
    return out;
}

// A spans message already parsed by simdjson (`doc`, an object whose "t" is "spans").
static void ParseSpansMessage(const simdjson::dom::object& doc, const std::string& who, LiveMessage& m)
{
    m.type = MessageType::Spans;
    std::string_view track;
    if (doc["track"].get_string().get(track) != simdjson::SUCCESS) Refuse(who, "field 'track' must be a string");
    if (track.empty() || track.size() > 64) Refuse(who, "a track needs a name of 1 to 64 bytes");
    m.track = track;
    simdjson::dom::array strings, list;
    if (doc["strings"].get_array().get(strings) != simdjson::SUCCESS) Refuse(who, "field 'strings' must be an array");
    if (doc["spans"].get_array().get(list) != simdjson::SUCCESS) Refuse(who, "field 'spans' must be an array");
    m.strings.reserve(strings.size());
    for (simdjson::dom::element s : strings) {
        std::string_view text;
        if (s.get_string().get(text) != simdjson::SUCCESS) Refuse(who, "'strings' must hold strings");
        if (text.size() > kMaxStringBytes) Refuse(who, "a span's name or detail is longer than 1024 bytes");
        m.strings.emplace_back(text);
    }
    m.spans.reserve(list.size());
    for (simdjson::dom::element e : list) m.spans.push_back(ParseSpan(e, m.strings.size(), who));
}

// Reads the message type with simdjson; a spans message is parsed here and true returned.
bool ParseIfSpans(const std::string& line, const std::string& who, LiveMessage& m)
{
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (auto error = parser.parse(line).get(doc); error != simdjson::SUCCESS)
        Refuse(who, std::string("not JSON: ") + simdjson::error_message(error));
    simdjson::dom::object object;
    if (doc.get_object().get(object) != simdjson::SUCCESS) Refuse(who, "a message must be a JSON object");
    std::string_view type;
    if (object["t"].get_string().get(type) != simdjson::SUCCESS || type != "spans") return false;
    ParseSpansMessage(object, who, m);
    return true;
}

} // namespace paralens::app::live
