#include "trace/ChromeEvents.hpp"

#include "trace/ChromeBlock.hpp"

#include "common/CharConv.hpp"
#include "common/Error.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <simdjson.h>

namespace paralens::core {

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

constexpr size_t kBlockBytes = size_t{4} << 20;       // the read block; grows for a larger event
constexpr size_t kMaxElementBytes = size_t{1} << 30; // one event or top-level value beyond this: not a trace
constexpr size_t kNpos = static_cast<size_t>(-1);

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

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

std::string Describe(char c)
{
    if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    return buf;
}

// ---- The document, block by block ----

class ChromeStream {
public:
    ChromeStream(ByteSource& source, const std::string& origin, const ProgressFn& progress, size_t blockBytes, int workers)
        : m_source(source), m_origin(origin), m_progress(progress),
          m_blocks(workers < 0 ? ChromeBlockQueue::DefaultWorkers() : static_cast<unsigned>(workers))
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

    // The cursor is just after the events array's '['; on return, just after its ']'. Blocks
    // of events are cut here and parsed on the queue's workers while the next is cut; each is
    // handed to onEvent in order. A cut is guessed (GuessCut) where the text allows: a block
    // whose parse then fails, or which finds the array closed early, was cut wrong, and the
    // text is rebuilt from its first event not delivered and cut exactly (ScanArrayBody).
    void StreamEvents(const ChromeEventFn& onEvent)
    {
        for (;;) {
            if (m_blocks.Full() && DeliverOldest(onEvent)) continue;
            if (m_end - m_pos < m_cap / 2) Fill();
            if (m_guessCuts && !m_exactNext && !m_eof) {
                size_t cut = GuessCut(m_buf.get() + m_pos, m_end - m_pos);
                if (cut != kNpos) {
                    Submit(m_pos + cut, true);
                    continue;
                }
            }
            m_exactNext = false;
            ArrayScan scan = ScanArrayBody(m_buf.get() + m_pos, m_end - m_pos);
            if (scan.close != kNpos) {
                Submit(m_pos + scan.close, false);
                if (!DeliverAll(onEvent)) return;
                continue;
            }
            if (scan.lastSeparator != kNpos) {
                Submit(m_pos + scan.lastSeparator, false);
                continue;
            }
            if (Fill()) continue;
            // The input ended inside the array.
            if (m_arrayForm && scan.atBoundary) { // the array form may omit its closing ']'
                Submit(m_end, false);
                if (!DeliverAll(onEvent)) return;
                continue;
            }
            if (DeliverAll(onEvent)) continue;
            Fail(m_pos, "the file ends inside the event array after " + std::to_string(m_index) +
                            " complete events: truncated? (expected more of the event that starts here, then ']')");
        }
    }

    // Queues the events in [m_pos, end) (m_buf[end] is their separator, or past the data) and
    // moves the cursor past the separator.
    void Submit(size_t end, bool tentative)
    {
        const char separator = end < m_end ? m_buf[end] : '\0';
        m_blocks.Next().Assign(std::string_view(m_buf.get() + m_pos, end - m_pos), m_bufAbs + m_pos - 1, separator, tentative);
        m_blocks.Submit();
        m_pos = std::min(end + 1, m_end);
    }

    // Delivers every block in flight; true when one was cut wrong (the cursor moved back).
    bool DeliverAll(const ChromeEventFn& onEvent)
    {
        while (!m_blocks.Empty())
            if (DeliverOldest(onEvent)) return true;
        return false;
    }

    // Hands the oldest block's events to onEvent. True when it was cut wrong: the text is then
    // rebuilt from its first event not delivered, and the next cut is exact.
    bool DeliverOldest(const ChromeEventFn& onEvent)
    {
        const ChromeBlock& b = m_blocks.WaitOldest();
        std::optional<uint64_t> resume;
        for (size_t i = 0; i < b.events.size() && !resume; ++i) {
            m_event = b.events[i];
            m_event.args = std::span<const ChromeArg>(b.args).subspan(b.argBegin[i], b.argBegin[i + 1] - b.argBegin[i]);
            m_event.index = m_index;
            if (!b.tentative) {
                onEvent(m_event);
            } else {
                try {
                    onEvent(m_event);
                } catch (const Error&) {
                    resume = b.events[i].byteOffset; // not delivered: go on from its start
                    break;
                }
            }
            ++m_index;
        }
        if (!resume && b.failed && !b.tentative)
            throw Error(m_origin + ": traceEvents[" + std::to_string(m_index) + "] (byte " + std::to_string(b.failAt) + "): " + b.failWhat);
        if (!resume && (b.failed || b.endedEarly)) resume = b.failAt;
        if (m_progress) m_progress(m_source.Consumed(), m_source.Total());
        if (!resume) {
            m_blocks.Release();
            return false;
        }
        if (++m_wrongGuesses >= 4) m_guessCuts = false; // pretty-printed nesting: stop guessing
        m_exactNext = true;
        Rewind(*resume);
        return true;
    }

    // Puts the text from file offset `from` (inside the oldest block in flight) back in front
    // of the unread data, from the blocks' own copies, and drops every block in flight.
    void Rewind(uint64_t from)
    {
        std::string text;
        bool first = true;
        for (const ChromeBlock* b : m_blocks.WaitAll()) {
            const size_t begin = first ? static_cast<size_t>(from - b->textAbs) : 1;
            if (begin < b->length - 1) text.append(b->text.get() + begin, b->length - 1 - begin);
            if (b->separator != '\0') text += b->separator;
            first = false;
        }
        m_blocks.Clear();
        text.append(m_buf.get() + m_pos, m_end - m_pos);
        size_t capacity = m_cap;
        while (capacity < text.size()) capacity *= 2;
        if (capacity != m_cap) {
            m_buf = std::make_unique<char[]>(capacity + simdjson::SIMDJSON_PADDING + 1);
            m_cap = capacity;
        }
        std::memcpy(m_buf.get() + 1, text.data(), text.size());
        m_pos = 1;
        m_end = 1 + text.size();
        m_bufAbs = from;
    }

    ByteSource& m_source;
    const std::string& m_origin;
    const ProgressFn& m_progress;
    std::unique_ptr<char[]> m_buf;
    size_t m_cap = 0;
    size_t m_pos = 0, m_end = 0;
    uint64_t m_bufAbs = 0; // file offset of m_buf[1], plus one
    bool m_eof = false;
    bool m_arrayForm = false;
    bool m_guessCuts = true;
    bool m_exactNext = false; // the last guessed cut was wrong: cut the next block exactly
    int m_wrongGuesses = 0;
    ChromeEvent m_event; // the event handed to onEvent, its args in the block's
    size_t m_index = 0;  // events delivered
    ChromeBlockQueue m_blocks; // last: its workers stop before the rest goes
};

} // namespace

void ReadChromeEvents(ByteSource& source, const std::string& origin, const ChromeEventFn& onEvent,
                      const TopLevelFieldFn& onTopLevelField, const ProgressFn& progress, size_t blockBytes,
                      int parseWorkers)
{
    ChromeStream stream(source, origin, progress, blockBytes, parseWorkers);
    stream.Run(onEvent, onTopLevelField);
}

void ReadChromeEvents(const std::string& json, const std::string& origin, const ChromeEventFn& onEvent,
                      const TopLevelFieldFn& onTopLevelField)
{
    auto source = TextSource(json);
    ReadChromeEvents(*source, origin, onEvent, onTopLevelField);
}

} // namespace paralens::core
