#include "live/LiveProtocol.hpp"

#include "common/Error.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace paralens::app::live {

namespace {

using nlohmann::json;

[[noreturn]] void Refuse(const std::string& who, const std::string& what)
{
    throw Error("live channel, " + who + ": " + what);
}

const json& Field(const json& j, const char* key, const std::string& who)
{
    auto it = j.find(key);
    if (it == j.end()) Refuse(who, std::string("missing field '") + key + "'");
    return *it;
}

int64_t Int(const json& j, const char* key, const std::string& who, int64_t lo, int64_t hi)
{
    const json& v = Field(j, key, who);
    if (!v.is_number_integer()) Refuse(who, std::string("field '") + key + "' must be an integer");
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) Refuse(who, std::string("field '") + key + "' = " + std::to_string(x) + " is out of range");
    return x;
}

std::string Text(const json& j, const char* key, const std::string& who, size_t maxBytes = 4096)
{
    const json& v = Field(j, key, who);
    if (!v.is_string()) Refuse(who, std::string("field '") + key + "' must be a string");
    std::string s = v.get<std::string>();
    if (s.size() > maxBytes) Refuse(who, std::string("field '") + key + "' is longer than " + std::to_string(maxBytes) + " bytes");
    return s;
}

core::MetaSection Section(const json& j, const std::string& who)
{
    core::MetaSection s;
    if (!j.is_object()) Refuse(who, "a metadata section must be an object");
    for (auto it = j.begin(); it != j.end(); ++it) {
        const json& v = it.value();
        if (v.is_boolean()) s.Set(it.key(), v.get<bool>());
        else if (v.is_number_integer()) s.Set(it.key(), v.get<int64_t>());
        else if (v.is_number()) s.Set(it.key(), v.get<double>());
        else if (v.is_string()) s.Set(it.key(), v.get<std::string>());
        else Refuse(who, "metadata '" + it.key() + "' must be a number, a string or a boolean");
    }
    return s;
}

json SectionJson(const core::MetaSection& s)
{
    json j = json::object();
    for (const auto& entry : s.Entries()) std::visit([&](const auto& v) { j[entry.first] = v; }, entry.second);
    return j;
}

} // namespace

// LiveSpans.cpp: parses `line` with simdjson and, when it is a spans message, fills `m` and says true.
bool ParseIfSpans(const std::string& line, const std::string& who, LiveMessage& m);

LiveMessage ParseLiveMessage(const std::string& line, const std::string& who)
{
    if (line.size() > kMaxLineBytes) Refuse(who, "a message is longer than " + std::to_string(kMaxLineBytes) + " bytes");
    LiveMessage m;
    if (ParseIfSpans(line, who, m)) return m;
    json j;
    try {
        j = json::parse(line);
    } catch (const json::exception& e) {
        Refuse(who, std::string("not JSON: ") + e.what());
    }
    if (!j.is_object()) Refuse(who, "a message must be a JSON object");
    const std::string t = Text(j, "t", who, 16);
    if (t == "hello") {
        m.type = MessageType::Hello;
        if (Int(j, "v", who, 0, 1000) != kProtocolVersion) Refuse(who, "protocol version " + std::to_string(j["v"].get<int64_t>()) +
                                                                           " (this paralens speaks " + std::to_string(kProtocolVersion) + ")");
        m.secret = Text(j, "secret", who, 256);
        m.size = static_cast<int>(Int(j, "size", who, 1, kMaxRanks));
        m.rank = static_cast<int>(Int(j, "rank", who, 0, m.size - 1));
        m.pid = Int(j, "pid", who, 1, INT32_MAX);
        m.host = Text(j, "host", who, 256);
        if (j.contains("kind")) {
            const std::string k = Text(j, "kind", who, 16);
            if (k != "cpu" && k != "process") Refuse(who, "'kind' must be cpu or process");
            m.kind = core::ParseDeviceKind(k);
        }
    } else if (t == "meta") {
        m.type = MessageType::Meta;
        if (j.contains("workload")) m.workload = Section(j["workload"], who);
        if (j.contains("model")) m.model = Section(j["model"], who);
        if (j.contains("results")) m.results = Section(j["results"], who);
        if (j.contains("hardware")) m.hardware = Section(j["hardware"], who);
    } else if (t == "clock") {
        m.type = MessageType::Clock;
        const std::string at = Text(j, "at", who, 8);
        if (at != "start" && at != "end") Refuse(who, "clock 'at' must be start or end");
        m.clockEnd = at == "end";
        m.localNs = Int(j, "localNs", who, INT64_MIN, INT64_MAX);
        m.offsetNs = Int(j, "offsetNs", who, INT64_MIN, INT64_MAX);
        m.boundNs = Int(j, "boundNs", who, 0, INT64_MAX);
    } else if (t == "progress") {
        m.type = MessageType::Progress;
        m.text = Text(j, "phase", who, 256);
        const json& f = Field(j, "fraction", who);
        if (!f.is_number() || !(f.get<double>() >= 0.0 && f.get<double>() <= 1.0)) Refuse(who, "progress must be in [0, 1]");
        m.fraction = f.get<double>();
    } else if (t == "result") {
        m.type = MessageType::Result;
        const json& ok = Field(j, "checksPassed", who);
        if (!ok.is_boolean()) Refuse(who, "'checksPassed' must be true or false");
        m.checksPassed = ok.get<bool>();
        const json& rows = Field(j, "rows", who);
        if (!rows.is_array() || rows.size() > 100000) Refuse(who, "'rows' must be an array");
        for (const json& r : rows) m.rows.push_back(Section(r, who));
    } else if (t == "error") {
        m.type = MessageType::Error;
        m.text = Text(j, "message", who, 4096);
    } else if (t == "done") {
        m.type = MessageType::Done;
    } else {
        Refuse(who, "unknown message type '" + t + "'");
    }
    return m;
}

std::string EncodeHello(const std::string& secret, int rank, int size, int64_t pid, const std::string& host, core::DeviceKind kind)
{
    return json{{"t", "hello"}, {"v", kProtocolVersion}, {"secret", secret}, {"rank", rank}, {"size", size}, {"pid", pid}, {"host", host},
                {"kind", std::string(core::Name(kind))}}
        .dump();
}

std::string EncodeMeta(const core::Metadata& meta)
{
    return json{{"t", "meta"}, {"workload", SectionJson(meta.workload)}, {"model", SectionJson(meta.model)},
                {"results", SectionJson(meta.results)}, {"hardware", SectionJson(meta.hardware)}}
        .dump();
}

std::string EncodeClock(bool end, int64_t localNs, int64_t offsetNs, int64_t boundNs)
{
    return json{{"t", "clock"}, {"at", end ? "end" : "start"}, {"localNs", localNs}, {"offsetNs", offsetNs}, {"boundNs", boundNs}}.dump();
}

std::string EncodeProgress(const std::string& phase, double fraction)
{
    return json{{"t", "progress"}, {"phase", phase}, {"fraction", fraction}}.dump();
}

std::string EncodeResult(bool checksPassed, const std::vector<core::MetaSection>& rows)
{
    json list = json::array();
    for (const core::MetaSection& r : rows) list.push_back(SectionJson(r));
    return json{{"t", "result"}, {"checksPassed", checksPassed}, {"rows", std::move(list)}}.dump();
}

std::string EncodeError(const std::string& message) { return json{{"t", "error"}, {"message", message}}.dump(); }

std::string EncodeDone() { return json{{"t", "done"}}.dump(); }

LiveStream::LiveStream(int rank, int size, const std::string& host, core::DeviceKind kind)
{
    const char* path = std::getenv(kSocketEnv);
    const char* secret = std::getenv(kSecretEnv);
    if (!path || !*path) return;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof addr.sun_path) {
        std::fprintf(stderr, "paralens: rank %d: %s is too long for a Unix socket path; not streaming\n", rank, kSocketEnv);
        return;
    }
    std::strcpy(addr.sun_path, path);
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0 || ::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        std::fprintf(stderr, "paralens: rank %d: cannot connect to the live channel %s: %s; not streaming\n", rank, path, std::strerror(errno));
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
        return;
    }
    Send(EncodeHello(secret ? secret : "", rank, size, static_cast<int64_t>(::getpid()), host, kind));
}

LiveStream::~LiveStream()
{
    if (m_fd >= 0) ::close(m_fd);
}

void LiveStream::Send(const std::string& line)
{
    if (m_fd < 0) return;
    std::string data = line;
    data.push_back('\n');
    size_t at = 0;
    while (at < data.size()) {
        const ssize_t n = ::send(m_fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            std::fprintf(stderr, "paralens: the live channel closed (%s); the run goes on without streaming\n", std::strerror(errno));
            ::close(m_fd);
            m_fd = -1;
            return;
        }
        at += static_cast<size_t>(n);
    }
}

void LiveStream::FlushSpans(const core::TraceBuilder& b, int64_t minIntervalNs)
{
    if (m_fd < 0) return;
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    if (minIntervalNs > 0 && now - m_lastFlushNs < minIntervalNs) return;
    m_lastFlushNs = now;
    m_sent.resize(b.TrackCount(), 0);
    constexpr size_t kBatch = 20000; // spans per message, far below kMaxLineBytes
    for (uint32_t t = 0; t < b.TrackCount(); ++t) {
        const std::vector<core::Span>& all = b.TrackAt(t).spans;
        while (m_sent[t] < all.size()) {
            const size_t n = std::min(kBatch, all.size() - m_sent[t]);
            Send(EncodeSpans(std::string(b.Str(b.TrackAt(t).name)), b, std::span<const core::Span>(all).subspan(m_sent[t], n)));
            m_sent[t] += n;
        }
    }
}

} // namespace paralens::app::live
