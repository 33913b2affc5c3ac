#include "sim/Simulator.hpp"

#include "common/Error.hpp"
#include "model/CostModel.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace paralens::core {

namespace {

// Byte ranges are tracked per "atom": the pieces between consecutive segment boundaries of the
// plan, so readiness is one number per (rank, atom). Plans reuse a few offsets millions of times
// (block boundaries), so offsets are collected through a small direct-mapped cache and looked up
// in an open-addressing table instead of sorting every occurrence.
class AtomMap {
public:
    explicit AtomMap(const Plan& plan)
    {
        std::vector<uint64_t> seen(4096, kEmpty);
        std::vector<uint64_t> bounds{0, plan.bufferBytes};
        auto note = [&](uint64_t offset) {
            uint64_t& slot = seen[Hash(offset) & (seen.size() - 1)];
            if (slot == offset) return;
            slot = offset;
            bounds.push_back(offset);
        };
        for (const Segment& s : plan.segments) {
            note(s.srcOffset);
            note(s.srcOffset + s.bytes);
            note(s.dstOffset);
            note(s.dstOffset + s.bytes);
        }
        std::sort(bounds.begin(), bounds.end());
        bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
        m_count = bounds.size();
        size_t cap = 16;
        while (cap < 2 * bounds.size()) cap *= 2;
        m_keys.assign(cap, kEmpty);
        m_values.assign(cap, 0);
        for (uint32_t i = 0; i < bounds.size(); ++i) {
            size_t h = Hash(bounds[i]) & (cap - 1);
            while (m_keys[h] != kEmpty) h = (h + 1) & (cap - 1);
            m_keys[h] = bounds[i];
            m_values[h] = i;
        }
        const size_t n = plan.segments.size();
        m_ranges.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const Segment& s = plan.segments[i];
            m_ranges[i] = {Index(s.srcOffset), Index(s.srcOffset + s.bytes), Index(s.dstOffset), Index(s.dstOffset + s.bytes)};
        }
    }
    struct Range {
        uint32_t srcBegin, srcEnd, dstBegin, dstEnd;
    };
    const Range& Of(uint32_t segment) const { return m_ranges[segment]; }
    size_t Count() const { return m_count; }

private:
    static constexpr uint64_t kEmpty = ~uint64_t{0};
    static uint64_t Hash(uint64_t x) { return (x * 0x9E3779B97F4A7C15ull) >> 17; }
    uint32_t Index(uint64_t offset) const
    {
        size_t h = Hash(offset) & (m_keys.size() - 1);
        while (m_keys[h] != offset) h = (h + 1) & (m_keys.size() - 1);
        return m_values[h];
    }

    size_t m_count = 0;
    std::vector<uint64_t> m_keys;
    std::vector<uint32_t> m_values;
    std::vector<Range> m_ranges;
};

struct LinkTable {
    std::unordered_map<uint64_t, LinkOverride> byPair;
    static uint64_t Key(int src, int dst) { return (static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst); }
};

struct Write {
    int rank;
    uint32_t segment;
    double time;
};

class TraceRecorder {
public:
    TraceRecorder(const Plan& plan, const ClusterModel& cluster, const std::vector<size_t>& sendsPerRank,
                  const std::vector<size_t>& recvsPerRank);

    void OnTransfer(const core::Transfer& t, int step, int phase, double start, double end, double predicted);
    void OnReduction(const core::Transfer& t, int step, int phase, double start, double end, double predicted);
    Trace Finish(const SimResult& result, const Plan& plan, const ClusterModel& cluster);

private:
    static int64_t Ns(double seconds) { return static_cast<int64_t>(seconds * 1e9 + 0.5); } // times are >= 0

    TraceBuilder m_b;
    std::vector<uint32_t> m_send, m_recv, m_reduce;
    std::vector<StringId> m_phaseNames;
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
}

void TraceRecorder::OnTransfer(const core::Transfer& t, int step, int phase, double start, double end, double predicted)
{
    Span s;
    s.startNs = Ns(start);
    s.endNs = Ns(end);
    s.bytes = t.bytes;
    s.predictedNs = Ns(predicted);
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
}

void TraceRecorder::OnReduction(const core::Transfer& t, int step, int phase, double start, double end,
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
    std::vector<double> slow(static_cast<size_t>(p), 1.0);
    for (const Straggler& s : cluster.stragglers) {
        Require(s.rank >= 0 && s.rank < p, "straggler rank " + std::to_string(s.rank) + " is not in 0.." + std::to_string(p - 1));
        Require(s.slowdown > 0 && std::isfinite(s.slowdown), "straggler slowdown must be a number > 0");
        slow[s.rank] = s.slowdown;
    }
    LinkTable links;
    for (const LinkOverride& l : cluster.links) {
        Require(l.src >= 0 && l.src < p && l.dst >= 0 && l.dst < p,
                "link override " + std::to_string(l.src) + "->" + std::to_string(l.dst) + " names a rank outside 0.." +
                    std::to_string(p - 1));
        links.byPair[LinkTable::Key(l.src, l.dst)] = l;
    }

    AtomMap atoms(plan);
    const size_t atomCount = atoms.Count();
    std::vector<double> ready(static_cast<size_t>(p) * atomCount, 0.0);
    std::vector<double> sendFree(static_cast<size_t>(p), 0.0), recvFree(static_cast<size_t>(p), 0.0);
    SimResult result;
    result.rankEndSeconds.assign(static_cast<size_t>(p), 0.0);

    std::optional<TraceRecorder> recorder;
    if (options.buildTrace) {
        std::vector<size_t> sends(static_cast<size_t>(p), 0), recvs(static_cast<size_t>(p), 0);
        for (const Transfer& t : plan.transfers)
            if (t.src != t.dst) { ++sends[t.src]; ++recvs[t.dst]; }
        recorder.emplace(plan, cluster, sends, recvs);
    }

    std::vector<Write> writes;
    for (size_t stepIndex = 0; stepIndex < plan.steps.size(); ++stepIndex) {
        const PlanStep& step = plan.steps[stepIndex];
        writes.clear();
        for (const Transfer& t : plan.TransfersOf(step)) {
            double dataReady = 0.0;
            for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg) {
                const double* r = &ready[static_cast<size_t>(t.src) * atomCount];
                for (uint32_t a = atoms.Of(sg).srcBegin; a < atoms.Of(sg).srcEnd; ++a) dataReady = std::max(dataReady, r[a]);
            }
            if (t.src == t.dst) { // local copy: free
                for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg)
                    writes.push_back({t.dst, sg, dataReady});
                continue;
            }
            double alpha = cluster.alphaSec, beta = cluster.betaSecPerByte;
            if (!links.byPair.empty()) {
                if (auto it = links.byPair.find(LinkTable::Key(t.src, t.dst)); it != links.byPair.end()) {
                    alpha = it->second.alphaSec;
                    beta = it->second.betaSecPerByte;
                }
            }
            const double ideal = alpha + static_cast<double>(t.bytes) * beta;
            const double start = std::max({dataReady, sendFree[t.src], recvFree[t.dst]});
            const double end = start + std::max(slow[t.src], slow[t.dst]) * ideal;
            sendFree[t.src] = end;
            double written = end;
            if (t.op == TransferOp::Reduce) {
                // The accumulator must hold all earlier writes before this one adds to it.
                double accReady = 0.0;
                const double* r = &ready[static_cast<size_t>(t.dst) * atomCount];
                for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg)
                    for (uint32_t a = atoms.Of(sg).dstBegin; a < atoms.Of(sg).dstEnd; ++a) accReady = std::max(accReady, r[a]);
                const double idealReduce = static_cast<double>(t.bytes) * cluster.gammaSecPerByte;
                const double redStart = std::max(end, accReady);
                written = redStart + slow[t.dst] * idealReduce;
                if (recorder && written > redStart) // a free reduction (gamma = 0) leaves no span
                    recorder->OnReduction(t, static_cast<int>(stepIndex), step.phase, redStart, written, idealReduce);
            }
            recvFree[t.dst] = written;
            result.rankEndSeconds[t.src] = std::max(result.rankEndSeconds[t.src], end);
            result.rankEndSeconds[t.dst] = std::max(result.rankEndSeconds[t.dst], written);
            ++result.transfers;
            result.wireBytes += t.bytes;
            if (recorder) recorder->OnTransfer(t, static_cast<int>(stepIndex), step.phase, start, end, ideal);
            for (uint32_t sg = t.firstSegment; sg < t.firstSegment + t.segmentCount; ++sg) writes.push_back({t.dst, sg, written});
        }
        for (const Write& w : writes) {
            double* r = &ready[static_cast<size_t>(w.rank) * atomCount];
            const AtomMap::Range& range = atoms.Of(w.segment);
            for (uint32_t a = range.dstBegin; a < range.dstEnd; ++a) r[a] = std::max(r[a], w.time);
        }
    }
    for (double e : result.rankEndSeconds) result.seconds = std::max(result.seconds, e);
    if (recorder) result.trace = recorder->Finish(result, plan, cluster);
    return result;
}

} // namespace paralens::core
