#include "Render.hpp"

#include "PngWriter.hpp"

#include "App.hpp"
#include "GlContext.hpp"
#include "ScenarioLoader.hpp"
#include "Theme.hpp"

#include "common/Error.hpp"

#define GL_GLEXT_PROTOTYPES
#define GLFW_INCLUDE_GLEXT
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cfloat>
#include <chrono>

namespace paralens::app {

namespace {

class Offscreen {
public:
    Offscreen(int width, int height, GlContextKind kind) : m_context(kind), m_width(width), m_height(height)
    {
        glGenFramebuffers(1, &m_fbo);
        glGenRenderbuffers(1, &m_color);
        glBindRenderbuffer(GL_RENDERBUFFER, m_color);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
        glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, m_color);
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
            Release();
            throw Error("render: the OpenGL driver cannot make a " + std::to_string(width) + "x" + std::to_string(height) +
                        " offscreen framebuffer (try a smaller --size)");
        }
        IMGUI_CHECKVERSION();
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
        io.DeltaTime = 1.0f / 60.0f;
        io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
        ImGui_ImplOpenGL3_Init("#version 330 core");
    }
    ~Offscreen() { Release(); }
    Offscreen(const Offscreen&) = delete;
    Offscreen& operator=(const Offscreen&) = delete;

    void Draw()
    {
        glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
        glViewport(0, 0, m_width, m_height);
        const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
        glClearColor(bg.x, bg.y, bg.z, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        glFinish();
    }

    // How the context was made and what draws: the driver's renderer and version strings.
    nlohmann::json Describe() const
    {
        auto text = [](GLenum name) {
            const auto* s = reinterpret_cast<const char*>(glGetString(name));
            return std::string(s ? s : "");
        };
        return {{"context", m_context.How()}, {"renderer", text(GL_RENDERER)}, {"vendor", text(GL_VENDOR)}, {"version", text(GL_VERSION)}};
    }

    std::vector<unsigned char> Read() const
    {
        std::vector<unsigned char> pixels(static_cast<size_t>(m_width) * m_height * 4);
        glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glReadPixels(0, 0, m_width, m_height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
        return pixels;
    }

private:
    void Release()
    {
        if (ImGui::GetCurrentContext()) {
            ImGui_ImplOpenGL3_Shutdown();
            ImGui::DestroyContext();
        }
        if (m_fbo) glDeleteFramebuffers(1, &m_fbo);
        if (m_color) glDeleteRenderbuffers(1, &m_color);
        m_fbo = m_color = 0;
    }

    GlContext m_context;
    int m_width, m_height;
    GLuint m_fbo = 0, m_color = 0;
};

double Ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

} // namespace

nlohmann::json RenderToPng(const RenderOptions& o)
{
    // The data first: a bad scenario or file fails before any window is made.
    App app(nullptr);
    app.SetRunLive(true); // experiments on a real backend run first, to their end
    if (!o.link.empty()) app.OpenLink(o.link);
    else if (!o.scenario.empty()) app.LoadScenario(ResolveScenario(o.scenario));
    if (!o.files.empty()) app.OpenFiles(o.files);
    if (!o.whatIf.empty()) {
        WhatIfParams w;
        w.scale = o.whatIf;
        app.AddWhatIf(0, w);
    }
    Offscreen screen(o.width, o.height, o.gl);
    LoadFonts(o.scale);
    const bool dark = o.dark || app.Dark(), presentation = o.presentation || app.Presentation(); // the link's, or the flags'
    ApplyTheme(dark, presentation, o.scale);
    app.SetTheme(dark, presentation);
    if (o.colorBy == "category") app.Settings().colorBy = ColorMode::Category;
    if (o.colorBy == "micro-batch") app.Settings().colorBy = ColorMode::MicroBatch;
    if (o.step > -2) app.SetFlowStep(o.step);
    if (o.criticalPath) app.Settings().showCriticalPath = true;
    const ImVec2 size(static_cast<float>(o.width), static_cast<float>(o.height));
    std::vector<double> build, total;
    const int frames = std::max(3, o.benchFrames + 3); // three to settle the layout
    for (int i = 0; i < frames; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        ImGui_ImplOpenGL3_NewFrame();
        ImGui::NewFrame();
        app.FrameView(o.view, size);
        ImGui::Render();
        const auto t1 = std::chrono::steady_clock::now();
        screen.Draw();
        const auto t2 = std::chrono::steady_clock::now();
        if (i >= 3) {
            build.push_back(Ms(t1 - t0));
            total.push_back(Ms(t2 - t0));
        }
    }
    nlohmann::json report = app.Layout(o.view);
    report["experiments"] = nlohmann::json::array();
    for (const auto& run : app.CurrentSnapshot()->runs) {
        const bool measured = run->experiment.backend != Backend::Simulated && run->trace->Meta().source != core::TraceSource::Simulated;
        report["experiments"].push_back({{"title", run->title}, {"backend", Name(run->experiment.backend)}, {"measured", measured},
                                  {"source", core::Name(run->trace->Meta().source)}, {"devices", run->trace->Devices().size()},
                                  {"spans", run->trace->SpanCount()}, {"measuredSpans", measured ? run->trace->SpanCount() : 0}});
    }
    report["link"] = app.Link();
    report["linkProblems"] = app.LinkProblems();
    report["gl"] = screen.Describe();
    report["font"] = LoadedFontSource();
    report["width"] = o.width;
    report["height"] = o.height;
    if (!o.out.empty()) {
        WritePng(o.out, o.width, o.height, screen.Read(), true);
        report["out"] = o.out;
    }
    if (!build.empty()) {
        report["frameMs"] = {{"buildMin", *std::min_element(build.begin(), build.end())},
                             {"buildMedian", Median(build)},
                             {"buildMax", *std::max_element(build.begin(), build.end())},
                             {"totalMedian", Median(total)},
                             {"frames", build.size()}};
    }
    return report;
}

} // namespace paralens::app
