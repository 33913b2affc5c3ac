// Reading and writing files, with gzip handled transparently and writes made atomic.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace paralens::core {

// The whole file, decompressed when it is gzip (by its magic bytes, whatever its name).
// Throws Error naming the path and the system's reason when it cannot be read.
std::string ReadFileDecompressed(const std::string& path);

bool EndsWith(std::string_view text, std::string_view suffix);

// At most `maxBytes` from the start of the file, decompressed when it is gzip: enough to tell a
// format by its content without reading a large file. Throws Error like ReadFileDecompressed.
std::string ReadFilePrefix(const std::string& path, size_t maxBytes);

// Progress of a long read: bytes of the input consumed so far and its total (0 when unknown).
using ProgressFn = std::function<void(uint64_t doneBytes, uint64_t totalBytes)>;

// A stream of bytes read in blocks, so that a large trace is never held whole in memory.
// Not thread-safe; one reader at a time.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    // Up to `maxBytes` into `dst`; 0 only at the end. Throws Error naming the input on a read error.
    virtual size_t Read(char* dst, size_t maxBytes) = 0;
    // How far the underlying input has been read, in its own bytes (compressed bytes for gzip),
    // and its whole size (0 when unknown): for progress.
    virtual uint64_t Consumed() const = 0;
    virtual uint64_t Total() const = 0;
};

// A file, decompressed on the fly when it is gzip (by content). Throws Error naming the path.
std::unique_ptr<ByteSource> OpenFileSource(const std::string& path);
// Text in memory; `text` must outlive the source.
std::unique_ptr<ByteSource> TextSource(std::string_view text);

class GzipWriter;

// A file written under a temporary name in the same folder and renamed over `path` by Commit(),
// so readers never see a partial file and a failed write leaves nothing behind. Compressed with
// gzip when `path` ends in ".gz": pieces of the text compressed on all cores at once (libdeflate),
// each a gzip member of its own, written in order (RFC 1952: one gzip file, read whole by gzip,
// zlib and Python). Not thread-safe.
class OutputFile {
public:
    explicit OutputFile(std::string path); // throws Error when the folder is not writable
    ~OutputFile();                         // removes the temporary file unless committed
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    void Write(std::string_view data); // buffered; throws Error on a write failure
    void Commit();                      // flushes, closes and renames; throws Error on failure

private:
    void FlushBuffer();
    size_t PieceBytes() const; // what the buffer holds before it is written (or compressed)

    std::string m_path;
    std::string m_tempPath;
    std::string m_buffer;
    std::FILE* m_file = nullptr;
    std::unique_ptr<GzipWriter> m_gz; // .gz: compresses m_buffer's pieces into m_file
    bool m_committed = false;
};

// Convenience: the whole content at once.
void WriteFileAtomic(const std::string& path, std::string_view content);

} // namespace paralens::core
