#include "analysis/DeviceUsage.hpp"

namespace paralens::core {

SpanKind KindOf(SpanCategory c)
{
    switch (c) {
    case SpanCategory::Forward:
    case SpanCategory::Backward:
    case SpanCategory::WeightGrad:
    case SpanCategory::Compute: return SpanKind::Compute;
    case SpanCategory::Collective:
    case SpanCategory::Send:
    case SpanCategory::Recv: return SpanKind::Communication;
    case SpanCategory::Idle:
    case SpanCategory::Annotation: return SpanKind::NotBusy;
    default: return SpanKind::OtherBusy;
    }
}

UsageWindow WholeTrace(const Trace& trace) { return {trace.BeginNs(), trace.EndNs()}; }

std::vector<DeviceUsage> ComputeDeviceUsage(const Trace& trace, UsageWindow window, bool includeCpu)
{
    std::vector<DeviceUsage> out;
    for (uint32_t d = 0; d < trace.Devices().size(); ++d) {
        const Device& dev = trace.Devices()[d];
        if (!includeCpu && dev.kind == DeviceKind::Cpu) continue;
        std::vector<Interval> all, compute, comm;
        for (uint32_t t : dev.tracks) {
            for (const Span& s : trace.Tracks()[t].spans) {
                SpanKind k = KindOf(s.category);
                if (k == SpanKind::NotBusy) continue;
                Interval i{std::max(s.startNs, window.beginNs), std::min(s.endNs, window.endNs)};
                if (i.end <= i.begin) continue;
                all.push_back(i);
                if (k == SpanKind::Compute) compute.push_back(i);
                else if (k == SpanKind::Communication) comm.push_back(i);
            }
        }
        IntervalSet busy = UnionOf(std::move(all));
        IntervalSet comp = UnionOf(std::move(compute));
        IntervalSet com = UnionOf(std::move(comm));
        DeviceUsage u;
        u.device = d;
        u.windowNs = std::max<int64_t>(window.endNs - window.beginNs, 0);
        u.busyNs = TotalLength(busy);
        u.idle = Gaps(busy, window.beginNs, window.endNs);
        u.idleNs = TotalLength(u.idle);
        u.computeNs = TotalLength(comp);
        u.commNs = TotalLength(com);
        u.overlapNs = TotalLength(Intersect(comp, com));
        u.exposedCommNs = u.commNs - u.overlapNs;
        out.push_back(std::move(u));
    }
    return out;
}

double IdleFraction(const std::vector<DeviceUsage>& usage)
{
    double idle = 0, total = 0;
    for (const DeviceUsage& u : usage) {
        idle += static_cast<double>(u.idleNs);
        total += static_cast<double>(u.windowNs);
    }
    return total > 0 ? idle / total : 0.0;
}

} // namespace paralens::core
