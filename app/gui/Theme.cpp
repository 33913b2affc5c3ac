#include "Theme.hpp"

#include "EmbeddedFonts.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace paralens::app {

namespace {

Theme g_theme;
ImFont* g_fonts[4] = {}; // normal body, normal bold, presentation body, presentation bold

constexpr float kBodyPx = 15.0f;
constexpr float kPresentationFactor = 1.45f;

constexpr ImU32 Rgb(unsigned rgb, unsigned a = 255)
{
    return IM_COL32((rgb >> 16) & 0xFF, (rgb >> 8) & 0xFF, rgb & 0xFF, a);
}

// Qualitative, colour-blind-friendlier (Tableau-like) palette without greys.
constexpr unsigned kPalette[kPaletteSize] = {0x4E79A7, 0xF28E2B, 0xE15759, 0x76B7B2, 0x59A14F, 0xEDC948,
                                             0xB07AA1, 0xFF9DA7, 0x9C755F, 0x8CD17D, 0x499894, 0xD37295};

const ImWchar* GlyphRanges()
{
    // Latin-1 (micro sign, multiplication sign), Greek (alpha, beta, gamma, Sigma), general
    // punctuation (dashes, bullet, ellipsis), arrows, mathematical operators and geometric
    // shapes (the play/step triangles).
    static const ImWchar ranges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2010, 0x2027, 0x2190, 0x21FF,
                                     0x2200, 0x22FF, 0x25A0, 0x25FF, 0};
    return ranges;
}

void SetStyleColors(const Theme& t)
{
    ImGuiStyle& s = ImGui::GetStyle();
    if (t.dark) ImGui::StyleColorsDark(&s);
    else ImGui::StyleColorsLight(&s);
    ImVec4* c = s.Colors;
    c[ImGuiCol_WindowBg] = ImGui::ColorConvertU32ToFloat4(t.background);
    c[ImGuiCol_ChildBg] = ImGui::ColorConvertU32ToFloat4(t.background);
    c[ImGuiCol_PopupBg] = ImGui::ColorConvertU32ToFloat4(t.panel);
    c[ImGuiCol_MenuBarBg] = ImGui::ColorConvertU32ToFloat4(t.panel);
    c[ImGuiCol_Text] = ImGui::ColorConvertU32ToFloat4(t.text);
    c[ImGuiCol_TextDisabled] = ImGui::ColorConvertU32ToFloat4(t.textDim);
    if (!t.dark) {
        // Frames (sliders, inputs, checkboxes) that stand out from the white background.
        c[ImGuiCol_FrameBg] = ImGui::ColorConvertU32ToFloat4(Rgb(0xE1E7EF));
        c[ImGuiCol_FrameBgHovered] = ImGui::ColorConvertU32ToFloat4(Rgb(0xD2DCEA));
        c[ImGuiCol_FrameBgActive] = ImGui::ColorConvertU32ToFloat4(Rgb(0xC0D0E6));
        c[ImGuiCol_Button] = ImGui::ColorConvertU32ToFloat4(Rgb(0xD5E2F5));
    }
    if (t.presentation) {
        c[ImGuiCol_Border] = ImGui::ColorConvertU32ToFloat4(t.text);
        c[ImGuiCol_Separator] = ImGui::ColorConvertU32ToFloat4(t.textDim);
    }
}

} // namespace

ImU32 Mix(ImU32 a, ImU32 b, float t)
{
    auto ch = [&](int shift) {
        const float x = static_cast<float>((a >> shift) & 0xFF), y = static_cast<float>((b >> shift) & 0xFF);
        return static_cast<ImU32>(std::lround(x + (y - x) * t)) << shift;
    };
    return ch(IM_COL32_R_SHIFT) | ch(IM_COL32_G_SHIFT) | ch(IM_COL32_B_SHIFT) | ch(IM_COL32_A_SHIFT);
}

ImU32 WithAlpha(ImU32 c, float alpha)
{
    const ImU32 a = static_cast<ImU32>(std::clamp(alpha, 0.0f, 1.0f) * 255.0f + 0.5f);
    return (c & ~IM_COL32_A_MASK) | (a << IM_COL32_A_SHIFT);
}

const Theme& CurrentTheme() { return g_theme; }

ImU32 Theme::TextOn(ImU32 fill) const
{
    const float r = static_cast<float>((fill >> IM_COL32_R_SHIFT) & 0xFF);
    const float g = static_cast<float>((fill >> IM_COL32_G_SHIFT) & 0xFF);
    const float b = static_cast<float>((fill >> IM_COL32_B_SHIFT) & 0xFF);
    return 0.299f * r + 0.587f * g + 0.114f * b > 150.0f ? textOnLight : textOnDark;
}

ImU32 Theme::SpanFill(const core::Span& s, ColorMode mode) const
{
    if (mode == ColorMode::MicroBatch) {
        const int key = s.microBatch >= 0 ? s.microBatch : s.chunk;
        if (key >= 0) {
            const ImU32 base = Block(key);
            switch (s.category) {
            case core::SpanCategory::Forward: return Mix(base, IM_COL32_WHITE, 0.45f);
            case core::SpanCategory::Backward: return Mix(base, IM_COL32_BLACK, 0.08f);
            case core::SpanCategory::WeightGrad: return Mix(base, IM_COL32_BLACK, 0.45f);
            default: return base;
            }
        }
    }
    return category[static_cast<int>(s.category)];
}

void ApplyTheme(bool dark, bool presentation, float dpiScale)
{
    Theme& t = g_theme;
    t.dark = dark;
    t.presentation = presentation;
    t.dpiScale = dpiScale;
    t.scale = dpiScale * (presentation ? kPresentationFactor : 1.0f);
    t.line = std::max(1.0f, (presentation ? 2.0f : 1.0f) * dpiScale);
    t.body = g_fonts[presentation ? 2 : 0];
    t.bold = g_fonts[presentation ? 3 : 1];
    if (t.body) ImGui::GetIO().FontDefault = t.body;

    t.background = dark ? Rgb(0x1E1F22) : Rgb(0xFFFFFF);
    t.panel = dark ? Rgb(0x2A2C30) : Rgb(0xF2F4F7);
    t.text = dark ? Rgb(presentation ? 0xFFFFFF : 0xE6E6E6) : Rgb(presentation ? 0x000000 : 0x1A1A1A);
    t.textDim = dark ? Rgb(0xA8ADB5) : Rgb(presentation ? 0x3A3F47 : 0x5F6670);
    t.textOnDark = Rgb(0xFFFFFF);
    t.textOnLight = Rgb(0x111111);
    t.grid = dark ? Rgb(0x3A3D44) : Rgb(0xE3E7ED);
    t.gridMajor = dark ? Rgb(0x5A5F69) : Rgb(0xC5CCD6);
    t.rowAlt = dark ? Rgb(0x24262B) : Rgb(0xF5F7FB);
    t.rowHeader = dark ? Rgb(0x2F3238) : Rgb(0xE8EDF5);
    t.bubbleFill = dark ? Rgb(0x5C5C5C) : Rgb(0xD6D6D6);
    t.bubbleHatch = dark ? Rgb(0x7A7A7A) : Rgb(0xA9A9A9);
    t.fold = dark ? Rgb(0x6C7FA8) : Rgb(0x7387B3);
    t.selection = dark ? Rgb(0x4FA3FF, 60) : Rgb(0x1F6FEB, 45);
    t.accent = dark ? Rgb(0x4FA3FF) : Rgb(0x1F6FEB);
    t.warning = dark ? Rgb(0xFF7B72) : Rgb(0xC62828);
    t.predicted = dark ? Rgb(0xF0F0F0) : Rgb(0x222222);
    t.arrow = dark ? Rgb(0xDADFE8, 170) : Rgb(0x2B3340, 150);
    t.critical = dark ? Rgb(0xFF2BC2) : Rgb(0xC8007E);
    t.nodeFill = dark ? Rgb(0x2F5D9E) : Rgb(0x23508F);
    t.nodeBorder = dark ? Rgb(0xBFD7FF) : Rgb(0x10284A);
    t.edge = dark ? Rgb(0x4A505A) : Rgb(0xCBD2DC);
    t.cellEmpty = dark ? Rgb(0x2B2E34) : Rgb(0xF4F6F9);
    t.cellBorder = dark ? Rgb(0x6B7280) : Rgb(0x8B95A3);
    for (int i = 0; i < kPaletteSize; ++i) t.palette[i] = Rgb(kPalette[i]);
    using C = core::SpanCategory;
    auto set = [&](C c, unsigned rgb) { t.category[static_cast<int>(c)] = Rgb(rgb); };
    set(C::Forward, 0x7FA7D6);
    set(C::Backward, 0xF28E2B);
    set(C::WeightGrad, 0xB07AA1);
    set(C::Compute, 0x59A14F);
    set(C::Collective, 0xEDC948);
    set(C::Send, 0xE15759);
    set(C::Recv, 0x76B7B2);
    set(C::Memcpy, 0x9C755F);
    set(C::Memset, 0xFF9DA7);
    set(C::Sync, 0xD37295);
    t.category[static_cast<int>(C::Idle)] = t.bubbleFill;
    set(C::Other, 0x8CD17D);

    ImGuiStyle& s = ImGui::GetStyle();
    s = ImGuiStyle(); // sizes from scratch: ScaleAllSizes below multiplies them
    SetStyleColors(t);
    s.WindowRounding = 0.0f;
    s.ChildRounding = 0.0f;
    s.FrameRounding = 3.0f;
    s.GrabRounding = 3.0f;
    s.TabRounding = 3.0f;
    s.WindowBorderSize = presentation ? 2.0f : 1.0f;
    s.FrameBorderSize = presentation ? 1.0f : 0.0f;
    s.ItemSpacing = ImVec2(8, 5);
    s.FramePadding = ImVec2(6, 4);
    s.ScaleAllSizes(t.scale);
}

namespace {
std::string g_fontSource = "none loaded";
}

const std::string& LoadedFontSource() { return g_fontSource; }

bool LoadFonts(float dpiScale)
{
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    const float sizes[2] = {kBodyPx * dpiScale, kBodyPx * kPresentationFactor * dpiScale};
    // 1. DejaVu compiled in (every desktop build that found it); 2. the system's; 3. ImGui's own.
    const FontData embedded[2] = {EmbeddedFont(false), EmbeddedFont(true)};
    std::string regular, bold;
    if (!embedded[0].size || !embedded[1].size) {
        const char* dirs[] = {"/usr/share/fonts/truetype/dejavu/", "/usr/share/fonts/TTF/", "/usr/share/fonts/dejavu/"};
        for (const char* d : dirs) {
            std::error_code ec;
            if (regular.empty() && std::filesystem::exists(std::string(d) + "DejaVuSans.ttf", ec)) regular = std::string(d) + "DejaVuSans.ttf";
            if (bold.empty() && std::filesystem::exists(std::string(d) + "DejaVuSans-Bold.ttf", ec)) bold = std::string(d) + "DejaVuSans-Bold.ttf";
        }
        if (bold.empty()) bold = regular;
    }
    auto add = [&](int which, float px) -> ImFont* {
        ImFontConfig cfg;
        cfg.OversampleH = 2;
        cfg.PixelSnapH = true;
        if (embedded[which].size) {
            cfg.FontDataOwnedByAtlas = false; // static data: the atlas must not free it
            return io.Fonts->AddFontFromMemoryTTF(const_cast<unsigned char*>(embedded[which].data), static_cast<int>(embedded[which].size),
                                                  px, &cfg, GlyphRanges());
        }
        const std::string& file = which ? bold : regular;
        return file.empty() ? nullptr : io.Fonts->AddFontFromFileTTF(file.c_str(), px, &cfg, GlyphRanges());
    };
    bool ok = true;
    for (int i = 0; i < 2 && ok; ++i) {
        g_fonts[2 * i] = add(0, sizes[i]);
        g_fonts[2 * i + 1] = add(1, sizes[i]);
        ok = g_fonts[2 * i] && g_fonts[2 * i + 1];
    }
    g_fontSource = embedded[0].size && embedded[1].size ? "DejaVu Sans, compiled in" : "DejaVu Sans, " + regular;
    if (!ok) {
        g_fontSource = "ImGui's built-in ProggyClean (ASCII only: install fonts-dejavu-core)";
        // ImGui's built-in font (ProggyClean, 13 px) scaled to the sizes above.
        io.Fonts->Clear();
        for (int i = 0; i < 2; ++i) {
            ImFontConfig cfg;
            cfg.SizePixels = std::round(13.0f * sizes[i] / kBodyPx);
            g_fonts[2 * i] = io.Fonts->AddFontDefault(&cfg);
            g_fonts[2 * i + 1] = g_fonts[2 * i];
        }
    }
    io.Fonts->Build();
    return ok;
}

} // namespace paralens::app
