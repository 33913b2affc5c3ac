// An OpenGL 3.3 core context for headless drawing (`paralens render`), current on the calling
// thread: a hidden GLFW window when there is a display, or EGL without any display: the first
// EGL device that gives a context (a GPU's driver, such as NVIDIA's on a compute server, or
// Mesa's software device), then Mesa's surfaceless platform. The window and the page make their
// own contexts; this is only for drawing into an offscreen framebuffer.
#pragma once

#include <memory>
#include <string>

namespace paralens::app {

enum class GlContextKind { Auto, Window, Egl };

// GLFW's errors kept, for the messages of those who open a window (here and GuiMain.cpp):
// CaptureGlfwErrors() before glfwInit; LastGlfwError() is the latest ("GLFW error N: ...").
void CaptureGlfwErrors();
const std::string& LastGlfwError();

// "auto", "window" or "egl" (false for anything else).
bool ParseGlContextKind(const std::string& text, GlContextKind& out);

class GlContext {
public:
    // Throws Error saying what was tried and what to do when no context can be made. `Auto` takes
    // the display when GLFW can open one, EGL otherwise.
    explicit GlContext(GlContextKind kind);
    ~GlContext();
    GlContext(const GlContext&) = delete;
    GlContext& operator=(const GlContext&) = delete;

    // "window (GLFW, X11)", "egl device 0 of 2", "egl surfaceless": how the context was made.
    const std::string& How() const { return m_how; }

    struct Egl; // the EGL display, context and surface (GlContext.cpp)

private:
    void* m_window = nullptr; // GLFWwindow
    bool m_glfw = false;      // glfwInit succeeded
    std::unique_ptr<Egl> m_egl;
    std::string m_how;
};

} // namespace paralens::app
