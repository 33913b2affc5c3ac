#include "analysis/HardwareChannels.hpp"

#include <charconv>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace paralens::core {

namespace {
constexpr std::string_view kChannel = "hw channel ";
constexpr std::string_view kCopyEngine = "copy engine, ";
} // namespace

std::string DescribeHardwareChannel(HardwareChannel c)
{
    return std::string(c.copyEngine ? kCopyEngine : std::string_view()) + std::string(kChannel) + std::to_string(c.id);
}

std::optional<HardwareChannel> ParseHardwareChannel(std::string_view detail)
{
    const size_t at = detail.find(kChannel);
    if (at == std::string_view::npos) return std::nullopt;
    const char* first = detail.data() + at + kChannel.size();
    HardwareChannel c;
    const auto [end, ec] = std::from_chars(first, detail.data() + detail.size(), c.id);
    if (ec != std::errc() || end == first) return std::nullopt;
    c.copyEngine = at >= kCopyEngine.size() && detail.substr(at - kCopyEngine.size(), kCopyEngine.size()) == kCopyEngine;
    return c;
}

ChannelReport ComputeChannelReport(const Trace& trace)
{
    ChannelReport r;
    // (host, GPU, channel) -> tracks; a device without a GPU index is a GPU of its own.
    std::map<std::tuple<StringId, int64_t, uint32_t>, std::set<uint32_t>> users;
    std::unordered_map<StringId, std::optional<HardwareChannel>> parsed; // details repeat: read each once
    for (uint32_t t = 0; t < trace.Tracks().size(); ++t) {
        const Track& track = trace.Tracks()[t];
        const Device& device = trace.Devices()[track.device];
        const int64_t gpu = device.gpuIndex != kNone ? device.gpuIndex : -1 - static_cast<int64_t>(track.device);
        for (const Span& s : track.spans) {
            if (s.detail == 0) continue;
            auto [it, added] = parsed.try_emplace(s.detail);
            if (added) it->second = ParseHardwareChannel(trace.Str(s.detail));
            const std::optional<HardwareChannel>& c = it->second;
            if (!c) continue;
            ++r.spansWithChannel;
            if (s.category == SpanCategory::Memcpy) ++(c->copyEngine ? r.copiesOnCopyEngine : r.copiesOnSms);
            if (!c->copyEngine) users[{device.host, gpu, c->id}].insert(t);
        }
    }
    for (const auto& [key, tracks] : users)
        if (tracks.size() > 1)
            r.shared.push_back({trace.Tracks()[*tracks.begin()].device, std::get<2>(key), std::vector<uint32_t>(tracks.begin(), tracks.end())});
    return r;
}

} // namespace paralens::core
