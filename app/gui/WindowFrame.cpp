#include "WindowFrame.hpp"

#include "App.hpp"
#include "PngWriter.hpp"
#include "Theme.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace paralens::app {

namespace {

// Reads `req`'s rectangle from the back buffer and hands the PNG encoding to a worker.
void Export(JobRunner& jobs, App& app, GLFWwindow* window, const ExportRequest& req)
{
    int fbW = 0, fbH = 0, winW = 0, winH = 0;
    glfwGetFramebufferSize(window, &fbW, &fbH);
    glfwGetWindowSize(window, &winW, &winH);
    const float s = winW > 0 ? static_cast<float>(fbW) / static_cast<float>(winW) : 1.0f;
    const int x = static_cast<int>(req.x * s), w = std::min(static_cast<int>(req.width * s), fbW - x);
    const int h = std::min(static_cast<int>(req.height * s), fbH - static_cast<int>(req.y * s));
    const int y = fbH - static_cast<int>(req.y * s) - h; // GL rows start at the bottom
    if (w <= 0 || h <= 0) return;
    auto pixels = std::make_shared<std::vector<unsigned char>>(static_cast<size_t>(w) * h * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels->data());
    const std::string path = req.path;
    jobs.Submit("export", "Writing " + path, [&app, pixels, w, h, path](JobContext&) -> Apply {
        WritePng(path, w, h, *pixels, true);
        return [&app, path] { app.FileWritten(path); };
    }, [&app](const std::string& message) -> Apply { return [&app, message] { app.ShowError("Cannot write the PNG", message); }; });
}

} // namespace

FrameTimes DrawWindowFrame(GLFWwindow* window, App& app, JobRunner& jobs)
{
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    app.Frame(ImGui::GetIO().DisplaySize);
    ImGui::Render();
    const auto t1 = Clock::now();
    int fbW = 0, fbH = 0;
    glfwGetFramebufferSize(window, &fbW, &fbH);
    glViewport(0, 0, fbW, fbH);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    ExportRequest req;
    if (app.TakeExport(req)) Export(jobs, app, window, req);
    const auto t2 = Clock::now();
    return {std::chrono::duration<double, std::milli>(t1 - t0).count(), std::chrono::duration<double, std::milli>(t2 - t1).count()};
}

void ScaleWindow(const App& app, float scale)
{
    LoadFonts(scale);
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
    ApplyTheme(app.Dark(), app.Presentation(), scale);
}

} // namespace paralens::app
