// Reading and writing files, with gzip handled transparently and writes made atomic.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace paralens::core {

// The whole file, decompressed when it is gzip (by its magic bytes, whatever its name).
// Throws Error naming the path and the system's reason when it cannot be read.
std::string ReadFileDecompressed(const std::string& path);

bool EndsWith(std::string_view text, std::string_view suffix);

// A file written under a temporary name in the same folder and renamed over `path` by Commit(),
// so readers never see a partial file and a failed write leaves nothing behind. Compressed with
// gzip when `path` ends in ".gz". Not thread-safe.
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

    std::string m_path;
    std::string m_tempPath;
    std::string m_buffer;
    std::FILE* m_file = nullptr;
    void* m_gz = nullptr; // gzFile
    bool m_committed = false;
};

// Convenience: the whole content at once.
void WriteFileAtomic(const std::string& path, std::string_view content);

} // namespace paralens::core
