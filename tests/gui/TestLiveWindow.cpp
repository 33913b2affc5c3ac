// The window running real workloads: the App with its JobRunner, driven through Dear ImGui frames
// (no GL needed), the Run and Stop buttons clicked where the controls drew them. The processes
// backend starts mpirun with the built paralens (PARALENS_EXE), 4 ranks.
#include "App.hpp"
#include "ScenarioLoader.hpp"
#include "Theme.hpp"
#include "../live/LiveTestSupport.hpp"

#include <catch2/catch.hpp>
#include <imgui.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

using namespace paralens;
using namespace paralens::app;

namespace {

struct Session {
    Session()
    {
        ::setenv("PARALENS_EXE", PARALENS_BINARY, 1);
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        io.DisplaySize = ImVec2(1280, 720);
        io.DeltaTime = 1.0f / 60.0f;
        io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
        LoadFonts(1.0f);
        ApplyTheme(false, false, 1.0f);
    }
    ~Session() { ImGui::DestroyContext(); }

    void Frame(App& app, ImVec2 mouse = ImVec2(-1, -1), bool down = false)
    {
        app.Poll();
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = mouse;
        io.MouseDown[0] = down;
        ImGui::NewFrame();
        app.Frame(io.DisplaySize);
        ImGui::Render();
    }

    // Clicks the Run / Stop button where the last frame drew it.
    void ClickRunButton(App& app)
    {
        const nlohmann::json layout = app.Layout("window");
        REQUIRE(layout.contains("runButton"));
        const ImVec2 at(layout["runButton"][0].get<float>() + layout["runButton"][2].get<float>() / 2,
                        layout["runButton"][1].get<float>() + layout["runButton"][3].get<float>() / 2);
        Frame(app, at, false);
        Frame(app, at, true);
        Frame(app, at, false);
    }

    // Frames every 5 ms until `done` or the deadline.
    template <class Done>
    bool FramesUntil(App& app, Done done, double seconds = 120)
    {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (std::chrono::steady_clock::now() < end) {
            Frame(app);
            if (done()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return false;
    }
};

// Loads a scenario (its first experiment on the processes backend) and waits for its simulation.
void Load(Session& s, App& app, JobRunner& jobs, Scenario scenario)
{
    app.LoadScenario(scenario);
    REQUIRE(s.FramesUntil(app, [&] { return !jobs.Busy() && app.CurrentSnapshot(); }, 60));
    s.Frame(app);
}

std::vector<pid_t> RankPids(const RunResult& run) { return ::RankPids(*run.trace); }

// The run ended and its last result is on screen (the final analysis applied).
bool Settled(const App& app, const JobRunner& jobs) { return !app.Live().running && !jobs.Busy() && !app.Live().message.empty(); }

const RunResult& Run0(const App& app) { return *app.CurrentSnapshot()->runs[0]; }

size_t MeasuredRowsWithSpans(const RunResult& run)
{
    size_t rows = 0;
    for (const core::Device& d : run.trace->Devices()) {
        size_t spans = 0;
        for (uint32_t t : d.tracks) spans += run.trace->Tracks()[t].spans.size();
        rows += spans > 0 ? 1 : 0;
    }
    return rows;
}

// Loads live-ring-processes with a run too long to end by itself, clicks Run and waits until all 4
// ranks have measured spans on screen; returns their PIDs.
std::vector<pid_t> StartLongRun(Session& s, App& app, JobRunner& jobs)
{
    Scenario sc = *FindScenario("live-ring-processes");
    sc.experiments[0].live.iterations = 100000;
    Load(s, app, jobs, sc);
    s.ClickRunButton(app);
    REQUIRE(s.FramesUntil(app, [&] { return Run0(app).measured && RankPids(Run0(app)).size() == 4 && RankPids(Run0(app))[3] > 0 &&
                                            MeasuredRowsWithSpans(Run0(app)) == 4; }));
    return RankPids(Run0(app));
}

} // namespace

TEST_CASE("Run in the controls: a 4-process ring allreduce sweep grows live, ends checked and fitted", "[gui][live]")
{
    Session s;
    JobRunner jobs;
    App app(&jobs);
    Load(s, app, jobs, *FindScenario("live-ring-processes"));
    CHECK_FALSE(Run0(app).measured); // the prediction until Run is pressed
    s.ClickRunButton(app);
    REQUIRE(app.Live().running);
    REQUIRE(s.FramesUntil(app, [&] { return Settled(app, jobs); }));
    INFO(app.Live().message);
    CHECK(app.LiveSnapshotsShown() >= 2);
    CHECK_FALSE(app.Live().failed);
    CHECK_THAT(app.Live().message, Catch::Contains("results checked: correct"));
    const RunResult& run = Run0(app);
    CHECK(run.measured);
    CHECK(run.trace->Devices().size() == 4);
    CHECK(MeasuredRowsWithSpans(run) == 4);
    CHECK(run.simulatedSeconds > 0);   // the measured median
    CHECK(run.predictedSeconds > 0);   // the model's, beside it
    CHECK(run.trace->Flows().size() > 0);
    // The scenario sweeps 4 KiB .. 4 MiB: every size's time on the model view, alpha and beta fitted.
    REQUIRE(run.model);
    CHECK(run.model->measuredBytes.size() == 6);
    CHECK(run.model->fittedToMeasurements);
    CHECK(run.model->fitBandwidthGBps > 0);
    REQUIRE(run.fitCost); // View > Predictions from the fitted alpha and beta
    CHECK(run.fitCost->alphaSec == Approx(run.model->fitAlphaUs * 1e-6));
    for (pid_t p : RankPids(run)) CHECK(Gone(p));
}

TEST_CASE("Run in the controls: 1F1B on 4 stage processes shows its bubble next to the formula", "[gui][live]")
{
    Session s;
    JobRunner jobs;
    App app(&jobs);
    Scenario sc = *FindScenario("live-1f1b-processes");
    sc.experiments[0].pipeline.forwardMs = 5; // quicker than the lecture's 20 ms
    Load(s, app, jobs, sc);
    s.ClickRunButton(app);
    REQUIRE(s.FramesUntil(app, [&] { return Settled(app, jobs); }));
    INFO(app.Live().message);
    CHECK(app.LiveSnapshotsShown() >= 2);
    CHECK_FALSE(app.Live().failed);
    const RunResult& run = Run0(app);
    CHECK(run.measured);
    CHECK(MeasuredRowsWithSpans(run) == 4);
    CHECK(run.bubbleFraction > 0.05);
    CHECK(run.bubbleFormula == Approx(3.0 / 11.0));
    CHECK(run.mfu.available);
    REQUIRE(run.peakActivations.size() == 4);
    CHECK(run.peakActivations[0] == 4); // 1F1B keeps D - s micro-batches on stage s
    CHECK(run.peakActivations[3] == 1);
}

TEST_CASE("Run in the controls: data-parallel steps on worker processes, allreduce and parameter server, measured beside the model", "[gui][live]")
{
    Session s;
    JobRunner jobs;
    App app(&jobs);
    for (int which : {0, 1}) { // the scenario's allreduce, then its parameter server
        Scenario sc = *FindScenario("live-dp-vs-ps-processes");
        std::swap(sc.experiments[0], sc.experiments[static_cast<size_t>(which)]);
        sc.experiments[0].training.forwardMs = 2;
        sc.experiments[0].training.gradBytes = 256 << 10;
        Load(s, app, jobs, sc);
        s.ClickRunButton(app);
        REQUIRE(s.FramesUntil(app, [&] { return Settled(app, jobs); }));
        INFO(app.Live().message);
        CHECK_FALSE(app.Live().failed);
        CHECK_THAT(app.Live().message, Catch::Contains("results checked: correct") && Catch::Contains("model"));
        const RunResult& run = Run0(app);
        CHECK(run.measured);
        CHECK(MeasuredRowsWithSpans(run) == 4); // 4 workers, or 3 workers and the server
        CHECK(run.simulatedSeconds > 0);
        CHECK(run.predictedSeconds > 0);
        CHECK(run.mfu.available);
        CHECK(run.trace->Flows().size() > 0);
        REQUIRE(run.plan); // the flow view animates the allreduce, or the server's star
        CHECK(run.plan->spec.algorithm == (which == 0 ? core::Algorithm::Ring : core::Algorithm::Naive));
        for (pid_t p : RankPids(run)) CHECK(Gone(p));
    }
}

TEST_CASE("Stop mid-run keeps what was measured, ends every process, and the window goes on", "[gui][live]")
{
    Session s;
    JobRunner jobs;
    App app(&jobs);
    const std::vector<pid_t> pids = StartLongRun(s, app, jobs);
    s.ClickRunButton(app); // now Stop
    REQUIRE(s.FramesUntil(app, [&] { return Settled(app, jobs); }, 30));
    CHECK_THAT(app.Live().message, Catch::Contains("stopped"));
    CHECK(Run0(app).measured);
    CHECK(Run0(app).trace->SpanCount() > 0);
    for (pid_t p : pids) CHECK(Gone(p));
    s.Frame(app); // still drawing
}

TEST_CASE("A killed rank: the dialog names it, the partial run stays, no process is left", "[gui][live]")
{
    Session s;
    JobRunner jobs;
    App app(&jobs);
    const std::vector<pid_t> pids = StartLongRun(s, app, jobs);
    REQUIRE(::kill(pids[2], SIGKILL) == 0);
    REQUIRE(s.FramesUntil(app, [&] { return Settled(app, jobs); }, 60));
    INFO(app.Live().message);
    CHECK(app.Live().failed);
    CHECK_THAT(app.Live().message, Catch::Contains("rank 2"));
    CHECK_THAT(app.ErrorMessage(), Catch::Contains("rank 2"));
    CHECK(Run0(app).measured);
    CHECK(Run0(app).trace->Devices().size() == 4);
    for (pid_t p : pids) CHECK(Gone(p));
}
