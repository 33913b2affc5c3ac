// One frame of the window on GLFW and OpenGL: the desktop's event loop (GuiMain.cpp) and the web
// page's main loop (web/WebMain.cpp) both draw through it, so the two windows are the same code.
// GUI thread only; the GL context must be current.
#pragma once

struct GLFWwindow;

namespace paralens::app {

class App;
class JobRunner;

// Where a frame's time went, in milliseconds: building it (ImGui and the app, on the CPU) and
// drawing it (the GL calls; where the driver waits for the GPU, that wait too).
struct FrameTimes {
    double buildMs = 0.0;
    double drawMs = 0.0;
};

// ImGui's new frame, the app, the clear and the draw. A PNG export the app asked for is read back
// from the frame and encoded on a worker ("export" lane), then handed to App::FileWritten.
FrameTimes DrawWindowFrame(GLFWwindow* window, App& app, JobRunner& jobs);

// Fonts and theme at a DPI scale (a monitor with another DPI, the browser's zoom): rebuilds the
// font atlas and its texture.
void ScaleWindow(const App& app, float scale);

} // namespace paralens::app
