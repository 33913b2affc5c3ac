// paralens whatif: the critical path of each step of a trace, and the trace replayed under
// changes (ops scaled by category or name, the network re-priced, a straggler removed, a rank's
// skew added), next to what was measured.
#include "CliCommon.hpp"
#include "Commands.hpp"
#include "WhatIfReport.hpp"
#include "WhatIfRuns.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"

#include <cstdio>
#include <memory>

namespace paralens::app {

namespace {

using Json = nlohmann::json;

struct WhatIfOptions {
    std::vector<std::string> files;
    std::vector<std::string> scale, skew;
    std::vector<int32_t> noStraggler;
    double bandwidthX = 0, alphaX = 0, alphaUs = -1, bandwidthGBps = 0;
    std::string model, out;
    bool alignClocks = false, json = false;
    size_t top = 8;
};

// The window's what-if parameters for these options (one mapping to core's changes: WhatIfRuns).
WhatIfParams ParamsOf(const WhatIfOptions& o)
{
    WhatIfParams p;
    for (const std::string& rule : o.scale) p.scale += (p.scale.empty() ? "" : ",") + rule;
    Require(o.bandwidthX >= 0 && o.alphaX >= 0, "--bandwidth-x and --alpha-x must be > 0");
    if (o.bandwidthX > 0) p.bandwidthX = o.bandwidthX;
    if (o.alphaX > 0) p.alphaX = o.alphaX;
    p.bandwidthGBps = o.bandwidthGBps;
    p.alphaUs = o.alphaUs;
    p.model = o.model;
    p.noStragglers = o.noStraggler;
    for (const std::string& s : o.skew) {
        const auto [rank, ns] = core::ParseSkew(s, "--skew");
        p.skewUs.push_back({rank, static_cast<double>(ns) * 1e-3});
    }
    return p;
}

void RunWhatIf(const WhatIfOptions& o)
{
    if (!o.out.empty()) CheckWritable("--out", o.out);
    const core::Trace trace = ReadJob(o.files, o.alignClocks);
    std::string networkText;
    const WhatIfNames names{"--scale", "--bandwidth-x, --alpha-x, --alpha-us and --bandwidth-GBps", "--model FIT.json"};
    const core::WhatIfChanges changes = ChangesOf(ParamsOf(o), trace, names, &networkText);
    const core::WhatIfAnalysis run = core::AnalyzeWhatIf(trace, changes, !o.out.empty());
    if (!o.out.empty()) core::WriteTraceFile(*run.replayedTrace, o.out);
    if (o.json) {
        Json doc = WhatIfJson(run, trace, o.top);
        doc["files"] = o.files;
        doc["network"] = networkText;
        doc["out"] = o.out.empty() ? Json(nullptr) : Json(o.out);
        PrintJson(doc);
        return;
    }
    std::printf("%s", WhatIfText(run, trace, o.top).c_str());
    if (!networkText.empty()) std::printf("  %s\n", networkText.c_str());
    if (!o.out.empty()) std::printf("\nthe replayed trace is in %s (open it beside the measured one)\n", o.out.c_str());
}

} // namespace

void AddWhatIfCommand(CLI::App& root)
{
    auto o = std::make_shared<WhatIfOptions>();
    CLI::App* cmd = root.add_subcommand(
        "whatif", "Critical path of each step of a trace, and the step replayed under changes: ops scaled, the network "
                  "re-priced, a straggler removed, skew added");
    cmd->add_option("files", o->files,
                    "Trace files of one run (several: one per rank); a PyTorch execution trace (ExecutionTraceObserver's JSON) "
                    "beside its rank's profiler trace adds the data dependencies between that rank's threads")
        ->required();
    cmd->add_option("--scale", o->scale,
                    "PATTERN=FACTOR: multiply the time of matching ops; PATTERN is a category (compute, comm, "
                    "collective, send, recv, memcpy, memset, forward, backward, weight-grad, cpu) or a glob on op "
                    "names ('*gemm*', 'nccl*'); repeatable, matches multiply");
    cmd->add_option("--bandwidth-x", o->bandwidthX, "Network bandwidth times this (communication re-priced by the cost model)");
    cmd->add_option("--alpha-x", o->alphaX, "Network latency alpha times this");
    cmd->add_option("--alpha-us", o->alphaUs, "Network latency alpha after the change, in microseconds");
    cmd->add_option("--bandwidth-GBps", o->bandwidthGBps, "Network bandwidth after the change, in GB/s");
    cmd->add_option("--model", o->model,
                    "The network the trace ran on, as a fit file (`paralens fit --out`) or an nccl-tests log; needed for network changes "
                    "to traces that do not carry their own model (profiler traces)");
    cmd->add_option("--no-straggler", o->noStraggler,
                    "RANK: its GPU ops take the other ranks' median time for the same op name; repeatable");
    cmd->add_option("--skew", o->skew, "RANK:MICROSECONDS: that rank starts this much later; repeatable");
    cmd->add_flag("--align-clocks", o->alignClocks, "Align the ranks' clocks by their matched collectives first");
    cmd->add_option("--top", o->top, "How many of the critical path's longest ops to list per step")->capture_default_str();
    cmd->add_option("-o,--out", o->out, "Write the replayed trace here (.json or .json.gz)");
    cmd->add_flag("--json", o->json, "Machine-readable output on stdout");
    cmd->callback([o] { RunWhatIf(*o); });
}

} // namespace paralens::app
