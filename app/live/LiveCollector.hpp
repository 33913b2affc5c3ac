// The launcher's side of the live channel: what each rank has said so far (LiveProtocol.hpp),
// turned on demand into one Trace with a row per rank on rank 0's clock (core's
// MergeRankTraces, the same merge as `paralens merge`), messages paired into arrows.
// Not thread-safe: one collector per run, fed and read by the launcher's thread.
#pragma once

#include "live/LiveProtocol.hpp"
#include "model/CostModel.hpp"

#include <map>
#include <memory>
#include <string>
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
    std::vector<std::string> trackOrder;                 // tracks as they first appeared
    std::map<std::string, std::vector<LiveSpan>> tracks; // spans by track name
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
    void SetModel(const core::CostParams& model) { m_model = model, m_haveModel = true; }

    // Every rank that has its start clock, merged on rank 0's clock; `title` and `source` go into
    // its metadata with rank 0's workload/model/results sections. Null when no rank has a clock yet.
    std::shared_ptr<const core::Trace> Merge(const std::string& title) const;

private:
    void Predict(core::Span& s, const core::Metadata& meta) const;

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
};

} // namespace paralens::app::live
