#include "trace/FileIO.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <zlib.h>

namespace paralens::core {

namespace {
constexpr size_t kBufferBytes = 1 << 20;

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
            if (got < 0) {
                int code = 0;
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

std::unique_ptr<ByteSource> OpenFileSource(const std::string& path) { return std::make_unique<GzFileSource>(path); }

std::unique_ptr<ByteSource> TextSource(std::string_view text) { return std::make_unique<MemorySource>(text); }

OutputFile::OutputFile(std::string path) : m_path(std::move(path))
{
    Require(!m_path.empty(), "no output file name given");
    std::filesystem::path p(m_path);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) throw Error("cannot write " + m_path + ": it is a folder");
    m_tempPath = m_path + ".tmp-" + std::to_string(::getpid());
    if (EndsWith(m_path, ".gz")) {
        m_gz = gzopen(m_tempPath.c_str(), "wb6");
        if (!m_gz) throw Error("cannot write " + m_path + ": " + SystemReason());
    } else {
        m_file = std::fopen(m_tempPath.c_str(), "wb");
        if (!m_file) throw Error("cannot write " + m_path + ": " + SystemReason());
    }
    m_buffer.reserve(kBufferBytes);
}

OutputFile::~OutputFile()
{
    if (m_committed) return;
    if (m_gz) gzclose(static_cast<gzFile>(m_gz));
    if (m_file) std::fclose(m_file);
    std::remove(m_tempPath.c_str());
}

void OutputFile::Write(std::string_view data)
{
    if (m_buffer.size() + data.size() > kBufferBytes) FlushBuffer();
    if (data.size() > kBufferBytes) {
        m_buffer.assign(data);
        FlushBuffer();
        return;
    }
    m_buffer.append(data);
}

void OutputFile::FlushBuffer()
{
    if (m_buffer.empty()) return;
    bool ok = true;
    if (m_gz) ok = gzwrite(static_cast<gzFile>(m_gz), m_buffer.data(), static_cast<unsigned>(m_buffer.size())) ==
                   static_cast<int>(m_buffer.size());
    else ok = std::fwrite(m_buffer.data(), 1, m_buffer.size(), m_file) == m_buffer.size();
    if (!ok) throw Error("cannot write " + m_path + ": " + SystemReason() + " (disk full?)");
    m_buffer.clear();
}

void OutputFile::Commit()
{
    FlushBuffer();
    int rc = 0;
    if (m_gz) {
        rc = gzclose(static_cast<gzFile>(m_gz)) == Z_OK ? 0 : -1;
        m_gz = nullptr;
    } else {
        rc = std::fclose(m_file);
        m_file = nullptr;
    }
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
