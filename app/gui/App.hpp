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

#include <imgui.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paralens::app {

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

    void LoadScenario(const Scenario& scenario);
    // Replaces the experiments by these trace files (one run each). Synchronously (no JobRunner)
    // this throws Error naming the file; otherwise errors open a dialog.
    void OpenFiles(const std::vector<std::string>& files);

    // Runs the closures of finished jobs (publishing snapshots, opening dialogs).
    void Poll();
    // The whole window.
    void Frame(ImVec2 display);
    // One view filling the window: "timeline", "flow", "model", "mfu", "stats" (or "window").
    void FrameView(const std::string& view, ImVec2 display);
    nlohmann::json Layout(const std::string& view) const;

    bool NeedsFrames() const;  // animating or waiting for a job: keep drawing
    bool WantsQuit() const { return m_quit; }
    bool TakeExport(ExportRequest& out);
    void ShowError(const std::string& title, const std::string& message);
    const std::string& ErrorMessage() const { return m_errorMessage; } // the last dialog's
    const std::vector<Experiment>& Experiments() const { return m_experiments; }
    std::shared_ptr<const Snapshot> CurrentSnapshot() const { return m_snapshot; }
    std::string WindowTitle() const;

    ViewSettings& Settings() { return m_settings; }
    void SetFlowStep(int step); // -1: the last
    void SetTheme(bool dark, bool presentation);
    bool Dark() const { return m_dark; }
    bool Presentation() const { return m_presentation; }

private:
    void Resimulate(bool resetViews);
    void Publish(std::shared_ptr<const Snapshot> snapshot, bool resetViews);
    void DrawMenus();             // AppMenus.cpp
    void DrawDialogs();           // AppMenus.cpp
    void DrawTabs(ImVec2 size);
    void HandleShortcuts();
    void SaveSelectedTrace(const std::string& path);
    void RequestExport(const std::string& path);

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
    enum class Browse { None, Open, SaveTrace, ExportTimeline, ExportTab } m_browse = Browse::None;
    ImVec4 m_timelineRect{0, 0, 0, 0}, m_tabRect{0, 0, 0, 0}; // x, y, w, h of the last frame
    ExportRequest m_export;
    bool m_exportPending = false;
    int m_exportFrames = 0;

    TimelineView m_timeline;
    FlowView m_flow;
    ModelView m_model;
    MfuView m_mfu;
    StatsView m_stats;
    ControlsPanel m_controls;
    FileBrowser m_browser;
};

} // namespace paralens::app
