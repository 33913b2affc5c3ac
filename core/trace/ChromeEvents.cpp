#include "trace/ChromeEvents.hpp"

#include "common/CharConv.hpp"
#include "common/Error.hpp"
#include "trace/JsonText.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
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
    auto r = paralens::FromChars(text.data(), text.data() + text.size(), out);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return true;
    double d = 0;
    if (!AsDouble(d) || !(d > -9.2e18 && d < 9.2e18)) return false;
    out = static_cast<int64_t>(d);
    return true;
}

bool ChromeArg::AsUint64(uint64_t& out) const
{
    if (kind != JsonKind::Number && kind != JsonKind::String) return false;
    auto r = paralens::FromChars(text.data(), text.data() + text.size(), out);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return true;
    double d = 0;
    if (!AsDouble(d) || !(d >= 0 && d < 1.8e19)) return false;
    out = static_cast<uint64_t>(d);
    return true;
}

bool ChromeArg::AsDouble(double& out) const
{
    if (kind != JsonKind::Number && kind != JsonKind::String) return false;
    const char* b = text.data();
    const char* e = b + text.size();
    if (b != e && *b == '+') ++b;
    auto r = paralens::FromChars(b, e, out);
    return r.ec == std::errc() && r.ptr == e && b != e;
}

const ChromeArg* ChromeEvent::Arg(std::string_view key) const
{
    for (const ChromeArg& a : args)
        if (a.key == key) return &a;
    return nullptr;
}

namespace {

constexpr size_t kBlockBytes = size_t{16} << 20;      // the read block; grows for a larger event
constexpr size_t kMaxElementBytes = size_t{1} << 30; // one event or top-level value beyond this: not a trace
constexpr size_t kNpos = static_cast<size_t>(-1);

std::string_view TrimRight(std::string_view s)
{
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

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
    case JsonKind::String: {
        // Most strings have no escape: take them from the input without simdjson's copy.
        std::string_view token = TrimRight(v.raw_json_token());
        if (token.size() >= 2 && token.back() == '"' && token.find('\\') == std::string_view::npos) {
            text = token.substr(1, token.size() - 2);
            return simdjson::SUCCESS;
        }
        return v.get_string().get(text);
    }
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

// ---- Exact structure scanning (strings with escapes, nesting), without parsing values ----

// The end of the string whose opening quote is p[open]: the index of its closing quote, or kNpos
// when the data ends first.
size_t StringEnd(const char* p, size_t n, size_t open)
{
    size_t from = open + 1;
    for (;;) {
        const void* q = from < n ? std::memchr(p + from, '"', n - from) : nullptr;
        if (!q) return kNpos;
        size_t k = static_cast<size_t>(static_cast<const char*>(q) - p);
        size_t b = k;
        while (b > open + 1 && p[b - 1] == '\\') --b;
        if ((k - b) % 2 == 0) return k; // an even run of backslashes: the quote is real
        from = k + 1;
    }
}

struct ArrayScan {
    size_t lastSeparator = kNpos; // the last ',' between elements
    size_t close = kNpos;         // the ']' that closes the array
    bool atBoundary = false;      // the data ended between elements (outside strings, at depth 1)
};

// Scans the body of an array (just after its '[') for element boundaries.
ArrayScan ScanArrayBody(const char* p, size_t n)
{
    ArrayScan r;
    int64_t depth = 1;
    size_t i = 0;
    while (i < n) {
        char c = p[i];
        if (c == '"') {
            size_t end = StringEnd(p, n, i);
            if (end == kNpos) return r;
            i = end + 1;
            continue;
        }
        if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                r.close = i;
                return r;
            }
        } else if (c == ',' && depth == 1) {
            r.lastSeparator = i;
        }
        ++i;
    }
    r.atBoundary = depth == 1;
    return r;
}

// The end (one past the last byte) of the JSON value starting at p[0], or kNpos when the data
// ends first (`atEof`: the data is all there is, so a bare number may end at n).
size_t ValueEnd(const char* p, size_t n, bool atEof)
{
    if (n == 0) return kNpos;
    if (p[0] == '"') {
        size_t e = StringEnd(p, n, 0);
        return e == kNpos ? kNpos : e + 1;
    }
    if (p[0] == '{' || p[0] == '[') {
        int64_t depth = 0;
        for (size_t i = 0; i < n; ++i) {
            char c = p[i];
            if (c == '"') {
                size_t e = StringEnd(p, n, i);
                if (e == kNpos) return kNpos;
                i = e;
            } else if (c == '{' || c == '[') {
                ++depth;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return i + 1;
            }
        }
        return kNpos;
    }
    for (size_t i = 0; i < n; ++i)
        if (p[i] == ',' || p[i] == '}' || p[i] == ']' || IsSpace(p[i])) return i;
    return atEof ? n : kNpos;
}

// A likely element boundary near the end of p[0, n): the ',' of the last ",\n{" (blanks allowed
// around). In valid JSON a newline is never inside a string, so this is outside strings; it is
// at the event array's depth unless the file pretty-prints nested objects, which the tentative
// parse then finds out. kNpos when there is none in the second half (minified JSON).
size_t GuessCut(const char* p, size_t n)
{
    size_t end = n;
    for (int tries = 0; tries < 64 && end > n / 2; ++tries) {
        const void* nl = memrchr(p, '\n', end);
        if (!nl) return kNpos;
        size_t q = static_cast<size_t>(static_cast<const char*>(nl) - p);
        end = q;
        size_t next = q + 1;
        while (next < n && IsSpace(p[next])) ++next;
        if (next >= n || p[next] != '{') continue;
        size_t prev = q;
        while (prev > 0 && IsSpace(p[prev - 1])) --prev;
        if (prev > 0 && p[prev - 1] == ',') return prev - 1;
    }
    return kNpos;
}

// The index of the first byte that is not valid UTF-8 (n when all is).
size_t FirstInvalidUtf8(const char* p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        auto c = static_cast<unsigned char>(p[i]);
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (len == 0 || i + len > n) return i;
        for (size_t k = 1; k < len; ++k)
            if ((static_cast<unsigned char>(p[i + k]) >> 6) != 2) return i;
        i += len;
    }
    return n;
}

std::string Describe(char c)
{
    if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    return buf;
}

// ---- One block of events, parsed by simdjson ----

class EventReader {
public:
    explicit EventReader(const std::string& origin) : m_origin(origin) {}

    [[noreturn]] void Fail(const ChromeEvent& e, const std::string& what) const
    {
        throw Error(m_origin + ": traceEvents[" + std::to_string(e.index) + "] (byte " +
                    std::to_string(e.byteOffset) + "): " + what);
    }

    void Check(simdjson::error_code err, const ChromeEvent& e, std::string_view field) const
    {
        if (err) Fail(e, "cannot read \"" + std::string(field) + "\": " + simdjson::error_message(err));
    }

    // Parses "[" + events + "]" at `block` (with simdjson's padding readable after it); `blockAbs`
    // is the file offset of block[0]. A `tentative` block was cut where the cut may be wrong: on
    // any error it returns where the first event not delivered starts (nothing is delivered
    // twice) so the caller can go on from there exactly; otherwise it returns nullptr or throws.
    const char* ReadBlock(const char* block, size_t length, size_t capacity, uint64_t blockAbs,
                          const ChromeEventFn& onEvent, bool tentative)
    {
        m_base = block;
        m_length = length;
        m_baseAbs = blockAbs;
        simdjson::padded_string_view view(block, length, capacity);
        od::document doc;
        ChromeEvent& e = m_event;
        const char* afterLast = block + 1; // where the next undelivered event starts
        auto failAt = [&](const char* what, simdjson::error_code err) {
            ResetEvent(e);
            e.byteOffset = blockAbs + 1;
            const char* loc = nullptr;
            if (!doc.current_location().get(loc) && loc) e.byteOffset = Abs(loc);
            Fail(e, std::string(what) + ": " + simdjson::error_message(err));
        };
        if (auto err = m_parser.iterate(view).get(doc)) { // the document is unusable: say where we can
            if (tentative) return afterLast;
            ResetEvent(e);
            size_t bad = err == simdjson::UTF8_ERROR ? FirstInvalidUtf8(block, length) : 1;
            e.byteOffset = blockAbs + bad;
            Fail(e, err == simdjson::UTF8_ERROR ? "not valid UTF-8 text (binary data?)"
                                                : std::string("not valid JSON in the events from here on: ") +
                                                      simdjson::error_message(err));
        }
        od::array events;
        if (auto err = doc.get_array().get(events)) {
            if (tentative) return afterLast;
            failAt("not valid JSON", err);
        }
        for (auto element : events) {
            ResetEvent(e);
            od::value v;
            if (auto err = element.get(v)) failAt("not valid JSON", err); // a cut cannot cause this: genuine
            const char* loc = nullptr;
            e.byteOffset = !v.current_location().get(loc) && loc ? Abs(loc) : blockAbs;
            if (!tentative) {
                ReadEvent(v, e);
                onEvent(e);
                ++m_index;
                continue;
            }
            if (loc) afterLast = loc;
            try {
                ReadEvent(v, e);
                onEvent(e);
            } catch (const Error&) {
                return afterLast; // this event was not delivered: go on from its start
            }
            ++m_index;
        }
        const char* loc = nullptr;
        if (tentative && !doc.current_location().get(loc) && loc) { // text after the array's end: back to its ']'
            while (loc > block && *loc != ']') --loc;
            return loc;
        }
        return nullptr;
    }

    size_t EventCount() const { return m_index; }

private:
    uint64_t Abs(const char* loc) const { return m_baseAbs + static_cast<uint64_t>(loc - m_base); }

    void ResetEvent(ChromeEvent& e) const
    {
        e.index = m_index;
        e.byteOffset = 0;
        e.ph = 0;
        e.name = e.cat = e.id = e.bp = e.scope = e.pid = e.tid = {};
        e.pidIsString = e.tidIsString = e.hasTs = e.hasDur = false;
        e.tsNs = e.durNs = 0;
        e.args.clear(); // keeps its capacity: no allocation per event
    }

    void ReadTime(od::value& v, const ChromeEvent& e, std::string_view field, int64_t& ns)
    {
        std::string_view text;
        JsonKind kind;
        Check(ReadValueText(v, text, kind), e, field);
        if ((kind != JsonKind::Number && kind != JsonKind::String) || !ParseMicrosToNs(text, ns))
            Fail(e, "\"" + std::string(field) + "\" must be a number of microseconds that fits 64-bit nanoseconds, found " +
                        std::string(text.substr(0, 40)));
    }

    void ReadId(od::value& v, const ChromeEvent& e, std::string_view field, std::string_view& out, bool* isString)
    {
        JsonKind kind;
        Check(ReadValueText(v, out, kind), e, field);
        if (kind != JsonKind::Number && kind != JsonKind::String)
            Fail(e, "\"" + std::string(field) + "\" must be a number or a string");
        if (isString) *isString = kind == JsonKind::String;
    }

    void ReadString(od::value& v, const ChromeEvent& e, std::string_view field, std::string_view& out)
    {
        JsonKind kind;
        Check(ReadValueText(v, out, kind), e, field);
        if (kind != JsonKind::String && kind != JsonKind::Number && kind != JsonKind::Null)
            Fail(e, "\"" + std::string(field) + "\" must be a string");
        if (kind == JsonKind::Null) out = {};
    }

    void ReadArgs(od::value& v, ChromeEvent& e)
    {
        od::object obj;
        if (v.get_object().get(obj)) return; // args that are not an object are ignored
        for (auto f : obj) {
            od::field field;
            Check(std::move(f).get(field), e, "args");
            ChromeArg arg;
            Check(KeyOf(field, arg.key), e, "args");
            od::value& value = field.value();
            Check(ReadValueText(value, arg.text, arg.kind), e, arg.key);
            e.args.push_back(arg);
        }
    }

    void ReadField(std::string_view key, od::value& v, ChromeEvent& e)
    {
        if (key == "ph") {
            std::string_view ph;
            ReadString(v, e, key, ph);
            e.ph = ph.empty() ? 0 : ph[0];
        } else if (key == "name") {
            ReadString(v, e, key, e.name);
        } else if (key == "cat") {
            ReadString(v, e, key, e.cat);
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
            if (e.id.empty()) ReadId(v, e, key, e.id, nullptr);
        } else if (key == "bp") {
            ReadString(v, e, key, e.bp);
        } else if (key == "s") {
            ReadString(v, e, key, e.scope);
        } else if (key == "args") {
            ReadArgs(v, e);
        }
    }

    // A key straight from the input when it has no escape (the usual case), else unescaped.
    simdjson::error_code KeyOf(od::field& field, std::string_view& key) const
    {
        const char* raw = field.key().raw();
        const char* end = m_base + m_length;
        if (raw >= m_base && raw < end) {
            const void* quote = std::memchr(raw, '"', static_cast<size_t>(end - raw));
            if (quote) {
                std::string_view k(raw, static_cast<size_t>(static_cast<const char*>(quote) - raw));
                if (k.find('\\') == std::string_view::npos) {
                    key = k;
                    return simdjson::SUCCESS;
                }
            }
        }
        return field.unescaped_key().get(key);
    }

    void ReadEvent(od::value& value, ChromeEvent& e)
    {
        od::object obj;
        if (value.get_object().get(obj)) Fail(e, "an event must be a JSON object");
        for (auto f : obj) {
            od::field field;
            Check(std::move(f).get(field), e, "key");
            std::string_view key;
            Check(KeyOf(field, key), e, "key");
            ReadField(key, field.value(), e);
        }
    }

    const std::string& m_origin;
    od::parser m_parser;
    ChromeEvent m_event;
    const char* m_base = nullptr;
    size_t m_length = 0;
    uint64_t m_baseAbs = 0;
    size_t m_index = 0;
};

// ---- The document, block by block ----

class ChromeStream {
public:
    ChromeStream(ByteSource& source, const std::string& origin, const ProgressFn& progress, size_t blockBytes)
        : m_source(source), m_origin(origin), m_progress(progress), m_reader(origin)
    {
        Allocate(blockBytes > 0 ? std::max<size_t>(blockBytes, 8) : kBlockBytes);
    }

    void Run(const ChromeEventFn& onEvent, const TopLevelFieldFn& onTop)
    {
        SkipSpace();
        if (m_pos + 3 <= m_end && std::memcmp(m_buf.get() + m_pos, "\xEF\xBB\xBF", 3) == 0) { // UTF-8 BOM
            m_pos += 3;
            SkipSpace();
        }
        char c = Peek();
        if (c == '[') {
            ++m_pos;
            m_arrayForm = true;
            StreamEvents(onEvent);
        } else if (c == '{') {
            ++m_pos;
            ReadTopObject(onEvent, onTop);
        } else {
            Fail(m_pos, m_end == m_pos ? "the document is empty"
                                       : "expected a Chrome trace: a JSON object with \"traceEvents\" or an array of "
                                         "events, found " + Describe(c));
        }
        SkipSpace();
        while (m_pos < m_end && m_buf[m_pos] == '\0') { // some tools pad with NULs
            ++m_pos;
            SkipSpace();
        }
        if (m_pos < m_end) Fail(m_pos, "unexpected " + Describe(m_buf[m_pos]) + " after the end of the JSON document");
    }

private:
    [[noreturn]] void Fail(size_t at, const std::string& what) const
    {
        throw Error(m_origin + " (byte " + std::to_string(m_bufAbs + at - 1) + "): " + what);
    }

    // Buffer layout: m_buf[0] is a spare byte (a '[' is written before each block of events),
    // data lies in [1, m_end), padding for simdjson follows the capacity.
    void Allocate(size_t capacity)
    {
        auto bigger = std::make_unique<char[]>(capacity + simdjson::SIMDJSON_PADDING + 1);
        if (m_buf) std::memcpy(bigger.get(), m_buf.get(), m_end);
        m_buf = std::move(bigger);
        m_cap = capacity;
        if (m_end == 0) m_end = m_pos = 1;
    }

    // Moves the unread data to the front and reads until the buffer is full or the input ends.
    // Returns whether any byte was added.
    bool Fill()
    {
        if (m_eof) return false;
        if (m_pos > 1) {
            std::memmove(m_buf.get() + 1, m_buf.get() + m_pos, m_end - m_pos);
            m_bufAbs += m_pos - 1;
            m_end -= m_pos - 1;
            m_pos = 1;
        }
        if (m_end == m_cap + 1) {
            if (m_cap >= kMaxElementBytes)
                Fail(m_pos, "one event or value is larger than 1 GiB: this is not a trace paralens can read");
            Allocate(m_cap * 2);
        }
        size_t before = m_end;
        while (m_end < m_cap + 1) {
            size_t got = m_source.Read(m_buf.get() + m_end, m_cap + 1 - m_end);
            if (got == 0) {
                m_eof = true;
                break;
            }
            m_end += got;
        }
        return m_end > before;
    }

    void SkipSpace()
    {
        for (;;) {
            while (m_pos < m_end && IsSpace(m_buf[m_pos])) ++m_pos;
            if (m_pos < m_end || !Fill()) return;
        }
    }

    char Peek()
    {
        SkipSpace();
        return m_pos < m_end ? m_buf[m_pos] : '\0';
    }

    void Expect(char c, const std::string& what)
    {
        if (Peek() != c)
            Fail(m_pos, "expected " + what + ", found " +
                            (m_pos < m_end ? Describe(m_buf[m_pos]) : std::string("the end of the file (truncated?)")));
        ++m_pos;
    }

    // The complete JSON value at the cursor as raw text; the cursor moves past it.
    std::string_view CaptureValue()
    {
        SkipSpace();
        for (;;) {
            size_t end = ValueEnd(m_buf.get() + m_pos, m_end - m_pos, m_eof);
            if (end != kNpos) {
                std::string_view raw(m_buf.get() + m_pos, end);
                m_pos += end;
                return raw;
            }
            if (!Fill()) Fail(m_pos, "the file ends inside a value (truncated?)");
        }
    }

    std::string ReadKey()
    {
        if (Peek() != '"') Fail(m_pos, "expected a key in quotes, found " + (m_pos < m_end ? Describe(m_buf[m_pos]) : std::string("the end of the file (truncated?)")));
        std::string_view raw = CaptureValue();
        return Unescape(raw, m_pos - raw.size());
    }

    std::string Unescape(std::string_view quoted, size_t at) const
    {
        if (quoted.find('\\') == std::string_view::npos) return std::string(quoted.substr(1, quoted.size() - 2));
        try {
            return nlohmann::json::parse(quoted).get<std::string>();
        } catch (const nlohmann::json::exception&) {
            Fail(at, "a string with an invalid escape");
        }
    }

    void ReadTopObject(const ChromeEventFn& onEvent, const TopLevelFieldFn& onTop)
    {
        bool sawEvents = false;
        if (Peek() == '}') {
            ++m_pos;
        } else {
            for (;;) {
                std::string key = ReadKey();
                Expect(':', "':' after a key");
                if (key == "traceEvents") {
                    Expect('[', "an array of events after \"traceEvents\"");
                    StreamEvents(onEvent);
                    sawEvents = true;
                } else {
                    ReadTopValue(key, onTop);
                }
                char c = Peek();
                if (c == ',') {
                    ++m_pos;
                    continue;
                }
                Expect('}', "',' or '}' after the value of \"" + key + "\"");
                break;
            }
        }
        if (!sawEvents) throw Error(m_origin + ": no \"traceEvents\" array: this JSON object is not a Chrome trace");
    }

    void ReadTopValue(const std::string& key, const TopLevelFieldFn& onTop)
    {
        std::string_view raw = CaptureValue();
        size_t at = m_pos - raw.size();
        if (!onTop) return;
        char c = raw.empty() ? '\0' : raw[0];
        JsonKind kind = c == '{' ? JsonKind::Object
                        : c == '[' ? JsonKind::Array
                        : c == '"' ? JsonKind::String
                        : (c == 't' || c == 'f') ? JsonKind::Bool
                        : c == 'n' ? JsonKind::Null
                                   : JsonKind::Number;
        if (kind == JsonKind::String) {
            std::string text = Unescape(raw, at);
            onTop(key, text, kind);
        } else {
            onTop(key, raw, kind);
        }
    }

    // The cursor is just after the events array's '['; on return, just after its ']'.
    void StreamEvents(const ChromeEventFn& onEvent)
    {
        for (;;) {
            if (m_end - m_pos < m_cap / 2) Fill();
            if (m_guessCuts && !m_eof) {
                size_t cut = GuessCut(m_buf.get() + m_pos, m_end - m_pos);
                if (cut != kNpos) {
                    const char* resume = ParseBlock(m_pos + cut, onEvent, true);
                    if (!resume) {
                        m_pos += cut + 1;
                        continue;
                    }
                    m_pos = static_cast<size_t>(resume - m_buf.get()); // go on exactly from the first undelivered event
                    if (++m_wrongGuesses >= 4) m_guessCuts = false;  // pretty-printed nesting: stop guessing
                }
            }
            ArrayScan scan = ScanArrayBody(m_buf.get() + m_pos, m_end - m_pos);
            if (scan.close != kNpos) {
                ParseBlock(m_pos + scan.close, onEvent, false);
                m_pos += scan.close + 1;
                return;
            }
            if (scan.lastSeparator != kNpos) {
                ParseBlock(m_pos + scan.lastSeparator, onEvent, false);
                m_pos += scan.lastSeparator + 1;
                continue;
            }
            if (Fill()) continue;
            // The input ended inside the array.
            if (m_arrayForm && scan.atBoundary) { // the array form may omit its closing ']'
                ParseBlock(m_end, onEvent, false);
                m_pos = m_end;
                return;
            }
            Fail(m_pos, "the file ends inside the event array after " + std::to_string(m_reader.EventCount()) +
                            " complete events: truncated? (expected more of the event that starts here, then ']')");
        }
    }

    // Parses the events in [m_pos, end) as one JSON array, in place. Returns ReadBlock's answer.
    const char* ParseBlock(size_t end, const ChromeEventFn& onEvent, bool tentative)
    {
        char* base = m_buf.get() + m_pos - 1;
        char saved = m_buf[end];
        base[0] = '[';
        m_buf[end] = ']';
        size_t length = end + 1 - (m_pos - 1);
        size_t capacity = m_cap + simdjson::SIMDJSON_PADDING + 1 - (m_pos - 1);
        const char* resume = m_reader.ReadBlock(base, length, capacity, m_bufAbs + m_pos - 2, onEvent, tentative);
        m_buf[end] = saved;
        if (m_progress) m_progress(m_source.Consumed(), m_source.Total());
        return resume;
    }

    ByteSource& m_source;
    const std::string& m_origin;
    const ProgressFn& m_progress;
    EventReader m_reader;
    std::unique_ptr<char[]> m_buf;
    size_t m_cap = 0;
    size_t m_pos = 0, m_end = 0;
    uint64_t m_bufAbs = 0; // file offset of m_buf[1], plus one
    bool m_eof = false;
    bool m_arrayForm = false;
    bool m_guessCuts = true;
    int m_wrongGuesses = 0;
};

} // namespace

void ReadChromeEvents(ByteSource& source, const std::string& origin, const ChromeEventFn& onEvent,
                      const TopLevelFieldFn& onTopLevelField, const ProgressFn& progress, size_t blockBytes)
{
    ChromeStream stream(source, origin, progress, blockBytes);
    stream.Run(onEvent, onTopLevelField);
}

void ReadChromeEvents(const std::string& json, const std::string& origin, const ChromeEventFn& onEvent,
                      const TopLevelFieldFn& onTopLevelField)
{
    auto source = TextSource(json);
    ReadChromeEvents(*source, origin, onEvent, onTopLevelField);
}

} // namespace paralens::core
