#include "trace/StringTable.hpp"

#include <algorithm>
#include <cstring>

namespace paralens::core {

namespace {
constexpr size_t kChunkBytes = size_t{4} << 10; // small: a copy leaves at most this unused in its source
}

StringTable::StringTable() { Intern(""); }

StringTable::StringTable(const StringTable& other) : m_chunks(other.m_chunks), m_views(other.m_views), m_indexed(false) {}

StringTable& StringTable::operator=(const StringTable& other)
{
    if (this != &other) {
        m_chunks = other.m_chunks;
        m_views = other.m_views;
        m_index.clear();
        m_indexed = false;
    }
    return *this;
}

std::string_view StringTable::Store(std::string_view text)
{
    Chunk* c = m_chunks.empty() ? nullptr : m_chunks.back().get();
    // Another table (a copy, a Trace) may read the last chunk: write only to one held alone.
    if (!c || m_chunks.back().use_count() != 1 || c->capacity - c->used < text.size()) {
        auto fresh = std::make_shared<Chunk>();
        fresh->capacity = std::max(kChunkBytes, text.size());
        fresh->bytes = std::make_unique<char[]>(fresh->capacity);
        m_chunks.push_back(std::move(fresh));
        c = m_chunks.back().get();
    }
    char* at = c->bytes.get() + c->used;
    if (!text.empty()) std::memcpy(at, text.data(), text.size());
    c->used += text.size();
    return std::string_view(at, text.size());
}

StringId StringTable::Intern(std::string_view text)
{
    if (!m_indexed) { // a copy interning for the first time
        m_index.reserve(m_views.size());
        for (size_t i = 0; i < m_views.size(); ++i) m_index.emplace(m_views[i], static_cast<StringId>(i));
        m_indexed = true;
    }
    if (auto it = m_index.find(text); it != m_index.end()) return it->second;
    const StringId id = static_cast<StringId>(m_views.size());
    m_views.push_back(Store(text));
    m_index.emplace(m_views.back(), id);
    return id;
}

} // namespace paralens::core
