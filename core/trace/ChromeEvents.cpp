#include "trace/ChromeEvents.hpp"

#include "common/Error.hpp"
#include "trace/JsonText.hpp"

#include <charconv>
#include <cstdlib>
#include <simdjson.h>

namespace paralens::core {

namespace od = simdjson::ondemand;

bool ChromeArg::AsInt64(int64_t& out) const
{
    if (kind == JsonKind::Bool) {
        out = text == "true";
        return true;
    }
    if (kind != JsonKind::Number && kind != JsonKind::String) return false;
    auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return true;
    double d = 0;
    if (!AsDouble(d) || d < -9.2e18 || d > 9.2e18) return false;
    out = static_cast<int64_t>(d);
    return true;
}

bool ChromeArg::AsUint64(uint64_t& out) const
{
    if (kind != JsonKind::Number && kind != JsonKind::String) return false;
    auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return true;
    double d = 0;
    if (!AsDouble(d) || d < 0 || d > 1.8e19) return false;
    out = static_cast<uint64_t>(d);
    return true;
}

bool ChromeArg::AsDouble(double& out) const
{
    if (kind != JsonKind::Number && kind != JsonKind::String) return false;
    std::string tmp(text);
    char* end = nullptr;
    out = std::strtod(tmp.c_str(), &end);
    return end != tmp.c_str() && *end == '\0';
}

const ChromeArg* ChromeEvent::Arg(std::string_view key) const
{
    for (const ChromeArg& a : args)
        if (a.key == key) return &a;
    return nullptr;
}

namespace {

std::string_view TrimRight(std::string_view s)
{
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

JsonKind KindOf(od::json_type t)
{
    switch (t) {
    case od::json_type::array: return JsonKind::Array;
    case od::json_type::object: return JsonKind::Object;
    case od::json_type::number: return JsonKind::Number;
    case od::json_type::string: return JsonKind::String;
    case od::json_type::boolean: return JsonKind::Bool;
    default: return JsonKind::Null;
    }
}

// Reads any JSON value as text: numbers and literals as their token, strings unescaped,
// objects and arrays as raw JSON.
simdjson::error_code ReadValueText(od::value& v, std::string_view& text, JsonKind& kind)
{
    od::json_type type;
    if (auto err = v.type().get(type)) return err;
    kind = KindOf(type);
    switch (kind) {
    case JsonKind::String: return v.get_string().get(text);
    case JsonKind::Object: {
        od::object o;
        if (auto err = v.get_object().get(o)) return err;
        return o.raw_json().get(text);
    }
    case JsonKind::Array: {
        od::array a;
        if (auto err = v.get_array().get(a)) return err;
        return a.raw_json().get(text);
    }
    default: text = TrimRight(v.raw_json_token()); return simdjson::SUCCESS;
    }
}

class EventReader {
public:
    EventReader(const char* base, const std::string& origin) : m_base(base), m_origin(origin) {}

    [[noreturn]] void Fail(const ChromeEvent& e, const std::string& what) const
    {
        throw Error(m_origin + ": traceEvents[" + std::to_string(e.index) + "] (byte " +
                    std::to_string(e.byteOffset) + "): " + what);
    }

    void Check(simdjson::error_code err, const ChromeEvent& e, std::string_view field) const
    {
        if (err) Fail(e, "cannot read \"" + std::string(field) + "\": " + simdjson::error_message(err));
    }

    void ReadTime(od::value& v, const ChromeEvent& e, std::string_view field, int64_t& ns)
    {
        std::string_view text;
        JsonKind kind;
        Check(ReadValueText(v, text, kind), e, field);
        if ((kind != JsonKind::Number && kind != JsonKind::String) || !ParseMicrosToNs(text, ns))
            Fail(e, "\"" + std::string(field) + "\" must be a number of microseconds, found " + std::string(text));
    }

    void ReadId(od::value& v, const ChromeEvent& e, std::string_view field, std::string_view& out, bool* isString)
    {
        JsonKind kind;
        Check(ReadValueText(v, out, kind), e, field);
        if (kind != JsonKind::Number && kind != JsonKind::String)
            Fail(e, "\"" + std::string(field) + "\" must be a number or a string");
        if (isString) *isString = kind == JsonKind::String;
    }

    void ReadArgs(od::value& v, ChromeEvent& e)
    {
        od::object obj;
        if (v.get_object().get(obj)) return; // args that are not an object are ignored
        for (auto field : obj) {
            ChromeArg arg;
            Check(field.unescaped_key().get(arg.key), e, "args");
            od::value value;
            Check(field.value().get(value), e, "args");
            Check(ReadValueText(value, arg.text, arg.kind), e, arg.key);
            e.args.push_back(arg);
        }
    }

    void ReadEvent(od::value& value, ChromeEvent& e)
    {
        od::object obj;
        if (value.get_object().get(obj)) Fail(e, "an event must be a JSON object");
        for (auto field : obj) {
            std::string_view key;
            Check(field.unescaped_key().get(key), e, "key");
            od::value v;
            Check(field.value().get(v), e, key);
            if (key == "ph") {
                std::string_view ph;
                Check(v.get_string().get(ph), e, key);
                e.ph = ph.empty() ? 0 : ph[0];
            } else if (key == "name") {
                JsonKind kind;
                Check(ReadValueText(v, e.name, kind), e, key);
            } else if (key == "cat") {
                JsonKind kind;
                Check(ReadValueText(v, e.cat, kind), e, key);
            } else if (key == "ts") {
                ReadTime(v, e, key, e.tsNs);
                e.hasTs = true;
            } else if (key == "dur") {
                ReadTime(v, e, key, e.durNs);
                e.hasDur = true;
            } else if (key == "pid") {
                ReadId(v, e, key, e.pid, &e.pidIsString);
            } else if (key == "tid") {
                ReadId(v, e, key, e.tid, &e.tidIsString);
            } else if (key == "id" || key == "id2" || key == "bind_id") {
                if (e.id.empty()) {
                    JsonKind kind;
                    Check(ReadValueText(v, e.id, kind), e, key);
                }
            } else if (key == "bp") {
                Check(v.get_string().get(e.bp), e, key);
            } else if (key == "s") {
                Check(v.get_string().get(e.scope), e, key);
            } else if (key == "args") {
                ReadArgs(v, e);
            }
        }
    }

    size_t Offset(od::value& v)
    {
        const char* loc = nullptr;
        if (v.current_location().get(loc) || !loc) return 0;
        return static_cast<size_t>(loc - m_base);
    }

    void ReadArray(od::array& events, const ChromeEventFn& onEvent)
    {
        ChromeEvent e;
        size_t index = 0;
        for (auto element : events) {
            od::value v;
            e = ChromeEvent{};
            e.index = index++;
            if (auto err = element.get(v)) {
                e.byteOffset = 0;
                Fail(e, std::string("not valid JSON: ") + simdjson::error_message(err));
            }
            e.byteOffset = Offset(v);
            ReadEvent(v, e);
            onEvent(e);
        }
    }

private:
    const char* m_base;
    const std::string& m_origin;
};

} // namespace

void ReadChromeEvents(const std::string& json, const std::string& origin, const ChromeEventFn& onEvent,
                      const TopLevelFieldFn& onTopLevelField)
{
    simdjson::padded_string copy;
    simdjson::padded_string_view view;
    if (json.capacity() >= json.size() + simdjson::SIMDJSON_PADDING) {
        view = simdjson::padded_string_view(json.data(), json.size(), json.capacity());
    } else {
        copy = simdjson::padded_string(json);
        view = copy;
    }
    od::parser parser;
    od::document doc;
    auto fail = [&](const std::string& what, simdjson::error_code err) {
        const char* loc = nullptr;
        std::string where;
        if (!doc.current_location().get(loc) && loc) where = " (byte " + std::to_string(loc - view.data()) + ")";
        throw Error(origin + where + ": " + what + ": " + simdjson::error_message(err));
    };
    if (auto err = parser.iterate(view).get(doc)) fail("not a JSON document", err);
    EventReader reader(view.data(), origin);
    od::json_type type;
    if (auto err = doc.type().get(type)) fail("not a JSON document", err);
    if (type == od::json_type::array) {
        od::array arr;
        if (auto err = doc.get_array().get(arr)) fail("cannot read the event array", err);
        reader.ReadArray(arr, onEvent);
        return;
    }
    if (type != od::json_type::object)
        throw Error(origin + ": expected a Chrome trace: a JSON object with \"traceEvents\" or an array of events");
    od::object top;
    if (auto err = doc.get_object().get(top)) fail("cannot read the top-level object", err);
    bool sawEvents = false;
    for (auto field : top) {
        std::string_view key;
        if (auto err = field.unescaped_key().get(key)) fail("cannot read a top-level key", err);
        od::value v;
        if (auto err = field.value().get(v)) fail("cannot read the value of \"" + std::string(key) + "\"", err);
        if (key == "traceEvents") {
            od::array arr;
            if (auto err = v.get_array().get(arr)) fail("\"traceEvents\" must be an array", err);
            reader.ReadArray(arr, onEvent);
            sawEvents = true;
        } else if (onTopLevelField) {
            std::string_view text;
            JsonKind kind;
            if (auto err = ReadValueText(v, text, kind)) fail("cannot read \"" + std::string(key) + "\"", err);
            onTopLevelField(key, text, kind);
        }
    }
    if (!sawEvents) throw Error(origin + ": no \"traceEvents\" array: this JSON object is not a Chrome trace");
}

} // namespace paralens::core
