// Interned strings of a Trace. Ids are dense from 0; id 0 is always the empty string.
// Not thread-safe while being built; immutable (and safe to read from any thread) once its
// Trace is finished.
#pragma once

#include <cstdint>
#include <deque>
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
    void Rebuild(const StringTable& other);

    std::deque<std::string> m_storage; // deque: views stay valid as it grows
    std::vector<std::string_view> m_views;
    std::unordered_map<std::string_view, StringId> m_index;
};

} // namespace paralens::core
