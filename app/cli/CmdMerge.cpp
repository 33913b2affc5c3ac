// paralens merge: the per-rank traces of a multi-process run into one trace, on rank 0's clock.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "trace/FileIO.hpp"
#include "trace/RankTraceMerge.hpp"
#include "trace/TraceFile.hpp"

#include <cstdio>
#include <memory>

namespace paralens::app {

namespace {

struct MergeOptions {
    std::vector<std::string> files;
    std::string out;
    bool json = false;
};

void RunMerge(const MergeOptions& o)
{
    Require(core::EndsWith(o.out, ".json") || core::EndsWith(o.out, ".json.gz"),
            "--out: '" + o.out + "' must end in .json or .json.gz");
    CheckWritable("--out", o.out);
    std::vector<core::Trace> parts;
    for (const std::string& f : o.files) parts.push_back(core::ReadTraceFile(f));
    core::RankMergeInfo info;
    const core::Trace merged = core::MergeRankTraces(std::move(parts), o.files, &info);
    core::WriteTraceFile(merged, o.out);
    if (o.json) {
        PrintJson({{"out", o.out}, {"ranks", merged.Devices().size()}, {"spans", merged.SpanCount()},
                   {"messages", info.pairedMessages}, {"unpairedMessages", info.unpairedMessages},
                   {"clockBoundNs", info.clockBoundNs}});
        return;
    }
    std::printf("%zu rank traces -> %s: %zu spans, %zu messages paired into arrows (%zu unpaired); clocks aligned to rank 0 "
                "within %s\n",
                o.files.size(), o.out.c_str(), merged.SpanCount(), info.pairedMessages, info.unpairedMessages,
                core::FormatSeconds(static_cast<double>(info.clockBoundNs) * 1e-9).c_str());
}

} // namespace

void AddMergeCommand(CLI::App& root)
{
    auto o = std::make_shared<MergeOptions>();
    CLI::App* cmd = root.add_subcommand("merge", "Merge the per-rank traces of paralens run --backend mpi into one, on rank 0's clock");
    cmd->add_option("files", o->files, "Per-rank traces (FILE.rankN.json)")->required();
    cmd->add_option("--out,-o", o->out, "The merged trace (.json or .json.gz)")->required();
    cmd->add_flag("--json", o->json, "Machine-readable summary on stdout");
    cmd->callback([o] { RunMerge(*o); });
}

} // namespace paralens::app
