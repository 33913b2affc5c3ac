#include "App.hpp"

#include "RunBuilder.hpp"
#include "Theme.hpp"

#include "common/Error.hpp"
#include "trace/TraceFile.hpp"

#include <algorithm>
#include <filesystem>

namespace paralens::app {

App::App(JobRunner* jobs) : m_jobs(jobs) {}

void App::LoadScenario(const Scenario& s)
{
    m_scenarioName = s.name;
    m_experiments = s.experiments;
    m_settings = s.view;
    m_pendingFlowStep = s.view.flowStep;
    m_title = s.title;
    m_description = s.description;
    m_selectTab = true;
    Resimulate(true);
}

void App::OpenFiles(const std::vector<std::string>& files)
{
    if (files.empty()) return;
    const std::string what = files.size() == 1 ? std::filesystem::path(files[0]).filename().string()
                                               : std::to_string(files.size()) + " trace files";
    // On the worker: which files form one job (their first bytes say), then reading them all.
    auto work = [this, files, what](JobContext& ctx) -> Apply {
        std::vector<Experiment> list = FileExperiments(files);
        auto snap = BuildSnapshot(list, nullptr, &ctx);
        if (!snap) return nullptr;
        return [this, list = std::move(list), snap, what] {
            m_experiments = list;
            m_settings.selected = 0;
            m_settings.modelExperiment = -1;
            m_settings.tab = ViewTab::Stats;
            m_selectTab = true;
            m_title = what;
            m_description = "Opened from disk. The timeline hatches each device's idle time; the Stats tab has busy, "
                            "idle and overlap per device and the collectives matched across ranks.";
            Publish(snap, true);
        };
    };
    if (!m_jobs) {
        JobContext ctx;
        work(ctx)(); // errors propagate to the caller (paralens render)
        return;
    }
    m_jobs->Submit("file", "Loading " + what, work, [this](const std::string& message) -> Apply {
        return [this, message] { ShowError("Cannot open the trace", message); };
    });
}

void App::AddWhatIf(int fileIndex, const WhatIfParams& params)
{
    int seen = -1;
    for (size_t i = 0; i < m_experiments.size(); ++i) {
        if (m_experiments[i].kind != ExperimentKind::File || ++seen != fileIndex) continue;
        Experiment w;
        w.kind = ExperimentKind::WhatIf;
        w.files = m_experiments[i].files;
        w.label = "what-if";
        w.whatIf = params;
        m_experiments.insert(m_experiments.begin() + static_cast<ptrdiff_t>(i) + 1, std::move(w));
        m_settings.selected = static_cast<int>(i) + 1;
        m_settings.showCriticalPath = true;
        Resimulate(false);
        return;
    }
    throw Error("a what-if replays an opened trace file, and there is none (" + std::to_string(fileIndex + 1) + " asked for)");
}

void App::Resimulate(bool resetViews)
{
    if (!m_jobs) {
        Publish(BuildSnapshot(m_experiments, m_snapshot.get()), resetViews);
        if (m_runLive) RunLiveExperiments();
        return;
    }
    const std::vector<Experiment> experiments = m_experiments;
    std::shared_ptr<const Snapshot> previous = m_snapshot;
    m_jobs->Submit("simulate", "Simulating",
                   [this, experiments, previous, resetViews](JobContext& ctx) -> Apply {
                       auto snap = BuildSnapshot(experiments, previous.get(), &ctx);
                       if (!snap) return nullptr;
                       return [this, snap, resetViews] { Publish(snap, resetViews); };
                   },
                   // A parameter the simulator refuses: said in the controls; the last result stays.
                   [this](const std::string& message) -> Apply { return [this, message] { m_simError = message; }; });
}

void App::Publish(std::shared_ptr<const Snapshot> snapshot, bool resetViews)
{
    m_snapshot = std::move(snapshot);
    m_simError.clear();
    m_publishedExperiments.clear();
    for (const auto& r : m_snapshot->runs) m_publishedExperiments.push_back(r->experiment);
    m_settings.selected = std::clamp(m_settings.selected, 0, std::max(0, static_cast<int>(m_snapshot->runs.size()) - 1));
    m_timeline.SetSnapshot(m_snapshot, m_settings);
    if (resetViews) m_timeline.FitAll();
    if (resetViews && m_pendingFlowStep) m_settings.flowStep = *m_pendingFlowStep; // the flow view drew the old run meanwhile
    m_pendingFlowStep.reset();
    m_flow.SetSnapshot(m_snapshot, m_settings.flowStep, resetViews);
    m_model.SetSnapshot(m_snapshot);
    m_mfu.SetSnapshot(m_snapshot);
    m_stats.SetSnapshot(m_snapshot);
    m_autopar.SetSnapshot(m_snapshot);
    m_planner.SetSnapshot(m_snapshot);
    m_settleFrames = 4; // new tables and tabs take a few frames to size their columns
}

void App::Poll()
{
    if (!m_jobs) return;
    PollLive();
    m_jobs->Poll();
}

bool App::NeedsFrames() const
{
    return m_flow.Animating() || m_exportPending || m_live || (m_jobs && m_jobs->Busy()) || m_settleFrames > 0;
}

void App::ShowError(const std::string& title, const std::string& message)
{
    m_errorTitle = title;
    m_errorMessage = message;
    m_openErrorPopup = true;
}

std::string App::WindowTitle() const { return m_title.empty() ? "paralens" : "paralens \xE2\x80\x94 " + m_title; }

void App::SetFlowStep(int step) { m_flow.SetSnapshot(m_snapshot, step, true); }

void App::SetTheme(bool dark, bool presentation)
{
    m_dark = dark;
    m_presentation = presentation;
    ApplyTheme(dark, presentation, CurrentTheme().dpiScale);
}

bool App::TakeExport(ExportRequest& out)
{
    // A few frames after the request, so the file browser that asked for it has gone from the picture.
    if (!m_exportPending || --m_exportFrames > 0) return false;
    out = m_export;
    m_exportPending = false;
    return true;
}

void App::RequestExport(const std::string& path, bool timeline)
{
    const ImVec4 r = timeline ? m_timelineRect : m_tabRect;
    m_export = {path, static_cast<int>(r.x), static_cast<int>(r.y), static_cast<int>(r.z), static_cast<int>(r.w)};
    m_exportPending = m_export.width > 0 && m_export.height > 0;
    m_exportFrames = 3;
}

void App::SaveSelectedTrace(const std::string& path)
{
    if (!m_snapshot || m_snapshot->runs.empty()) return;
    const size_t index = static_cast<size_t>(std::clamp(m_settings.selected, 0, static_cast<int>(m_snapshot->runs.size()) - 1));
    std::shared_ptr<const core::Trace> trace = m_snapshot->runs[index]->trace;
    if (!m_jobs) return;
    m_jobs->Submit("export", "Saving " + path, [this, trace, path](JobContext&) -> Apply {
        core::WriteTraceFile(*trace, path);
        return [this, path] { FileWritten(path); };
    }, [this, path](const std::string& message) -> Apply { return [this, message] { ShowError("Cannot save the trace", message); }; });
}

void App::HandleShortcuts()
{
    const ImGuiIO& io = ImGui::GetIO();
    if (io.WantTextInput) return;
    if (io.KeyCtrl && ImGui::IsKeyPressed('O', false)) BrowseOpen();
    if (io.KeyCtrl && ImGui::IsKeyPressed('Q', false) && m_platform.canQuit) m_quit = true;
    if (!io.KeyCtrl && ImGui::IsKeyPressed('C', false)) m_settings.showCriticalPath = !m_settings.showCriticalPath;
}

void App::Frame(ImVec2 display)
{
    m_settleFrames = std::max(0, m_settleFrames - 1);
    const Theme& th = CurrentTheme();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(display);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::Begin("##paralens", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoBringToFrontOnFocus |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoScrollWithMouse);
    ImGui::PopStyleVar();
    HandleShortcuts();
    DrawMenus();
    const ImVec2 top = ImGui::GetCursorScreenPos();
    const float fontH = ImGui::GetFontSize();
    const float controlsW = std::floor(std::clamp(display.x * 0.2f, fontH * 17.0f, fontH * 25.0f));
    const float height = display.y - top.y;
    // Controls on the left.
    ControlsContext ctx;
    ctx.scenarioTitle = m_title;
    ctx.scenarioDescription = m_description;
    ctx.simulationError = m_simError;
    if (m_jobs) {
        ctx.simulateJob = m_jobs->Status("simulate");
        ctx.fileJob = m_jobs->Status("file");
    }
    ctx.live = &m_liveStatus;
    ImGui::SetCursorScreenPos(ImVec2(top.x + th.Px(8), top.y + th.Px(6)));
    ImGui::BeginChild("##left", ImVec2(controlsW - th.Px(12), height - th.Px(10)), false);
    if (m_controls.Draw(m_experiments, m_settings, ctx, ImGui::GetContentRegionAvail())) Resimulate(false);
    ImGui::EndChild();
    if (ctx.cancelSimulate && m_jobs) m_jobs->Cancel("simulate");
    m_runButtonRect = ctx.runButton;
    m_whatIfButtonRect = ctx.whatIfButton;
    if (ctx.startLive) StartLive(m_settings.selected);
    if (ctx.stopLive) StopLive();
    if (ctx.cancelFile && m_jobs) {
        m_jobs->Cancel("file");
        m_experiments = m_publishedExperiments;
    }
    if (ctx.openFile) BrowseOpen();
    ImGui::GetWindowDrawList()->AddLine(ImVec2(top.x + controlsW, top.y), ImVec2(top.x + controlsW, display.y), th.gridMajor, 1.0f);
    // The timeline above the tabs, with a draggable splitter between them, in a child window so
    // that every line of the tabs starts at its left edge.
    const float rightX = top.x + controlsW + 1;
    const float rightW = display.x - rightX;
    const float timelineH = std::floor(std::clamp(height * m_settings.timelineShare, fontH * 6, height - fontH * 10));
    ImGui::SetCursorScreenPos(ImVec2(rightX, top.y));
    ImGui::BeginChild("##right", ImVec2(rightW, height), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    m_timelineRect = ImVec4(rightX, top.y, rightW, timelineH);
    m_timeline.Draw(m_settings, ImVec2(rightW, timelineH));
    ImGui::SetCursorScreenPos(ImVec2(rightX, top.y + timelineH));
    ImGui::InvisibleButton("##split", ImVec2(rightW, th.Px(6)));
    if (ImGui::IsItemActive())
        m_settings.timelineShare = std::clamp(m_settings.timelineShare + ImGui::GetIO().MouseDelta.y / height, 0.15f, 0.85f);
    if (ImGui::IsItemHovered() || ImGui::IsItemActive()) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeNS);
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(rightX, top.y + timelineH + th.Px(2)), ImVec2(display.x, top.y + timelineH + th.Px(4)),
                                              th.gridMajor);
    ImGui::SetCursorScreenPos(ImVec2(rightX, top.y + timelineH + th.Px(6)));
    DrawTabs(ImVec2(rightW, display.y - (top.y + timelineH + th.Px(6))));
    ImGui::EndChild();
    DrawDialogs();
    ImGui::End();
    DrawBanner(display);
}

void App::DrawTabs(ImVec2 size)
{
    const ImVec2 start = ImGui::GetCursorScreenPos();
    if (ImGui::BeginTabBar("##tabs")) {
        const struct {
            ViewTab tab;
            const char* label;
        } tabs[] = {{ViewTab::Flow, "Flow"},   {ViewTab::Model, "Model"}, {ViewTab::Mfu, "MFU"},
                    {ViewTab::Stats, "Stats"}, {ViewTab::Autopar, "Auto-parallel"}, {ViewTab::Planner, "Planner"}};
        for (const auto& t : tabs) {
            const ImGuiTabItemFlags flags = m_selectTab && m_settings.tab == t.tab ? ImGuiTabItemFlags_SetSelected : 0;
            if (!ImGui::BeginTabItem(t.label, nullptr, flags)) continue;
            if (!m_selectTab) m_settings.tab = t.tab;
            const ImVec2 at = ImGui::GetCursorScreenPos();
            const ImVec2 view(size.x, size.y - (at.y - start.y));
            m_tabRect = ImVec4(at.x, at.y, view.x, view.y);
            switch (t.tab) {
            case ViewTab::Flow: m_flow.Draw(m_settings, view); break;
            case ViewTab::Model: m_model.Draw(m_settings, view); break;
            case ViewTab::Mfu: m_mfu.Draw(m_settings, view); break;
            case ViewTab::Stats: m_stats.Draw(m_settings, view); break;
            case ViewTab::Autopar: m_autopar.Draw(m_settings, view); break;
            case ViewTab::Planner: m_planner.Draw(m_settings, view); break;
            }
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    m_selectTab = false;
}

void App::FrameView(const std::string& view, ImVec2 display)
{
    if (view == "window") {
        Frame(display);
        return;
    }
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(display);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::Begin("##view", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings);
    ImGui::PopStyleVar();
    if (view == "timeline") m_timeline.Draw(m_settings, display);
    else if (view == "flow") m_flow.Draw(m_settings, display);
    else if (view == "model") m_model.Draw(m_settings, display);
    else if (view == "mfu") m_mfu.Draw(m_settings, display);
    else if (view == "stats") m_stats.Draw(m_settings, display);
    else if (view == "autopar") m_autopar.Draw(m_settings, display);
    else if (view == "planner") m_planner.Draw(m_settings, display);
    ImGui::End();
}

nlohmann::json App::Layout(const std::string& view) const
{
    if (view == "window") {
        nlohmann::json j = m_timeline.Layout();
        const ImVec4 r = m_runButtonRect;
        if (r.z > 0) j["runButton"] = {r.x, r.y, r.z, r.w};
        if (const ImVec4 w = m_whatIfButtonRect; w.z > 0) j["whatIfButton"] = {w.x, w.y, w.z, w.w};
        j["live"] = {{"running", m_liveStatus.running}, {"message", m_liveStatus.message}, {"failed", m_liveStatus.failed},
                     {"snapshotsShown", m_liveShown}};
        j["menus"] = nlohmann::json::object();
        j["menuItems"] = nlohmann::json::object();
        for (int i = 0; i < m_markCount; ++i) {
            const MenuMark& m = m_marks[static_cast<size_t>(i)];
            j[m.menu ? "menus" : "menuItems"][m.label] = {m.at.x, m.at.y};
        }
        return j;
    }
    if (view == "timeline") return m_timeline.Layout();
    if (view == "flow") return m_flow.Layout();
    if (view == "model") return m_model.Layout();
    if (view == "mfu") return m_mfu.Layout();
    if (view == "autopar") return m_autopar.Layout();
    if (view == "planner") return m_planner.Layout();
    return nlohmann::json{{"view", view}};
}

} // namespace paralens::app
