#include "trace/ChromeBlock.hpp"

#include "trace/JsonText.hpp"

#include <algorithm>
#include <cstring>
#include <simdjson.h>

namespace paralens::core {

namespace od = simdjson::ondemand;

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

// What went wrong in one event: thrown inside the parse, recorded by ChromeBlock::Parse.
struct EventFailure {
    std::string what;
};

// The fields of one event, read from simdjson's values.
class EventFields {
public:
    EventFields(const ChromeBlock& block, std::vector<ChromeArg>& args) : m_block(block), m_args(args) {}

    void Read(od::value& value, ChromeEvent& e)
    {
        od::object obj;
        if (value.get_object().get(obj)) throw EventFailure{"an event must be a JSON object"};
        for (auto f : obj) {
            od::field field;
            Check(std::move(f).get(field), "key");
            std::string_view key;
            Check(KeyOf(field, key), "key");
            ReadField(key, field.value(), e);
        }
    }

private:
    static void Check(simdjson::error_code err, std::string_view field)
    {
        if (err) throw EventFailure{"cannot read \"" + std::string(field) + "\": " + simdjson::error_message(err)};
    }

    static void ReadTime(od::value& v, std::string_view field, int64_t& ns)
    {
        std::string_view text;
        JsonKind kind;
        Check(ReadValueText(v, text, kind), field);
        if ((kind != JsonKind::Number && kind != JsonKind::String) || !ParseMicrosToNs(text, ns))
            throw EventFailure{"\"" + std::string(field) + "\" must be a number of microseconds that fits 64-bit nanoseconds, found " +
                               std::string(text.substr(0, 40))};
    }

    static void ReadId(od::value& v, std::string_view field, std::string_view& out, bool* isString)
    {
        JsonKind kind;
        Check(ReadValueText(v, out, kind), field);
        if (kind != JsonKind::Number && kind != JsonKind::String)
            throw EventFailure{"\"" + std::string(field) + "\" must be a number or a string"};
        if (isString) *isString = kind == JsonKind::String;
    }

    static void ReadString(od::value& v, std::string_view field, std::string_view& out)
    {
        JsonKind kind;
        Check(ReadValueText(v, out, kind), field);
        if (kind != JsonKind::String && kind != JsonKind::Number && kind != JsonKind::Null)
            throw EventFailure{"\"" + std::string(field) + "\" must be a string"};
        if (kind == JsonKind::Null) out = {};
    }

    void ReadArgs(od::value& v)
    {
        od::object obj;
        if (v.get_object().get(obj)) return; // args that are not an object are ignored
        for (auto f : obj) {
            od::field field;
            Check(std::move(f).get(field), "args");
            ChromeArg arg;
            Check(KeyOf(field, arg.key), "args");
            od::value& value = field.value();
            Check(ReadValueText(value, arg.text, arg.kind), arg.key);
            m_args.push_back(arg);
        }
    }

    void ReadField(std::string_view key, od::value& v, ChromeEvent& e)
    {
        if (key == "ph") {
            std::string_view ph;
            ReadString(v, key, ph);
            e.ph = ph.empty() ? 0 : ph[0];
        } else if (key == "name") {
            ReadString(v, key, e.name);
        } else if (key == "cat") {
            ReadString(v, key, e.cat);
        } else if (key == "ts") {
            ReadTime(v, key, e.tsNs);
            e.hasTs = true;
        } else if (key == "dur") {
            ReadTime(v, key, e.durNs);
            e.hasDur = true;
        } else if (key == "pid") {
            ReadId(v, key, e.pid, &e.pidIsString);
        } else if (key == "tid") {
            ReadId(v, key, e.tid, &e.tidIsString);
        } else if (key == "id" || key == "id2" || key == "bind_id") {
            if (e.id.empty()) ReadId(v, key, e.id, nullptr);
        } else if (key == "bp") {
            ReadString(v, key, e.bp);
        } else if (key == "s") {
            ReadString(v, key, e.scope);
        } else if (key == "args") {
            ReadArgs(v);
        }
    }

    // A key straight from the input when it has no escape (the usual case), else unescaped.
    simdjson::error_code KeyOf(od::field& field, std::string_view& key) const
    {
        const char* raw = field.key().raw();
        const char* base = m_block.text.get();
        const char* end = base + m_block.length;
        if (raw >= base && raw < end) {
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

    const ChromeBlock& m_block;
    std::vector<ChromeArg>& m_args;
};

} // namespace

struct ChromeBlock::Parser {
    od::parser parser;
};

ChromeBlock::ChromeBlock() : parser(std::make_unique<Parser>()) {}
ChromeBlock::~ChromeBlock() = default;

void ChromeBlock::Assign(std::string_view body, uint64_t abs, char sep, bool isTentative)
{
    const size_t need = body.size() + 2;
    if (need > capacity) { // with room to spare: the next blocks are about as large
        capacity = need + need / 4;
        text.reset(new char[capacity + simdjson::SIMDJSON_PADDING]); // default-initialised: not zeroed
    }
    text[0] = '[';
    std::memcpy(text.get() + 1, body.data(), body.size());
    text[need - 1] = ']';
    std::memset(text.get() + need, 0, simdjson::SIMDJSON_PADDING);
    length = need;
    textAbs = abs - 1;
    separator = sep;
    tentative = isTentative;
    events.clear();
    args.clear();
    argBegin.assign(1, 0);
    failed = endedEarly = false;
    failAt = 0;
    failWhat.clear();
}

void ChromeBlock::Parse()
{
    const char* base = text.get();
    auto abs = [&](const char* loc) { return textAbs + static_cast<uint64_t>(loc - base); };
    auto fail = [&](uint64_t at, std::string what) {
        failed = true;
        failAt = at;
        failWhat = std::move(what);
    };
    simdjson::padded_string_view view(base, length, capacity + simdjson::SIMDJSON_PADDING);
    od::document doc;
    if (auto err = parser->parser.iterate(view).get(doc)) { // the document is unusable: say where we can
        if (tentative) return fail(abs(base + 1), "");
        const size_t bad = err == simdjson::UTF8_ERROR ? FirstInvalidUtf8(base, length) : 1;
        return fail(textAbs + bad, err == simdjson::UTF8_ERROR ? "not valid UTF-8 text (binary data?)"
                                                               : std::string("not valid JSON in the events from here on: ") +
                                                                     simdjson::error_message(err));
    }
    auto failHere = [&](const char* what, simdjson::error_code err) {
        const char* loc = nullptr;
        fail(!doc.current_location().get(loc) && loc ? abs(loc) : textAbs + 1, std::string(what) + ": " + simdjson::error_message(err));
    };
    od::array array;
    if (auto err = doc.get_array().get(array)) {
        if (tentative) return fail(abs(base + 1), "");
        return failHere("not valid JSON", err);
    }
    EventFields fields(*this, args);
    for (auto element : array) {
        od::value v;
        if (auto err = element.get(v)) { // a cut cannot cause this: genuine even when tentative
            tentative = false;
            return failHere("not valid JSON", err);
        }
        ChromeEvent& e = events.emplace_back();
        const char* loc = nullptr;
        e.byteOffset = !v.current_location().get(loc) && loc ? abs(loc) : textAbs;
        try {
            fields.Read(v, e);
        } catch (const EventFailure& f) {
            const uint64_t at = e.byteOffset;
            events.pop_back();
            args.resize(argBegin.back());
            return fail(at, f.what);
        }
        argBegin.push_back(static_cast<uint32_t>(args.size()));
    }
    const char* loc = nullptr;
    if (tentative && !doc.current_location().get(loc) && loc) { // text after the array's end: back to its ']'
        while (loc > base && *loc != ']') --loc;
        endedEarly = true;
        failAt = abs(loc);
    }
}

ChromeBlockQueue::ChromeBlockQueue(unsigned workers) : m_workers(workers)
{
    const size_t depth = workers == 0 ? 1 : workers + 1; // one more, cut while the others parse
    for (size_t i = 0; i < depth; ++i) m_slots.push_back(std::make_unique<Slot>());
}

ChromeBlockQueue::~ChromeBlockQueue()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_pending.clear();
    }
    m_work.notify_all();
    for (std::thread& t : m_threads) t.join();
}

unsigned ChromeBlockQueue::DefaultWorkers()
{
    const unsigned cores = std::thread::hardware_concurrency();
    return cores <= 1 ? 0 : std::min(cores, 8u);
}

void ChromeBlockQueue::Submit()
{
    Slot& slot = *m_slots[(m_head + m_count) % m_slots.size()];
    ++m_count;
    if (m_workers == 0) {
        slot.block.Parse();
        slot.parsed = true;
        return;
    }
    if (m_threads.empty())
        for (unsigned i = 0; i < m_workers; ++i) m_threads.emplace_back([this] { Work(); });
    {
        std::lock_guard lock(m_mutex);
        slot.parsed = false;
        m_pending.push_back(&slot);
    }
    m_work.notify_one();
}

void ChromeBlockQueue::Work()
{
    for (;;) {
        Slot* slot = nullptr;
        {
            std::unique_lock lock(m_mutex);
            m_work.wait(lock, [&] { return m_stop || !m_pending.empty(); });
            if (m_stop) return;
            slot = m_pending.front();
            m_pending.pop_front();
        }
        try {
            slot->block.Parse();
        } catch (const std::exception& e) { // out of memory: the reader says so at this block
            slot->block.failed = true;
            slot->block.tentative = false;
            slot->block.failAt = slot->block.textAbs + 1;
            slot->block.failWhat = e.what();
        }
        {
            std::lock_guard lock(m_mutex);
            slot->parsed = true;
        }
        m_done.notify_all();
    }
}

void ChromeBlockQueue::WaitParsed(const Slot& slot)
{
    if (m_workers == 0) return;
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [&] { return slot.parsed; });
}

ChromeBlock& ChromeBlockQueue::WaitOldest()
{
    Slot& slot = *m_slots[m_head];
    WaitParsed(slot);
    return slot.block;
}

void ChromeBlockQueue::Release()
{
    m_head = (m_head + 1) % m_slots.size();
    --m_count;
}

std::vector<const ChromeBlock*> ChromeBlockQueue::WaitAll()
{
    std::vector<const ChromeBlock*> out;
    for (size_t i = 0; i < m_count; ++i) {
        const Slot& slot = *m_slots[(m_head + i) % m_slots.size()];
        WaitParsed(slot);
        out.push_back(&slot.block);
    }
    return out;
}

void ChromeBlockQueue::Clear()
{
    (void)WaitAll();
    m_head = m_count = 0;
}

} // namespace paralens::core
