// App's menu bar and dialogs: File (open, save, export), View (theme, presentation mode, what the
// timeline shows), Scenarios (the lecture scenarios), Help (keys, about); the error dialog and the
// file browser.
#include "App.hpp"

#include "Theme.hpp"

#include <filesystem>

namespace paralens::app {

// A menu or an item drawn, and where (for `render --json` and the web page's tests to click it).
bool App::Menu(const char* label)
{
    const bool open = ImGui::BeginMenu(label);
    Mark(label, true);
    return open;
}

bool App::Item(const char* label, const char* shortcut, bool selected, bool enabled)
{
    const bool clicked = ImGui::MenuItem(label, shortcut, selected, enabled);
    Mark(label, false);
    return clicked;
}

bool App::Item(const char* label, const char* shortcut, bool* selected)
{
    const bool clicked = ImGui::MenuItem(label, shortcut, selected);
    Mark(label, false);
    return clicked;
}

void App::Mark(const char* label, bool menu)
{
    if (m_markCount == static_cast<int>(m_marks.size())) return;
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    m_marks[static_cast<size_t>(m_markCount++)] = {label, ImVec2((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f), menu};
}

void App::DrawMenus()
{
    if (!ImGui::BeginMenuBar()) return;
    m_markCount = 0;
    if (Menu("File")) {
        if (Item("Open trace...", "Ctrl+O")) BrowseOpen();
        const bool any = m_snapshot && !m_snapshot->runs.empty();
        if (Item("Save the selected run's trace as...", nullptr, false, any && m_jobs))
            AskSavePath(Browse::SaveTrace, "Save the trace", {".json", ".json.gz"}, "trace.json");
        if (Item("Export the timeline as PNG...", nullptr, false, any))
            AskSavePath(Browse::ExportTimeline, "Export the timeline", {".png"}, "timeline.png");
        if (Item("Export the tab's view as PNG...", nullptr, false, any))
            AskSavePath(Browse::ExportTab, "Export the view", {".png"}, std::string(Name(m_settings.tab)) + ".png");
        ImGui::Separator();
        if (Item("Copy link to this view")) CopyLink();
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("The scenario and every parameter changed from it, as a link: the web page and `paralens --link` open it");
        if (m_platform.canQuit) {
            ImGui::Separator();
            if (Item("Quit", "Ctrl+Q")) m_quit = true;
        }
        ImGui::EndMenu();
    }
    if (Menu("View")) {
        if (Item("Dark theme", nullptr, m_dark)) SetTheme(!m_dark, m_presentation);
        if (Item("Presentation mode (large, high contrast)", nullptr, m_presentation)) SetTheme(m_dark, !m_presentation);
        ImGui::Separator();
        bool byMicroBatch = m_settings.colorBy == ColorMode::MicroBatch;
        if (Item("Colour spans by micro-batch / block", nullptr, &byMicroBatch))
            m_settings.colorBy = byMicroBatch ? ColorMode::MicroBatch : ColorMode::Category;
        Item("Show bubbles (idle time)", nullptr, &m_settings.showBubbles);
        Item("Show the model's predicted durations", nullptr, &m_settings.showPredicted);
        Item("Predictions from alpha and beta fitted to the run (else the lecture's)", nullptr, &m_settings.outlinesFromFit);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("For measured runs with a fit (a live sweep): the outlines and tooltips use the fitted alpha and beta");
        Item("Show messages as arrows", nullptr, &m_settings.showFlows);
        Item("Critical path", "C", &m_settings.showCriticalPath);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Outline the chain of ops that bounds each step (the Stats tab breaks it down by category)");
        if (Item("Expand every device into its lanes", nullptr, m_settings.expandTracks)) {
            m_settings.expandTracks = !m_settings.expandTracks;
            m_timeline.ExpandAll(m_settings.expandTracks);
        }
        if (Item("Fit the timeline", "Home")) m_timeline.FitAll();
        ImGui::EndMenu();
    }
    if (Menu("Scenarios")) {
        for (const Scenario& s : BuiltinScenarios())
            if (Item(s.title.c_str())) LoadScenario(s);
        ImGui::EndMenu();
    }
    if (Menu("Help")) {
        if (Item("Mouse and keys")) m_showKeys = true;
        if (Item("About paralens")) m_showAbout = true;
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
        Browsed(m_browse, path);
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
