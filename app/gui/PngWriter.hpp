// PNG files of what the window drew (exports, `paralens render`), encoded by stb_image_write.
#pragma once

#include <string>
#include <vector>

namespace paralens::app {

// Encodes RGBA pixels (rows bottom-up when `flipRows`, as OpenGL reads them) as a PNG and writes
// it atomically. Throws Error naming the path. Thread-safe.
void WritePng(const std::string& path, int width, int height, const std::vector<unsigned char>& rgba, bool flipRows);

} // namespace paralens::app
