// Shared pieces of the headless subcommands: option parsing with messages that name the option,
// the cluster model options, JSON and table output.
#pragma once

#include "model/Collective.hpp"
#include "model/Fit.hpp"
#include "sim/ClusterModel.hpp"
#include "trace/TraceFile.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paralens::app {

// Options every subcommand that models a cluster takes: --alpha-us, --bandwidth-GBps,
// --gamma-GBps, --straggler RANK:FACTOR, --link SRC:DST:ALPHA_US:GBPS.
struct ClusterOptions {
    double alphaUs = 5.0;
    double bandwidthGBps = 100.0;
    double gammaGBps = 0.0;
    std::vector<std::string> stragglers;
    std::vector<std::string> links;
    double netAlphaUs = 10.0;       // between nodes, when netBandwidthGBps > 0
    double netBandwidthGBps = 0.0;  // 0: one level

    void AddTo(CLI::App& cmd);
    // --net-alpha-us and --net-bandwidth-GBps: the network between nodes of a two-level cluster.
    void AddNetworkTo(CLI::App& cmd);
    core::ClusterModel ToModel() const; // throws Error naming the option
    std::string Describe() const;       // "alpha 5 us, 100 GB/s, free reductions"
};

core::Collective ParseCollectiveOption(const std::string& text);
// The algorithm for a collective; empty text means the collective's default (the first listed).
core::Algorithm ParseAlgorithmOption(const std::string& text, core::Collective c);
uint64_t ParseSizeOption(const char* option, const std::string& text);
// Element size of a dtype name as nccl-tests spells it (float, half, bfloat16, double, int8, ...).
uint64_t DtypeBytes(const std::string& dtype);

// A number option that must be above 0: "--ranks-per-node: must be positive (got 0)" (CLI11's
// PositiveNumber names its range as 0 to the largest double instead).
CLI::Validator PositiveOption();

void PrintJson(const nlohmann::json& doc);

// A fit file given for one level of a cluster (`option`: --network-fit, --net-model, --nvlink-fit):
// fits whose logs named their hosts say which level they measured (one host: inside a node;
// several: across nodes). Throws Error naming the log and the option for the other level when
// every fit of the file is of the other level; fits of logs without host names pass.
void RequireFitOfLevel(const char* option, const char* otherOption, const std::string& path, const core::FitFile& file, bool insideNode);

// Checks that an output path can be written before long work starts (the real write is atomic).
void CheckWritable(const char* option, const std::string& path);

// Progress of long work on stderr, "paralens: WHAT  40 %": one line rewritten in place on a
// terminal, a line per tenth otherwise; called with the work done and the whole.
std::function<void(uint64_t done, uint64_t total)> ProgressOnStderr(std::string what);

// Read options that report the progress of large files (64 MiB and more) on stderr, as
// ProgressOnStderr does. `keepCpu` as ReadOptions.
core::ReadOptions ReadOptionsWithProgress(bool keepCpu = true);

// Several trace files of one job on one timeline (core::ReadTraceFiles), with progress on
// stderr; `alignClocks` aligns the ranks' clocks by their matched collectives.
core::Trace ReadJob(const std::vector<std::string>& files, bool alignClocks, bool keepCpu = true);

} // namespace paralens::app
