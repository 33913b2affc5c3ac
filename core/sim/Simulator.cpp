#include "sim/Simulator.hpp"

#include "sim/PlanRunner.hpp"

#include "common/Error.hpp"
#include "model/CostModel.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <cmath>

namespace paralens::core {

namespace {

class TraceRecorder : public PlanObserver {
public:
    TraceRecorder(const Plan& plan, const ClusterModel& cluster, const std::vector<size_t>& sendsPerRank,
                  const std::vector<size_t>& recvsPerRank);

    void OnTransfer(const core::Transfer& t, int srcDevice, int dstDevice, int step, int phase,
                    const MessageTiming& timing) override;
    void OnReduction(const core::Transfer& t, int dstDevice, int step, int phase, double start, double end,
                     double ideal) override;
    bool WantsInputs() const override { return true; }
    void OnInputs(const core::Transfer& t, std::span<const uint32_t> data, std::span<const uint32_t> accumulator) override;
    Trace Finish(const SimResult& result, const Plan& plan, const ClusterModel& cluster);

private:
    uint32_t IndexOf(const core::Transfer& t) const { return static_cast<uint32_t>(&t - m_transfers); }

    static int64_t Ns(double seconds) { return static_cast<int64_t>(seconds * 1e9 + 0.5); } // times are >= 0

    TraceBuilder m_b;
    std::vector<uint32_t> m_send, m_recv, m_reduce;
    std::vector<StringId> m_phaseNames;
    // The dependencies each transfer's spans carry: its inputs' writers, and the receiver's
    // port, busy until the previous reduction into it ended.
    const core::Transfer* m_transfers = nullptr;
    std::vector<SpanRef> m_usable;     // per transfer: the span after which its bytes are usable
    std::vector<SpanRef> m_lastReduce; // per rank: its latest reduction span
    std::vector<uint32_t> m_dataFrom, m_accFrom;
};

TraceRecorder::TraceRecorder(const Plan& plan, const ClusterModel&, const std::vector<size_t>& sendsPerRank,
                             const std::vector<size_t>& recvsPerRank)
{
    const int p = plan.spec.ranks;
    bool reduces = std::any_of(plan.transfers.begin(), plan.transfers.end(),
                               [](const auto& t) { return t.op == TransferOp::Reduce && t.src != t.dst; });
    for (int r = 0; r < p; ++r) {
        uint32_t d = m_b.AddDevice("rank " + std::to_string(r), DeviceKind::Modelled, r);
        m_send.push_back(m_b.AddTrack(d, "send"));
        m_recv.push_back(m_b.AddTrack(d, "recv"));
        m_b.ReserveSpans(m_send.back(), sendsPerRank[r]);
        m_b.ReserveSpans(m_recv.back(), recvsPerRank[r]);
        if (reduces) {
            m_reduce.push_back(m_b.AddTrack(d, "reduce"));
            m_b.ReserveSpans(m_reduce.back(), recvsPerRank[r]);
        }
    }
    for (const std::string& name : plan.phases) m_phaseNames.push_back(m_b.Intern(name));
    m_b.ReserveFlows(plan.transfers.size());
    // Each transfer depends on its data's writers, and a reduction also on the bytes it adds: about
    // two per transfer (one per reduction more); growing the array instead copied it ~log n times.
    m_b.ReserveDependencies(plan.transfers.size() * (reduces ? 2 : 1));
    m_transfers = plan.transfers.data();
    m_usable.resize(plan.transfers.size());
    m_lastReduce.resize(static_cast<size_t>(p));
}

void TraceRecorder::OnInputs(const core::Transfer&, std::span<const uint32_t> data, std::span<const uint32_t> accumulator)
{
    m_dataFrom.assign(data.begin(), data.end());
    m_accFrom.assign(accumulator.begin(), accumulator.end());
}

void TraceRecorder::OnTransfer(const core::Transfer& t, int, int, int step, int phase, const MessageTiming& timing)
{
    Span s;
    s.startNs = Ns(timing.start);
    s.endNs = Ns(timing.end);
    s.bytes = t.bytes;
    s.predictedNs = Ns(timing.ideal);
    s.name = m_phaseNames[phase];
    s.chunk = t.block;
    s.step = step;
    s.category = SpanCategory::Send;
    m_b.AddSpan(m_send[t.src], s);
    s.category = SpanCategory::Recv;
    m_b.AddSpan(m_recv[t.dst], s);
    Flow f;
    f.srcDevice = static_cast<uint32_t>(t.src);
    f.dstDevice = static_cast<uint32_t>(t.dst);
    f.srcTrack = m_send[t.src];
    f.dstTrack = m_recv[t.dst];
    f.srcNs = s.startNs;
    f.dstNs = s.endNs;
    f.bytes = t.bytes;
    f.step = step;
    f.chunk = t.block;
    f.name = s.name;
    m_b.AddFlow(f);
    const SpanRef sent{m_send[t.src], s.startNs, s.endNs};
    for (uint32_t from : m_dataFrom)
        if (m_usable[from].track != kNoTrack) m_b.AddDependency({m_usable[from], sent});
    if (SpanRef& port = m_lastReduce[t.dst]; port.track != kNoTrack) m_b.AddDependency({port, sent});
    m_usable[IndexOf(t)] = {m_recv[t.dst], s.startNs, s.endNs};
}

void TraceRecorder::OnReduction(const core::Transfer& t, int, int step, int phase, double start, double end,
                                double predicted)
{
    Span s;
    s.startNs = Ns(start);
    s.endNs = Ns(end);
    s.bytes = t.bytes;
    s.predictedNs = Ns(predicted);
    s.name = m_phaseNames[phase];
    s.chunk = t.block;
    s.step = step;
    s.category = SpanCategory::Compute;
    m_b.AddSpan(m_reduce[t.dst], s);
    const SpanRef reduced{m_reduce[t.dst], s.startNs, s.endNs};
    m_b.AddDependency({m_usable[IndexOf(t)], reduced}); // the bytes arrive, then are added
    for (uint32_t from : m_accFrom)
        if (m_usable[from].track != kNoTrack) m_b.AddDependency({m_usable[from], reduced});
    m_usable[IndexOf(t)] = m_lastReduce[t.dst] = reduced;
}

Trace TraceRecorder::Finish(const SimResult& result, const Plan& plan, const ClusterModel& cluster)
{
    Metadata& m = m_b.Meta();
    const CollectiveSpec& spec = plan.spec;
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
    return std::move(m_b).Finish();
}

} // namespace

SimResult Simulate(const Plan& plan, const ClusterModel& cluster, const SimOptions& options)
{
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
        recorder.emplace(plan, cluster, sends, recvs);
    }
    PlanRunResult run = RunPlan(plan, net, identity, joins, recorder ? &*recorder : nullptr);
    SimResult result;
    result.rankEndSeconds = std::move(run.rankEnd);
    result.transfers = run.transfers;
    result.wireBytes = run.wireBytes;
    for (double e : result.rankEndSeconds) result.seconds = std::max(result.seconds, e);
    if (recorder) result.trace = recorder->Finish(result, plan, cluster);
    return result;
}

} // namespace paralens::core
