// The views' mouse handling, driven through Dear ImGui without a window or a GPU: an ImGui context
// builds frames from scripted input (positions, buttons, wheel), and the views' layout reports
// what changed.
#include "App.hpp"
#include "FlowView.hpp"
#include "ModelView.hpp"
#include "PlotUtil.hpp"
#include "RunBuilder.hpp"
#include "ScenarioLoader.hpp"
#include "Theme.hpp"
#include "TimelineView.hpp"

#include <catch2/catch.hpp>
#include <imgui.h>

#include "trace/TraceFile.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace paralens::app;

namespace {

// An ImGui context for the duration of a test, with the app's fonts and theme.
struct ImGuiSession {
    ImGuiSession()
    {
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        io.DisplaySize = ImVec2(1280, 720);
        io.DeltaTime = 1.0f / 60.0f;
        io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
        LoadFonts(1.0f);
        ApplyTheme(false, false, 1.0f);
    }
    ~ImGuiSession() { ImGui::DestroyContext(); }

    template <class Draw>
    void Frame(ImVec2 mouse, bool leftDown, float wheel, Draw draw)
    {
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = mouse;
        io.MouseDown[0] = leftDown;
        io.MouseWheel = wheel;
        ImGui::NewFrame();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(io.DisplaySize);
        ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0)); // view origin = window origin, as in render
        ImGui::Begin("test", nullptr, ImGuiWindowFlags_NoDecoration);
        ImGui::PopStyleVar();
        draw(io.DisplaySize);
        ImGui::End();
        ImGui::Render();
    }
};

// A fresh folder under the system temp folder, removed at the end.
struct CliTempDirLike {
    std::string path;
    CliTempDirLike()
    {
        path = (std::filesystem::temp_directory_path() / ("paralens-view-test-" + std::to_string(::getpid()))).string();
        std::filesystem::create_directories(path);
    }
    ~CliTempDirLike() { std::filesystem::remove_all(path); }
};

std::shared_ptr<const Snapshot> ScenarioSnapshot(const char* name)
{
    const Scenario* s = FindScenario(name);
    REQUIRE(s);
    return BuildSnapshot(s->experiments, nullptr);
}

struct Window {
    double begin, end, x0, x1;
    double NsAt(double x) const { return begin + (x - x0) / (x1 - x0) * (end - begin); }
};

Window SectionWindow(const TimelineView& view)
{
    const auto j = view.Layout()["sections"][0];
    return {j["windowBeginNs"], j["windowEndNs"], j["plotX0"], j["plotX1"]};
}

} // namespace

TEST_CASE("timeline: the wheel zooms around the cursor, a drag pans, a double-click fits", "[gui]")
{
    ImGuiSession session;
    ViewSettings settings;
    TimelineView view;
    view.SetSnapshot(ScenarioSnapshot("gpipe-vs-1f1b"), settings);
    view.FitAll();
    const ImVec2 away(-1000, -1000);
    auto draw = [&](ImVec2 size) { view.Draw(settings, size); };
    session.Frame(away, false, 0, draw);
    const Window fit = SectionWindow(view);
    REQUIRE(fit.end > fit.begin);
    // Zoom in with the cursor a quarter of the way across a stage's row.
    const ImVec2 at(std::floor(static_cast<float>(fit.x0 + 0.25 * (fit.x1 - fit.x0))), 100); // ImGui floors the mouse
    const double under = fit.NsAt(at.x);
    session.Frame(at, false, 1.0f, draw);
    session.Frame(at, false, 0, draw);
    const Window zoomed = SectionWindow(view);
    CHECK(zoomed.end - zoomed.begin == Approx((fit.end - fit.begin) * 0.8).epsilon(1e-6));
    CHECK(zoomed.NsAt(at.x) == Approx(under).epsilon(1e-6));
    // Drag 100 pixels to the left: the view moves 100 pixels' worth of time later.
    const double nsPerPx = (zoomed.end - zoomed.begin) / (zoomed.x1 - zoomed.x0);
    session.Frame(at, true, 0, draw);
    for (int i = 1; i <= 4; ++i) session.Frame(ImVec2(at.x - 25.0f * i, at.y), true, 0, draw);
    session.Frame(ImVec2(at.x - 100, at.y), false, 0, draw);
    const Window panned = SectionWindow(view);
    CHECK(panned.begin - zoomed.begin == Approx(100 * nsPerPx).epsilon(1e-3));
    // A double-click on empty space (the ruler) fits everything again.
    const ImVec2 ruler(at.x, 5);
    session.Frame(ruler, true, 0, draw);
    session.Frame(ruler, false, 0, draw);
    session.Frame(ruler, true, 0, draw);
    session.Frame(ruler, false, 0, draw);
    session.Frame(away, false, 0, draw);
    const Window refit = SectionWindow(view);
    CHECK(refit.begin == Approx(fit.begin));
    CHECK(refit.end == Approx(fit.end));
    // A double-click on a span fits it: GPipe's stage 0 runs F0 first, 1 ms long.
    const auto row = view.Layout()["sections"][0]["rows"][0];
    const ImVec2 f0(static_cast<float>(refit.x0 + (0.5e6 - refit.begin) / (refit.end - refit.begin) * (refit.x1 - refit.x0)),
                    static_cast<float>((row["y0"].get<double>() + row["y1"].get<double>()) / 2));
    session.Frame(f0, false, 0, draw);
    session.Frame(f0, true, 0, draw);
    session.Frame(f0, false, 0, draw);
    session.Frame(f0, true, 0, draw);
    session.Frame(f0, false, 0, draw);
    const Window span = SectionWindow(view);
    CHECK(span.begin == Approx(-0.1e6).margin(1.0)); // 10% margins around [0, 1 ms]
    CHECK(span.end == Approx(1.1e6).margin(1.0));
}

TEST_CASE("timeline: clicking a device's name expands it into its lanes", "[gui]")
{
    ImGuiSession session;
    ViewSettings settings;
    settings.expandTracks = false;
    TimelineView view;
    view.SetSnapshot(ScenarioSnapshot("default"), settings); // the ring: send and recv lanes
    auto draw = [&](ImVec2 size) { view.Draw(settings, size); };
    session.Frame(ImVec2(-1000, -1000), false, 0, draw);
    auto rows = view.Layout()["sections"][0]["rows"];
    REQUIRE(rows[0]["kind"] == "device");
    const ImVec2 name(20, static_cast<float>((rows[0]["y0"].get<double>() + rows[0]["y1"].get<double>()) / 2));
    session.Frame(name, true, 0, draw);
    session.Frame(name, false, 0, draw);
    session.Frame(ImVec2(-1000, -1000), false, 0, draw);
    rows = view.Layout()["sections"][0]["rows"];
    CHECK(rows[0]["kind"] == "device-header");
    CHECK(rows[1]["kind"] == "lane");
    CHECK(rows[2]["kind"] == "lane");
    CHECK(rows[3]["kind"] == "device"); // rank 1 stays folded
}

TEST_CASE("flow view: a scenario's step applies, -1 is the last step", "[gui]")
{
    ImGuiSession session;
    ViewSettings settings;
    FlowView view;
    auto snap = ScenarioSnapshot("seven-collectives");
    auto draw = [&](ImVec2 size) { view.Draw(settings, size); };
    view.SetSnapshot(snap, 2, true);
    session.Frame(ImVec2(-1000, -1000), false, 0, draw);
    CHECK(view.Layout()["step"] == 2);
    CHECK(settings.flowStep == 2);
    view.SetSnapshot(snap, -1, true);
    session.Frame(ImVec2(-1000, -1000), false, 0, draw);
    CHECK(view.Layout()["step"] == 6); // allreduce on 4 ranks: 2 (p-1) steps, the longest
    CHECK(view.Layout()["panels"].size() == 7);
}

TEST_CASE("model view: a new snapshot drops what the last frame drew, so its layout never reads the old runs", "[gui]")
{
    ImGuiSession session;
    ViewSettings settings;
    ModelView view;
    auto draw = [&](ImVec2 size) { view.Draw(settings, size); };
    view.SetSnapshot(ScenarioSnapshot("two-level-allreduce"));
    session.Frame(ImVec2(-1000, -1000), false, 0, draw);
    CHECK(view.Layout()["ranks"] == 16);
    CHECK(view.Layout()["twoLevel"] == true);
    // The app publishes a snapshot between frames (the web page's state is read there too); the
    // old one's runs are freed with it.
    view.SetSnapshot(ScenarioSnapshot("ring-vs-tree"));
    CHECK_FALSE(view.Layout().contains("ranks"));
    session.Frame(ImVec2(-1000, -1000), false, 0, draw);
    CHECK(view.Layout()["ranks"] == 8);
    CHECK(view.Layout()["twoLevel"] == false);
}

TEST_CASE("app: a bad file opens a dialog naming it, and the app keeps what it showed", "[gui]")
{
    ImGuiSession session;
    JobRunner jobs;
    App app(&jobs);
    app.LoadScenario(*FindScenario("gpipe-vs-1f1b"));
    auto settle = [&] {
        for (int i = 0; i < 500 && (jobs.Busy() || !app.CurrentSnapshot()); ++i) {
            app.Poll();
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        app.Poll();
    };
    settle();
    const auto before = app.CurrentSnapshot();
    REQUIRE(before);
    CliTempDirLike dir;
    const std::string bad = dir.path + "/broken.json";
    { std::ofstream(bad) << "{\"traceEvents\": [ {\"ph\": \"X\", \"ts\": oops"; }
    app.OpenFiles({bad});
    settle();
    session.Frame(ImVec2(-1000, -1000), false, 0, [&](ImVec2 size) { app.Frame(size); });
    CHECK_THAT(app.ErrorMessage(), Catch::Contains("broken.json"));
    CHECK(app.CurrentSnapshot() == before);
    REQUIRE(app.Experiments().size() == 2);
    CHECK(app.Experiments()[0].kind == ExperimentKind::Pipeline);
    // A good file replaces the runs.
    const std::string good = dir.path + "/good.json";
    paralens::core::WriteTraceFile(*before->runs[0]->trace, good);
    app.OpenFiles({good});
    settle();
    REQUIRE(app.CurrentSnapshot() != before);
    REQUIRE(app.CurrentSnapshot()->runs.size() == 1);
    CHECK(app.CurrentSnapshot()->runs[0]->experiment.kind == ExperimentKind::File);
    CHECK(app.CurrentSnapshot()->runs[0]->bubbleFraction == Approx(3.0 / 11.0).epsilon(1e-6)); // pipeline metadata kept
}

TEST_CASE("plot axes' labels never switch to an exponent", "[gui]")
{
    char b[64];
    CHECK(std::string(FormatValue(b, sizeof b, 1000.0, AxisUnit::Seconds)) == "1000 s"); // the model view of 2048 ranks: "1e+03 s"
    CHECK(std::string(FormatValue(b, sizeof b, 0.9998, AxisUnit::Seconds)) == "1000 ms"); // the MFU view: "1e+03 ms"
    CHECK(std::string(FormatValue(b, sizeof b, 12345.0, AxisUnit::Seconds)) == "12345 s");
    CHECK(std::string(FormatValue(b, sizeof b, 0.0125, AxisUnit::Seconds)) == "12.5 ms");
    CHECK(std::string(FormatValue(b, sizeof b, 2.5e-7, AxisUnit::Seconds)) == "250 ns");
    CHECK(std::string(FormatValue(b, sizeof b, 1600.0, AxisUnit::GBps)) == "1600 GB/s");
    CHECK(std::string(FormatValue(b, sizeof b, 999.0, AxisUnit::Plain)) == "999");
    CHECK(std::string(FormatValue(b, sizeof b, 4096.0, AxisUnit::Count)) == "4096");
}
