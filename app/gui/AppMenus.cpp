// App's menu bar and dialogs: File (open, save, export), View (theme, presentation mode, what the
// timeline shows), Scenarios (the lecture scenarios), Help (keys, about); the error dialog and the
// file browser.
#include "App.hpp"

#include "Theme.hpp"

#include <filesystem>

namespace paralens::app {

namespace {

const std::vector<std::string> kTraceSuffixes{".json", ".json.gz", ".gz", ".log", ".txt"};

} // namespace

void App::DrawMenus()
{
    if (!ImGui::BeginMenuBar()) return;
    if (ImGui::BeginMenu("File")) {
        if (ImGui::MenuItem("Open trace...", "Ctrl+O")) {
            m_browse = Browse::Open;
            m_browser.Show(FileBrowser::Mode::Open, "Open a trace", "", kTraceSuffixes);
        }
        const bool any = m_snapshot && !m_snapshot->runs.empty();
        if (ImGui::MenuItem("Save the selected run's trace as...", nullptr, false, any && m_jobs)) {
            m_browse = Browse::SaveTrace;
            m_browser.Show(FileBrowser::Mode::Save, "Save the trace", "", {".json", ".json.gz"}, "trace.json");
        }
        if (ImGui::MenuItem("Export the timeline as PNG...", nullptr, false, any)) {
            m_browse = Browse::ExportTimeline;
            m_browser.Show(FileBrowser::Mode::Save, "Export the timeline", "", {".png"}, "timeline.png");
        }
        if (ImGui::MenuItem("Export the tab's view as PNG...", nullptr, false, any)) {
            m_browse = Browse::ExportTab;
            m_browser.Show(FileBrowser::Mode::Save, "Export the view", "", {".png"}, std::string(Name(m_settings.tab)) + ".png");
        }
        ImGui::Separator();
        if (ImGui::MenuItem("Quit", "Ctrl+Q")) m_quit = true;
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        if (ImGui::MenuItem("Dark theme", nullptr, m_dark)) SetTheme(!m_dark, m_presentation);
        if (ImGui::MenuItem("Presentation mode (large, high contrast)", nullptr, m_presentation)) SetTheme(m_dark, !m_presentation);
        ImGui::Separator();
        bool byMicroBatch = m_settings.colorBy == ColorMode::MicroBatch;
        if (ImGui::MenuItem("Colour spans by micro-batch / block", nullptr, &byMicroBatch))
            m_settings.colorBy = byMicroBatch ? ColorMode::MicroBatch : ColorMode::Category;
        ImGui::MenuItem("Show bubbles (idle time)", nullptr, &m_settings.showBubbles);
        ImGui::MenuItem("Show the model's predicted durations", nullptr, &m_settings.showPredicted);
        ImGui::MenuItem("Predictions from alpha and beta fitted to the run (else the lecture's)", nullptr, &m_settings.outlinesFromFit);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("For measured runs with a fit (a live sweep): the outlines and tooltips use the fitted alpha and beta");
        ImGui::MenuItem("Show messages as arrows", nullptr, &m_settings.showFlows);
        ImGui::MenuItem("Critical path", "C", &m_settings.showCriticalPath);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Outline the chain of ops that bounds each step (the Stats tab breaks it down by category)");
        if (ImGui::MenuItem("Expand every device into its lanes", nullptr, m_settings.expandTracks)) {
            m_settings.expandTracks = !m_settings.expandTracks;
            m_timeline.ExpandAll(m_settings.expandTracks);
        }
        if (ImGui::MenuItem("Fit the timeline", "Home")) m_timeline.FitAll();
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Scenarios")) {
        for (const Scenario& s : BuiltinScenarios())
            if (ImGui::MenuItem(s.title.c_str())) LoadScenario(s);
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Help")) {
        if (ImGui::MenuItem("Mouse and keys")) m_showKeys = true;
        if (ImGui::MenuItem("About paralens")) m_showAbout = true;
        ImGui::EndMenu();
    }
    if (m_jobs) {
        const JobStatus sim = m_jobs->Status("simulate"), file = m_jobs->Status("file");
        const JobStatus& j = file.running ? file : sim;
        if (j.running && j.elapsedSeconds > 0.15) {
            ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(j.label.c_str()).x - ImGui::GetFontSize() * 3);
            ImGui::TextDisabled("%s...", j.label.c_str());
        }
    }
    ImGui::EndMenuBar();
}

void App::DrawDialogs()
{
    std::string path;
    if (m_browser.Draw(path)) {
        switch (m_browse) {
        case Browse::Open: OpenFiles({path}); break;
        case Browse::SaveTrace: SaveSelectedTrace(path); break;
        case Browse::ExportTimeline:
        case Browse::ExportTab: RequestExport(path); break;
        case Browse::None: break;
        }
        m_browse = Browse::None;
    }
    if (m_openErrorPopup) {
        ImGui::OpenPopup("##error");
        m_openErrorPopup = false;
    }
    const float fontH = ImGui::GetFontSize();
    ImGui::SetNextWindowSizeConstraints(ImVec2(fontH * 20, 0), ImVec2(fontH * 44, FLT_MAX));
    if (ImGui::BeginPopupModal("##error", nullptr, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoTitleBar)) {
        ImGui::PushFont(CurrentTheme().bold);
        ImGui::TextUnformatted(m_errorTitle.c_str());
        ImGui::PopFont();
        ImGui::PushTextWrapPos(fontH * 42);
        ImGui::TextUnformatted(m_errorMessage.c_str());
        ImGui::PopTextWrapPos();
        ImGui::Spacing();
        if (ImGui::Button("OK", ImVec2(fontH * 6, 0)) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter))) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    if (m_showKeys) {
        ImGui::SetNextWindowSize(ImVec2(fontH * 34, 0), ImGuiCond_Appearing);
        if (ImGui::Begin("Mouse and keys", &m_showKeys, ImGuiWindowFlags_NoSavedSettings)) {
            ImGui::TextWrapped(
                "Timeline: wheel zooms around the cursor; drag pans (sideways: time, up and down: rows); right-drag or "
                "Shift+drag measures a range; double-click a span to fit it, empty space to fit everything; click a "
                "device's name to expand it into its lanes; wheel over the names scrolls.\n\n"
                "Keys (timeline hovered): arrows or A/D pan, W/S or +/- zoom, Home fits; C outlines each step's critical path.\n\n"
                "Flow: play, pause and step with the buttons (or Space, Left and Right over the view); the slider "
                "picks a step; click a panel to focus it.\n\n"
                "Model: hover to read every algorithm's time at that size.\n\n"
                "Files: drop traces on the window, or File > Open (Ctrl+O).");
        }
        ImGui::End();
    }
    if (m_showAbout) {
        if (ImGui::Begin("About paralens", &m_showAbout, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings)) {
            ImGui::Text("paralens %s", PARALENS_VERSION);
            ImGui::TextUnformatted("Collectives, pipelines and their traces, next to the alpha-beta model of the lectures.");
            ImGui::TextDisabled("Dear ImGui %s, GLFW, OpenGL 3", IMGUI_VERSION);
        }
        ImGui::End();
    }
}

} // namespace paralens::app
