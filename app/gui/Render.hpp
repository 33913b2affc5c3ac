// Headless drawing of one view (or the whole window) into a PNG: an OpenGL context (GlContext: a
// hidden GLFW window, or EGL without any display), an offscreen framebuffer of the requested size, the same App and views as the window, and
// stb_image_write. Used by `paralens render` (slides, README screenshots, GUI tests) and for
// frame-time measurements (--bench-frames). Runs on the calling thread. Throws Error with what to
// do when no OpenGL context can be made.
#pragma once

#include "GlContext.hpp"
#include "PngWriter.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paralens::app {

struct RenderOptions {
    std::vector<std::string> files; // traces to open (instead of a scenario)
    std::string scenario;           // built-in name or a .json path
    std::string link;               // or the state a link describes (Link.hpp)
    std::string view = "timeline";  // timeline, flow, model, mfu, stats or window
    std::string out;                // PNG path; empty with benchFrames > 0
    int width = 1280;
    int height = 720;
    int step = -2;                  // flow step (-1: the last; -2: the scenario's)
    int benchFrames = 0;            // > 0: time this many frames instead of (or besides) writing
    bool presentation = false;
    bool dark = false;
    float scale = 1.0f;             // DPI scale (2 for a 4K screen at 200%)
    std::string colorBy;            // "", "category" or "micro-batch"
    bool criticalPath = false;      // outline each step's critical path on the timeline
    GlContextKind gl = GlContextKind::Auto; // a display's window when there is one, else EGL
    std::string whatIf;             // non-empty: also a what-if replay of the files, with these rules ("comm=0.5, *gemm*=0.8")
};

// Draws and writes the PNG; returns what was drawn: the layout of the view in pixels (timeline
// rows and their time mapping, flow nodes, colours of the palette) for tests, and frame times
// when benchFrames > 0.
nlohmann::json RenderToPng(const RenderOptions& options);

} // namespace paralens::app
