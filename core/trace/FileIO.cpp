#include "trace/FileIO.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <libdeflate.h>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>
#include <zlib.h>

namespace paralens::core {

namespace {
constexpr size_t kBufferBytes = 1 << 20;
constexpr size_t kGzipPieceBytes = size_t{8} << 20; // a gzip member each: large enough that the split costs no ratio

std::string SystemReason() { return std::strerror(errno); }
} // namespace

bool EndsWith(std::string_view text, std::string_view suffix)
{
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string ReadFileDecompressed(const std::string& path)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a folder, not a file");
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) throw Error("cannot open " + path + ": " + SystemReason());
    gzbuffer(gz, 1 << 17);
    std::string out;
    auto size = std::filesystem::file_size(path, ec);
    if (!ec) out.reserve(size + size / 2);
    char buf[1 << 16];
    for (;;) {
        int got = gzread(gz, buf, sizeof buf);
        if (got < 0) {
            int code = 0;
            std::string reason = gzerror(gz, &code);
            gzclose(gz);
            throw Error(path + ": cannot read (" + reason + ") after " + std::to_string(out.size()) +
                        " bytes; is the .gz file truncated?");
        }
        if (got == 0) break;
        out.append(buf, static_cast<size_t>(got));
    }
    gzclose(gz);
    return out;
}

std::string ReadFilePrefix(const std::string& path, size_t maxBytes)
{
    auto source = OpenFileSource(path);
    std::string out(maxBytes, '\0');
    size_t got = 0;
    while (got < maxBytes) {
        size_t n = source->Read(out.data() + got, maxBytes - got);
        if (n == 0) break;
        got += n;
    }
    out.resize(got);
    return out;
}

namespace {

class GzFileSource final : public ByteSource {
public:
    explicit GzFileSource(const std::string& path) : m_path(path)
    {
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a folder, not a file");
        m_gz = gzopen(path.c_str(), "rb");
        if (!m_gz) throw Error("cannot open " + path + ": " + SystemReason());
        gzbuffer(m_gz, 1 << 18);
        auto size = std::filesystem::file_size(path, ec);
        m_total = ec ? 0 : size;
    }
    ~GzFileSource() override { gzclose(m_gz); }
    GzFileSource(const GzFileSource&) = delete;
    GzFileSource& operator=(const GzFileSource&) = delete;

    size_t Read(char* dst, size_t maxBytes) override
    {
        size_t total = 0;
        while (total < maxBytes) { // gzread takes an unsigned count: read in pieces of 256 MiB at most
            unsigned want = static_cast<unsigned>(std::min<size_t>(maxBytes - total, size_t{1} << 28));
            int got = gzread(m_gz, dst + total, want);
            int code = Z_OK;
            if (got == 0) (void)gzerror(m_gz, &code); // a gzip stream cut short ends with Z_BUF_ERROR, not -1
            if (got < 0 || (code != Z_OK && code != Z_STREAM_END)) {
                std::string reason = gzerror(m_gz, &code);
                throw Error(m_path + ": cannot read (" + reason + ") after " + std::to_string(m_produced + total) +
                            " bytes; is the .gz file truncated?");
            }
            if (got == 0) break;
            total += static_cast<size_t>(got);
            if (static_cast<unsigned>(got) < want) break;
        }
        m_produced += total;
        return total;
    }
    uint64_t Consumed() const override
    {
        z_off_t off = gzoffset(m_gz);
        return off < 0 ? 0 : static_cast<uint64_t>(off);
    }
    uint64_t Total() const override { return m_total; }

private:
    std::string m_path;
    gzFile m_gz = nullptr;
    uint64_t m_total = 0;
    uint64_t m_produced = 0;
};

class MemorySource final : public ByteSource {
public:
    explicit MemorySource(std::string_view text) : m_text(text) {}
    size_t Read(char* dst, size_t maxBytes) override
    {
        size_t n = std::min(maxBytes, m_text.size() - m_pos);
        std::memcpy(dst, m_text.data() + m_pos, n);
        m_pos += n;
        return n;
    }
    uint64_t Consumed() const override { return m_pos; }
    uint64_t Total() const override { return m_text.size(); }

private:
    std::string_view m_text;
    size_t m_pos = 0;
};

} // namespace

namespace {

// Reads its source on a thread of its own, a few blocks ahead of the caller: a gzip file is
// inflated there while the caller parses what came before.
class ReadAheadSource final : public ByteSource {
public:
    explicit ReadAheadSource(std::unique_ptr<ByteSource> inner) : m_inner(std::move(inner))
    {
        m_total = m_inner->Total();
        m_thread = std::thread([this] { Produce(); });
    }
    ~ReadAheadSource() override
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_changed.notify_all();
        m_thread.join();
    }
    ReadAheadSource(const ReadAheadSource&) = delete;
    ReadAheadSource& operator=(const ReadAheadSource&) = delete;

    size_t Read(char* dst, size_t maxBytes) override
    {
        size_t total = 0;
        while (total < maxBytes) {
            std::unique_lock lock(m_mutex);
            m_changed.wait(lock, [&] { return !m_ready.empty() || m_done; });
            if (m_ready.empty()) {
                if (m_error) std::rethrow_exception(m_error);
                break;
            }
            Chunk& c = m_ready.front();
            const size_t n = std::min(maxBytes - total, c.bytes.size() - c.pos);
            std::memcpy(dst + total, c.bytes.data() + c.pos, n);
            c.pos += n;
            total += n;
            m_consumed = c.consumed;
            if (c.pos == c.bytes.size()) {
                m_ready.pop_front();
                m_changed.notify_all();
            }
        }
        return total;
    }
    uint64_t Consumed() const override
    {
        std::lock_guard lock(m_mutex);
        return m_consumed;
    }
    uint64_t Total() const override { return m_total; }

private:
    struct Chunk {
        std::string bytes;
        size_t pos = 0;
        uint64_t consumed = 0; // the source's Consumed() after this chunk
    };
    static constexpr size_t kChunkBytes = size_t{4} << 20;
    static constexpr size_t kAhead = 3;

    void Produce()
    {
        try {
            for (;;) {
                {
                    std::unique_lock lock(m_mutex);
                    m_changed.wait(lock, [&] { return m_ready.size() < kAhead || m_stop; });
                    if (m_stop) return;
                }
                Chunk c;
                c.bytes.resize(kChunkBytes);
                size_t got = 0;
                while (got < kChunkBytes) {
                    const size_t n = m_inner->Read(c.bytes.data() + got, kChunkBytes - got);
                    if (n == 0) break;
                    got += n;
                }
                c.bytes.resize(got);
                c.consumed = m_inner->Consumed();
                std::lock_guard lock(m_mutex);
                if (got > 0) m_ready.push_back(std::move(c));
                if (got < kChunkBytes) {
                    m_done = true;
                    m_changed.notify_all();
                    return;
                }
                m_changed.notify_all();
            }
        } catch (...) {
            std::lock_guard lock(m_mutex);
            m_error = std::current_exception();
            m_done = true;
            m_changed.notify_all();
        }
    }

    std::unique_ptr<ByteSource> m_inner;
    uint64_t m_total = 0;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Chunk> m_ready;
    uint64_t m_consumed = 0;
    bool m_done = false, m_stop = false;
    std::exception_ptr m_error;
    std::thread m_thread;
};

bool IsGzip(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    unsigned char magic[2] = {0, 0};
    const bool gz = std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    std::fclose(f);
    return gz;
}

} // namespace

std::unique_ptr<ByteSource> OpenFileSource(const std::string& path)
{
    auto file = std::make_unique<GzFileSource>(path); // throws naming the path
    if (IsGzip(path) && std::thread::hardware_concurrency() > 1) return std::make_unique<ReadAheadSource>(std::move(file));
    return file;
}

std::unique_ptr<ByteSource> TextSource(std::string_view text) { return std::make_unique<MemorySource>(text); }

// Pieces of text compressed into gzip members on worker threads, written to the file in the
// order they were given. The caller's thread makes the text meanwhile; at most 2 pieces per
// worker wait, so memory stays bounded. A compressed piece's text buffer and a written member's
// go back to be filled again (Spare()): fresh 8 MB buffers for each piece of a 1 GB trace cost
// its writer more in the kernel's page faults than the text took to make.
class GzipWriter {
public:
    GzipWriter(std::FILE* file, const std::string& path) : m_file(file), m_path(path)
    {
        libdeflate_crc32(0, nullptr, 0); // picks its CPU's CRC code once, before several threads would
        const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 8u));
        m_spareTexts.reserve(2 * threads + 4); // more than are ever out at once: kept without allocating
        m_spareMembers.reserve(2 * threads + 4);
        for (unsigned i = 0; i < threads; ++i) m_workers.emplace_back([this] { Work(); });
    }
    ~GzipWriter() { Stop(); }
    GzipWriter(const GzipWriter&) = delete;
    GzipWriter& operator=(const GzipWriter&) = delete;

    // An empty buffer for the next piece, with the capacity of one already filled where there is one.
    std::string Spare()
    {
        std::lock_guard lock(m_mutex);
        std::string text;
        if (!m_spareTexts.empty()) {
            text = std::move(m_spareTexts.back());
            m_spareTexts.pop_back();
        }
        return text;
    }

    void Submit(std::string&& piece)
    {
        std::unique_lock lock(m_mutex);
        m_room.wait(lock, [&] { return m_pieces.size() - m_written < 2 * m_workers.size() || !m_error.empty(); });
        ThrowIfFailed();
        m_pieces.push_back({std::move(piece), {}, false});
        m_work.notify_one();
        WriteReady(lock);
    }

    // Waits for every piece and writes the rest; throws Error on a compression or write failure.
    void Finish()
    {
        std::unique_lock lock(m_mutex);
        if (m_pieces.empty()) { // an empty file is still one gzip member
            m_pieces.push_back({std::string(), {}, false});
            m_work.notify_one();
        }
        m_room.wait(lock, [&] { return m_written == m_pieces.size() || !m_error.empty(); });
        ThrowIfFailed();
    }

private:
    struct Piece {
        std::string text, member;
        bool done;
    };

    void Work()
    {
        libdeflate_compressor* c = libdeflate_alloc_compressor(kGzipLevel);
        std::unique_lock lock(m_mutex);
        if (!c && m_error.empty()) m_error = "cannot compress " + m_path + " (out of memory)";
        while (c) {
            m_work.wait(lock, [&] { return m_stopping || m_next < m_pieces.size(); });
            if (m_stopping) break;
            Piece& piece = m_pieces[m_next++];
            std::string member;
            if (!m_spareMembers.empty()) {
                member = std::move(m_spareMembers.back());
                m_spareMembers.pop_back();
            }
            lock.unlock();
            try { // no exception leaves the thread: a failure is the next Submit's or Finish's error
                member.resize(libdeflate_gzip_compress_bound(c, piece.text.size()));
                member.resize(libdeflate_gzip_compress(c, piece.text.data(), piece.text.size(), member.data(), member.size()));
            } catch (const std::exception&) {
                member.clear();
            }
            lock.lock();
            if (member.empty() && m_error.empty()) m_error = "cannot compress " + m_path + " (out of memory)";
            piece.member = std::move(member);
            piece.text.clear();
            if (m_spareTexts.size() < m_spareTexts.capacity()) m_spareTexts.push_back(std::move(piece.text));
            piece.text = {};
            piece.done = true;
            WriteReady(lock);
        }
        m_room.notify_all();
        libdeflate_free_compressor(c);
    }

    // Writes the finished pieces that are next in order. Called with the lock held; writes without it.
    void WriteReady(std::unique_lock<std::mutex>& lock)
    {
        while (!m_writing && m_written < m_pieces.size() && m_pieces[m_written].done && m_error.empty()) {
            m_writing = true;
            std::string member = std::move(m_pieces[m_written].member);
            lock.unlock();
            const bool ok = std::fwrite(member.data(), 1, member.size(), m_file) == member.size();
            lock.lock();
            member.clear();
            if (m_spareMembers.size() < m_spareMembers.capacity()) m_spareMembers.push_back(std::move(member));
            m_writing = false;
            ++m_written;
            if (!ok) m_error = "cannot write " + m_path + ": " + SystemReason() + " (disk full?)";
        }
        m_room.notify_all();
    }

    void ThrowIfFailed() const
    {
        if (!m_error.empty()) throw Error(m_error);
    }

    void Stop()
    {
        std::unique_lock lock(m_mutex);
        m_stopping = true;
        m_work.notify_all();
        lock.unlock();
        for (std::thread& t : m_workers) t.join();
    }

    static constexpr int kGzipLevel = 1; // libdeflate's 1: about zlib 6's size (5% more) at 5 times its speed

    std::FILE* m_file;
    std::string m_path;
    std::mutex m_mutex;
    std::condition_variable m_work, m_room;
    std::deque<Piece> m_pieces; // every piece so far; written ones are left empty
    std::vector<std::string> m_spareTexts, m_spareMembers; // emptied buffers to fill again
    size_t m_next = 0, m_written = 0;
    bool m_writing = false, m_stopping = false;
    std::string m_error;
    std::vector<std::thread> m_workers;
};

OutputFile::OutputFile(std::string path) : m_path(std::move(path))
{
    Require(!m_path.empty(), "no output file name given");
    std::filesystem::path p(m_path);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) throw Error("cannot write " + m_path + ": it is a folder");
    m_tempPath = m_path + ".tmp-" + std::to_string(::getpid());
    m_file = std::fopen(m_tempPath.c_str(), "wb");
    if (!m_file) throw Error("cannot write " + m_path + ": " + SystemReason());
    if (EndsWith(m_path, ".gz")) m_gz = std::make_unique<GzipWriter>(m_file, m_path);
    m_buffer.reserve(PieceBytes());
}

OutputFile::~OutputFile()
{
    if (m_committed) return;
    m_gz.reset(); // its threads stop before the file closes
    if (m_file) std::fclose(m_file);
    std::remove(m_tempPath.c_str());
}

size_t OutputFile::PieceBytes() const { return m_gz ? kGzipPieceBytes : kBufferBytes; }

void OutputFile::Write(std::string_view data)
{
    const size_t piece = PieceBytes();
    while (!data.empty()) {
        const size_t n = std::min(data.size(), piece - std::min(piece, m_buffer.size()));
        m_buffer.append(data.substr(0, n));
        data.remove_prefix(n);
        if (m_buffer.size() >= piece) FlushBuffer();
    }
}

void OutputFile::FlushBuffer()
{
    if (m_buffer.empty()) return;
    if (m_gz) {
        std::string piece = m_gz->Spare();
        piece.reserve(PieceBytes());
        piece.swap(m_buffer);
        m_gz->Submit(std::move(piece));
        return;
    }
    if (std::fwrite(m_buffer.data(), 1, m_buffer.size(), m_file) != m_buffer.size())
        throw Error("cannot write " + m_path + ": " + SystemReason() + " (disk full?)");
    m_buffer.clear();
}

void OutputFile::Commit()
{
    FlushBuffer();
    if (m_gz) {
        m_gz->Finish();
        m_gz.reset();
    }
    const int rc = std::fclose(m_file);
    m_file = nullptr;
    if (rc != 0) throw Error("cannot write " + m_path + ": " + SystemReason());
    if (std::rename(m_tempPath.c_str(), m_path.c_str()) != 0)
        throw Error("cannot rename " + m_tempPath + " to " + m_path + ": " + SystemReason());
    m_committed = true;
}

void WriteFileAtomic(const std::string& path, std::string_view content)
{
    OutputFile out(path);
    out.Write(content);
    out.Commit();
}

} // namespace paralens::core
