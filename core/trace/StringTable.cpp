#include "trace/StringTable.hpp"

namespace paralens::core {

StringTable::StringTable() { Intern(""); }

StringTable::StringTable(const StringTable& other) { Rebuild(other); }

StringTable& StringTable::operator=(const StringTable& other)
{
    if (this != &other) Rebuild(other);
    return *this;
}

void StringTable::Rebuild(const StringTable& other)
{
    m_storage.clear();
    m_views.clear();
    m_index.clear();
    m_views.reserve(other.m_views.size());
    m_index.reserve(other.m_views.size());
    for (std::string_view s : other.m_views) { // unique already: no lookups
        m_views.emplace_back(m_storage.emplace_back(s));
        m_index.emplace(m_views.back(), static_cast<StringId>(m_views.size() - 1));
    }
}

StringId StringTable::Intern(std::string_view text)
{
    if (auto it = m_index.find(text); it != m_index.end()) return it->second;
    const std::string& stored = m_storage.emplace_back(text);
    StringId id = static_cast<StringId>(m_views.size());
    m_views.emplace_back(stored);
    m_index.emplace(m_views.back(), id);
    return id;
}

} // namespace paralens::core
