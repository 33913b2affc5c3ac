// The one place that knows which Dear ImGui version paralens builds against (Debian's 1.86) and
// which backend feeds it keys (GLFW: letter keys are their ASCII capitals in io.KeysDown).
// Views ask for keys through KeyPressed, never through version-specific calls.
#pragma once

#include <imgui.h>

static_assert(IMGUI_VERSION_NUM >= 18600, "paralens needs Dear ImGui 1.86 or newer (Debian's libimgui-dev)");

namespace paralens::app {

enum class Key { Left, Right, Up, Down, Home, End, Space, Escape, A, D, W, S, Plus, Minus };

inline bool KeyPressed(Key k)
{
#if IMGUI_VERSION_NUM < 18700
    // 1.86: named keys through the backend's key map, the rest by the GLFW key code.
    constexpr int kGlfwKeypadSubtract = 333, kGlfwKeypadAdd = 334;
    switch (k) {
    case Key::Left: return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow));
    case Key::Right: return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow));
    case Key::Up: return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow));
    case Key::Down: return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow));
    case Key::Home: return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home));
    case Key::End: return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End));
    case Key::Space: return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space));
    case Key::Escape: return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape));
    case Key::A: return ImGui::IsKeyPressed('A');
    case Key::D: return ImGui::IsKeyPressed('D');
    case Key::W: return ImGui::IsKeyPressed('W');
    case Key::S: return ImGui::IsKeyPressed('S');
    case Key::Plus: return ImGui::IsKeyPressed('=') || ImGui::IsKeyPressed(kGlfwKeypadAdd);
    case Key::Minus: return ImGui::IsKeyPressed('-') || ImGui::IsKeyPressed(kGlfwKeypadSubtract);
    }
    return false;
#else
    switch (k) {
    case Key::Left: return ImGui::IsKeyPressed(ImGuiKey_LeftArrow);
    case Key::Right: return ImGui::IsKeyPressed(ImGuiKey_RightArrow);
    case Key::Up: return ImGui::IsKeyPressed(ImGuiKey_UpArrow);
    case Key::Down: return ImGui::IsKeyPressed(ImGuiKey_DownArrow);
    case Key::Home: return ImGui::IsKeyPressed(ImGuiKey_Home);
    case Key::End: return ImGui::IsKeyPressed(ImGuiKey_End);
    case Key::Space: return ImGui::IsKeyPressed(ImGuiKey_Space);
    case Key::Escape: return ImGui::IsKeyPressed(ImGuiKey_Escape);
    case Key::A: return ImGui::IsKeyPressed(ImGuiKey_A);
    case Key::D: return ImGui::IsKeyPressed(ImGuiKey_D);
    case Key::W: return ImGui::IsKeyPressed(ImGuiKey_W);
    case Key::S: return ImGui::IsKeyPressed(ImGuiKey_S);
    case Key::Plus: return ImGui::IsKeyPressed(ImGuiKey_Equal) || ImGui::IsKeyPressed(ImGuiKey_KeypadAdd);
    case Key::Minus: return ImGui::IsKeyPressed(ImGuiKey_Minus) || ImGui::IsKeyPressed(ImGuiKey_KeypadSubtract);
    }
    return false;
#endif
}

} // namespace paralens::app
