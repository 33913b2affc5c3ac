#include "live/LiveCollector.hpp"

#include "common/Error.hpp"
#include "analysis/SpanPrediction.hpp"
#include "trace/RankTraceMerge.hpp"

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
    case MessageType::Spans: {
        auto [it, fresh] = r.tracks.try_emplace(m.track);
        if (fresh) {
            if (r.tracks.size() > 64) throw Error("live channel, " + who + ": more than 64 tracks");
            r.trackOrder.push_back(m.track);
        }
        m_spans += m.spans.size();
        for (LiveSpan& s : m.spans) it->second.push_back(std::move(s));
        ++m_changes;
        break;
    }
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

void LiveCollector::Predict(core::Span& s, const core::Metadata& meta) const
{
    if (!m_haveModel || s.predictedNs != core::kNoPrediction) return;
    const double seconds = core::PredictSpanSeconds(s, meta, m_model);
    if (seconds >= 0) s.predictedNs = static_cast<int64_t>(seconds * 1e9 + 0.5);
}

std::shared_ptr<const core::Trace> LiveCollector::Merge(const std::string& title) const
{
    std::vector<core::Trace> parts;
    std::vector<std::string> origins;
    core::Metadata predictMeta = m_meta;
    predictMeta.workload.Set("ranks", static_cast<int64_t>(m_ranks.size()));
    for (size_t i = 0; i < m_ranks.size(); ++i) {
        const RankState& r = m_ranks[i];
        if (!r.haveClockStart) continue;
        core::TraceBuilder b;
        const uint32_t d = b.AddDevice("rank " + std::to_string(i), r.kind, static_cast<int32_t>(i), r.host);
        for (const std::string& name : r.trackOrder) {
            const uint32_t t = b.AddTrack(d, name);
            const std::vector<LiveSpan>& spans = r.tracks.at(name);
            b.ReserveSpans(t, spans.size());
            for (const LiveSpan& s : spans) {
                core::Span sp = s.span;
                sp.name = b.Intern(s.name);
                sp.detail = b.Intern(s.detail);
                Predict(sp, predictMeta);
                b.AddSpan(t, sp);
            }
        }
        core::Metadata& m = b.Meta();
        m.source = core::TraceSource::Mpi;
        m.extra.Set("clockStartLocalNs", r.clockStartLocalNs);
        m.extra.Set("clockStartOffsetNs", r.clockStartOffsetNs);
        m.extra.Set("clockStartBoundNs", r.clockStartBoundNs);
        if (r.haveClockEnd) {
            m.extra.Set("clockEndLocalNs", r.clockEndLocalNs);
            m.extra.Set("clockEndOffsetNs", r.clockEndOffsetNs);
            m.extra.Set("clockEndBoundNs", r.clockEndBoundNs);
        }
        parts.push_back(std::move(b).Finish());
        origins.push_back("rank " + std::to_string(i) + " (live)");
    }
    if (parts.empty()) return nullptr;
    core::RankMergeInfo info;
    core::Trace merged = core::MergeRankTraces(std::move(parts), origins, &info);
    core::Metadata meta = m_meta;
    meta.source = core::TraceSource::Mpi;
    meta.title = title;
    meta.workload.Set("ranks", static_cast<int64_t>(m_ranks.size()));
    meta.extra.Set("clockBoundNs", info.clockBoundNs);
    meta.extra.Set("pairedMessages", static_cast<int64_t>(info.pairedMessages));
    meta.extra.Set("live", true);
    std::string pids;
    for (const RankState& r : m_ranks) pids += (pids.empty() ? "" : ",") + std::to_string(r.pid);
    meta.extra.Set("rankPids", pids); // 0: the rank has not said hello
    return std::make_shared<const core::Trace>(core::TraceBuilder::WithMetadata(std::move(merged), std::move(meta)));
}

} // namespace paralens::app::live
