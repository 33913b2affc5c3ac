// paralens convert: any trace paralens reads into a paralens trace file (Chrome JSON, .gz or not).
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceFile.hpp"

#include <cstdio>
#include <memory>

namespace paralens::app {

namespace {

struct ConvertOptions {
    std::string in;
    std::string out;
    bool apiSpans = false;
    bool json = false;
};

void RunConvert(const ConvertOptions& o)
{
    Require(core::EndsWith(o.out, ".json") || core::EndsWith(o.out, ".json.gz"),
            "--out: '" + o.out + "' must end in .json or .json.gz (paralens writes Chrome trace JSON)");
    CheckWritable("--out", o.out);
    core::ReadOptions options = ReadOptionsWithProgress();
    options.apiSpans = o.apiSpans;
    core::Trace trace = core::ReadTraceFile(o.in, options);
    core::WriteTraceFile(trace, o.out);
    if (o.json) {
        PrintJson({{"in", o.in}, {"out", o.out}, {"source", core::Name(trace.Meta().source)},
                   {"devices", trace.Devices().size()}, {"tracks", trace.Tracks().size()},
                   {"spans", trace.SpanCount()}, {"flows", trace.Flows().size()}, {"counters", trace.Counters().size()}});
        return;
    }
    std::printf("%s -> %s: %zu devices, %zu tracks, %zu spans, %zu flows, %zu counters (source: %s)\n", o.in.c_str(),
                o.out.c_str(), trace.Devices().size(), trace.Tracks().size(), trace.SpanCount(), trace.Flows().size(),
                trace.Counters().size(), std::string(core::Name(trace.Meta().source)).c_str());
}

} // namespace

void AddConvertCommand(CLI::App& root)
{
    auto opts = std::make_shared<ConvertOptions>();
    CLI::App* cmd = root.add_subcommand("convert", "Convert a trace into a paralens trace file (Chrome JSON)");
    cmd->add_option("in", opts->in, "Input trace: paralens, Chrome/Perfetto or PyTorch profiler JSON (optionally .gz), an "
                                    "nccl-tests log, an Nsight Systems report (.nsys-rep, or its .sqlite export)")->required();
    cmd->add_option("--out,-o", opts->out, "Output file: .json, or .json.gz compressed")->required();
    cmd->add_flag("--api-spans", opts->apiSpans, "Nsight Systems: keep the CUDA runtime calls as host spans, each with an arrow "
                                                 "to the work it launched");
    cmd->add_flag("--json", opts->json, "Machine-readable summary on stdout");
    cmd->callback([opts] { RunConvert(*opts); });
}

} // namespace paralens::app
