// The application: what runs (Experiments, from a scenario, the controls or opened files), the
// published Snapshot, the views and the window's layout (menu bar, controls on the left, the
// timeline above the Flow / Model / MFU / Stats tabs), dialogs and the file browser.
//
// With a JobRunner every simulation and file load runs on a worker and is published when done
// (the frame never waits); without one (`paralens render`) it runs synchronously. The platform
// side (GuiMain.cpp, Render.cpp) owns the GL context and reads pixels for PNG exports.
// GUI thread only.
#pragma once

#include "AppState.hpp"
#include "AutoparView.hpp"
#include "PlannerView.hpp"
#include "ControlsPanel.hpp"
#include "FileBrowser.hpp"
#include "FlowView.hpp"
#include "JobRunner.hpp"
#include "MfuView.hpp"
#include "ModelView.hpp"
#include "RunResult.hpp"
#include "ScenarioLoader.hpp"
#include "StatsView.hpp"
#include "TimelineView.hpp"

#include "run/Job.hpp"

#include <array>
#include <chrono>
#include <functional>
#include <imgui.h>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::app {

// What the platform the window runs on does differently (GuiMain.cpp leaves these empty: ImGui's
// file browser, GLFW's clipboard; the web page sets them: the browser's file picker, downloads,
// navigator.clipboard).
struct PlatformHooks {
    std::function<void()> pickFiles; // opens the platform's file picker; its files come back through OpenFiles
    // Hands a file just written at `path` to the user as `name` (the browser downloads it).
    std::function<void(const std::string& path, const std::string& name)> deliverFile;
    std::function<void(const std::string& text)> copyText;
    bool canQuit = true; // File > Quit (a page is closed by its tab)
};

// A rectangle of the last frame to save as a PNG (window pixels, origin top-left).
struct ExportRequest {
    std::string path;
    int x = 0, y = 0, width = 0, height = 0;
};

class App {
public:
    explicit App(JobRunner* jobs); // null: synchronous
    App(const App&) = delete;
    App& operator=(const App&) = delete;

    void SetPlatform(PlatformHooks hooks) { m_platform = std::move(hooks); }
    void LoadScenario(const Scenario& scenario);
    // AppPlatform.cpp: the state a link describes (Link.hpp), its problems in a banner; and the
    // link of what is shown now (files opened are left out; *omitted counts them).
    void OpenLink(std::string_view link);
    std::string Link(int* omitted = nullptr) const;
    // The same, made again only when the experiments, the view or the theme changed (the web page
    // asks every frame to keep its address bar current).
    const std::string& CurrentLink();
    const std::vector<std::string>& LinkProblems() const { return m_linkProblems; }
    // A file a job wrote for the user (a saved trace, an exported PNG): delivered by the platform.
    void FileWritten(const std::string& path);
    // Replaces the experiments by these trace files (one run each). Synchronously (no JobRunner)
    // this throws Error naming the file; otherwise errors open a dialog.
    void OpenFiles(const std::vector<std::string>& files);
    // Adds a what-if replay of file experiment `fileIndex` (counted among the file experiments)
    // right after it, selects it and outlines the critical paths; throws Error when there is none.
    void AddWhatIf(int fileIndex, const WhatIfParams& params);

    // Runs the closures of finished jobs (publishing snapshots, opening dialogs).
    void Poll();
    // The whole window.
    void Frame(ImVec2 display);
    // One view filling the window: "timeline", "flow", "model", "mfu", "stats", "autopar", "planner" (or "window").
    void FrameView(const std::string& view, ImVec2 display);
    nlohmann::json Layout(const std::string& view) const;

    bool NeedsFrames() const;  // animating or waiting for a job: keep drawing

    // A real run (processes or GPU) of experiment `index` (AppLive.cpp): started on its backend's
    // job; each snapshot it publishes is analysed on the "live" lane and replaces the experiment's
    // run, so the timeline grows while it runs. One at a time; Stop cancels it (what was measured
    // stays). Synchronously (no JobRunner) it runs to the end before returning.
    void StartLive(int index);
    void StopLive();
    // Synchronous use (`render`): run the real-backend experiments of every scenario loaded.
    void SetRunLive(bool run) { m_runLive = run; }
    const LiveStatus& Live() const { return m_liveStatus; }
    uint64_t LiveSnapshotsShown() const { return m_liveShown; } // partial snapshots put on screen
    bool WantsQuit() const { return m_quit; }
    bool TakeExport(ExportRequest& out);
    void ShowError(const std::string& title, const std::string& message);
    const std::string& ErrorMessage() const { return m_errorMessage; } // the last dialog's
    const std::vector<Experiment>& Experiments() const { return m_experiments; }
    std::shared_ptr<const Snapshot> CurrentSnapshot() const { return m_snapshot; }
    std::string WindowTitle() const;

    ViewSettings& Settings() { return m_settings; }
    const ViewSettings& Settings() const { return m_settings; }
    void SetFlowStep(int step); // -1: the last
    void SetTheme(bool dark, bool presentation);
    bool Dark() const { return m_dark; }
    bool Presentation() const { return m_presentation; }

private:
    void Resimulate(bool resetViews);
    void PollLive();
    void ReplaceRun(int index, std::shared_ptr<const RunResult> run, bool final);
    void RunLiveExperiments(); // synchronous use: every real-backend experiment run to its end
    void Publish(std::shared_ptr<const Snapshot> snapshot, bool resetViews);
    void DrawMenus();             // AppMenus.cpp
    bool Menu(const char* label); // ImGui's BeginMenu and MenuItem, where they were drawn marked
    bool Item(const char* label, const char* shortcut = nullptr, bool selected = false, bool enabled = true);
    bool Item(const char* label, const char* shortcut, bool* selected);
    void Mark(const char* label, bool menu);
    void DrawDialogs();           // AppMenus.cpp
    void DrawTabs(ImVec2 size);
    void HandleShortcuts();
    void SaveSelectedTrace(const std::string& path);
    void RequestExport(const std::string& path, bool timeline); // else the tab's view
    enum class Browse { None, Open, SaveTrace, ExportTimeline, ExportTab };
    void BrowseOpen();                                   // AppPlatform.cpp
    void AskSavePath(Browse what, const char* title, const std::vector<std::string>& suffixes, const std::string& name);
    void Browsed(Browse what, const std::string& path);
    void CopyLink();
    void DrawBanner(ImVec2 display);

    JobRunner* m_jobs;
    std::vector<Experiment> m_experiments;       // what the controls edit
    std::vector<Experiment> m_publishedExperiments; // what the snapshot shows (to undo a failed load)
    ViewSettings m_settings;
    std::string m_title, m_description;
    std::shared_ptr<const Snapshot> m_snapshot;
    std::string m_simError;
    std::string m_errorTitle, m_errorMessage;
    bool m_openErrorPopup = false;
    bool m_showKeys = false, m_showAbout = false;
    bool m_selectTab = true;
    bool m_quit = false;
    bool m_dark = false, m_presentation = false;
    Browse m_browse = Browse::None;
    struct MenuMark {
        const char* label = nullptr; // a literal: no allocation per frame
        ImVec2 at;
        bool menu = false;
    };
    std::array<MenuMark, 48> m_marks{};
    int m_markCount = 0;
    PlatformHooks m_platform;
    std::string m_scenarioName = "default"; // the scenario links start from
    std::vector<std::string> m_linkProblems; // shown in a banner until dismissed
    std::string m_copiedLink;               // shown after Copy link
    struct LinkedState {                    // what CurrentLink's text was made from
        std::string scenario;
        std::vector<Experiment> experiments;
        ViewSettings view;
        bool dark = false, presentation = false;
        std::string link;
        bool valid = false;
    } m_linked;
    bool m_showCopiedLink = false;
    ImVec4 m_timelineRect{0, 0, 0, 0}, m_tabRect{0, 0, 0, 0}; // x, y, w, h of the last frame
    ExportRequest m_export;
    bool m_exportPending = false;
    int m_exportFrames = 0;

    struct LiveRun {
        int index = -1;
        Experiment experiment;
        std::unique_ptr<core::Job> job;
        uint64_t version = 0;
        std::chrono::steady_clock::time_point start;
    };
    std::unique_ptr<LiveRun> m_live;
    LiveStatus m_liveStatus;
    uint64_t m_liveShown = 0;
    bool m_runLive = false;
    int m_settleFrames = 0; // frames still to draw after a snapshot was published
    std::optional<int> m_pendingFlowStep;  // a scenario's or link's flow step, until its run is published
    ImVec4 m_runButtonRect{0, 0, 0, 0};
    ImVec4 m_whatIfButtonRect{0, 0, 0, 0};

    TimelineView m_timeline;
    FlowView m_flow;
    ModelView m_model;
    MfuView m_mfu;
    StatsView m_stats;
    AutoparView m_autopar;
    PlannerView m_planner;
    ControlsPanel m_controls;
    FileBrowser m_browser;
};

} // namespace paralens::app
