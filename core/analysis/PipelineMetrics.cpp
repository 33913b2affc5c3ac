#include "analysis/PipelineMetrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace paralens::core {

namespace {

bool IsRecompute(const Trace& t, const Span& s) { return s.detail != 0 && t.Str(s.detail) == "recompute"; }

template <class Fn>
void ForEachComputeSpan(const Trace& t, uint32_t device, Fn&& fn)
{
    for (uint32_t tr : t.Devices()[device].tracks)
        for (const Span& s : t.Tracks()[tr].spans)
            if (KindOf(s.category) == SpanKind::Compute) fn(s);
}

} // namespace

double ComputeBubbleFraction(const Trace& trace, UsageWindow window)
{
    double compute = 0, total = 0;
    for (const DeviceUsage& u : ComputeDeviceUsage(trace, window, false)) {
        compute += static_cast<double>(u.computeNs);
        total += static_cast<double>(u.windowNs);
    }
    return total > 0 ? 1.0 - compute / total : 0.0;
}

UsageWindow StepWindow(const Trace& trace, int step)
{
    UsageWindow w{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
    for (const Track& tr : trace.Tracks())
        for (const Span& s : tr.spans)
            if (s.step == step && s.microBatch != kNone) {
                w.beginNs = std::min(w.beginNs, s.startNs);
                w.endNs = std::max(w.endNs, s.endNs);
            }
    return w;
}

UsageWindow PipelineWindow(const Trace& trace)
{
    UsageWindow w{trace.BeginNs(), trace.EndNs()};
    const double pipelineSeconds = trace.Meta().results.GetNumber("pipelineSeconds", -1.0);
    if (pipelineSeconds > 0) w.endNs = std::min(w.endNs, w.beginNs + static_cast<int64_t>(std::llround(pipelineSeconds * 1e9)));
    return w;
}

std::vector<UsageWindow> IterationWindows(const Trace& trace)
{
    std::map<int32_t, UsageWindow> steps;
    bool warmup = false;
    for (const Track& tr : trace.Tracks())
        for (const Span& s : tr.spans) {
            if (s.microBatch == kNone) continue;
            if (s.step < 0) {
                warmup = true;
                continue;
            }
            auto [it, fresh] = steps.try_emplace(s.step, UsageWindow{s.startNs, s.endNs});
            if (!fresh) it->second = {std::min(it->second.beginNs, s.startNs), std::max(it->second.endNs, s.endNs)};
        }
    std::vector<UsageWindow> out;
    if (steps.size() < 2 && !(warmup && steps.size() == 1)) return out;
    for (const auto& [step, w] : steps) out.push_back(w);
    return out;
}

double ComputeBubbleFraction(const Trace& trace, const std::vector<UsageWindow>& windows, UsageWindow whole)
{
    if (windows.empty()) return ComputeBubbleFraction(trace, whole);
    double sum = 0;
    for (const UsageWindow& w : windows) sum += ComputeBubbleFraction(trace, w);
    return sum / static_cast<double>(windows.size());
}

std::vector<int> PeakActivations(const Trace& trace)
{
    std::vector<int> out;
    for (uint32_t d = 0; d < trace.Devices().size(); ++d) {
        if (trace.Devices()[d].kind == DeviceKind::Cpu) continue;
        // Events (time, +1 take / -1 release); releases sort first at equal times.
        std::vector<std::pair<int64_t, int>> events;
        ForEachComputeSpan(trace, d, [&](const Span& s) {
            if (s.microBatch == kNone || IsRecompute(trace, s)) return;
            if (s.category == SpanCategory::Forward) events.emplace_back(s.startNs, +1);
            if (s.category == SpanCategory::Backward) events.emplace_back(s.endNs, -1);
        });
        std::sort(events.begin(), events.end());
        int held = 0, peak = 0;
        for (const auto& e : events) {
            held += e.second;
            peak = std::max(peak, held);
        }
        out.push_back(peak);
    }
    return out;
}

SendDelays ComputeSendDelays(const Trace& trace)
{
    std::vector<int64_t> delays;
    for (uint32_t d = 0; d < trace.Devices().size(); ++d) {
        // The ends of the device's forwards and backwards by (micro-batch, chunk, step), sorted.
        std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<int64_t>> ends;
        ForEachComputeSpan(trace, d, [&](const Span& s) {
            if (s.microBatch != kNone && (s.category == SpanCategory::Forward || s.category == SpanCategory::Backward))
                ends[{s.microBatch, s.chunk, s.step}].push_back(s.endNs);
        });
        for (auto& [key, v] : ends) std::sort(v.begin(), v.end());
        for (uint32_t tr : trace.Devices()[d].tracks)
            for (const Span& s : trace.Tracks()[tr].spans) {
                if (s.category != SpanCategory::Send || s.microBatch == kNone) continue;
                auto it = ends.find({s.microBatch, s.chunk, s.step});
                if (it == ends.end()) continue;
                auto after = std::upper_bound(it->second.begin(), it->second.end(), s.startNs);
                if (after == it->second.begin()) continue; // nothing of its micro-batch ended before it
                delays.push_back(s.startNs - *(after - 1));
            }
    }
    SendDelays r;
    r.sends = delays.size();
    if (delays.empty()) return r;
    std::sort(delays.begin(), delays.end());
    r.medianNs = delays[delays.size() / 2];
    r.p90Ns = delays[std::min(delays.size() - 1, delays.size() * 9 / 10)];
    r.maxNs = delays.back();
    for (int64_t x : delays) r.totalNs += x;
    return r;
}

OpStartWaits ComputeOpStartWaits(const Trace& trace)
{
    std::vector<std::vector<int64_t>> arrivals(trace.Devices().size());
    for (const Flow& f : trace.Flows())
        if (f.dstDevice < arrivals.size()) arrivals[f.dstDevice].push_back(f.dstNs);
    OpStartWaits r;
    for (uint32_t d = 0; d < trace.Devices().size(); ++d) {
        std::vector<int64_t>& in = arrivals[d];
        std::sort(in.begin(), in.end());
        for (uint32_t t : trace.Devices()[d].tracks) {
            std::vector<const Span*> ops;
            for (const Span& s : trace.Tracks()[t].spans)
                if (s.microBatch != kNone && (s.category == SpanCategory::Forward || s.category == SpanCategory::Backward))
                    ops.push_back(&s);
            std::sort(ops.begin(), ops.end(), [](const Span* a, const Span* b) { return a->startNs < b->startNs; });
            for (size_t i = 1; i < ops.size(); ++i) {
                const Span& prev = *ops[i - 1];
                const Span& op = *ops[i];
                if (prev.step != op.step || in.empty()) continue;
                auto after = std::upper_bound(in.begin(), in.end(), op.startNs);
                const int64_t ready = std::max(prev.endNs, after == in.begin() ? prev.endNs : *(after - 1));
                const int64_t wait = std::max<int64_t>(0, op.startNs - ready);
                ++r.ops;
                r.totalNs += wait;
                r.maxNs = std::max(r.maxNs, wait);
                if (wait > 1'000'000) ++r.overOneMs;
            }
        }
    }
    return r;
}

MfuReport ComputeMfu(const Trace& trace, double peak, UsageWindow window)
{
    MfuReport r;
    r.seconds = static_cast<double>(window.endNs - window.beginNs) * 1e-9;
    r.peakFlopsPerDevice = peak;
    for (uint32_t d = 0; d < trace.Devices().size(); ++d) {
        if (trace.Devices()[d].kind == DeviceKind::Cpu) continue;
        bool any = false;
        ForEachComputeSpan(trace, d, [&](const Span& s) {
            any = true;
            const int64_t lo = std::max(s.startNs, window.beginNs), hi = std::min(s.endNs, window.endNs);
            if (hi < lo || (hi == lo && s.endNs > s.startNs)) return;
            const double share = s.endNs > s.startNs ? static_cast<double>(hi - lo) / static_cast<double>(s.endNs - s.startNs) : 1.0;
            r.hardwareFlops += s.flops * share;
            if (!IsRecompute(trace, s)) r.modelFlops += s.flops * share;
        });
        r.devices += any ? 1 : 0;
    }
    const double capacity = r.seconds * r.devices * peak;
    if (capacity > 0) {
        r.mfu = r.modelFlops / capacity;
        r.hfu = r.hardwareFlops / capacity;
    }
    return r;
}

MfuReport ComputeMfu(const Trace& trace, double peak, const std::vector<UsageWindow>& windows, UsageWindow whole)
{
    if (windows.empty()) return ComputeMfu(trace, peak, whole);
    MfuReport r;
    r.peakFlopsPerDevice = peak;
    for (const UsageWindow& w : windows) {
        const MfuReport one = ComputeMfu(trace, peak, w);
        r.seconds += one.seconds;
        r.modelFlops += one.modelFlops;
        r.hardwareFlops += one.hardwareFlops;
        r.devices = std::max(r.devices, one.devices);
    }
    const double capacity = r.seconds * r.devices * peak;
    if (capacity > 0) {
        r.mfu = r.modelFlops / capacity;
        r.hfu = r.hardwareFlops / capacity;
    }
    return r;
}

std::vector<CounterSample> MfuSeries(const Trace& trace, uint32_t device, double peak, UsageWindow window, int bins,
                                     bool hardware)
{
    std::vector<CounterSample> out;
    if (bins < 1 || window.endNs <= window.beginNs || peak <= 0) return out;
    const double width = static_cast<double>(window.endNs - window.beginNs) / bins;
    std::vector<double> flops(static_cast<size_t>(bins), 0.0);
    ForEachComputeSpan(trace, device, [&](const Span& s) {
        if (s.endNs <= s.startNs || (!hardware && IsRecompute(trace, s))) return;
        const double rate = s.flops / static_cast<double>(s.endNs - s.startNs);
        int first = static_cast<int>(std::max(0.0, (static_cast<double>(s.startNs - window.beginNs)) / width));
        for (int b = first; b < bins; ++b) {
            const double lo = static_cast<double>(window.beginNs) + b * width, hi = lo + width;
            const double overlap = std::min(hi, static_cast<double>(s.endNs)) - std::max(lo, static_cast<double>(s.startNs));
            if (lo >= static_cast<double>(s.endNs)) break;
            if (overlap > 0) flops[static_cast<size_t>(b)] += rate * overlap;
        }
    });
    for (int b = 0; b < bins; ++b)
        out.push_back({window.beginNs + static_cast<int64_t>(b * width), flops[static_cast<size_t>(b)] / (width * 1e-9) / peak});
    return out;
}

} // namespace paralens::core
