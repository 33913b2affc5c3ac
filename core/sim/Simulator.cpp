#include "sim/Simulator.hpp"

#include "sim/PlanRunner.hpp"

#include "common/Error.hpp"
#include "common/Parallel.hpp"
#include "model/CostModel.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <cmath>

namespace paralens::core {

namespace {

int64_t Ns(double seconds) { return static_cast<int64_t>(seconds * 1e9 + 0.5); } // times are >= 0

// Which track holds each rank's sends, receives and (for reducing plans) reductions.
struct TrackLayout {
    std::vector<uint32_t> send, recv, reduce;
};

// Records the dependencies a plan implies, naming spans as TraceRecorder draws them: each
// transfer depends on its data's writers, and on the receiver's port, busy until the previous
// reduction into it ended; a reduction on the bytes it adds and the bytes it adds into.
class DependencyRecorder : public PlanObserver {
public:
    DependencyRecorder(const Plan& plan, const TrackLayout& tracks)
        : m_tracks(tracks), m_transfers(plan.transfers.data()), m_usable(plan.transfers.size()),
          m_lastReduce(static_cast<size_t>(plan.spec.ranks))
    {
        const bool reduces = !tracks.reduce.empty();
        m_list.reserve(plan.transfers.size() * (reduces ? 2 : 1)); // growing it copied it ~log n times
    }

    bool WantsInputs() const override { return true; }
    void OnInputs(const core::Transfer&, std::span<const uint32_t> data, std::span<const uint32_t> accumulator) override
    {
        m_dataFrom.assign(data.begin(), data.end());
        m_accFrom.assign(accumulator.begin(), accumulator.end());
    }
    void OnTransfer(const core::Transfer& t, int, int, int, int, const MessageTiming& timing) override
    {
        const SpanRef sent{m_tracks.send[t.src], Ns(timing.start), Ns(timing.end)};
        for (uint32_t from : m_dataFrom)
            if (m_usable[from].track != kNoTrack) m_list.push_back({m_usable[from], sent});
        if (SpanRef& port = m_lastReduce[t.dst]; port.track != kNoTrack) m_list.push_back({port, sent});
        m_usable[IndexOf(t)] = {m_tracks.recv[t.dst], sent.startNs, sent.endNs};
    }
    void OnReduction(const core::Transfer& t, int, int, int, double start, double end, double) override
    {
        const SpanRef reduced{m_tracks.reduce[t.dst], Ns(start), Ns(end)};
        m_list.push_back({m_usable[IndexOf(t)], reduced}); // the bytes arrive, then are added
        for (uint32_t from : m_accFrom)
            if (m_usable[from].track != kNoTrack) m_list.push_back({m_usable[from], reduced});
        m_usable[IndexOf(t)] = m_lastReduce[t.dst] = reduced;
    }
    std::vector<Dependency> Take() && { return std::move(m_list); }

private:
    uint32_t IndexOf(const core::Transfer& t) const { return static_cast<uint32_t>(&t - m_transfers); }

    const TrackLayout& m_tracks;
    const core::Transfer* m_transfers;
    std::vector<SpanRef> m_usable;     // per transfer: the span after which its bytes are usable
    std::vector<SpanRef> m_lastReduce; // per rank: its latest reduction span
    std::vector<uint32_t> m_dataFrom, m_accFrom;
    std::vector<Dependency> m_list;
};

// A simulated collective's dependencies, derived when first asked for by running the plan again
// (the simulation is deterministic, so the times match the trace's): stored per transfer they
// were most of the memory and time of a large trace.
class PlanDependencies : public DependencySource {
public:
    PlanDependencies(std::shared_ptr<const Plan> plan, ClusterModel cluster, TrackLayout tracks)
        : m_plan(std::move(plan)), m_cluster(std::move(cluster)), m_tracks(std::move(tracks)) {}

    std::vector<Dependency> Derive() const override
    {
        const int p = m_plan->spec.ranks;
        Network net(m_cluster, p, m_plan->spec.ranksPerNode);
        std::vector<int> identity(static_cast<size_t>(p));
        for (int r = 0; r < p; ++r) identity[static_cast<size_t>(r)] = r;
        const std::vector<double> joins(static_cast<size_t>(p), 0.0);
        DependencyRecorder recorder(*m_plan, m_tracks);
        (void)RunPlan(*m_plan, net, identity, joins, &recorder);
        return std::move(recorder).Take();
    }

private:
    std::shared_ptr<const Plan> m_plan;
    ClusterModel m_cluster;
    TrackLayout m_tracks;
};

// Draws every transfer (a send span, a recv span and a flow) and reduction; the dependencies
// are left to PlanDependencies. The run only notes each one's times; Finish writes the spans on
// every core, a thread the tracks of its own ranks, and the flows beside them: a large plan's
// spans are hundreds of MB spread over thousands of tracks, the trace's largest cost.
class TraceRecorder : public PlanObserver {
public:
    TraceRecorder(const Plan& plan, const std::vector<size_t>& sendsPerRank, const std::vector<size_t>& recvsPerRank);

    void OnTransfer(const core::Transfer& t, int, int, int step, int phase, const MessageTiming& timing) override
    {
        m_sent.push_back({IndexOf(t), step, phase, timing.start, timing.end, timing.ideal});
    }
    void OnReduction(const core::Transfer& t, int, int step, int phase, double start, double end, double ideal) override
    {
        m_reduced.push_back({IndexOf(t), step, phase, start, end, ideal});
    }
    Trace Finish(const SimResult& result, std::shared_ptr<const Plan> plan, const ClusterModel& cluster);

private:
    struct Noted {
        uint32_t transfer;
        int32_t step, phase;
        double start, end, ideal;
    };
    uint32_t IndexOf(const core::Transfer& t) const { return static_cast<uint32_t>(&t - m_plan.transfers.data()); }
    Span SpanOf(const Noted& n, SpanCategory category) const;
    void WriteSpans(int firstRank, int endRank); // the tracks of ranks [firstRank, endRank)
    void WriteFlows();
    void WriteAll();

    const Plan& m_plan;
    TraceBuilder m_b;
    TrackLayout m_tracks;
    std::vector<StringId> m_phaseNames;
    std::vector<Noted> m_sent, m_reduced;
};

TraceRecorder::TraceRecorder(const Plan& plan, const std::vector<size_t>& sendsPerRank, const std::vector<size_t>& recvsPerRank)
    : m_plan(plan)
{
    const int p = plan.spec.ranks;
    bool reduces = std::any_of(plan.transfers.begin(), plan.transfers.end(),
                               [](const auto& t) { return t.op == TransferOp::Reduce && t.src != t.dst; });
    for (int r = 0; r < p; ++r) {
        uint32_t d = m_b.AddDevice("rank " + std::to_string(r), DeviceKind::Modelled, r);
        m_tracks.send.push_back(m_b.AddTrack(d, "send"));
        m_tracks.recv.push_back(m_b.AddTrack(d, "recv"));
        m_b.ReserveSpans(m_tracks.send.back(), sendsPerRank[r]);
        m_b.ReserveSpans(m_tracks.recv.back(), recvsPerRank[r]);
        if (reduces) {
            m_tracks.reduce.push_back(m_b.AddTrack(d, "reduce"));
            m_b.ReserveSpans(m_tracks.reduce.back(), recvsPerRank[r]);
        }
    }
    for (const std::string& name : plan.phases) m_phaseNames.push_back(m_b.Intern(name));
    size_t sends = 0;
    for (size_t n : sendsPerRank) sends += n;
    m_sent.reserve(sends);
    if (reduces) m_reduced.reserve(sends);
}

Span TraceRecorder::SpanOf(const Noted& n, SpanCategory category) const
{
    const Transfer& t = m_plan.transfers[n.transfer];
    Span s;
    s.startNs = Ns(n.start);
    s.endNs = Ns(n.end);
    s.bytes = t.bytes;
    s.predictedNs = Ns(n.ideal);
    s.name = m_phaseNames[static_cast<size_t>(n.phase)];
    s.chunk = t.block;
    s.step = n.step;
    s.category = category;
    return s;
}

void TraceRecorder::WriteSpans(int firstRank, int endRank)
{
    auto mine = [&](int rank) { return rank >= firstRank && rank < endRank; };
    for (const Noted& n : m_sent) {
        const Transfer& t = m_plan.transfers[n.transfer];
        const bool from = mine(t.src), to = mine(t.dst);
        if (!from && !to) continue;
        Span s = SpanOf(n, SpanCategory::Send);
        if (from) m_b.AddSpan(m_tracks.send[static_cast<size_t>(t.src)], s);
        s.category = SpanCategory::Recv;
        if (to) m_b.AddSpan(m_tracks.recv[static_cast<size_t>(t.dst)], s);
    }
    for (const Noted& n : m_reduced)
        if (const int dst = m_plan.transfers[n.transfer].dst; mine(dst))
            m_b.AddSpan(m_tracks.reduce[static_cast<size_t>(dst)], SpanOf(n, SpanCategory::Compute));
}

void TraceRecorder::WriteFlows()
{
    m_b.ReserveFlows(m_sent.size());
    for (const Noted& n : m_sent) {
        const Transfer& t = m_plan.transfers[n.transfer];
        Flow f;
        f.srcDevice = static_cast<uint32_t>(t.src);
        f.dstDevice = static_cast<uint32_t>(t.dst);
        f.srcTrack = m_tracks.send[static_cast<size_t>(t.src)];
        f.dstTrack = m_tracks.recv[static_cast<size_t>(t.dst)];
        f.srcNs = Ns(n.start);
        f.dstNs = Ns(n.end);
        f.bytes = t.bytes;
        f.step = n.step;
        f.chunk = t.block;
        f.name = m_phaseNames[static_cast<size_t>(n.phase)];
        m_b.AddFlow(f);
    }
}

void TraceRecorder::WriteAll()
{
    const int p = m_plan.spec.ranks;
    constexpr size_t kAlone = size_t{1} << 16; // fewer transfers than this: threads would cost more
    if (m_sent.size() < kAlone || p < 2) {
        WriteFlows();
        WriteSpans(0, p);
    } else {
        const size_t parts = std::min<size_t>(4, static_cast<size_t>(p)); // the flows and 4 parts of the ranks
        ParallelFor(parts + 1, 1, [&](size_t i) {
            if (i == 0) return WriteFlows();
            const auto rank = [&](size_t k) { return static_cast<int>(static_cast<size_t>(p) * k / parts); };
            WriteSpans(rank(i - 1), rank(i));
        });
    }
    m_sent = {};
    m_reduced = {};
}

Trace TraceRecorder::Finish(const SimResult& result, std::shared_ptr<const Plan> plan, const ClusterModel& cluster)
{
    Metadata& m = m_b.Meta();
    const CollectiveSpec& spec = plan->spec;
    m.source = TraceSource::Simulated;
    m.title = std::string(Name(spec.collective)) + " / " + std::string(Name(spec.algorithm)) + ", " +
              std::to_string(spec.ranks) + " ranks";
    m.workload.Set("kind", std::string("collective"));
    m.workload.Set("collective", std::string(Name(spec.collective)));
    m.workload.Set("algorithm", std::string(Name(spec.algorithm)));
    m.workload.Set("ranks", int64_t{spec.ranks});
    m.workload.Set("bytes", static_cast<int64_t>(spec.bytes));
    if (HasRoot(spec.collective)) m.workload.Set("root", int64_t{spec.root});
    m.model.Set("alphaUs", cluster.alphaSec * 1e6);
    m.model.Set("bandwidthGBps", cluster.BandwidthGBps());
    m.model.Set("gammaGBps", cluster.GammaGBps());
    if (!cluster.stragglers.empty()) m.model.Set("stragglers", cluster.StragglersText());
    if (!cluster.links.empty()) m.model.Set("linkOverrides", static_cast<int64_t>(cluster.links.size()));
    m.results.Set("simulatedSeconds", result.seconds);
    m.results.Set("transfers", static_cast<int64_t>(result.transfers));
    m.results.Set("wireBytes", static_cast<int64_t>(result.wireBytes));
    CostParams params{cluster.alphaSec, cluster.betaSecPerByte, cluster.gammaSecPerByte};
    Prediction pred = PredictSeconds(spec, params);
    m.results.Set("predictedSeconds", pred.seconds);
    m.results.Set("predictionExact", pred.exact);
    WriteAll();
    m_b.SetDependencySource(std::make_shared<PlanDependencies>(std::move(plan), cluster, std::move(m_tracks)));
    return std::move(m_b).Finish();
}

} // namespace

SimResult Simulate(const Plan& plan, const ClusterModel& cluster, const SimOptions& options)
{
    if (!options.buildTrace) return Simulate(std::shared_ptr<const Plan>(&plan, [](const Plan*) {}), cluster, options);
    return Simulate(std::make_shared<const Plan>(plan), cluster, options); // the trace keeps its plan
}

SimResult Simulate(std::shared_ptr<const Plan> shared, const ClusterModel& cluster, const SimOptions& options)
{
    const Plan& plan = *shared;
    const int p = plan.spec.ranks;
    Network net(cluster, p, plan.spec.ranksPerNode);
    std::vector<int> identity(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) identity[static_cast<size_t>(r)] = r;
    const std::vector<double> joins(static_cast<size_t>(p), 0.0);

    std::optional<TraceRecorder> recorder;
    if (options.buildTrace) {
        std::vector<size_t> sends(static_cast<size_t>(p), 0), recvs(static_cast<size_t>(p), 0);
        for (const Transfer& t : plan.transfers)
            if (t.src != t.dst) { ++sends[t.src]; ++recvs[t.dst]; }
        recorder.emplace(plan, sends, recvs);
    }
    PlanRunResult run = RunPlan(plan, net, identity, joins, recorder ? &*recorder : nullptr);
    SimResult result;
    result.rankEndSeconds = std::move(run.rankEnd);
    result.transfers = run.transfers;
    result.wireBytes = run.wireBytes;
    for (double e : result.rankEndSeconds) result.seconds = std::max(result.seconds, e);
    if (recorder) result.trace = recorder->Finish(result, std::move(shared), cluster);
    return result;
}

} // namespace paralens::core
