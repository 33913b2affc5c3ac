// The launcher's side of the live channel: what each rank has said so far (LiveProtocol.hpp),
// turned on demand into one Trace with a row per rank on rank 0's clock, messages paired into
// arrows: the result of core's MergeRankTraces (the merge of `paralens merge`, which the tests
// hold it to), built incrementally. Each span is interned, predicted and paired once, when it
// arrives or at the next Merge, and mapped to rank 0's clock once (again only when its rank's clock
// map or the model changes); a Merge then copies the mapped spans and the arrows, already in time
// order, and the strings' text is shared, not copied: a snapshot of a million spans costs about
// 20 ms.
// Not thread-safe: one collector per run, fed and read by the launcher's thread.
#pragma once

#include "live/LiveProtocol.hpp"
#include "model/CostModel.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceMerge.hpp"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace paralens::app::live {

struct RankState {
    bool connected = false;
    bool done = false;
    int64_t pid = 0;
    std::string host;
    core::DeviceKind kind = core::DeviceKind::Cpu;
    bool haveClockStart = false, haveClockEnd = false;
    int64_t clockStartLocalNs = 0, clockStartOffsetNs = 0, clockStartBoundNs = 0;
    int64_t clockEndLocalNs = 0, clockEndOffsetNs = 0, clockEndBoundNs = 0;
    std::vector<std::string> trackOrder;    // tracks as they first appeared
    std::vector<std::vector<core::Span>> spans; // per track of trackOrder; names in the collector's strings
    std::vector<std::vector<int64_t>> modelNs;  // the model's duration of each span (kNoPrediction: none)
    std::string error;                                    // the rank's own failure message
    size_t messages = 0;
};

class LiveCollector {
public:
    // `ranks`: how many ranks the launcher started; `secret`: what each must present.
    LiveCollector(int ranks, std::string secret);

    // Validates and applies one message of the connection `connection` (the launcher numbers its
    // accepted connections); the first must be a hello. Throws Error naming the rank (or the
    // connection, before its hello) for a message that does not belong.
    void Apply(int connection, const std::string& line);
    // The rank a connection said hello as, or -1.
    int RankOf(int connection) const;

    const std::string& Secret() const { return m_secret; }
    int Ranks() const { return static_cast<int>(m_ranks.size()); }
    const RankState& Rank(int r) const { return m_ranks[static_cast<size_t>(r)]; }
    bool AllDone() const;
    size_t SpanCount() const { return m_spans; }
    uint64_t Changes() const { return m_changes; } // grows with every message that changes the picture
    const std::string& Phase() const { return m_phase; }
    double Fraction() const { return m_fraction; }
    const LiveMessage* Result() const { return m_haveResult ? &m_result : nullptr; }

    // The model the snapshots' spans are predicted with (their outlines): a message alpha + n beta,
    // a collective its PredictSeconds, a GEMM its FLOPs at the peak rank 0 probed. Without it, none.
    void SetModel(const core::CostParams& model) { m_model = model, m_haveModel = true, ++m_metaVersion; }

    // Every rank that has its start clock, merged on rank 0's clock; `title` and `source` go into
    // its metadata with rank 0's workload/model/results sections. Null when no rank has a clock yet.
    std::shared_ptr<const core::Trace> Merge(const std::string& title);

private:
    // Where a message span sits: rank, track (of the rank's trackOrder), index.
    struct SpanRef {
        int rank = 0;
        uint32_t track = 0;
        uint32_t index = 0;
    };
    struct MessageKey {
        int from = 0, to = 0, iteration = 0, step = 0;
        bool operator==(const MessageKey&) const = default;
    };
    struct MessageKeyHash {
        size_t operator()(const MessageKey& k) const
        {
            uint64_t h = 1469598103934665603ull;
            for (int x : {k.from, k.to, k.iteration, k.step}) h = (h ^ static_cast<uint32_t>(x)) * 1099511628211ull;
            return static_cast<size_t>(h);
        }
    };
    struct PendingMessage {
        bool haveSend = false, haveRecv = false;
        SpanRef send, recv;
    };
    // Where Merge put each rank (indexed by rank): its clock map, device and track ids.
    struct Layout {
        std::vector<core::ClockMap> maps;
        std::vector<uint32_t> device;
        std::vector<std::vector<uint32_t>> tracks;
        int64_t boundNs = 0;
    };
    void AddSpans(int rank, LiveMessage& m, const std::string& who);
    std::vector<size_t> MergeOrder() const;
    struct RowNames { // a rank's device name, host and track names, as ids of m_strings
        core::StringId name = 0, host = 0;
        std::vector<core::StringId> tracks;
    };
    std::vector<RowNames> InternRowNames(const std::vector<size_t>& order);
    Layout AddRows(core::TraceBuilder& b, const std::vector<size_t>& order, const std::vector<RowNames>& names);
    size_t AddFlows(core::TraceBuilder& b, const Layout& l);
    bool UpdateRank(size_t rank, const core::ClockMap& map);
    void UpdateFlows(const Layout& l, bool remapped);
    void Pair(const SpanRef& ref, const core::Span& s, std::string_view detail);
    void PredictNew();

    std::string m_secret;
    core::CostParams m_model;
    bool m_haveModel = false;
    std::vector<RankState> m_ranks;
    std::map<int, int> m_rankOfConnection;
    std::map<int, size_t> m_messagesOfConnection;
    core::Metadata m_meta;
    LiveMessage m_result;
    bool m_haveResult = false;
    std::string m_phase;
    double m_fraction = 0.0;
    size_t m_spans = 0;
    uint64_t m_changes = 0;
    core::StringTable m_strings;
    // Messages by (sender, receiver, iteration, step), waiting for their other end; then paired.
    std::unordered_map<MessageKey, PendingMessage, MessageKeyHash> m_pending;
    std::vector<std::pair<SpanRef, SpanRef>> m_pairs;
    uint64_t m_predictedWith = 0; // the m_metaVersion the predictions were made with
    uint64_t m_metaVersion = 1;

    // What the last Merge mapped, kept so that the next maps only what arrived since (all of a
    // rank whose clock map or predictions changed): a snapshot then costs copying, not mapping,
    // pairing and sorting again.
    struct CachedRank {
        bool valid = false;
        core::ClockMap map;
        uint64_t predictedWith = 0;
        std::vector<std::vector<core::Span>> spans; // per track: on rank 0's clock, predicted
    };
    std::vector<CachedRank> m_cachedRanks;
    std::vector<core::Flow> m_cachedFlows; // sorted by srcNs; devices = ranks, tracks = indices in trackOrder
    std::vector<bool> m_cachedFlowRows;    // the ranks that had rows when the flows were made
    size_t m_cachedPairs = 0;              // m_pairs already among the flows
};

} // namespace paralens::app::live
