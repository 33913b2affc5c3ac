#include "GlContext.hpp"

#include "common/Error.hpp"

#include <GLFW/glfw3.h>

#if PARALENS_HAVE_EGL
#include <EGL/egl.h>
#include <EGL/eglext.h>
#endif

#include <cstdio>
#include <cstring>
#include <vector>

namespace paralens::app {

namespace {

std::string g_glfwError;

void OnGlfwError(int code, const char* text) { g_glfwError = "GLFW error " + std::to_string(code) + ": " + text; }

} // namespace

void CaptureGlfwErrors() { glfwSetErrorCallback(OnGlfwError); }

const std::string& LastGlfwError() { return g_glfwError; }

bool ParseGlContextKind(const std::string& text, GlContextKind& out)
{
    if (text == "auto") out = GlContextKind::Auto;
    else if (text == "window") out = GlContextKind::Window;
    else if (text == "egl") out = GlContextKind::Egl;
    else return false;
    return true;
}

#if PARALENS_HAVE_EGL

struct GlContext::Egl {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    EGLSurface surface = EGL_NO_SURFACE;

    ~Egl()
    {
        if (display == EGL_NO_DISPLAY) return;
        eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (surface != EGL_NO_SURFACE) eglDestroySurface(display, surface);
        if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
        eglTerminate(display);
    }

    // A 3.3 core context on `d`, current: surfaceless where the display allows it, else on a
    // small pbuffer (the drawing goes to a framebuffer object either way). Appends why not.
    bool MakeCurrent(EGLDisplay d, std::string& why)
    {
        EGLint major = 0, minor = 0;
        if (d == EGL_NO_DISPLAY || !eglInitialize(d, &major, &minor)) {
            why += " (eglInitialize failed: 0x" + Hex(eglGetError()) + ")";
            return false;
        }
        display = d;
        const char* ext = eglQueryString(d, EGL_EXTENSIONS);
        const bool surfaceless = ext && std::strstr(ext, "EGL_KHR_surfaceless_context");
        const EGLint configAttrs[] = {EGL_SURFACE_TYPE, surfaceless ? 0 : EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                      EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
        EGLConfig config = nullptr;
        EGLint count = 0;
        if (!eglBindAPI(EGL_OPENGL_API) || !eglChooseConfig(d, configAttrs, &config, 1, &count) || count < 1) {
            why += " (no OpenGL config)";
            return false;
        }
        const EGLint contextAttrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                       EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
        context = eglCreateContext(d, config, EGL_NO_CONTEXT, contextAttrs);
        if (context == EGL_NO_CONTEXT) {
            why += " (no OpenGL 3.3 core context: 0x" + Hex(eglGetError()) + ")";
            return false;
        }
        if (!surfaceless) {
            const EGLint pbufferAttrs[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
            surface = eglCreatePbufferSurface(d, config, pbufferAttrs);
        }
        if (!eglMakeCurrent(d, surface, surface, context)) {
            why += " (eglMakeCurrent failed: 0x" + Hex(eglGetError()) + ")";
            return false;
        }
        return true;
    }

    static std::string Hex(EGLint code)
    {
        char text[16];
        std::snprintf(text, sizeof text, "%04x", static_cast<unsigned>(code));
        return text;
    }
};

namespace {

// Each EGL device (EGL_EXT_device_enumeration), then Mesa's surfaceless platform, until one gives
// a context. `how` names the one that did; `tried` lists the others and why they failed.
std::unique_ptr<GlContext::Egl> OpenEgl(std::string& how, std::string& tried)
{
    auto queryDevices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto platformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!platformDisplay) {
        tried = "EGL has no eglGetPlatformDisplayEXT";
        return nullptr;
    }
    std::vector<EGLDeviceEXT> devices(16);
    EGLint count = 0;
    if (!queryDevices || !queryDevices(static_cast<EGLint>(devices.size()), devices.data(), &count)) count = 0;
    for (EGLint i = 0; i < count; ++i) {
        auto egl = std::make_unique<GlContext::Egl>();
        tried += (tried.empty() ? "" : "; ") + std::string("egl device ") + std::to_string(i);
        if (egl->MakeCurrent(platformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[static_cast<size_t>(i)], nullptr), tried)) {
            how = "egl device " + std::to_string(i) + " of " + std::to_string(count);
            return egl;
        }
    }
    auto egl = std::make_unique<GlContext::Egl>();
    tried += (tried.empty() ? "" : "; ") + std::string("egl surfaceless");
    if (egl->MakeCurrent(platformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr), tried)) {
        how = "egl surfaceless";
        return egl;
    }
    return nullptr;
}

} // namespace

#else

struct GlContext::Egl {};

#endif

GlContext::GlContext(GlContextKind kind)
{
    std::string tried;
    if (kind != GlContextKind::Egl) {
        CaptureGlfwErrors();
        m_glfw = glfwInit();
        if (m_glfw) {
            glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
            glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
            glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
            glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
            m_window = glfwCreateWindow(64, 64, "paralens render", nullptr, nullptr);
        }
        if (m_window) {
            glfwMakeContextCurrent(static_cast<GLFWwindow*>(m_window));
            m_how = "window (GLFW)";
            return;
        }
        tried = "a hidden window (" + g_glfwError + ")";
        if (m_glfw) glfwTerminate();
        m_glfw = false;
        if (kind == GlContextKind::Window)
            throw Error("render: cannot make an OpenGL 3.3 context: " + tried +
                        ". Without a display, use --gl egl or run it under a virtual one: xvfb-run -a paralens render ...");
    }
#if PARALENS_HAVE_EGL
    std::string eglTried;
    m_egl = OpenEgl(m_how, eglTried);
    if (m_egl) return;
    tried += (tried.empty() ? "" : "; ") + eglTried;
    throw Error("render: cannot make an OpenGL 3.3 context: tried " + tried +
                ". Install Mesa's EGL (libegl-mesa0) or a GPU driver's, or run it under a virtual display: "
                "xvfb-run -a paralens render ...");
#else
    throw Error("render: cannot make an OpenGL 3.3 context: " + (tried.empty() ? std::string("--gl egl") : tried) +
                (kind == GlContextKind::Egl ? " (this build has no EGL: libegl-dev was missing when it was configured)" : "") +
                ". Without a display, run it under a virtual one: xvfb-run -a paralens render ...");
#endif
}

GlContext::~GlContext()
{
    m_egl.reset();
    if (m_window) glfwDestroyWindow(static_cast<GLFWwindow*>(m_window));
    if (m_glfw) glfwTerminate();
}

} // namespace paralens::app
