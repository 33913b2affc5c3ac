#include "FileBrowser.hpp"

#include "PlotUtil.hpp"
#include "Theme.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

namespace paralens::app {

namespace fs = std::filesystem;

void FileBrowser::Show(Mode mode, const std::string& title, const std::string& folder, std::vector<std::string> suffixes,
                       const std::string& name)
{
    m_mode = mode;
    m_title = title;
    m_suffixes = std::move(suffixes);
    m_visible = true;
    m_openPopup = true;
    m_selected = -1;
    std::snprintf(m_name, sizeof m_name, "%s", name.c_str());
    std::error_code ec;
    List(folder.empty() ? fs::current_path(ec).string() : folder);
}

FileBrowser::Listing FileBrowser::Read(std::string folder, std::vector<std::string> suffixes)
{
    Listing l;
    std::error_code ec;
    l.folder = fs::weakly_canonical(fs::path(folder), ec).string();
    if (ec) l.folder = folder;
    fs::directory_iterator it(l.folder, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
        l.error = "cannot list " + l.folder + ": " + ec.message();
        return l;
    }
    for (const fs::directory_entry& e : it) {
        Entry entry;
        entry.name = e.path().filename().string();
        if (entry.name.empty() || entry.name[0] == '.') continue;
        entry.folder = e.is_directory(ec);
        if (!entry.folder) {
            const bool match = suffixes.empty() || std::any_of(suffixes.begin(), suffixes.end(), [&](const std::string& s) {
                                   return entry.name.size() >= s.size() && entry.name.compare(entry.name.size() - s.size(), s.size(), s) == 0;
                               });
            if (!match) continue;
            entry.bytes = e.file_size(ec);
        }
        l.entries.push_back(std::move(entry));
    }
    std::sort(l.entries.begin(), l.entries.end(), [](const Entry& a, const Entry& b) {
        return a.folder != b.folder ? a.folder : a.name < b.name;
    });
    return l;
}

void FileBrowser::List(const std::string& folder)
{
    m_selected = -1;
    // Replacing a running std::async future would wait for it: queue the request instead.
    if (m_pending.valid() && m_pending.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        m_queued = folder;
        return;
    }
    m_pending = std::async(std::launch::async, Read, folder, m_suffixes);
}

bool FileBrowser::Draw(std::string& path)
{
    if (!m_visible) return false;
    if (m_pending.valid() && m_pending.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        m_listing = m_pending.get();
        if (!m_queued.empty()) {
            List(m_queued);
            m_queued.clear();
        }
    }
    if (m_openPopup) {
        ImGui::OpenPopup(m_title.c_str());
        m_openPopup = false;
    }
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    ImGui::SetNextWindowSize(ImVec2(std::min(display.x * 0.8f, ImGui::GetFontSize() * 48), display.y * 0.7f), ImGuiCond_Appearing);
    bool chosen = false;
    bool open = true;
    if (!ImGui::BeginPopupModal(m_title.c_str(), &open)) {
        m_visible = open && m_visible;
        return false;
    }
    ImGui::TextWrapped("%s", m_listing.folder.c_str());
    if (ImGui::Button("\xE2\x86\x91 up")) List(fs::path(m_listing.folder).parent_path().string());
    ImGui::SameLine();
    if (m_pending.valid()) ImGui::TextDisabled("listing...");
    if (!m_listing.error.empty()) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(CurrentTheme().warning), "%s", m_listing.error.c_str());
    const float footer = ImGui::GetFrameHeightWithSpacing() * 2.2f;
    ImGui::BeginChild("##entries", ImVec2(0, -footer), true);
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(m_listing.entries.size()));
    std::string enter;
    while (clipper.Step())
        for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
            const Entry& e = m_listing.entries[static_cast<size_t>(i)];
            char label[600], size[32];
            if (e.folder) std::snprintf(label, sizeof label, "[%s]", e.name.c_str());
            else std::snprintf(label, sizeof label, "%s   (%s)", e.name.c_str(), FormatValue(size, sizeof size, static_cast<double>(e.bytes), AxisUnit::Bytes));
            if (ImGui::Selectable(label, m_selected == i, ImGuiSelectableFlags_AllowDoubleClick)) {
                m_selected = i;
                if (!e.folder) std::snprintf(m_name, sizeof m_name, "%s", e.name.c_str());
                if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
                    if (e.folder) enter = (fs::path(m_listing.folder) / e.name).string();
                    else chosen = true;
                }
            }
        }
    ImGui::EndChild();
    if (!enter.empty()) List(enter);
    ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 12);
    if (ImGui::InputText("##name", m_name, sizeof m_name, ImGuiInputTextFlags_EnterReturnsTrue)) chosen = m_name[0] != 0;
    ImGui::SameLine();
    if (ImGui::Button(m_mode == Mode::Open ? "Open" : "Save") && m_name[0] != 0) chosen = true;
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) {
        m_visible = false;
        ImGui::CloseCurrentPopup();
    }
    if (chosen) {
        const fs::path typed(m_name);
        const fs::path full = typed.is_absolute() ? typed : fs::path(m_listing.folder) / typed;
        const bool folder = std::any_of(m_listing.entries.begin(), m_listing.entries.end(),
                                        [&](const Entry& e) { return e.folder && e.name == m_name; });
        if (m_mode == Mode::Open && folder) {
            List(full.string());
            chosen = false;
        } else {
            path = full.string();
            m_visible = false;
            ImGui::CloseCurrentPopup();
        }
    }
    ImGui::EndPopup();
    return chosen;
}

} // namespace paralens::app
