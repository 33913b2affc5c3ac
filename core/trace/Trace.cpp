#include "trace/Trace.hpp"

namespace paralens::core {

std::span<const Dependency> Trace::Dependencies() const
{
    if (!m_dependencies) return {};
    DependencyStore& store = *m_dependencies;
    if (store.source) {
        std::call_once(store.derived, [&store] {
            std::vector<Dependency> derived = store.source->Derive();
            store.list.insert(store.list.end(), derived.begin(), derived.end());
        });
    }
    return store.list;
}

size_t Trace::StoredDependencyCount() const { return m_dependencies ? m_dependencies->list.size() : 0; }

} // namespace paralens::core
