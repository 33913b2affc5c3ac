#include "analysis/TraceReport.hpp"

#include "model/CostModel.hpp"
#include "model/Hardware.hpp"
#include "trace/NcclKernelName.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace paralens::core {

namespace {

bool Analysed(const Device& d, const AnalysisOptions& o) { return o.includeCpu || d.kind != DeviceKind::Cpu; }

bool IsKernel(SpanCategory c)
{
    return c == SpanCategory::Compute || c == SpanCategory::Collective || c == SpanCategory::Forward ||
           c == SpanCategory::Backward || c == SpanCategory::WeightGrad;
}

UsageWindow DefaultWindow(const Trace& trace, const AnalysisOptions& o)
{
    int64_t begin = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
    for (const Device& d : trace.Devices()) {
        if (!Analysed(d, o)) continue;
        for (uint32_t t : d.tracks)
            for (const Span& s : trace.Tracks()[t].spans) {
                if (KindOf(s.category) == SpanKind::NotBusy) continue;
                begin = std::min(begin, s.startNs);
                end = std::max(end, s.endNs);
            }
    }
    if (begin > end) return WholeTrace(trace);
    return {begin, end};
}

double PeakFlopsOf(const Trace& trace, const Device& d, const AnalysisOptions& o)
{
    if (o.peakTflops > 0) return o.peakTflops * 1e12;
    // The run's own peak per stage (paralens run: virtual stages of one GPU share its peak).
    const double runPeak = trace.Meta().model.GetNumber("peakFlopsPerStage", 0.0);
    if (runPeak > 0) return runPeak;
    const GpuSpec* gpu = FindGpu(trace.Str(d.name));
    if (!gpu) gpu = FindGpu(trace.Meta().hardware.GetString("gpu"));
    return gpu ? gpu->PeakFlops(o.dtype) : 0.0;
}

DeviceReport ReportDevice(const Trace& trace, uint32_t id, const DeviceUsage& usage, UsageWindow window,
                          const AnalysisOptions& o)
{
    const Device& d = trace.Devices()[id];
    DeviceReport r;
    r.device = id;
    r.name = trace.Str(d.name);
    r.host = trace.Str(d.host);
    r.rank = d.rank;
    r.gpuIndex = d.gpuIndex;
    r.kind = d.kind;
    r.usage = usage;
    for (uint32_t t : d.tracks) {
        for (const Span& s : trace.Tracks()[t].spans) {
            ++r.spanCount;
            r.kernelCount += IsKernel(s.category);
            r.collectiveCount += s.category == SpanCategory::Collective;
            if (s.flops > 0 && s.startNs >= window.beginNs && s.startNs < window.endNs) r.flops += s.flops;
        }
    }
    r.bubbleCount = usage.idle.size();
    for (const Interval& gap : usage.idle) r.largestBubbleNs = std::max(r.largestBubbleNs, gap.Length());
    r.peakFlops = PeakFlopsOf(trace, d, o);
    if (r.flops > 0 && r.peakFlops > 0 && usage.windowNs > 0) r.mfu = r.flops / (usage.windowNs * 1e-9) / r.peakFlops;
    return r;
}

int32_t DefaultRanks(const Trace& trace)
{
    double world = trace.Meta().workload.GetNumber("worldSize", 0);
    if (world >= 1) return static_cast<int32_t>(world);
    std::set<int32_t> ranks;
    for (const Device& d : trace.Devices())
        if (d.kind != DeviceKind::Cpu) ranks.insert(d.rank);
    return static_cast<int32_t>(std::max<size_t>(ranks.size(), 1));
}

void Finish(CollectiveSummary& c)
{
    auto known = CollectiveFromName(c.collective);
    c.busbwFactor = known && c.ranks >= 1 ? BusBwFactor(*known, c.ranks) : 1.0;
    c.algbwGBps = c.timeNs > 0 ? static_cast<double>(c.bytes) / static_cast<double>(c.timeNs) : 0.0; // bytes/ns = GB/s
    c.busbwGBps = c.algbwGBps * c.busbwFactor;
}

void SummarizeCollectives(const Trace& trace, TraceReport& report)
{
    std::map<std::pair<std::string, int32_t>, CollectiveSummary> byKey;
    const int32_t fallbackRanks = DefaultRanks(trace);
    bool assumed = false;
    for (const CollectiveSpan& s : CollectiveSpans(trace)) {
        int32_t ranks = s.tag.ranks > 0 ? s.tag.ranks : fallbackRanks;
        assumed = assumed || s.tag.ranks <= 0;
        CollectiveSummary& c = byKey[{s.tag.collective, ranks}];
        c.collective = s.tag.collective;
        c.ranks = ranks;
        c.source = "spans";
        ++c.count;
        c.bytes += s.span->bytes;
        c.timeNs += s.span->DurationNs();
    }
    if (assumed)
        report.notes.push_back("collectives without a group size are counted as spanning " + std::to_string(fallbackRanks) +
                               " ranks (the world size, or the ranks in the trace) for busbw");
    std::map<std::pair<std::string, int32_t>, std::map<int32_t, size_t>> slowest;
    for (const CollectiveInstance& inst : report.instances) {
        for (auto& [key, c] : byKey) {
            if (key.first != inst.collective || (inst.ranks > 0 && key.second != inst.ranks)) continue;
            ++c.instances;
            c.maxSkewNs = std::max(c.maxSkewNs, inst.SkewNs());
            c.meanSkewNs += static_cast<double>(inst.SkewNs());
            if (inst.SkewNs() > 0) ++slowest[key][trace.Devices()[inst.slowestDevice].rank]; // a tie has no slowest
            break;
        }
    }
    for (auto& [key, c] : byKey) {
        if (c.instances > 0) c.meanSkewNs /= static_cast<double>(c.instances);
        size_t most = 0;
        for (auto [rank, n] : slowest[key])
            if (n > most) {
                most = n;
                c.slowestRank = rank;
            }
        Finish(c);
        report.collectives.push_back(c);
    }
}

// A simulated collective has send/recv spans, not collective ones: its metadata says what ran.
void SummarizeSimulation(const Trace& trace, TraceReport& report)
{
    const Metadata& m = trace.Meta();
    if (m.source != TraceSource::Simulated || m.workload.GetString("kind") != "collective") return;
    CollectiveSummary c;
    c.collective = m.workload.GetString("collective");
    c.ranks = static_cast<int32_t>(m.workload.GetNumber("ranks", 0));
    c.count = 1;
    c.instances = 1;
    c.bytes = static_cast<uint64_t>(m.workload.GetNumber("bytes", 0));
    c.timeNs = static_cast<int64_t>(m.results.GetNumber("simulatedSeconds", 0) * 1e9 + 0.5);
    c.source = "simulation";
    Finish(c);
    report.collectives.push_back(c);
}

} // namespace

TraceReport AnalyzeTrace(const Trace& trace, const AnalysisOptions& options)
{
    TraceReport report;
    report.title = trace.Meta().title;
    report.source = trace.Meta().source;
    AnalysisOptions o = options;
    bool anyAnalysed = std::any_of(trace.Devices().begin(), trace.Devices().end(),
                                   [&](const Device& d) { return Analysed(d, o); });
    if (!anyAnalysed && !trace.Devices().empty()) {
        o.includeCpu = true;
        report.notes.push_back("the trace has only host threads: they are analysed");
    }
    UsageWindow window = o.window ? *o.window : DefaultWindow(trace, o);
    report.startNs = window.beginNs;
    report.endNs = window.endNs;
    std::vector<DeviceUsage> usage = ComputeDeviceUsage(trace, window, o.includeCpu);
    for (const DeviceUsage& u : usage) report.devices.push_back(ReportDevice(trace, u.device, u, window, o));
    report.idleFraction = IdleFraction(usage);
    report.instances = MatchCollectives(trace);
    SummarizeCollectives(trace, report);
    if (report.collectives.empty()) SummarizeSimulation(trace, report);
    report.sendDelays = ComputeSendDelays(trace);
    if (report.sendDelays.sends > 0) report.opStartWaits = ComputeOpStartWaits(trace);
    if (trace.Meta().source == TraceSource::Cupti) report.channels = ComputeChannelReport(trace);
    if (trace.Meta().source == TraceSource::NcclTests)
        report.notes.push_back("an nccl-tests log has no real timeline: its rows are laid end to end");
    return report;
}

} // namespace paralens::core
