#include "trace/RankTraceMerge.hpp"

#include "common/CharConv.hpp"
#include "common/Error.hpp"
#include "trace/TraceMerge.hpp"

#include <charconv>
#include <map>
#include <tuple>

namespace paralens::core {

std::string MessageDetail(int iteration, bool sending, int peer)
{
    return "iteration " + std::to_string(iteration) + (sending ? ", to rank " : ", from rank ") + std::to_string(peer);
}

std::optional<MessageEnds> ParseMessageDetail(std::string_view d)
{
    auto number = [&](std::string_view prefix, int& out) {
        if (d.substr(0, prefix.size()) != prefix) return false;
        d.remove_prefix(prefix.size());
        auto r = paralens::FromChars(d.data(), d.data() + d.size(), out);
        if (r.ec != std::errc()) return false;
        d.remove_prefix(static_cast<size_t>(r.ptr - d.data()));
        return true;
    };
    MessageEnds m;
    if (!number("iteration ", m.iteration)) return std::nullopt;
    if (number(", to rank ", m.peer)) m.sending = true;
    else if (!number(", from rank ", m.peer)) return std::nullopt;
    if (!d.empty()) return std::nullopt;
    return m;
}

ClockMap ToRankZero(const RankClock& c)
{
    ClockMap m;
    m.anchorNs = c.startLocalNs;
    m.shiftAtAnchorNs = -c.startOffsetNs;
    const double dt = static_cast<double>(c.endLocalNs) - static_cast<double>(c.startLocalNs);
    if (c.haveEnd && dt > 0) m.slope = -(static_cast<double>(c.endOffsetNs) - static_cast<double>(c.startOffsetNs)) / dt;
    return m;
}

Flow MessageFlow(const Span& send, const Span& recv)
{
    Flow f;
    f.srcNs = send.startNs;
    f.dstNs = std::max(recv.endNs, send.startNs);
    f.bytes = send.bytes;
    f.step = send.step;
    f.chunk = send.chunk;
    f.name = send.name;
    return f;
}

namespace {

// The clock samples a per-rank trace file keeps in its metadata (extra.clockStart..., clockEnd...).
ClockMap ToRankZero(const Trace& t, const std::string& origin, int64_t& bound)
{
    const MetaSection& x = t.Meta().extra;
    if (!x.Find("clockStartOffsetNs"))
        throw Error(origin + ": no clock metadata (extra.clockStartOffsetNs): not a per-rank trace of paralens run --backend mpi");
    RankClock c;
    c.startLocalNs = static_cast<int64_t>(x.GetNumber("clockStartLocalNs"));
    c.startOffsetNs = static_cast<int64_t>(x.GetNumber("clockStartOffsetNs"));
    c.startBoundNs = static_cast<int64_t>(x.GetNumber("clockStartBoundNs"));
    bound = std::max(bound, c.startBoundNs);
    if (x.Find("clockEndOffsetNs")) {
        c.haveEnd = true;
        c.endLocalNs = static_cast<int64_t>(x.GetNumber("clockEndLocalNs"));
        c.endOffsetNs = static_cast<int64_t>(x.GetNumber("clockEndOffsetNs"));
        c.endBoundNs = static_cast<int64_t>(x.GetNumber("clockEndBoundNs"));
        bound = std::max(bound, c.endBoundNs);
    }
    return ToRankZero(c);
}

} // namespace

Trace MergeRankTraces(std::vector<Trace>&& ranks, const std::vector<std::string>& origins, RankMergeInfo* info)
{
    RankMergeInfo local;
    for (size_t i = 0; i < ranks.size(); ++i) {
        const std::string origin = i < origins.size() ? origins[i] : "part " + std::to_string(i);
        std::vector<ClockMap> maps(ranks[i].Devices().size(), ToRankZero(ranks[i], origin, local.clockBoundNs));
        ranks[i] = MapDeviceClocks(ranks[i], maps);
    }
    Trace merged = MergeTraces(std::move(ranks), origins);
    // Pair each sender's span with the receiver's: (from, to, iteration, step) -> spans.
    std::map<int32_t, uint32_t> deviceOfRank;
    for (uint32_t d = 0; d < merged.Devices().size(); ++d) deviceOfRank[merged.Devices()[d].rank] = d;
    using Key = std::tuple<int, int, int, int>;
    std::map<Key, std::pair<const Span*, uint32_t>> sends, recvs;
    for (uint32_t tr = 0; tr < merged.Tracks().size(); ++tr) {
        const Track& track = merged.Tracks()[tr];
        const int me = merged.Devices()[track.device].rank;
        for (const Span& s : track.spans) {
            if (s.category != SpanCategory::Send && s.category != SpanCategory::Recv) continue;
            auto m = ParseMessageDetail(merged.Str(s.detail));
            if (!m) continue;
            const Key key = m->sending ? Key{me, m->peer, m->iteration, s.step} : Key{m->peer, me, m->iteration, s.step};
            (m->sending ? sends : recvs)[key] = {&s, tr};
        }
    }
    std::vector<Flow> flows;
    for (const auto& [key, send] : sends) {
        auto it = recvs.find(key);
        if (it == recvs.end() || !deviceOfRank.count(std::get<1>(key))) {
            ++local.unpairedMessages;
            continue;
        }
        Flow f = MessageFlow(*send.first, *it->second.first);
        f.srcDevice = deviceOfRank.at(std::get<0>(key));
        f.dstDevice = deviceOfRank.at(std::get<1>(key));
        f.srcTrack = send.second;
        f.dstTrack = it->second.second;
        flows.push_back(f);
        ++local.pairedMessages;
    }
    local.unpairedMessages += recvs.size() - local.pairedMessages;
    if (info) *info = local;
    Trace out = WithExtraFlows(merged, flows);
    return out;
}

} // namespace paralens::core
