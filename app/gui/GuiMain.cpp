// The desktop window: GLFW + OpenGL 3 + Dear ImGui, DPI-aware fonts, the event loop (idle frames
// wait on events, so an untouched window costs no CPU), drag-and-drop of trace files, and PNG
// exports read back from the frame (WindowFrame.cpp draws each frame, as on the web page).
#include "App.hpp"
#include "GlContext.hpp"
#include "ScenarioLoader.hpp"
#include "Theme.hpp"
#include "WindowFrame.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace paralens::app {

namespace {

std::vector<std::string> g_dropped;

void OnDrop(GLFWwindow*, int count, const char** paths)
{
    for (int i = 0; i < count; ++i) g_dropped.emplace_back(paths[i]);
}

float ContentScale(GLFWwindow* window)
{
    float sx = 1, sy = 1;
    glfwGetWindowContentScale(window, &sx, &sy);
    return std::max(1.0f, std::max(sx, sy));
}

GLFWwindow* CreateWindow()
{
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
    int width = 1600, height = 900;
    if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) {
        int x = 0, y = 0, w = 0, h = 0;
        glfwGetMonitorWorkarea(monitor, &x, &y, &w, &h);
        if (w > 0 && h > 0) {
            width = std::max(1280, static_cast<int>(w * 0.85));
            height = std::max(720, static_cast<int>(h * 0.85));
        }
    }
    GLFWwindow* window = glfwCreateWindow(width, height, "paralens", nullptr, nullptr);
    if (!window) return nullptr;
    glfwMakeContextCurrent(window);
    glfwSwapInterval(1);
    glfwSetDropCallback(window, OnDrop);
    return window;
}

// The event loop: draws frames until the window closes; idle, it sleeps until an event.
void Loop(GLFWwindow* window, App& app, JobRunner& jobs, float scale)
{
    int extraFrames = 3;
    std::string title;
    while (!glfwWindowShouldClose(window) && !app.WantsQuit()) {
        // A few frames follow each event so ImGui settles (hover states, popups).
        if (app.NeedsFrames() || extraFrames > 0) {
            glfwPollEvents();
            extraFrames = std::max(0, extraFrames - 1);
        } else {
            glfwWaitEvents(); // input, or glfwPostEmptyEvent from a finished job
            extraFrames = 2;
        }
        if (!g_dropped.empty()) {
            app.OpenFiles(g_dropped);
            g_dropped.clear();
        }
        app.Poll();
        if (const float s = ContentScale(window); s != scale) { // moved to a monitor with another DPI
            scale = s;
            ScaleWindow(app, scale);
        }
        if (app.WindowTitle() != title) glfwSetWindowTitle(window, (title = app.WindowTitle()).c_str());
        DrawWindowFrame(window, app, jobs);
        glfwSwapBuffers(window);
    }
}

} // namespace

int RunGui(const std::vector<std::string>& files, const std::string& link)
{
    CaptureGlfwErrors();
    if (!glfwInit()) {
        std::fprintf(stderr, "paralens: the window cannot open (%s)\n", LastGlfwError().c_str());
        return -1;
    }
    GLFWwindow* window = CreateWindow();
    if (!window) {
        std::fprintf(stderr, "paralens: the window cannot open (%s)\n", LastGlfwError().c_str());
        glfwTerminate();
        return -1;
    }
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr; // layout comes from the app, not from a file in the working folder
    const float scale = ContentScale(window);
    LoadFonts(scale);
    ApplyTheme(false, false, scale);
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    {
        JobRunner jobs([] { glfwPostEmptyEvent(); });
        App app(&jobs);
        if (!link.empty()) app.OpenLink(link);
        else if (files.empty()) app.LoadScenario(*FindScenario("default"));
        if (!files.empty()) app.OpenFiles(files);
        Loop(window, app, jobs, scale);
    } // the jobs finish (cancelled) before the context goes
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return 0;
}

} // namespace paralens::app
