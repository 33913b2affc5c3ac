// paralens fit: least-squares alpha-beta(-gamma) of nccl-tests logs or of the collectives of traces.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "analysis/Fitting.hpp"
#include "model/ProtocolFit.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"
#include "trace/FileIO.hpp"

#include <cmath>
#include <cstdio>
#include <memory>

namespace paralens::app {

namespace {

using Json = nlohmann::json;

struct FitOptions {
    std::vector<std::string> files;
    std::string algorithm;
    std::string half = "out-of-place";
    std::string out;
    bool summary = false;
    bool alignClocks = false;
    bool json = false;
};

struct SourceFits {
    std::string source;
    std::vector<core::FitResult> fits;
    std::optional<core::JointFit> joint;
};

core::LogHalf ParseHalf(const std::string& text)
{
    if (text == "out-of-place" || text == "out") return core::LogHalf::OutOfPlace;
    if (text == "in-place" || text == "in") return core::LogHalf::InPlace;
    if (text == "both") return core::LogHalf::Both;
    throw Error("--half: expected out-of-place, in-place or both, got '" + text + "'");
}

std::optional<core::Algorithm> ParseModelAlgorithm(const std::string& text)
{
    if (text.empty()) return std::nullopt;
    auto a = core::ParseAlgorithm(text);
    if (!a) throw Error("--algorithm: unknown algorithm '" + text + "'; accepted: ring, tree, halving-doubling, "
                        "recursive-doubling, naive, pairwise, direct");
    return a;
}

SourceFits FitGroups(const std::string& source, const std::vector<core::FitGroup>& groups)
{
    core::FitFile file = core::FitFileOfGroups(groups, source);
    return SourceFits{source, std::move(file.fits), std::move(file.joint)};
}

void WarnSkipped(const core::NcclTestsLog& log)
{
    if (log.skipped.empty()) return;
    const core::SkippedLine& first = log.skipped.front();
    std::fprintf(stderr, "paralens: %s: skipped %zu line%s inside result tables (first: line %zu, %s: '%s')\n",
                 log.origin.c_str(), log.skipped.size(), log.skipped.size() == 1 ? "" : "s", first.line,
                 first.reason.c_str(), first.text.c_str());
}

std::vector<SourceFits> FitAll(const FitOptions& o)
{
    const core::LogHalf half = ParseHalf(o.half);
    const auto algorithm = ParseModelAlgorithm(o.algorithm);
    std::vector<SourceFits> out;
    std::vector<std::string> traces;
    for (const std::string& f : o.files) {
        if (core::DetectFileFormat(f) != core::TraceFormat::NcclTests) {
            traces.push_back(f);
            continue;
        }
        core::NcclTestsLog log = core::ReadNcclTestsLogFile(f);
        WarnSkipped(log);
        out.push_back(FitGroups(f, core::FitGroupsFromLog(log, half, algorithm)));
    }
    if (!traces.empty()) {
        core::Trace trace = ReadJob(traces, o.alignClocks, false);
        std::string name = traces.size() == 1 ? traces.front() : std::to_string(traces.size()) + " trace files";
        out.push_back(FitGroups(name, core::FitGroupsFromTrace(trace, name, algorithm)));
    }
    return out;
}

double GBps(double secPerByte) { return secPerByte > 0 ? 1.0 / secPerByte / 1e9 : 0.0; }

// The regimes: one line per size range, where NCCL changes protocol or algorithm.
void PrintRegimes(const core::FitResult& r)
{
    if (r.segments.empty()) return;
    if (r.segments.size() == 1) std::printf("  regimes: one size range (no switch the rows can tell from noise), MAPE %.1f %%", r.segmentedMapePct);
    else std::printf("  regimes: %zu size ranges, MAPE %.1f %% (one line: %.1f %%)", r.segments.size(), r.segmentedMapePct, r.mapePct);
    if (r.heldOutMapePct > 0) std::printf("; on sizes held out of the fit %.1f %%", r.heldOutMapePct);
    if (r.noisePct > 0) std::printf("; the log's own noise %.1f %%", r.noisePct);
    std::printf("\n");
    if (r.segments.size() < 2) return;
    for (const core::FitSegment& s : r.segments)
        std::printf("    %9s .. %-9s likely %-12s latency %10s, bus bandwidth %7.1f GB/s; %s alpha %.4g us, %.1f GB/s per link; MAPE %.1f %%\n",
                    core::FormatBytes(s.fromBytes).c_str(), core::FormatBytes(s.toBytes).c_str(), s.protocol.c_str(),
                    core::FormatSeconds(s.latencySec).c_str(), s.busBwGBps, std::string(core::Name(r.algorithm)).c_str(),
                    s.params.alphaSec * 1e6, GBps(s.params.betaSecPerByte), s.mapePct);
}

// The protocol envelope: NCCL's ways to move the bytes, each a line, the lowest taken; where two
// cross, NCCL switches.
void PrintProtocols(const core::FitResult& r)
{
    if (r.protocols.size() < 2) return; // one line: nothing the line and the regimes do not say
    std::printf("  protocols: the lowest of %zu lines, MAPE %.1f %%", r.protocols.size(), r.protocolMapePct);
    if (r.protocolHeldOutMapePct > 0) std::printf("; on sizes held out of the fit %.1f %%", r.protocolHeldOutMapePct);
    std::printf("\n");
    const double factor = core::BusBwFactor(r.collective, r.ranks);
    for (size_t i = 0; i < r.protocols.size(); ++i) {
        const core::ProtocolLine& l = r.protocols[i];
        char bw[32] = "-";
        if (l.secPerByte > 0) std::snprintf(bw, sizeof bw, "%.1f GB/s", factor / l.secPerByte / 1e9);
        std::printf("    likely %-19s latency %10s, bus bandwidth %12s, lowest %9s .. %-9s", l.protocol.c_str(),
                    core::FormatSeconds(l.latencySec).c_str(), bw, core::FormatBytes(l.fromBytes).c_str(),
                    core::FormatBytes(l.toBytes).c_str());
        if (i + 1 < r.protocols.size()) {
            if (const double cross = core::SwitchBytes(l, r.protocols[i + 1]); cross > 0)
                std::printf(" switch at %s", core::FormatBytes(static_cast<uint64_t>(cross)).c_str());
        }
        std::printf("\n");
    }
}

void PrintFit(const core::FitResult& r, bool rows)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const core::FitRow& row : r.rows) {
        lo = std::min(lo, row.bytes);
        hi = std::max(hi, row.bytes);
    }
    const core::FitRow* worst = nullptr;
    for (const core::FitRow& row : r.rows)
        if (!worst || std::fabs(row.errorPct) > std::fabs(worst->errorPct)) worst = &row;
    std::printf("%s: %s on %d ranks%s%s, %s: %zu rows from %s to %s\n", r.source.c_str(),
                std::string(core::Name(r.collective)).c_str(), r.ranks, r.dtype.empty() ? "" : ", ", r.dtype.c_str(),
                r.label.c_str(), r.rows.size(), core::FormatBytes(lo).c_str(), core::FormatBytes(hi).c_str());
    std::printf("  latency %s, bus bandwidth %.1f GB/s (nccl-tests busbw); MAPE %.1f %% (largest %.1f %% at %s)\n",
                core::FormatSeconds(r.latencySec).c_str(), r.busBwGBps, r.mapePct, worst ? std::fabs(worst->errorPct) : 0.0,
                worst ? core::FormatBytes(worst->bytes).c_str() : "-");
    std::printf("  %s model: alpha %.4g us per message (x %.4g), bandwidth %.1f GB/s per link (beta x %.4g n)%s\n",
                std::string(core::Name(r.algorithm)).c_str(), r.params.alphaSec * 1e6, r.alphaCoefficient,
                GBps(r.params.betaSecPerByte), r.betaCoefficient,
                core::Reduces(r.collective) ? "; gamma not separable from one collective (inside beta)" : "");
    if (!r.note.empty()) std::printf("  note: %s\n", r.note.c_str());
    PrintRegimes(r);
    PrintProtocols(r);
    if (!rows) return;
    const bool segmented = !r.segments.empty();
    std::printf("  %14s %14s %14s %9s%s\n", "size (B)", "measured (us)", "one line (us)", "error",
                segmented ? "   regimes (us)     error protocols (us)     error" : "");
    for (const core::FitRow& row : r.rows) {
        std::printf("  %14llu %14.2f %14.2f %8.1f%%", static_cast<unsigned long long>(row.bytes), row.measuredSec * 1e6,
                    row.predictedSec * 1e6, row.errorPct);
        if (segmented && row.bytes > 0)
            std::printf(" %14.2f %8.1f%% %14.2f %8.1f%%", row.segmentedSec * 1e6, row.segmentedErrorPct, row.protocolSec * 1e6,
                        (row.protocolSec - row.measuredSec) / row.measuredSec * 100.0);
        else if (segmented) std::printf(" %14s %9s %14s %9s", "-", "-", "-", "-"); // an empty collective: no regime's
        std::printf("\n");
    }
}

void PrintJoint(const SourceFits& s)
{
    if (!s.joint) return;
    const core::JointFit& j = *s.joint;
    std::printf("%s: joint fit of %zu collectives (%zu samples): alpha %.4g us, bandwidth %.1f GB/s, %s; MAPE %.1f %%\n",
                s.source.c_str(), j.groups.size(), j.samples, j.params.alphaSec * 1e6, GBps(j.params.betaSecPerByte),
                j.gammaSeparated ? ("gamma " + std::to_string(GBps(j.params.gammaSecPerByte)) + " GB/s").c_str()
                                 : "gamma not separable (every collective reduces alike)",
                j.mapePct);
}

core::FitFile ToFile(const std::vector<SourceFits>& all)
{
    core::FitFile file;
    size_t joints = 0;
    for (const SourceFits& s : all) {
        file.sources.push_back(s.source);
        file.fits.insert(file.fits.end(), s.fits.begin(), s.fits.end());
        if (s.joint && joints++ == 0) file.joint = s.joint;
    }
    if (joints > 1) file.joint.reset(); // joint fits of different machines do not combine
    return file;
}

void RunFit(const FitOptions& o)
{
    if (!o.out.empty()) CheckWritable("--out", o.out);
    std::vector<SourceFits> all = FitAll(o);
    core::FitFile file = ToFile(all);
    if (!o.out.empty()) core::SaveFitFile(file, o.out);
    if (o.json) {
        Json doc = Json::parse(core::FitFileToJson(file));
        if (!o.out.empty()) doc["out"] = o.out;
        PrintJson(doc);
        return;
    }
    for (const SourceFits& s : all) {
        for (const core::FitResult& r : s.fits) {
            PrintFit(r, !o.summary);
            std::printf("\n");
        }
        PrintJoint(s);
    }
    if (!o.out.empty())
        std::printf("fit written to %s (use it with `paralens simulate --model %s`)\n", o.out.c_str(), o.out.c_str());
}

} // namespace

void AddFitCommand(CLI::App& root)
{
    auto opts = std::make_shared<FitOptions>();
    CLI::App* cmd = root.add_subcommand("fit", "Least-squares alpha and bandwidth of nccl-tests logs or traces' collectives, one line and "
                                                    "the regimes (a line per size range where NCCL switches protocol)");
    cmd->add_option("files", opts->files,
                    "nccl-tests logs, or traces with collectives (several trace files of one job are read together)")
        ->required();
    cmd->add_option("--algorithm,-a", opts->algorithm,
                    "The model that turns the fitted line into alpha per message and bandwidth per link (default: the "
                    "trace's NCCL algorithm, else ring)");
    cmd->add_option("--half", opts->half, "nccl-tests columns to fit: out-of-place, in-place or both")->capture_default_str();
    cmd->add_flag("--align-clocks", opts->alignClocks, "Traces: align the ranks' clocks by matched collectives first");
    cmd->add_option("--out,-o", opts->out,
                    "Save the fit (JSON, with its regimes) for `paralens simulate --model` (which takes the regime of its size)");
    cmd->add_flag("--summary", opts->summary, "Leave out the per-row table");
    cmd->add_flag("--json", opts->json, "Machine-readable output on stdout (the fit file's content)");
    cmd->callback([opts] { RunFit(*opts); });
}

} // namespace paralens::app
