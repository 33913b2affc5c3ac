// paralens render: one view drawn headless into a PNG (for slides and tests), or its frame times.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "common/Error.hpp"
#include "gui/ScenarioLoader.hpp"

#include <cstdio>
#include <memory>
#include <regex>

#if PARALENS_HAVE_GUI
#include "gui/Render.hpp"
#endif

namespace paralens::app {

namespace {

const char* const kViews = "timeline, flow, model, mfu, stats, autopar, planner or window";

struct RenderCliOptions {
    std::vector<std::string> files;
    std::string scenario;
    std::string link;
    std::string view = "timeline";
    std::string out;
    std::string size = "1280x720";
    int step = -2;
    int benchFrames = 0;
    bool presentation = false;
    bool dark = false;
    float scale = 1.0f;
    std::string colorBy;
    bool criticalPath = false;
    std::string whatIf;
    std::string gl = "auto";
    bool json = false;
};

void ParseSize(const std::string& text, int& width, int& height)
{
    std::smatch m;
    static const std::regex re(R"((\d{2,5})[xX](\d{2,5}))");
    Require(std::regex_match(text, m, re), "--size: expected WIDTHxHEIGHT in pixels, such as 1920x1080 (got '" + text + "')");
    width = std::stoi(m[1]);
    height = std::stoi(m[2]);
    Require(width >= 320 && height >= 200 && width <= 7680 && height <= 4320,
            "--size: from 320x200 to 7680x4320 (got '" + text + "')");
}

void RunRender(const RenderCliOptions& o)
{
    Require((o.files.empty() ? 0 : 1) + (o.scenario.empty() ? 0 : 1) + (o.link.empty() ? 0 : 1) == 1,
            "render: give one of trace FILEs, --scenario NAME or --link LINK");
    Require(o.view == "timeline" || o.view == "flow" || o.view == "model" || o.view == "mfu" || o.view == "stats" ||
                o.view == "autopar" || o.view == "planner" || o.view == "window",
            "--view: expected " + std::string(kViews) + " (got '" + o.view + "')");
    Require(!o.out.empty() || o.benchFrames > 0, "render: --out PNG is required (or --bench-frames N to time frames)");
    Require(o.benchFrames >= 0 && o.benchFrames <= 100000, "--bench-frames: from 0 to 100000");
    Require(o.scale >= 0.5f && o.scale <= 4.0f, "--scale: from 0.5 to 4 (got " + std::to_string(o.scale) + ")");
    Require(o.whatIf.empty() || !o.files.empty(), "--whatif replays trace files: give the FILEs (not --scenario)");
    Require(o.colorBy.empty() || o.colorBy == "category" || o.colorBy == "micro-batch",
            "--color-by: expected category or micro-batch (got '" + o.colorBy + "')");
    int width = 0, height = 0;
    ParseSize(o.size, width, height);
    if (!o.out.empty()) CheckWritable("--out", o.out);
    if (!o.scenario.empty()) (void)ResolveScenario(o.scenario); // a bad name is reported in every build
#if PARALENS_HAVE_GUI
    RenderOptions r;
    r.files = o.files;
    r.scenario = o.scenario;
    r.link = o.link;
    r.view = o.view;
    r.out = o.out;
    r.width = width;
    r.height = height;
    r.step = o.step;
    r.benchFrames = o.benchFrames;
    r.presentation = o.presentation;
    r.dark = o.dark;
    r.scale = o.scale;
    r.colorBy = o.colorBy;
    r.criticalPath = o.criticalPath;
    r.whatIf = o.whatIf;
    Require(ParseGlContextKind(o.gl, r.gl), "--gl: expected auto, window or egl (got '" + o.gl + "')");
    const nlohmann::json report = RenderToPng(r);
    if (o.json) {
        PrintJson(report);
        return;
    }
    if (!o.out.empty()) std::printf("wrote %s (%dx%d, %s view)\n", o.out.c_str(), width, height, o.view.c_str());
    if (report.contains("frameMs")) {
        const auto& f = report["frameMs"];
        std::printf("%d frames at %dx%d: build (CPU, ImGui) min %.3f ms, median %.3f ms, max %.3f ms; "
                    "with rendering median %.3f ms\n",
                    o.benchFrames, width, height, f["buildMin"].get<double>(), f["buildMedian"].get<double>(),
                    f["buildMax"].get<double>(), f["totalMedian"].get<double>());
    }
#else
    throw Error("render: this build of paralens has no window (libimgui-dev, libglfw3-dev or libstb-dev were missing "
                "when it was configured; run scripts/install-deps.sh and rebuild)");
#endif
}

} // namespace

void AddRenderCommand(CLI::App& root)
{
    auto opts = std::make_shared<RenderCliOptions>();
    CLI::App* cmd = root.add_subcommand("render", "Draw a view of a trace or a lecture scenario into a PNG, headless");
    cmd->add_option("files", opts->files, "Trace files to draw (or use --scenario)");
    cmd->add_option("--scenario,-s", opts->scenario, "A lecture scenario: default, ring-vs-tree, ... or a scenario .json file");
    cmd->add_option("--link", opts->link,
                    "The state a link describes (the web page's address, or its part after '#': "
                    "'scenario=ring-vs-tree&ranks=16&view=model'); parameters it cannot apply are listed in --json's linkProblems");
    cmd->add_option("--view,-v", opts->view, std::string("What to draw: ") + kViews)->capture_default_str();
    cmd->add_option("--out,-o", opts->out, "The PNG to write");
    cmd->add_option("--size", opts->size, "Image size WIDTHxHEIGHT in pixels")->capture_default_str();
    cmd->add_option("--step", opts->step, "Flow view: the step to show (0 = before the first; -1 = after the last)");
    cmd->add_option("--bench-frames", opts->benchFrames, "Draw N frames and print min/median/max frame times");
    cmd->add_flag("--presentation", opts->presentation, "Large fonts, high contrast, thick lines");
    cmd->add_flag("--dark", opts->dark, "Dark theme");
    cmd->add_option("--scale", opts->scale, "DPI scale of fonts and sizes (2 for a 4K screen at 200%)")->capture_default_str();
    cmd->add_option("--color-by", opts->colorBy, "Timeline colours: category or micro-batch (default: the scenario's)");
    cmd->add_flag("--critical-path", opts->criticalPath, "Outline each step's critical path on the timeline");
    cmd->add_option("--whatif", opts->whatIf,
                    "Also replay the files with these changes (PATTERN=FACTOR, ...: 'comm=0.5', '*gemm*=0.8'), drawn under them "
                    "(`paralens whatif --help` explains the rules)");
    cmd->add_option("--gl", opts->gl,
                    "The OpenGL context: window (a hidden window on the X display), egl (no display: a GPU's EGL driver, "
                    "or Mesa's software one) or auto (the display when there is one)")
        ->capture_default_str();
    cmd->add_flag("--json", opts->json, "Print the layout of what was drawn (and frame times) as JSON");
    cmd->callback([opts] { RunRender(*opts); });
}

} // namespace paralens::app
