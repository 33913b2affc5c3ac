// The live channel between the ranks of a processes run and the window (or any launcher): each
// rank connects to a Unix socket the launcher made in a private folder (mode 0700), proves it was
// started by that launcher with a per-run secret (passed in the environment, not on the command
// line), and streams what it measured as it goes: newline-delimited JSON objects, one per line.
//
//   {"t":"hello","v":2,"secret":S,"rank":r,"size":n,"pid":p,"host":h,"kind":"cpu"|"process"}  first, once
//   {"t":"meta","workload":{...},"model":{...},"results":{...}}         metadata (rank 0)
//   {"t":"clock","at":"start"|"end","localNs":..,"offsetNs":..,"boundNs":..}
//   {"t":"spans","track":NAME,"strings":[TEXT, ...],
//    "spans":[[startNs,endNs,bytes,flops,predictedNs,name,detail,category,microBatch,chunk,step], ...]}
//                                        name, detail: indices into "strings"
//   {"t":"progress","phase":TEXT,"fraction":F}
//   {"t":"result","checksPassed":B,"rows":[{key: value, ...}, ...]}     rank 0, at the end
//   {"t":"error","message":TEXT}                                        a rank's failure
//   {"t":"done"}                                                        last
//
// Everything that arrives is validated like a file a user opens (ParseLiveMessage): a message
// that is not one of these, out of range or too long is refused with an Error naming the rank and
// the message number. Times are the rank's own clock in ns; the clock messages map it to rank 0's.
#pragma once

#include "trace/Trace.hpp"
#include "trace/TraceBuilder.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace paralens::app::live {

inline constexpr int kProtocolVersion = 2;
inline constexpr size_t kMaxLineBytes = size_t{8} << 20; // one message
inline constexpr int kMaxRanks = 1024;
// The environment variables a launcher sets for the ranks.
inline constexpr const char* kSocketEnv = "PARALENS_LIVE_SOCKET";
inline constexpr const char* kSecretEnv = "PARALENS_LIVE_SECRET";

enum class MessageType { Hello, Meta, Clock, Spans, Progress, Result, Error, Done };

struct LiveSpan {
    core::Span span;            // its name and detail ids are unused: see `name`, `detail`
    uint32_t name = 0, detail = 0; // indices into the message's `strings`
};

struct LiveMessage {
    MessageType type = MessageType::Done;
    // hello
    int rank = 0, size = 0;
    int64_t pid = 0;
    std::string secret, host;
    core::DeviceKind kind = core::DeviceKind::Cpu; // the rank's row: cpu (messages only) or process (does work)
    // meta: sections of core::Metadata
    core::MetaSection workload, model, results, hardware;
    // clock
    bool clockEnd = false;
    int64_t localNs = 0, offsetNs = 0, boundNs = 0;
    // spans
    std::string track;
    std::vector<std::string> strings; // the names and details the spans refer to
    std::vector<LiveSpan> spans;
    // progress, error
    std::string text;
    double fraction = 0.0;
    // result
    bool checksPassed = true;
    std::vector<core::MetaSection> rows;
};

// Parses and validates one line. `who` names the sender in errors ("rank 2, message 17").
// Throws Error.
LiveMessage ParseLiveMessage(const std::string& line, const std::string& who);

// Encoders (no trailing newline).
std::string EncodeHello(const std::string& secret, int rank, int size, int64_t pid, const std::string& host,
                        core::DeviceKind kind = core::DeviceKind::Cpu);
std::string EncodeMeta(const core::Metadata& meta);
std::string EncodeClock(bool end, int64_t localNs, int64_t offsetNs, int64_t boundNs);
std::string EncodeSpans(const std::string& track, const core::TraceBuilder& builder, std::span<const core::Span> spans);
std::string EncodeProgress(const std::string& phase, double fraction);
std::string EncodeResult(bool checksPassed, const std::vector<core::MetaSection>& rows);
std::string EncodeError(const std::string& message);
std::string EncodeDone();

// A rank's end of the channel: connects to the socket named by PARALENS_LIVE_SOCKET, says hello
// with PARALENS_LIVE_SECRET, and sends lines. Disabled (every call a no-op) when the variable is
// unset. Send failures (the launcher went away) disable it after one warning on stderr: the run
// itself goes on. Not thread-safe: one per process, from one thread.
class LiveStream {
public:
    LiveStream(int rank, int size, const std::string& host, core::DeviceKind kind = core::DeviceKind::Cpu);
    ~LiveStream();
    LiveStream(const LiveStream&) = delete;
    LiveStream& operator=(const LiveStream&) = delete;

    bool Enabled() const { return m_fd >= 0; }
    void Send(const std::string& line);
    // Sends the spans of `builder`'s tracks added since the last call (tracks and spans are only
    // ever appended). `minIntervalNs` > 0: skip the call when the last one was more recent.
    void FlushSpans(const core::TraceBuilder& builder, int64_t minIntervalNs = 0);

private:
    int m_fd = -1;
    std::vector<size_t> m_sent; // spans sent per track
    int64_t m_lastFlushNs = 0;
};

} // namespace paralens::app::live
