// Interned strings of a Trace. Ids are dense from 0; id 0 is always the empty string.
// Not thread-safe while being built; immutable (and safe to read from any thread) once its
// Trace is finished.
//
// Copies are cheap: the text lives in chunks that copies share (a chunk is appended to only by a
// table that holds it alone), the ids' views are copied, and the index that finds a string's id is
// built again only when the copy interns (a finished Trace never does). So a live run's snapshot
// of a million spans does not copy a million strings.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace paralens::core {

using StringId = uint32_t;

class StringTable {
public:
    StringTable();
    StringTable(const StringTable& other);
    StringTable& operator=(const StringTable& other);
    StringTable(StringTable&&) noexcept = default;
    StringTable& operator=(StringTable&&) noexcept = default;

    StringId Intern(std::string_view text);
    std::string_view Get(StringId id) const { return m_views[id]; }
    size_t Size() const { return m_views.size(); }

private:
    struct Chunk {
        std::unique_ptr<char[]> bytes;
        size_t used = 0, capacity = 0;
    };
    std::string_view Store(std::string_view text);

    std::vector<std::shared_ptr<Chunk>> m_chunks; // shared with copies
    std::vector<std::string_view> m_views;        // by id, into the chunks
    std::unordered_map<std::string_view, StringId> m_index;
    bool m_indexed = true; // false in a copy until it first interns
};

} // namespace paralens::core
