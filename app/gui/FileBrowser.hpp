// A small built-in file browser (a modal): the folder's entries (folders first), a path field,
// Open or Save. Folders are listed on a background thread (std::async), so a slow or network
// folder never blocks a frame. GUI thread only.
#pragma once

#include <future>
#include <string>
#include <vector>

namespace paralens::app {

class FileBrowser {
public:
    enum class Mode { Open, Save };

    // Opens the dialog in `folder` (empty: the current folder). `suffixes` filters files shown
    // (empty: all); in Save mode `name` is the proposed file name.
    void Show(Mode mode, const std::string& title, const std::string& folder, std::vector<std::string> suffixes,
              const std::string& name = {});
    // Draws the dialog if shown. Returns true once, with the chosen path in `path`.
    bool Draw(std::string& path);
    bool Visible() const { return m_visible; }

private:
    struct Entry {
        std::string name;
        bool folder = false;
        uintmax_t bytes = 0;
    };
    struct Listing {
        std::string folder;
        std::vector<Entry> entries;
        std::string error;
    };
    void List(const std::string& folder);
    static Listing Read(std::string folder, std::vector<std::string> suffixes);

    Mode m_mode = Mode::Open;
    std::string m_title;
    std::vector<std::string> m_suffixes;
    bool m_visible = false;
    bool m_openPopup = false;
    Listing m_listing;
    std::future<Listing> m_pending;
    std::string m_queued; // a folder asked for while another was being listed
    char m_name[512] = {};
    int m_selected = -1;
};

} // namespace paralens::app
