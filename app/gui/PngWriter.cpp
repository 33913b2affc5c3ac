#include "PngWriter.hpp"

#include "common/Error.hpp"
#include "trace/FileIO.hpp"

#include <cstring>
#include <stb/stb_image_write.h>

namespace paralens::app {

void WritePng(const std::string& path, int width, int height, const std::vector<unsigned char>& rgba, bool flipRows)
{
    const int stride = width * 4;
    std::vector<unsigned char> rows(rgba.size());
    for (int y = 0; y < height; ++y) {
        const int from = flipRows ? height - 1 - y : y;
        std::memcpy(rows.data() + static_cast<size_t>(y) * stride, rgba.data() + static_cast<size_t>(from) * stride, static_cast<size_t>(stride));
        for (int x = 0; x < width; ++x) rows[static_cast<size_t>(y) * stride + x * 4 + 3] = 255; // opaque
    }
    stbi_write_png_compression_level = 9; // smaller files for slides and the README
    std::string png;
    auto append = [](void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size)); };
    if (!stbi_write_png_to_func(append, &png, width, height, 4, rows.data(), stride))
        throw Error("cannot encode the PNG for " + path);
    core::WriteFileAtomic(path, png);
}

} // namespace paralens::app
