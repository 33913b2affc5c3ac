// The web page's platform layer: the only code that knows it runs in a browser. The main loop
// (requestAnimationFrame, skipping frames while nothing changes), the canvas following the
// window's size and devicePixelRatio, the wheel and pinch, files in (the page's picker and drops,
// written to the in-memory file system by page.js) and out (downloads), the clipboard, the URL's
// fragment (Link.hpp), and the functions page.js and the tests call. Everything drawn is the
// desktop's App (WindowFrame.cpp); simulations and file reads run on the App's worker threads
// (pthreads: the page's web workers), so the page never freezes.
#include "App.hpp"
#include "ExperimentRunner.hpp"
#include "JobRunner.hpp"
#include "ScenarioLoader.hpp"
#include "Theme.hpp"
#include "WindowFrame.hpp"

#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace paralens::app;

// page.js (window.ParalensPage) does the browser's half of each of these.
EM_JS(void, JsPickFiles, (), { ParalensPage.pickFiles(); });
EM_JS(void, JsDeliverFile, (const char* path, const char* name), { ParalensPage.deliverFile(UTF8ToString(path), UTF8ToString(name)); });
EM_JS(void, JsCopyText, (const char* text), { ParalensPage.copyText(UTF8ToString(text)); });
EM_JS(void, JsSetLink, (const char* link), { ParalensPage.setLink(UTF8ToString(link)); });
EM_JS(void, JsSetTitle, (const char* title), { document.title = UTF8ToString(title); });
EM_JS(void, JsFailed, (const char* message), { ParalensPage.failed(UTF8ToString(message)); });
EM_JS(void, JsFirstFrame, (), { ParalensPage.firstFrame(); });
EM_JS(double, JsPixelRatio, (), { return window.devicePixelRatio || 1; });
EM_JS(int, JsCanvasCssWidth, (), { return Module['canvas'].clientWidth | 0; });
EM_JS(int, JsCanvasCssHeight, (), { return Module['canvas'].clientHeight | 0; });
EM_JS(double, JsInputEvents, (), { return ParalensPage.inputEvents; });
// Not glfwSetWindowSize: emscripten's GLFW takes a size equal to the screen's as a request for
// fullscreen (a window in F11 at devicePixelRatio 1 never resized). This resizes the canvas and
// tells GLFW through its resize listener, as a resize of the page does.
EM_JS(void, JsSetCanvasSize, (int width, int height), { Browser.setCanvasSize(width, height); });
EM_JS(char*, JsInitialLink, (), { return allocateUTF8(location.hash.substring(1)); });

struct Page {
    GLFWwindow* window = nullptr;
    std::unique_ptr<JobRunner> jobs;
    std::unique_ptr<App> app;
    float scale = 1.0f;         // devicePixelRatio: font sizes and widths, as a desktop's monitor scale
    double seenInputs = -1;     // page.js's input counter when the last frame was drawn
    int extraFrames = 3;        // frames after an event, for ImGui to settle (hover, popups)
    uint64_t frames = 0;
    std::vector<FrameTimes> frameMs; // the last 240 drawn frames
    std::string link, title;
};

Page* g_page = nullptr;

// The canvas's backing store follows its CSS size times devicePixelRatio (the browser's zoom and
// the screen's density), and the fonts follow the ratio. True when anything changed.
bool FollowCanvas(Page& p)
{
    const float dpr = static_cast<float>(std::clamp(JsPixelRatio(), 0.5, 4.0));
    const int w = std::max(1, static_cast<int>(std::lround(JsCanvasCssWidth() * dpr)));
    const int h = std::max(1, static_cast<int>(std::lround(JsCanvasCssHeight() * dpr)));
    int curW = 0, curH = 0;
    glfwGetWindowSize(p.window, &curW, &curH);
    bool changed = false;
    if (w != curW || h != curH) {
        JsSetCanvasSize(w, h);
        changed = true;
    }
    if (dpr != p.scale) {
        p.scale = dpr;
        ScaleWindow(*p.app, p.scale);
        changed = true;
    }
    return changed;
}

void Frame()
{
    Page& p = *g_page;
    p.app->Poll();
    const bool resized = FollowCanvas(p);
    const double inputs = JsInputEvents();
    if (inputs != p.seenInputs || resized) {
        p.seenInputs = inputs;
        p.extraFrames = 3;
    } else if (!p.app->NeedsFrames() && p.extraFrames <= 0) {
        return; // nothing moved and nothing runs: the page costs no CPU
    }
    p.extraFrames = std::max(0, p.extraFrames - 1);
    const FrameTimes times = DrawWindowFrame(p.window, *p.app, *p.jobs);
    if (p.frameMs.size() >= 240) p.frameMs.erase(p.frameMs.begin());
    p.frameMs.push_back(times);
    if (++p.frames == 1) JsFirstFrame();
    if (p.app->WindowTitle() != p.title) JsSetTitle((p.title = p.app->WindowTitle()).c_str());
    if (const std::string& link = p.app->CurrentLink(); link != p.link) JsSetLink((p.link = link).c_str());
}

PlatformHooks BrowserHooks()
{
    PlatformHooks h;
    h.pickFiles = [] { JsPickFiles(); };
    h.deliverFile = [](const std::string& path, const std::string& name) { JsDeliverFile(path.c_str(), name.c_str()); };
    h.copyText = [](const std::string& text) { JsCopyText(text.c_str()); };
    h.canQuit = false;
    return h;
}

// Medians of the frames' build and draw times.
nlohmann::json FrameStats(const std::vector<FrameTimes>& frames)
{
    auto median = [&](double FrameTimes::*field) {
        std::vector<double> v;
        for (const FrameTimes& f : frames) v.push_back(f.*field);
        if (v.empty()) return 0.0;
        std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    return {{"build", median(&FrameTimes::buildMs)}, {"draw", median(&FrameTimes::drawMs)}, {"count", frames.size()}};
}

nlohmann::json RunsJson(const App& app)
{
    nlohmann::json runs = nlohmann::json::array();
    if (auto snap = app.CurrentSnapshot())
        for (const auto& r : snap->runs)
            runs.push_back({{"title", r->title}, {"kind", Name(r->experiment.kind)}, {"devices", r->trace->Devices().size()},
                            {"spans", r->trace->SpanCount()}});
    return runs;
}

} // namespace

// Called by page.js and the browser tests (window.paralens).
extern "C" {

EMSCRIPTEN_KEEPALIVE void paralens_open_files(const char* pathsJson)
{
    const auto paths = nlohmann::json::parse(pathsJson).get<std::vector<std::string>>();
    if (g_page && !paths.empty()) g_page->app->OpenFiles(paths);
}

EMSCRIPTEN_KEEPALIVE void paralens_open_link(const char* link)
{
    if (g_page && link != g_page->link) g_page->app->OpenLink(link);
}

EMSCRIPTEN_KEEPALIVE void paralens_wheel(double dx, double dy)
{
    if (g_page) ImGui_ImplGlfw_ScrollCallback(g_page->window, dx, dy);
}

// What the page shows now, for tests and the page's status line. The string lives until the next call.
EMSCRIPTEN_KEEPALIVE const char* paralens_state()
{
    static std::string text;
    if (!g_page) return "{}";
    const Page& p = *g_page;
    const App& app = *p.app;
    int w = 0, h = 0;
    glfwGetWindowSize(p.window, &w, &h);
    const JobStatus file = p.jobs->Status("file"), sim = p.jobs->Status("simulate");
    nlohmann::json experiments = nlohmann::json::array();
    for (const Experiment& e : app.Experiments()) experiments.push_back(ExperimentJson(e));
    nlohmann::json scenarios = nlohmann::json::array();
    for (const Scenario& s : BuiltinScenarios()) scenarios.push_back(s.name);
    nlohmann::json j = {{"frames", p.frames},
                        {"scenarios", scenarios},
                        {"link", p.link},
                        {"linkProblems", app.LinkProblems()},
                        {"title", app.WindowTitle()},
                        {"experiments", experiments},
                        {"view", ViewJson(app.Settings())},
                        {"runs", RunsJson(app)},
                        {"error", app.ErrorMessage()},
                        {"busy", p.jobs->Busy()},
                        {"fileJob", {{"running", file.running}, {"label", file.label}, {"progress", file.progress}}},
                        {"simulating", sim.running},
                        {"canvas", {w, h}},
                        {"scale", p.scale},
                        {"dark", app.Dark()},
                        {"presentation", app.Presentation()},
                        {"backends", {{"processes", BackendAvailability(Backend::Processes)}, {"gpu", BackendAvailability(Backend::Gpu)}}},
                        {"layout", app.Layout("window")},
                        {"planner", app.Settings().tab == ViewTab::Planner ? app.Layout("planner") : nlohmann::json()}, // the rows the Planner tab shows
                        {"frameMs", FrameStats(p.frameMs)}};
    text = j.dump();
    return text.c_str();
}

} // extern "C"

int main()
{
    glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "GLFW error %d: %s\n", code, text); });
    if (!glfwInit()) {
        JsFailed("GLFW did not start in this browser.");
        return 1;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    // An opaque canvas with no depth or stencil buffer: ImGui needs neither, and each costs the
    // browser a clear and a blend of the whole canvas every frame.
    glfwWindowHint(GLFW_ALPHA_BITS, 0);
    glfwWindowHint(GLFW_DEPTH_BITS, 0);
    glfwWindowHint(GLFW_STENCIL_BITS, 0);
    auto* page = new Page; // lives as long as the page
    page->window = glfwCreateWindow(std::max(1, JsCanvasCssWidth()), std::max(1, JsCanvasCssHeight()), "paralens", nullptr, nullptr);
    if (!page->window) {
        JsFailed("This browser gave the page no WebGL2 context (paralens draws with WebGL2).");
        return 1;
    }
    glfwMakeContextCurrent(page->window);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    page->scale = static_cast<float>(std::clamp(JsPixelRatio(), 0.5, 4.0));
    LoadFonts(page->scale); // DejaVu Sans, packed with the page at the desktop's path
    ApplyTheme(false, false, page->scale);
    ImGui_ImplGlfw_InitForOpenGL(page->window, true);
    ImGui_ImplOpenGL3_Init("#version 300 es");
    page->jobs = std::make_unique<JobRunner>();
    page->app = std::make_unique<App>(page->jobs.get());
    page->app->SetPlatform(BrowserHooks());
    char* link = JsInitialLink();
    if (link && *link) page->app->OpenLink(link);
    else page->app->LoadScenario(*FindScenario("default"));
    std::free(link);
    g_page = page;
    emscripten_set_main_loop(Frame, 0, false);
    return 0;
}
