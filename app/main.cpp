// paralens: with no subcommand the GUI (or, without a display, a headless summary); every
// subcommand runs headless. Errors a user can fix print one line and exit 2.
#include "cli/Commands.hpp"
#include "gpu/CudaEnvironment.hpp"

#include "common/Error.hpp"
#include "common/Memory.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#ifndef PARALENS_VERSION
#define PARALENS_VERSION "dev"
#endif

namespace paralens::app {
#if PARALENS_HAVE_GUI
// gui/GuiMain.cpp: the window's exit code, or -1 when it could not open (it says why on stderr).
int RunGui(const std::vector<std::string>& files, const std::string& link);
#endif
} // namespace paralens::app

namespace {

// Under mpirun every rank parses the same arguments: only rank 0 reports a usage error.
bool QuietRank()
{
    for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
        if (const char* v = std::getenv(var)) return std::string(v) != "0";
    return false;
}

[[maybe_unused]] bool HaveDisplay()
{
    const char* x = std::getenv("DISPLAY");
    const char* w = std::getenv("WAYLAND_DISPLAY");
    return (x && *x) || (w && *w);
}

int RunWindow(const std::vector<std::string>& files, const std::string& link)
{
    for (const std::string& f : files) {
        std::error_code ec;
        if (std::filesystem::exists(f, ec)) continue;
        std::fprintf(stderr, "paralens: '%s' is neither a file nor a subcommand (subcommands: simulate, sweep, pipeline, workload, run, merge, convert, analyze, fit, render; "
                             "see 'paralens --help')\n", f.c_str());
        return 2;
    }
#if PARALENS_HAVE_GUI
    if (HaveDisplay()) {
        const int rc = paralens::app::RunGui(files, link);
        if (rc >= 0) return rc;
        return paralens::app::RunHeadlessDefault(files, link, "the window could not open on this display");
    }
    return paralens::app::RunHeadlessDefault(files, link, "no display was found (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open");
#else
    return paralens::app::RunHeadlessDefault(files, link, "this build of paralens has no window");
#endif
}

} // namespace

int main(int argc, char** argv)
{
    paralens::KeepFreedMemoryForReuse();
    paralens::gpu::PrepareCudaEnvironment(); // before anything starts CUDA
    CLI::App app{"paralens: collectives, pipelines and their traces, next to the alpha-beta model.\n"
                 "With no subcommand it opens the window (or prints a headless summary without a display)."};
    bool showVersion = false, versionJson = false;
    app.add_flag("--version", showVersion, "Print the version and whether CUDA, NCCL and CUPTI support was built, then exit");
    app.add_flag("--json", versionJson, "With --version: print it as JSON");
    std::vector<std::string> files;
    app.add_option("files", files, "Trace files to open in the window");
    std::string link;
    app.add_option("--link", link,
                   "Open the window in the state a link describes: the web page's address, or its part after '#' "
                   "('scenario=ring-vs-tree&ranks=16&bytes=4MiB&view=model'); File > Copy link makes one");
    paralens::app::AddSimulateCommand(app);
    paralens::app::AddConvertCommand(app);
    paralens::app::AddPipelineCommand(app);
    paralens::app::AddWorkloadCommand(app);
    paralens::app::AddAnalyzeCommand(app);
    paralens::app::AddFitCommand(app);
    paralens::app::AddMergeCommand(app);
    paralens::app::AddAutoparCommand(app);
    paralens::app::AddPlanCommand(app);
    paralens::app::AddWhatIfCommand(app);
    paralens::app::AddDiffCommand(app);
    paralens::app::AddExtrapolateCommand(app);
    int runExitCode = 0;
    paralens::app::AddSweepCommand(app, runExitCode);
    paralens::app::AddRunCommand(app, runExitCode);
    paralens::app::AddRenderCommand(app);
    app.require_subcommand(0, 1);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::string sub;
        for (const CLI::App* s : app.get_subcommands()) sub = " " + s->get_name();
        if (!QuietRank()) std::fprintf(stderr, "paralens%s: %s (see 'paralens%s --help')\n", sub.c_str(), e.what(), sub.c_str());
        return 2;
    } catch (const paralens::Unavailable& e) {
        std::fprintf(stderr, "paralens: %s\n", e.what());
        return 3; // cannot run here (not built, no device): not a mistake in the input
    } catch (const paralens::Error& e) {
        if (!QuietRank()) std::fprintf(stderr, "paralens: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "paralens: internal error: %s\n", e.what());
        return 1;
    }
    if (showVersion) return paralens::app::PrintVersion(versionJson);
    if (versionJson && app.get_subcommands().empty()) {
        std::fprintf(stderr, "paralens: --json: use it with --version or after a subcommand (see 'paralens --help')\n");
        return 2;
    }
    if (app.get_subcommands().empty()) return RunWindow(files, link);
    return runExitCode;
}
