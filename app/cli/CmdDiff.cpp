// paralens diff: two runs compared op by op (aligned by step, rank, lane and op name), per
// category and per step, the largest regressions first.
#include "CliCommon.hpp"
#include "Commands.hpp"
#include "WhatIfReport.hpp"

#include "common/Error.hpp"

#include <cstdio>
#include <memory>

namespace paralens::app {

namespace {

struct DiffOptions {
    std::vector<std::string> files, first, second;
    bool alignClocks = false, json = false;
    size_t top = 15;
};

void RunDiff(const DiffOptions& o)
{
    std::vector<std::string> a = o.first, b = o.second;
    if (a.empty() && b.empty()) {
        Require(o.files.size() == 2, "diff: give two trace files (FIRST SECOND), or --first FILE... --second FILE... for "
                                     "runs of several ranks; got " + std::to_string(o.files.size()) + " file(s)");
        a = {o.files[0]};
        b = {o.files[1]};
    } else {
        Require(o.files.empty(), "diff: give the runs either as two files or with --first and --second, not both");
        Require(!a.empty() && !b.empty(), "diff: --first and --second each need at least one file");
    }
    const core::Trace ta = ReadJob(a, o.alignClocks);
    const core::Trace tb = ReadJob(b, o.alignClocks);
    const core::TraceDiffResult d = core::DiffTraces(ta, tb);
    if (o.json) {
        nlohmann::json doc = DiffJson(d, o.top);
        doc["first"] = a;
        doc["second"] = b;
        PrintJson(doc);
        return;
    }
    std::printf("%s", DiffText(d, o.top).c_str());
}

} // namespace

void AddDiffCommand(CLI::App& root)
{
    auto o = std::make_shared<DiffOptions>();
    CLI::App* cmd = root.add_subcommand("diff", "Compare two runs: ops aligned by step, rank and name; per-op, per-category and "
                                                "per-step deltas, the largest regressions first");
    cmd->add_option("files", o->files, "FIRST SECOND: two trace files");
    cmd->add_option("--first", o->first, "The first run's files (one per rank)");
    cmd->add_option("--second", o->second, "The second run's files (one per rank)");
    cmd->add_flag("--align-clocks", o->alignClocks, "Align each run's rank clocks by their matched collectives first");
    cmd->add_option("--top", o->top, "How many ops to list")->capture_default_str();
    cmd->add_flag("--json", o->json, "Machine-readable output on stdout");
    cmd->callback([o] { RunDiff(*o); });
}

} // namespace paralens::app
