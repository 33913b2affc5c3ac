// What `paralens` does when the window cannot open (no display, or built without the GUI): a
// short lesson from the simulator, a summary of any files given, and how to get the rest.
#include "Commands.hpp"

#include "gui/Link.hpp"
#include "gui/RunBuilder.hpp"
#include "gui/ScenarioLoader.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "sim/Simulator.hpp"
#include "trace/TraceFile.hpp"

#include <cstdio>

namespace paralens::app {

namespace {

void PrintDemo()
{
    const core::ClusterModel cluster = core::ClusterModel::FromUnits(5.0, 100.0, 0.0);
    const int p = 8;
    std::printf("Allreduce on %d modelled ranks (alpha 5 us, 100 GB/s): simulated time per algorithm\n\n", p);
    std::printf("  %10s", "size");
    for (auto a : core::AlgorithmsFor(core::Collective::AllReduce)) std::printf(" %19s", std::string(core::Name(a)).c_str());
    std::printf("   fastest\n");
    for (uint64_t bytes : {uint64_t{8}, uint64_t{64} << 10, uint64_t{1} << 20, uint64_t{64} << 20, uint64_t{1} << 30}) {
        std::printf("  %10s", core::FormatBytes(bytes).c_str());
        double best = 1e300;
        std::string bestName;
        for (auto a : core::AlgorithmsFor(core::Collective::AllReduce)) {
            core::CollectiveSpec spec{core::Collective::AllReduce, a, p, bytes, 0, 4};
            double t = core::Simulate(core::BuildPlan(spec), cluster, {false}).seconds;
            std::printf(" %19s", core::FormatSeconds(t).c_str());
            if (t < best) {
                best = t;
                bestName = core::Name(a);
            }
        }
        std::printf("   %s\n", bestName.c_str());
    }
    std::printf("\nSmall messages pay alpha per step: recursive doubling's log(p) steps win (the ring takes\n"
                "2(p-1)). Large ones pay bandwidth: the ring and halving-doubling send only 2(p-1)/p of the\n"
                "vector per rank and win.\n");
}

void PrintFileSummary(const std::string& path)
{
    try {
        core::Trace t = core::ReadTraceFile(path);
        size_t collectives = 0;
        for (const core::Track& track : t.Tracks())
            for (const core::Span& s : track.spans) collectives += s.category == core::SpanCategory::Collective;
        std::string extra = collectives ? ", " + std::to_string(collectives) + " collective spans" : "";
        std::printf("%s: %s trace, %zu devices, %zu tracks, %zu spans%s, %zu flows, %s long\n", path.c_str(),
                    std::string(core::Name(t.Meta().source)).c_str(), t.Devices().size(), t.Tracks().size(),
                    t.SpanCount(), extra.c_str(), t.Flows().size(),
                    core::FormatSeconds((t.EndNs() - t.BeginNs()) * 1e-9).c_str());
    } catch (const Error& e) {
        std::fprintf(stderr, "paralens: %s\n", e.what());
    }
}

// What a link opens: its scenario, the experiments after its changes, what it skipped, and the
// command that draws it.
void PrintLink(const std::string& link)
{
    const LinkState state = ParseLink(link);
    const Scenario* s = FindScenario(state.scenario);
    std::printf("The link opens the scenario \"%s\" (%s) on the %s tab:\n", state.scenario.c_str(), s ? s->title.c_str() : "?",
                std::string(Name(state.view.tab)).c_str());
    for (const Experiment& e : state.experiments) std::printf("  %s%s\n", e.label.empty() ? "" : (e.label + ": ").c_str(), Describe(e).c_str());
    for (const std::string& p : state.problems) std::printf("  %s\n", p.c_str());
    std::printf("Drawn without a display:\n  paralens render --link '%s' --view window --out window.png\n\n", MakeLink(state).c_str());
}

} // namespace

int RunHeadlessDefault(const std::vector<std::string>& files, const std::string& link, const std::string& reason)
{
    std::printf("paralens: %s; here is the headless summary instead.\n\n", reason.c_str());
    if (!link.empty()) PrintLink(link);
    else if (files.empty()) PrintDemo();
    for (const std::string& f : files) PrintFileSummary(f);
    std::printf("\nMore:\n"
                "  paralens simulate --collective allreduce --algorithm ring --ranks 8 --bytes 64MiB\n"
                "  paralens sweep --collective allreduce --algorithm all --ranks 16\n"
                "  paralens pipeline --schedule 1f1b --stages 4 --microbatches 8   (bubbles, activations, a text Gantt)\n"
                "  paralens workload --kind dp --straggler 1:2                     (training steps)\n"
                "  paralens run --backend processes --ranks 4 --bytes 4MiB         (a ring allreduce for real, 4 processes, next to the model)\n"
                "  paralens run --backend processes --workload pipeline --schedule 1f1b   (stage processes doing real GEMMs)\n"
                "  paralens simulate ... --out trace.json   (then open trace.json in https://ui.perfetto.dev)\n"
                "  paralens analyze TRACE...                (busy/idle, bubbles, overlap, busbw, skew across ranks)\n"
                "  paralens fit NCCL_TESTS.log              (alpha and bandwidth, per-row errors)\n"
                "  paralens whatif TRACE... --scale 'nccl*=0.5'   (each step's critical path; the step replayed under changes)\n"
                "  paralens diff A.json B.json              (two runs op by op, the largest regressions first)\n"
                "  paralens SUBCOMMAND --help               (every subcommand takes --json)\n");
#if PARALENS_HAVE_GUI
    std::printf("The window's views as pictures, without a display (EGL: Mesa's, or a GPU driver's):\n"
                "  paralens render --scenario default --view timeline --out timeline.png\n"
                "  paralens render trace.json --view stats --out stats.png --size 1920x1080\n"
                "  (views: timeline, flow, model, mfu, stats, window; scenarios: %s)\n",
                ScenarioNamesList().c_str());
#else
    std::printf("This build has no window, so no `paralens render` either: install libimgui-dev, libglfw3-dev and\n"
                "libstb-dev (scripts/install-deps.sh) and rebuild for the window and its PNG renderer.\n");
#endif
    std::printf("The desktop window needs a display: run paralens on a desktop, or under X forwarding.\n"
                "The same window also runs in a browser: see docs/web.md (scripts/install-deps-web.sh,\n"
                "cmake --preset web, cmake --build --preset web; then serve build/web).\n");
    return 0;
}

} // namespace paralens::app
