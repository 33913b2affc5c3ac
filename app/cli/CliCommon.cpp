#include "CliCommon.hpp"

#include "analysis/CollectiveMatch.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace paralens::app {

using core::ClusterModel;

void ClusterOptions::AddTo(CLI::App& cmd)
{
    cmd.add_option("--alpha-us", alphaUs, "Latency alpha of one message, in microseconds")->capture_default_str();
    cmd.add_option("--bandwidth-GBps", bandwidthGBps, "Link bandwidth in GB/s (1e9 bytes/s); beta = 1/bandwidth")
        ->capture_default_str();
    cmd.add_option("--gamma-GBps", gammaGBps, "Reduction throughput in GB/s; gamma = 1/this (0: reductions are free)")
        ->capture_default_str();
    cmd.add_option("--straggler", stragglers, "A slow rank as RANK:FACTOR (e.g. 3:2 makes rank 3 twice as slow); repeatable");
    cmd.add_option("--link", links, "A different link as SRC:DST:ALPHA_US:GBPS (one direction); repeatable");
}

void ClusterOptions::AddNetworkTo(CLI::App& cmd)
{
    cmd.add_option("--net-bandwidth-GBps", netBandwidthGBps,
                   "Two levels: the bandwidth of a message between nodes, in GB/s (with --ranks-per-node; "
                   "--alpha-us and --bandwidth-GBps are then within a node)");
    cmd.add_option("--net-alpha-us", netAlphaUs, "Two levels: the latency of a message between nodes, in microseconds")
        ->capture_default_str();
}

namespace {

std::vector<std::string> SplitColon(const std::string& text)
{
    std::vector<std::string> parts;
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, ':')) parts.push_back(part);
    return parts;
}

double ToNumber(const char* option, const std::string& whole, const std::string& part)
{
    try {
        size_t used = 0;
        double v = std::stod(part, &used);
        if (used == part.size()) return v;
    } catch (const std::exception&) {
    }
    throw Error(std::string(option) + ": cannot read '" + part + "' in '" + whole + "' as a number");
}

} // namespace

ClusterModel ClusterOptions::ToModel() const
{
    ClusterModel m = ClusterModel::FromUnits(alphaUs, bandwidthGBps, gammaGBps);
    for (const std::string& s : stragglers) {
        auto parts = SplitColon(s);
        Require(parts.size() == 2, "--straggler: expected RANK:FACTOR (e.g. 3:2), got '" + s + "'");
        core::Straggler st;
        st.rank = static_cast<int>(ToNumber("--straggler", s, parts[0]));
        st.slowdown = ToNumber("--straggler", s, parts[1]);
        Require(st.slowdown > 0, "--straggler: the factor must be > 0 in '" + s + "'");
        m.stragglers.push_back(st);
    }
    for (const std::string& l : links) {
        auto parts = SplitColon(l);
        Require(parts.size() == 4, "--link: expected SRC:DST:ALPHA_US:GBPS (e.g. 0:1:10:25), got '" + l + "'");
        core::LinkOverride o;
        o.src = static_cast<int>(ToNumber("--link", l, parts[0]));
        o.dst = static_cast<int>(ToNumber("--link", l, parts[1]));
        o.alphaSec = ToNumber("--link", l, parts[2]) * 1e-6;
        double gbps = ToNumber("--link", l, parts[3]);
        Require(gbps > 0 && o.alphaSec >= 0, "--link: alpha must be >= 0 and bandwidth > 0 in '" + l + "'");
        o.betaSecPerByte = 1.0 / (gbps * 1e9);
        m.links.push_back(o);
    }
    if (netBandwidthGBps != 0) {
        Require(std::isfinite(netBandwidthGBps) && netBandwidthGBps > 0, "--net-bandwidth-GBps must be a number > 0");
        Require(std::isfinite(netAlphaUs) && netAlphaUs >= 0, "--net-alpha-us must be a number >= 0");
        m.netAlphaSec = netAlphaUs * 1e-6;
        m.netBetaSecPerByte = 1.0 / (netBandwidthGBps * 1e9);
    }
    return m;
}

std::string ClusterOptions::Describe() const
{
    char buf[160];
    if (gammaGBps > 0)
        std::snprintf(buf, sizeof buf, "alpha %g us, %g GB/s, reductions at %g GB/s", alphaUs, bandwidthGBps, gammaGBps);
    else
        std::snprintf(buf, sizeof buf, "alpha %g us, %g GB/s, free reductions", alphaUs, bandwidthGBps);
    std::string out = buf;
    for (const std::string& s : stragglers) out += ", straggler " + s;
    for (const std::string& l : links) out += ", link " + l;
    if (netBandwidthGBps > 0) {
        char net[96];
        std::snprintf(net, sizeof net, "; between nodes alpha %g us, %g GB/s", netAlphaUs, netBandwidthGBps);
        out += net;
    }
    return out;
}

core::Collective ParseCollectiveOption(const std::string& text)
{
    auto c = core::ParseCollective(text);
    if (!c) throw Error("--collective: unknown collective '" + text + "'; accepted: " + core::CollectiveNamesList());
    return *c;
}

core::Algorithm ParseAlgorithmOption(const std::string& text, core::Collective c)
{
    if (text.empty()) return core::AlgorithmsFor(c).front();
    auto a = core::ParseAlgorithm(text);
    if (!a || !core::Supports(c, *a))
        throw Error("--algorithm: '" + text + "' does not apply to " + std::string(core::Name(c)) +
                    "; accepted: " + core::AlgorithmNamesList(c));
    return *a;
}

uint64_t ParseSizeOption(const char* option, const std::string& text)
{
    try {
        return core::ParseBytes(text);
    } catch (const Error& e) {
        throw Error(std::string(option) + ": " + e.what());
    }
}

CLI::Validator PositiveOption()
{
    return CLI::Validator(
        [](std::string& in) -> std::string {
            double v = 0;
            if (!CLI::detail::lexical_cast(in, v)) return "not a number (got " + in + ")";
            return v > 0 ? std::string() : "must be positive (got " + in + ")";
        },
        "POSITIVE");
}

uint64_t DtypeBytes(const std::string& dtype)
{
    if (dtype == "float" || dtype == "float32" || dtype == "int32" || dtype == "uint32" || dtype == "int") return 4;
    if (dtype == "half" || dtype == "float16" || dtype == "bfloat16" || dtype == "bf16" || dtype == "fp16") return 2;
    if (dtype == "double" || dtype == "float64" || dtype == "int64" || dtype == "uint64") return 8;
    if (dtype == "int8" || dtype == "uint8" || dtype == "char" || dtype == "fp8" || dtype == "byte") return 1;
    throw Error("--dtype: unknown type '" + dtype + "'; accepted: float, half, bfloat16, double, int8, uint8, int32, "
                "uint32, int64, uint64, fp8");
}

void RequireFitOfLevel(const char* option, const char* otherOption, const std::string& path, const core::FitFile& file, bool insideNode)
{
    bool other = !file.fits.empty();
    for (const core::FitResult& f : file.fits) other = other && (insideNode ? f.nodes >= 2 : f.nodes == 1);
    if (!other) return;
    const core::FitResult& f = file.fits.front();
    throw Error(std::string(option) + ": " + path + " fits " + (f.source.empty() ? std::string("a log") : f.source) + ", whose " +
                std::to_string(f.ranks) + " ranks ran " +
                (insideNode ? "on " + std::to_string(f.nodes) + " hosts: it measured the network"
                            : std::string("on one host: it measured the links inside a node")) +
                "; give it as " + otherOption + ", or fit a log " + (insideNode ? "of one node" : "across nodes"));
}

void PrintJson(const nlohmann::json& doc) { std::cout << doc.dump(2) << std::endl; }

void CheckWritable(const char* option, const std::string& path)
{
    namespace fs = std::filesystem;
    fs::path p(path);
    fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (fs::is_directory(p, ec)) throw Error(std::string(option) + ": '" + path + "' is a folder, expected a file name");
    if (!fs::is_directory(dir, ec))
        throw Error(std::string(option) + ": cannot write '" + path + "': folder '" + dir.string() + "' does not exist");
    if (::access(dir.c_str(), W_OK) != 0)
        throw Error(std::string(option) + ": cannot write '" + path + "': folder '" + dir.string() + "' is not writable");
}

std::function<void(uint64_t done, uint64_t total)> ProgressOnStderr(std::string what)
{
    struct State {
        int lastShown = -1;
        bool tty = ::isatty(STDERR_FILENO) != 0;
        std::string what;
    };
    auto state = std::make_shared<State>();
    state->what = std::move(what);
    return [state](uint64_t done, uint64_t total) {
        if (total == 0) return;
        int pct = static_cast<int>(std::min<uint64_t>(done * 100 / total, 100));
        int step = state->tty ? 1 : 10;
        if (pct / step == state->lastShown / step && state->lastShown >= 0) return;
        state->lastShown = pct;
        std::fprintf(stderr, "%sparalens: %s %3d %%%s", state->tty ? "\r" : "", state->what.c_str(), pct, state->tty && pct < 100 ? "" : "\n");
        std::fflush(stderr);
    };
}

core::ReadOptions ReadOptionsWithProgress(bool keepCpu)
{
    core::ReadOptions options;
    options.keepCpu = keepCpu;
    // The file's size is known at the first call: the line names it.
    auto shown = std::make_shared<std::function<void(uint64_t, uint64_t)>>();
    options.progress = [shown](uint64_t done, uint64_t total) {
        constexpr uint64_t kShowFrom = uint64_t{64} << 20;
        if (total < kShowFrom) return;
        if (!*shown) *shown = ProgressOnStderr("reading " + core::FormatBytes(total) + ",");
        (*shown)(done, total);
    };
    return options;
}

core::Trace ReadJob(const std::vector<std::string>& files, bool alignClocks, bool keepCpu)
{
    core::Trace trace = core::ReadTraceFiles(files, ReadOptionsWithProgress(keepCpu));
    if (!alignClocks) return trace;
    return core::AlignRankClocks(trace);
}

} // namespace paralens::app
