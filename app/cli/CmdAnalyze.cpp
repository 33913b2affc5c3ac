// paralens analyze: the analysis report of one trace or of several files of one job.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "analysis/TraceReport.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"
#include "sim/MeasuredPipeline.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

namespace paralens::app {

namespace {

using Json = nlohmann::json;

struct AnalyzeOptions {
    std::vector<std::string> files;
    bool alignClocks = false;
    bool cpu = false;
    std::string dtype = "bf16";
    double peakTflops = 0;
    size_t top = 10;
    bool json = false;
};

double Sec(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

Json DeviceJson(const core::DeviceReport& d)
{
    const core::DeviceUsage& u = d.usage;
    Json j{{"id", d.device},
           {"name", d.name},
           {"host", d.host},
           {"rank", d.rank},
           {"gpuIndex", d.gpuIndex},
           {"kind", core::Name(d.kind)},
           {"spanCount", d.spanCount},
           {"kernelCount", d.kernelCount},
           {"collectiveCount", d.collectiveCount},
           {"windowSeconds", Sec(u.windowNs)},
           {"busySeconds", Sec(u.busyNs)},
           {"idleSeconds", Sec(u.idleNs)},
           {"idleFraction", u.windowNs > 0 ? static_cast<double>(u.idleNs) / static_cast<double>(u.windowNs) : 0.0},
           {"computeSeconds", Sec(u.computeNs)},
           {"commSeconds", Sec(u.commNs)},
           {"overlapSeconds", Sec(u.overlapNs)},
           {"exposedCommSeconds", Sec(u.exposedCommNs)},
           {"bubbles", d.bubbleCount},
           {"largestBubbleSeconds", Sec(d.largestBubbleNs)},
           {"flops", d.flops}};
    j["mfu"] = d.mfu ? Json(*d.mfu) : Json(nullptr);
    return j;
}

Json CollectiveJson(const core::CollectiveSummary& c)
{
    return {{"name", c.collective},  {"ranks", c.ranks},         {"count", c.count},
            {"instances", c.instances}, {"bytes", c.bytes},        {"timeSeconds", Sec(c.timeNs)},
            {"algbwGBps", c.algbwGBps}, {"busbwFactor", c.busbwFactor}, {"busbwGBps", c.busbwGBps},
            {"maxSkewSeconds", Sec(c.maxSkewNs)}, {"meanSkewSeconds", c.meanSkewNs * 1e-9},
            {"slowestRank", c.slowestRank}, {"source", c.source}};
}

Json InstanceJson(const core::CollectiveInstance& m, const core::TraceReport& r)
{
    Json parts = Json::array();
    for (const auto& p : m.participants) parts.push_back({{"device", p.device}, {"startNs", p.startNs}, {"endNs", p.endNs}});
    int32_t slowestRank = core::kNone;
    for (const core::DeviceReport& d : r.devices)
        if (d.device == m.slowestDevice) slowestRank = d.rank;
    return {{"collective", m.collective}, {"group", m.group},        {"seq", m.seq},
            {"bytes", m.bytes},           {"ranks", m.ranks},        {"startNs", m.firstStartNs},
            {"endNs", m.lastEndNs},       {"skewSeconds", Sec(m.SkewNs())}, {"transferSeconds", Sec(m.TransferNs())},
            {"slowestDevice", m.slowestDevice}, {"slowestRank", slowestRank}, {"participants", parts}};
}

void PrintDevices(const core::TraceReport& r)
{
    std::printf("\n  %-40s %7s %10s %10s %7s %10s %10s %10s %10s %8s %10s %6s\n", "device", "kernels", "busy", "idle",
                "idle%", "compute", "comm", "overlap", "exposed", "bubbles", "largest", "MFU");
    for (const core::DeviceReport& d : r.devices) {
        const core::DeviceUsage& u = d.usage;
        std::string name = d.name.size() > 40 ? d.name.substr(0, 39) + "~" : d.name;
        char mfu[16] = "-";
        if (d.mfu) std::snprintf(mfu, sizeof mfu, "%.1f%%", *d.mfu * 100);
        std::printf("  %-40s %7zu %10s %10s %6.1f%% %10s %10s %10s %10s %8zu %10s %6s\n", name.c_str(), d.kernelCount,
                    core::FormatSeconds(Sec(u.busyNs)).c_str(), core::FormatSeconds(Sec(u.idleNs)).c_str(),
                    u.windowNs > 0 ? 100.0 * static_cast<double>(u.idleNs) / static_cast<double>(u.windowNs) : 0.0,
                    core::FormatSeconds(Sec(u.computeNs)).c_str(), core::FormatSeconds(Sec(u.commNs)).c_str(),
                    core::FormatSeconds(Sec(u.overlapNs)).c_str(), core::FormatSeconds(Sec(u.exposedCommNs)).c_str(),
                    d.bubbleCount, core::FormatSeconds(Sec(d.largestBubbleNs)).c_str(), mfu);
    }
}

void PrintCollectives(const core::TraceReport& r)
{
    if (r.collectives.empty()) {
        std::printf("\n  no collectives in this trace\n");
        return;
    }
    std::printf("\n  %-16s %6s %7s %8s %11s %11s %10s %10s %10s %10s\n", "collective", "ranks", "count", "matched", "bytes",
                "time", "algbw", "busbw", "max skew", "slowest");
    for (const core::CollectiveSummary& c : r.collectives) {
        std::string slowest = c.slowestRank == core::kNone ? "-" : "rank " + std::to_string(c.slowestRank);
        std::printf("  %-16s %6d %7zu %8zu %11s %11s %7.2f GB/s %6.2f GB/s %10s %10s\n", c.collective.c_str(), c.ranks,
                    c.count, c.instances, core::FormatBytes(c.bytes).c_str(), core::FormatSeconds(Sec(c.timeNs)).c_str(),
                    c.algbwGBps, c.busbwGBps, c.instances ? core::FormatSeconds(Sec(c.maxSkewNs)).c_str() : "-",
                    slowest.c_str());
    }
}

void PrintMatches(const core::TraceReport& r, size_t top)
{
    if (r.instances.empty() || top == 0) return;
    std::vector<const core::CollectiveInstance*> bySkew;
    for (const auto& m : r.instances) bySkew.push_back(&m);
    std::stable_sort(bySkew.begin(), bySkew.end(), [](auto* a, auto* b) { return a->SkewNs() > b->SkewNs(); });
    if (bySkew.size() > top) bySkew.resize(top);
    std::printf("\n  matched across ranks: %zu collectives; the %zu with the largest skew (arrival of the last rank - first):\n",
                r.instances.size(), bySkew.size());
    std::printf("  %-16s %11s %6s %12s %12s   %s\n", "collective", "bytes", "seen", "skew", "after last", "slowest");
    for (const core::CollectiveInstance* m : bySkew) {
        std::string slowest;
        for (const core::DeviceReport& d : r.devices)
            if (d.device == m->slowestDevice) slowest = d.name;
        std::printf("  %-16s %11s %6zu %12s %12s   %s\n", m->collective.c_str(), core::FormatBytes(m->bytes).c_str(),
                    m->participants.size(), core::FormatSeconds(Sec(m->SkewNs())).c_str(),
                    core::FormatSeconds(Sec(m->TransferNs())).c_str(), slowest.c_str());
    }
}

// null without pipeline sends.
Json SendDelaysJson(const core::SendDelays& s)
{
    if (s.sends == 0) return nullptr;
    return {{"sends", s.sends}, {"medianSeconds", Sec(s.medianNs)}, {"p90Seconds", Sec(s.p90Ns)}, {"maxSeconds", Sec(s.maxNs)},
            {"totalSeconds", Sec(s.totalNs)}};
}

void PrintSendDelays(const core::SendDelays& s)
{
    if (s.sends == 0) return;
    std::printf("\n  stage-to-stage sends: %zu, started after the op that produced their data by %s (median), %s (p90), %s (most);\n"
                "  %s in all (a send that waits is a receiving stage that waits)\n",
                s.sends, core::FormatSeconds(Sec(s.medianNs)).c_str(), core::FormatSeconds(Sec(s.p90Ns)).c_str(),
                core::FormatSeconds(Sec(s.maxNs)).c_str(), core::FormatSeconds(Sec(s.totalNs)).c_str());
}

// null without pipeline sends.
Json OpStartWaitsJson(const core::OpStartWaits& w)
{
    if (w.ops == 0) return nullptr;
    return {{"ops", w.ops}, {"overOneMs", w.overOneMs}, {"maxSeconds", Sec(w.maxNs)}, {"totalSeconds", Sec(w.totalNs)}};
}

void PrintOpStartWaits(const core::OpStartWaits& w)
{
    if (w.ops == 0) return;
    std::printf("  ops that started after both their stage's previous op and the last data in: %s in all, %zu of %zu over 1 ms,\n"
                "  %s the most (a wait the trace shows no cause for: work queued behind other work, e.g. in a shared hardware queue)\n",
                core::FormatSeconds(Sec(w.totalNs)).c_str(), w.overOneMs, w.ops, core::FormatSeconds(Sec(w.maxNs)).c_str());
}

std::string TrackLabel(const core::Trace& t, uint32_t track)
{
    const core::Track& tr = t.Tracks()[track];
    return std::string(t.Str(t.Devices()[tr.device].name)) + " / " + std::string(t.Str(tr.name));
}

// null when the capture did not record hardware channels.
Json ChannelsJson(const core::Trace& t, const core::ChannelReport& c)
{
    if (c.spansWithChannel == 0) return nullptr;
    Json shared = Json::array();
    for (const core::SharedChannel& s : c.shared) {
        Json tracks = Json::array();
        for (uint32_t tr : s.tracks) tracks.push_back(TrackLabel(t, tr));
        shared.push_back({{"device", s.device}, {"channel", s.channel}, {"tracks", tracks}});
    }
    return {{"spans", c.spansWithChannel}, {"copiesOnSms", c.copiesOnSms}, {"copiesOnCopyEngine", c.copiesOnCopyEngine},
            {"shared", shared}};
}

void PrintChannels(const core::Trace& t, const core::ChannelReport& c)
{
    if (c.spansWithChannel == 0) return;
    std::printf("\n  hardware queues: copies on the SMs %zu, on a copy engine %zu; ", c.copiesOnSms, c.copiesOnCopyEngine);
    if (c.shared.empty()) {
        std::printf("no compute channel shared by two tracks\n");
        return;
    }
    std::printf("%zu compute channel%s shared by several tracks (work on one waits behind the other's):\n", c.shared.size(),
                c.shared.size() == 1 ? "" : "s");
    for (const core::SharedChannel& s : c.shared) {
        std::string names;
        for (uint32_t tr : s.tracks) names += (names.empty() ? "" : ", ") + TrackLabel(t, tr);
        std::printf("    channel %u: %s\n", s.channel, names.c_str());
    }
}

// null when the trace is no pipeline of a known schedule.
Json PipelineJson(const std::optional<core::PipelineModelCheck>& c)
{
    if (!c) return nullptr;
    const core::MeasuredOpTimes& t = c->times;
    return {{"schedule", core::Name(c->spec.kind)}, {"stages", c->spec.stages}, {"microbatches", c->spec.microBatches},
            {"chunks", c->spec.chunks}, {"bubble", c->measured}, {"bubbleModel", c->model},
            {"bubbleFormula", c->formula >= 0 ? Json(c->formula) : Json(nullptr)}, {"forwardSeconds", t.forwardSec},
            {"backwardSeconds", t.backwardSec}, {"weightSeconds", t.weightSec}, {"stageSlowdown", t.stageSlowdown}, {"ops", t.ops}};
}

void PrintPipeline(const std::optional<core::PipelineModelCheck>& c)
{
    if (!c) return;
    const core::MeasuredOpTimes& t = c->times;
    std::string slow;
    char buf[32];
    for (double f : t.stageSlowdown) {
        std::snprintf(buf, sizeof buf, "%.3f", f);
        slow += (slow.empty() ? "" : " ") + std::string(buf);
    }
    std::printf("\n  %s pipeline, %d stages x %d micro-batches: bubble %.1f %% measured over its iterations; %.1f %% by the\n"
                "  schedule simulated at the measured op times (F %s, B %s%s%s per stage, stages x %s; free communication)",
                std::string(core::Name(c->spec.kind)).c_str(), c->spec.stages, c->spec.microBatches, c->measured * 100, c->model * 100,
                core::FormatSeconds(t.forwardSec).c_str(), core::FormatSeconds(t.backwardSec).c_str(),
                c->spec.SplitsWeightGrad() ? " of which W " : "", c->spec.SplitsWeightGrad() ? core::FormatSeconds(t.weightSec).c_str() : "",
                slow.c_str());
    if (c->formula >= 0) std::printf("; %.1f %% by the lectures' formula", c->formula * 100);
    std::printf("\n");
}

void RunAnalyze(const AnalyzeOptions& o)
{
    Require(o.peakTflops >= 0, "--peak-tflops: must be >= 0");
    core::Trace trace = ReadJob(o.files, o.alignClocks);
    core::AnalysisOptions options;
    options.includeCpu = o.cpu;
    options.dtype = o.dtype;
    options.peakTflops = o.peakTflops;
    core::TraceReport r = core::AnalyzeTrace(trace, options);
    if (o.alignClocks) {
        std::string offsets;
        for (const auto& [key, value] : trace.Meta().extra.Entries())
            if (key.rfind("clockOffsetNs.", 0) == 0 && std::holds_alternative<int64_t>(value))
                offsets += (offsets.empty() ? "" : ", ") + std::string("rank ") + key.substr(18) + " " +
                           core::FormatSeconds(static_cast<double>(std::get<int64_t>(value)) * 1e-9);
        r.notes.push_back("clocks aligned by matched collectives (offset of each rank from rank " +
                          trace.Meta().extra.GetString("clockReferenceRank", "0") + "): " +
                          (offsets.empty() ? "none needed or no match" : offsets));
    }
    const std::optional<core::PipelineModelCheck> pipeline = core::CheckPipelineModel(trace);
    if (o.json) {
        Json devices = Json::array(), collectives = Json::array(), matches = Json::array();
        for (const auto& d : r.devices) devices.push_back(DeviceJson(d));
        for (const auto& c : r.collectives) collectives.push_back(CollectiveJson(c));
        for (const auto& m : r.instances) matches.push_back(InstanceJson(m, r));
        PrintJson({{"files", o.files}, {"title", r.title}, {"source", core::Name(r.source)}, {"startNs", r.startNs},
                   {"endNs", r.endNs}, {"windowSeconds", Sec(r.endNs - r.startNs)}, {"idleFraction", r.idleFraction},
                   {"devices", devices}, {"collectives", collectives}, {"matches", matches}, {"sendDelays", SendDelaysJson(r.sendDelays)},
                   {"opStartWaits", OpStartWaitsJson(r.opStartWaits)}, {"hardwareChannels", ChannelsJson(trace, r.channels)},
                   {"pipeline", PipelineJson(pipeline)}, {"notes", r.notes}});
        return;
    }
    std::printf("%s (%s): %zu device%s analysed over %s; bubble (idle) fraction %.1f %%\n", r.title.c_str(),
                std::string(core::Name(r.source)).c_str(), r.devices.size(), r.devices.size() == 1 ? "" : "s",
                core::FormatSeconds(Sec(r.endNs - r.startNs)).c_str(), r.idleFraction * 100);
    PrintDevices(r);
    PrintPipeline(pipeline);
    PrintCollectives(r);
    PrintMatches(r, o.top);
    PrintSendDelays(r.sendDelays);
    PrintOpStartWaits(r.opStartWaits);
    PrintChannels(trace, r.channels);
    for (const std::string& n : r.notes) std::printf("\n  note: %s", n.c_str());
    std::printf("\n");
}

} // namespace

void AddAnalyzeCommand(CLI::App& root)
{
    auto opts = std::make_shared<AnalyzeOptions>();
    CLI::App* cmd = root.add_subcommand("analyze", "Busy/idle time, bubbles, comm/compute overlap, busbw and skew of traces");
    cmd->add_option("files", opts->files,
                    "Trace files (paralens, Chrome/Perfetto JSON, PyTorch profiler, nccl-tests log; .gz too); several "
                    "files of one job (one per rank) are put on one timeline")
        ->required();
    cmd->add_flag("--align-clocks", opts->alignClocks,
                  "Align each rank's clock to the lowest rank's by the ends of their matched collectives");
    cmd->add_flag("--cpu", opts->cpu, "Also analyse host threads (CPU ops), which are left out by default");
    cmd->add_option("--dtype", opts->dtype, "Data type of the peak FLOPS used for MFU (bf16, fp16, fp32, tf32, fp8)")
        ->capture_default_str();
    cmd->add_option("--peak-tflops", opts->peakTflops, "Peak TFLOPS per device for MFU (default: from the GPU spec table)");
    cmd->add_option("--top", opts->top, "How many matched collectives to list (largest skew first)")->capture_default_str();
    cmd->add_flag("--json", opts->json, "Machine-readable output on stdout");
    cmd->callback([opts] { RunAnalyze(*opts); });
}

} // namespace paralens::app
