// App's links (Link.hpp) and the few things the platform does for it: picking files to open,
// asking where to save (the desktop's file browser) or handing the written file over (the web
// page's download), the clipboard. The banner names what a link could not apply.
#include "App.hpp"

#include "Link.hpp"
#include "Theme.hpp"

#include <algorithm>
#include <filesystem>

namespace paralens::app {

namespace {

// What File > Open offers: every format paralens reads.
const std::vector<std::string>& TraceSuffixes()
{
    static const std::vector<std::string> suffixes{".json", ".json.gz", ".gz", ".log", ".txt", ".sqlite", ".nsys-rep"};
    return suffixes;
}

} // namespace

void App::OpenLink(std::string_view link)
{
    LinkState state = ParseLink(link);
    const Scenario* s = FindScenario(state.scenario);
    m_scenarioName = state.scenario;
    m_title = s ? s->title : state.scenario;
    m_description = s ? s->description : "";
    m_experiments = std::move(state.experiments);
    m_settings = state.view;
    m_pendingFlowStep = state.view.flowStep;
    m_linkProblems = std::move(state.problems);
    m_selectTab = true;
    m_dark = state.dark;
    m_presentation = state.presentation;
    if (ImGui::GetCurrentContext()) SetTheme(m_dark, m_presentation); // `render` sets it once its context exists
    Resimulate(true);
}

std::string App::Link(int* omitted) const
{
    LinkState state;
    state.scenario = m_scenarioName;
    state.experiments = m_experiments;
    state.view = m_settings;
    state.dark = m_dark;
    state.presentation = m_presentation;
    return MakeLink(state, omitted);
}

const std::string& App::CurrentLink()
{
    LinkedState& l = m_linked;
    if (!l.valid || l.scenario != m_scenarioName || l.experiments != m_experiments || !(l.view == m_settings) || l.dark != m_dark ||
        l.presentation != m_presentation) {
        l = {m_scenarioName, m_experiments, m_settings, m_dark, m_presentation, Link(), true};
    }
    return l.link;
}

void App::CopyLink()
{
    int omitted = 0;
    m_copiedLink = Link(&omitted);
    m_copiedLink.insert(0, 1, '#');
    if (m_platform.copyText) m_platform.copyText(m_copiedLink);
    else ImGui::SetClipboardText(m_copiedLink.c_str());
    m_showCopiedLink = true;
    if (omitted > 0)
        m_linkProblems = {"The link leaves out " + std::to_string(omitted) +
                          " run(s) read from files: a file stays on the machine that opened it."};
}

void App::BrowseOpen()
{
    if (m_platform.pickFiles) {
        m_platform.pickFiles();
        return;
    }
    m_browse = Browse::Open;
    m_browser.Show(FileBrowser::Mode::Open, "Open a trace", "", TraceSuffixes());
}

void App::AskSavePath(Browse what, const char* title, const std::vector<std::string>& suffixes, const std::string& name)
{
    if (m_platform.deliverFile) { // written under a temporary folder, then handed over as `name`
        std::error_code ec;
        const std::filesystem::path dir = std::filesystem::temp_directory_path(ec) / "paralens-downloads";
        std::filesystem::create_directories(dir, ec);
        Browsed(what, (dir / name).string());
        return;
    }
    m_browse = what;
    m_browser.Show(FileBrowser::Mode::Save, title, "", suffixes, name);
}

void App::Browsed(Browse what, const std::string& path)
{
    switch (what) {
    case Browse::Open: OpenFiles({path}); break;
    case Browse::SaveTrace: SaveSelectedTrace(path); break;
    case Browse::ExportTimeline: RequestExport(path, true); break;
    case Browse::ExportTab: RequestExport(path, false); break;
    case Browse::None: break;
    }
}

void App::FileWritten(const std::string& path)
{
    if (m_platform.deliverFile) m_platform.deliverFile(path, std::filesystem::path(path).filename().string());
}

void App::DrawBanner(ImVec2 display)
{
    if (m_linkProblems.empty() && !m_showCopiedLink) return;
    const Theme& th = CurrentTheme();
    const float fontH = ImGui::GetFontSize();
    ImGui::SetNextWindowPos(ImVec2(display.x * 0.5f, fontH * 2.2f), ImGuiCond_Always, ImVec2(0.5f, 0.0f));
    ImGui::SetNextWindowSizeConstraints(ImVec2(fontH * 20, 0), ImVec2(std::max(fontH * 20, display.x * 0.7f), display.y * 0.5f));
    ImGui::Begin("##banner", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoFocusOnAppearing);
    ImGui::PushTextWrapPos(std::max(fontH * 20, display.x * 0.68f));
    if (m_showCopiedLink) {
        ImGui::TextUnformatted(m_platform.copyText ? "Link copied (the address bar holds it too):" : "Link copied:");
        ImGui::SetNextItemWidth(std::min(display.x * 0.65f, ImGui::CalcTextSize(m_copiedLink.c_str()).x + fontH * 2));
        ImGui::InputText("##link", m_copiedLink.data(), m_copiedLink.size() + 1, ImGuiInputTextFlags_ReadOnly);
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(th.warning));
    for (const std::string& line : m_linkProblems) ImGui::TextUnformatted(line.c_str());
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
    if (ImGui::SmallButton("Dismiss")) {
        m_linkProblems.clear();
        m_showCopiedLink = false;
    }
    ImGui::End();
}

} // namespace paralens::app
