// Names of the Trace enums as they appear in files and on screen, and MetaSection.
#include "trace/Trace.hpp"

#include <array>
#include <cstdlib>
#include <string>

namespace paralens::core {

namespace {
constexpr std::array<std::string_view, kSpanCategoryCount> kCategoryNames{
    "forward", "backward", "weight-grad", "compute", "collective", "send",
    "recv",    "memcpy",   "memset",      "sync",    "idle",       "other",
    "annotation",
};
constexpr std::array<std::string_view, 5> kDeviceKindNames{"modelled", "gpu", "virtual-gpu", "cpu", "process"};
constexpr std::array<std::string_view, 8> kSourceNames{"simulated", "cupti",     "cuda-events", "kineto",
                                                       "chrome",    "nccl-tests", "mpi", "nsys"};
} // namespace

std::string_view Name(SpanCategory c) { return kCategoryNames[static_cast<size_t>(c)]; }

SpanCategory ParseSpanCategory(std::string_view name)
{
    for (size_t i = 0; i < kCategoryNames.size(); ++i)
        if (kCategoryNames[i] == name) return static_cast<SpanCategory>(i);
    return SpanCategory::Other;
}

std::string_view Name(DeviceKind k) { return kDeviceKindNames[static_cast<size_t>(k)]; }

DeviceKind ParseDeviceKind(std::string_view name)
{
    for (size_t i = 0; i < kDeviceKindNames.size(); ++i)
        if (kDeviceKindNames[i] == name) return static_cast<DeviceKind>(i);
    return DeviceKind::Gpu;
}

std::string_view Name(TraceSource s) { return kSourceNames[static_cast<size_t>(s)]; }

TraceSource ParseTraceSource(std::string_view name)
{
    for (size_t i = 0; i < kSourceNames.size(); ++i)
        if (kSourceNames[i] == name) return static_cast<TraceSource>(i);
    return TraceSource::Chrome;
}

void MetaSection::Set(std::string_view key, MetaValue value)
{
    for (auto& [k, v] : m_entries) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    m_entries.emplace_back(std::string(key), std::move(value));
}

const MetaValue* MetaSection::Find(std::string_view key) const
{
    for (const auto& [k, v] : m_entries)
        if (k == key) return &v;
    return nullptr;
}

std::string MetaSection::GetString(std::string_view key, std::string_view fallback) const
{
    const MetaValue* v = Find(key);
    if (!v) return std::string(fallback);
    if (const auto* s = std::get_if<std::string>(v)) return *s;
    if (const auto* i = std::get_if<int64_t>(v)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(v)) return std::to_string(*d);
    return std::get<bool>(*v) ? "true" : "false";
}

double MetaSection::GetNumber(std::string_view key, double fallback) const
{
    const MetaValue* v = Find(key);
    if (!v) return fallback;
    if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(v)) return *d;
    if (const auto* b = std::get_if<bool>(v)) return *b ? 1.0 : 0.0;
    const std::string& s = std::get<std::string>(*v);
    char* endp = nullptr;
    double x = std::strtod(s.c_str(), &endp);
    return endp != s.c_str() ? x : fallback;
}

} // namespace paralens::core
