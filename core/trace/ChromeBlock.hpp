// One block of Chrome trace events parsed by simdjson, apart from the stream that cut it (see
// ChromeEvents.hpp): a block owns its text and its parser, so blocks are parsed on several
// threads at once and handed to the reader's callback in file order by the stream.
// Internal to core/trace.
#pragma once

#include "trace/ChromeEvents.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace paralens::core {

struct ChromeBlock {
    ChromeBlock();
    ~ChromeBlock();
    ChromeBlock(const ChromeBlock&) = delete;
    ChromeBlock& operator=(const ChromeBlock&) = delete;

    // Copies the events in `events` (the text between the array's separators) into text as
    // "[" + events + "]"; `abs` is the file offset of events[0]; `separator` is the byte that
    // followed them in the file ('\0' when none: the array form's missing ']' at the end).
    void Assign(std::string_view events, uint64_t abs, char separator, bool tentative);

    // ---- Input ----
    std::unique_ptr<char[]> text; // "[" + events + "]", then simdjson's padding
    size_t capacity = 0;          // allocated bytes of text, padding excluded
    size_t length = 0;            // bytes of "[" + events + "]"
    uint64_t textAbs = 0;         // file offset of text[1], minus one: text[i] is byte textAbs + i
    char separator = '\0';
    bool tentative = false; // cut where the cut may be wrong (see ChromeStream::StreamEvents)

    // ---- Output of Parse() ----
    std::vector<ChromeEvent> events; // their args are in `args`, [argBegin[i], argBegin[i + 1])
    std::vector<ChromeArg> args;
    std::vector<uint32_t> argBegin;
    bool failed = false;   // the event after the last parsed one could not be read
    uint64_t failAt = 0;   // the file offset the error names
    std::string failWhat;  // what went wrong (the caller adds the file and the event's index)
    bool endedEarly = false; // tentative: the array closed before the block's end (at failAt)
    struct Parser; // simdjson's: owns the unescaped strings the events point to
    std::unique_ptr<Parser> parser;

    // Parses text into events/args. Never throws: a failure is recorded (failed, failAt,
    // failWhat) after the events parsed before it. String views point into text and the parser:
    // valid until the next Assign().
    void Parse();
};

// Blocks parsed on worker threads and taken back in the order they were submitted, at most
// Depth() in flight (each holds its text and simdjson's index of it: a few times its size).
class ChromeBlockQueue {
public:
    // `workers` parsing threads (started at the first Submit); 0 parses on the caller's thread.
    explicit ChromeBlockQueue(unsigned workers);
    ~ChromeBlockQueue(); // waits for the blocks being parsed
    ChromeBlockQueue(const ChromeBlockQueue&) = delete;
    ChromeBlockQueue& operator=(const ChromeBlockQueue&) = delete;

    // The worker count for this machine: its cores (at most 8), or 0 on a single core.
    static unsigned DefaultWorkers();

    bool Full() const { return m_count == m_slots.size(); }
    bool Empty() const { return m_count == 0; }
    // The block to Assign() next; Submit() hands it to a worker. Only when !Full().
    ChromeBlock& Next() { return m_slots[(m_head + m_count) % m_slots.size()]->block; }
    void Submit();
    // The oldest block submitted, once parsed; Release() frees its slot. Only when !Empty().
    ChromeBlock& WaitOldest();
    void Release();
    // Every block in flight, oldest first, each parsed (to rebuild the text after a wrong cut).
    std::vector<const ChromeBlock*> WaitAll();
    void Clear(); // after WaitAll(): drops every block in flight

private:
    struct Slot {
        ChromeBlock block;
        bool parsed = false;
    };
    void Work();
    void WaitParsed(const Slot& slot);

    std::vector<std::unique_ptr<Slot>> m_slots; // a ring: m_head is the oldest of m_count in flight
    size_t m_head = 0, m_count = 0;
    unsigned m_workers;
    std::mutex m_mutex;
    std::condition_variable m_work, m_done;
    std::deque<Slot*> m_pending;
    std::vector<std::thread> m_threads;
    bool m_stop = false;
};

} // namespace paralens::core
