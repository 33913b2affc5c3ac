#include "live/LiveCollector.hpp"

#include "common/Error.hpp"
#include "analysis/SpanPrediction.hpp"
#include "trace/RankTraceMerge.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>

namespace paralens::app::live {

LiveCollector::LiveCollector(int ranks, std::string secret) : m_secret(std::move(secret))
{
    Require(ranks >= 1 && ranks <= kMaxRanks, "a live run needs 1 to " + std::to_string(kMaxRanks) + " ranks");
    m_ranks.resize(static_cast<size_t>(ranks));
}

int LiveCollector::RankOf(int connection) const
{
    auto it = m_rankOfConnection.find(connection);
    return it == m_rankOfConnection.end() ? -1 : it->second;
}

bool LiveCollector::AllDone() const
{
    for (const RankState& r : m_ranks)
        if (!r.done) return false;
    return true;
}

void LiveCollector::Apply(int connection, const std::string& line)
{
    const size_t number = ++m_messagesOfConnection[connection];
    const int rank = RankOf(connection);
    const std::string who = (rank < 0 ? "connection " + std::to_string(connection) : "rank " + std::to_string(rank)) + ", message " +
                            std::to_string(number);
    LiveMessage m = ParseLiveMessage(line, who);
    if (rank < 0) {
        if (m.type != MessageType::Hello) throw Error("live channel, " + who + ": the first message must be a hello");
        if (m.secret != m_secret) throw Error("live channel, " + who + ": wrong secret (a process this run did not start?)");
        if (m.size != Ranks())
            throw Error("live channel, " + who + ": says the job has " + std::to_string(m.size) + " ranks, the launcher started " +
                        std::to_string(Ranks()));
        RankState& r = m_ranks[static_cast<size_t>(m.rank)];
        if (r.connected) throw Error("live channel, " + who + ": rank " + std::to_string(m.rank) + " said hello twice");
        r.connected = true;
        r.pid = m.pid;
        r.host = m.host;
        r.kind = m.kind;
        m_rankOfConnection[connection] = m.rank;
        return;
    }
    RankState& r = m_ranks[static_cast<size_t>(rank)];
    if (r.done) throw Error("live channel, " + who + ": a message after 'done'");
    ++r.messages;
    switch (m.type) {
    case MessageType::Hello: throw Error("live channel, " + who + ": a second hello");
    case MessageType::Meta:
        if (rank == 0) {
            m_meta.workload = std::move(m.workload);
            m_meta.model = std::move(m.model);
            m_meta.results = std::move(m.results);
            m_meta.hardware = std::move(m.hardware);
            ++m_metaVersion; // the predictions depend on the workload and the probed peak
            ++m_changes;
        }
        break;
    case MessageType::Clock:
        if (m.clockEnd) {
            r.haveClockEnd = true;
            r.clockEndLocalNs = m.localNs, r.clockEndOffsetNs = m.offsetNs, r.clockEndBoundNs = m.boundNs;
        } else {
            r.haveClockStart = true;
            r.clockStartLocalNs = m.localNs, r.clockStartOffsetNs = m.offsetNs, r.clockStartBoundNs = m.boundNs;
        }
        ++m_changes;
        break;
    case MessageType::Spans: AddSpans(rank, m, who); break;
    case MessageType::Progress:
        if (rank == 0) {
            m_phase = m.text;
            m_fraction = m.fraction;
        }
        break;
    case MessageType::Result:
        if (rank != 0) throw Error("live channel, " + who + ": only rank 0 reports the result");
        m_result = std::move(m);
        m_haveResult = true;
        break;
    case MessageType::Error: r.error = m.text; break;
    case MessageType::Done: r.done = true; break;
    }
}

// Interns the message's strings once, appends its spans to their track and pairs its messages.
void LiveCollector::AddSpans(int rank, LiveMessage& m, const std::string& who)
{
    RankState& r = m_ranks[static_cast<size_t>(rank)];
    auto at = std::find(r.trackOrder.begin(), r.trackOrder.end(), m.track);
    if (at == r.trackOrder.end()) {
        if (r.trackOrder.size() >= 64) throw Error("live channel, " + who + ": more than 64 tracks");
        r.trackOrder.push_back(m.track);
        r.spans.emplace_back();
        r.modelNs.emplace_back();
        at = r.trackOrder.end() - 1;
    }
    const uint32_t track = static_cast<uint32_t>(at - r.trackOrder.begin());
    std::vector<core::StringId> ids(m.strings.size());
    for (size_t i = 0; i < m.strings.size(); ++i) ids[i] = m_strings.Intern(m.strings[i]);
    std::vector<core::Span>& spans = r.spans[track];
    spans.reserve(spans.size() + m.spans.size());
    for (const LiveSpan& s : m.spans) {
        core::Span sp = s.span;
        sp.name = ids[s.name];
        sp.detail = ids[s.detail];
        spans.push_back(sp);
        if (sp.category == core::SpanCategory::Send || sp.category == core::SpanCategory::Recv)
            Pair({rank, track, static_cast<uint32_t>(spans.size() - 1)}, sp, m.strings[s.detail]);
    }
    m_spans += m.spans.size();
    ++m_changes;
}

// As MergeRankTraces pairs them: the sender's and the receiver's span of one (sender, receiver,
// iteration, step), named by the detail each carries ("iteration 3, to rank 5"); a repeat replaces.
void LiveCollector::Pair(const SpanRef& ref, const core::Span& s, std::string_view detail)
{
    const auto ends = core::ParseMessageDetail(detail);
    if (!ends) return;
    const MessageKey key = ends->sending ? MessageKey{ref.rank, ends->peer, ends->iteration, s.step}
                                         : MessageKey{ends->peer, ref.rank, ends->iteration, s.step};
    PendingMessage& p = m_pending[key];
    (ends->sending ? p.send : p.recv) = ref;
    (ends->sending ? p.haveSend : p.haveRecv) = true;
    if (p.haveSend && p.haveRecv) {
        m_pairs.emplace_back(p.send, p.recv);
        m_pending.erase(key);
    }
}

// The model's duration of each span not yet predicted with the current metadata and model.
void LiveCollector::PredictNew()
{
    if (!m_haveModel) return;
    core::Metadata meta = m_meta;
    meta.workload.Set("ranks", static_cast<int64_t>(m_ranks.size()));
    const bool again = m_predictedWith != m_metaVersion;
    m_predictedWith = m_metaVersion;
    for (RankState& r : m_ranks)
        for (size_t t = 0; t < r.spans.size(); ++t) {
            std::vector<int64_t>& model = r.modelNs[t];
            if (again) model.clear();
            for (size_t i = model.size(); i < r.spans[t].size(); ++i) {
                const double seconds = core::PredictSpanSeconds(r.spans[t][i], meta, m_model);
                model.push_back(seconds >= 0 ? static_cast<int64_t>(seconds * 1e9 + 0.5) : core::kNoPrediction);
            }
        }
}

namespace {

core::RankClock ClockOf(const RankState& r)
{
    core::RankClock c;
    c.startLocalNs = r.clockStartLocalNs, c.startOffsetNs = r.clockStartOffsetNs, c.startBoundNs = r.clockStartBoundNs;
    c.haveEnd = r.haveClockEnd;
    c.endLocalNs = r.clockEndLocalNs, c.endOffsetNs = r.clockEndOffsetNs, c.endBoundNs = r.clockEndBoundNs;
    return c;
}

} // namespace

// The ranks with a clock, in MergeTraces' order: by host, CPU threads last, then by rank.
std::vector<size_t> LiveCollector::MergeOrder() const
{
    std::vector<size_t> order;
    for (size_t i = 0; i < m_ranks.size(); ++i)
        if (m_ranks[i].haveClockStart) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const RankState &a = m_ranks[x], &b = m_ranks[y];
        if (a.host != b.host) return a.host < b.host;
        const bool ca = a.kind == core::DeviceKind::Cpu, cb = b.kind == core::DeviceKind::Cpu;
        return ca != cb ? cb : x < y;
    });
    return order;
}

// Brings rank `rank`'s cached spans up to date on `map`: only the new ones, unless the map or the
// predictions changed. Returns whether it mapped everything again.
bool LiveCollector::UpdateRank(size_t rank, const core::ClockMap& map)
{
    const RankState& r = m_ranks[rank];
    CachedRank& c = m_cachedRanks[rank];
    const bool redo = !c.valid || !(c.map == map) || c.predictedWith != m_predictedWith;
    c.spans.resize(r.spans.size());
    for (size_t t = 0; t < r.spans.size(); ++t) {
        std::vector<core::Span>& out = c.spans[t];
        if (redo) out.clear();
        const std::vector<int64_t>& model = r.modelNs[t];
        for (size_t k = out.size(); k < r.spans[t].size(); ++k) {
            core::Span s = r.spans[t][k];
            s.startNs = map.Apply(s.startNs);
            s.endNs = std::max(map.Apply(s.endNs), s.startNs);
            if (s.predictedNs == core::kNoPrediction && k < model.size()) s.predictedNs = model[k];
            out.push_back(s);
        }
    }
    c.valid = true;
    c.map = map;
    c.predictedWith = m_predictedWith;
    return redo;
}

// The rows' names, interned in the collector's own strings before a builder copies them, so that
// the copy is never searched (a copy builds its index only when it interns).
std::vector<LiveCollector::RowNames> LiveCollector::InternRowNames(const std::vector<size_t>& order)
{
    std::vector<RowNames> names(m_ranks.size());
    for (size_t i : order) {
        names[i].name = m_strings.Intern("rank " + std::to_string(i));
        names[i].host = m_strings.Intern(m_ranks[i].host);
        for (const std::string& t : m_ranks[i].trackOrder) names[i].tracks.push_back(m_strings.Intern(t));
    }
    return names;
}

// One row per rank of `order`, its spans mapped to rank 0's clock, with the model's durations.
LiveCollector::Layout LiveCollector::AddRows(core::TraceBuilder& b, const std::vector<size_t>& order, const std::vector<RowNames>& names)
{
    Layout l;
    l.maps.resize(m_ranks.size());
    l.device.assign(m_ranks.size(), core::kNoTrack);
    l.tracks.resize(m_ranks.size());
    m_cachedRanks.resize(m_ranks.size());
    bool remapped = false;
    for (size_t i : order) {
        const RankState& r = m_ranks[i];
        l.maps[i] = core::ToRankZero(ClockOf(r));
        l.boundNs = std::max({l.boundNs, r.clockStartBoundNs, r.haveClockEnd ? r.clockEndBoundNs : 0});
        remapped = UpdateRank(i, l.maps[i]) || remapped;
    }
    for (size_t i : order) {
        const RankState& r = m_ranks[i];
        l.device[i] = b.AddDevice(names[i].name, r.kind, static_cast<int32_t>(i), names[i].host);
        for (size_t t = 0; t < r.trackOrder.size(); ++t) {
            const uint32_t id = b.AddTrack(l.device[i], names[i].tracks[t]);
            l.tracks[i].push_back(id);
            b.AddSpans(id, std::vector<core::Span>(m_cachedRanks[i].spans[t]));
        }
    }
    UpdateFlows(l, remapped);
    return l;
}

// Brings the cached arrows up to date: the pairs made since, merged in by time, or all of them
// again when a clock map changed or a rank gained its row.
void LiveCollector::UpdateFlows(const Layout& l, bool remapped)
{
    std::vector<bool> rows(m_ranks.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = l.device[i] != core::kNoTrack;
    if (remapped || rows != m_cachedFlowRows) {
        m_cachedFlows.clear();
        m_cachedPairs = 0;
        m_cachedFlowRows = rows;
    }
    std::vector<core::Flow> added;
    for (; m_cachedPairs < m_pairs.size(); ++m_cachedPairs) {
        const auto& [send, recv] = m_pairs[m_cachedPairs];
        const size_t from = static_cast<size_t>(send.rank), to = static_cast<size_t>(recv.rank);
        if (!rows[from] || !rows[to]) continue;
        core::Span s = m_ranks[from].spans[send.track][send.index];
        core::Span d = m_ranks[to].spans[recv.track][recv.index];
        s.startNs = l.maps[from].Apply(s.startNs);
        d.endNs = l.maps[to].Apply(d.endNs);
        core::Flow f = core::MessageFlow(s, d);
        f.srcDevice = static_cast<uint32_t>(from);
        f.dstDevice = static_cast<uint32_t>(to);
        f.srcTrack = send.track;
        f.dstTrack = recv.track;
        added.push_back(f);
    }
    auto bySrc = [](const core::Flow& a, const core::Flow& b) { return a.srcNs < b.srcNs; };
    std::stable_sort(added.begin(), added.end(), bySrc);
    const size_t old = m_cachedFlows.size();
    m_cachedFlows.insert(m_cachedFlows.end(), added.begin(), added.end());
    if (old > 0 && !added.empty() && added.front().srcNs < m_cachedFlows[old - 1].srcNs) // stable: earlier pairs first on ties
        std::inplace_merge(m_cachedFlows.begin(), m_cachedFlows.begin() + static_cast<ptrdiff_t>(old), m_cachedFlows.end(), bySrc);
}

// The paired messages between ranks that have rows, as arrows (in time order). Returns how many.
size_t LiveCollector::AddFlows(core::TraceBuilder& b, const Layout& l)
{
    b.ReserveFlows(m_cachedFlows.size());
    for (core::Flow f : m_cachedFlows) {
        const size_t from = f.srcDevice, to = f.dstDevice;
        f.srcDevice = l.device[from];
        f.dstDevice = l.device[to];
        f.srcTrack = l.tracks[from][f.srcTrack];
        f.dstTrack = l.tracks[to][f.dstTrack];
        b.AddFlow(f);
    }
    return m_cachedFlows.size();
}

std::shared_ptr<const core::Trace> LiveCollector::Merge(const std::string& title)
{
    const std::vector<size_t> order = MergeOrder();
    if (order.empty()) return nullptr;
    PredictNew();
    const std::vector<RowNames> names = InternRowNames(order);
    core::TraceBuilder b(m_strings);
    const Layout layout = AddRows(b, order, names);
    const size_t paired = AddFlows(b, layout);
    core::Metadata& meta = b.Meta();
    meta = m_meta;
    meta.source = core::TraceSource::Mpi;
    meta.title = title;
    meta.workload.Set("ranks", static_cast<int64_t>(m_ranks.size()));
    meta.extra.Set("clockBoundNs", layout.boundNs);
    meta.extra.Set("pairedMessages", static_cast<int64_t>(paired));
    meta.extra.Set("live", true);
    std::string pids;
    for (const RankState& r : m_ranks) pids += (pids.empty() ? "" : ",") + std::to_string(r.pid);
    meta.extra.Set("rankPids", pids); // 0: the rank has not said hello
    return std::make_shared<const core::Trace>(std::move(b).Finish());
}

} // namespace paralens::app::live
