// DejaVu Sans, regular and bold (Debian's fonts-dejavu-core, found when paralens is built),
// compiled into the desktop binary: the window and `render` draw the same glyphs (alpha, beta,
// arrows, the player's buttons) on a machine without the fonts, such as a GPU server running the
// bundle of scripts/gpu-prepare.sh --gui, instead of ImGui's ASCII-only font. The fonts' licence
// (Bitstream Vera's, and public domain for DejaVu's changes) allows bundling them in software.
// The web page preloads the same files instead (app/web/CMakeLists.txt): there the data is empty.
#pragma once

#include <cstddef>

namespace paralens::app {

struct FontData {
    const unsigned char* data = nullptr;
    size_t size = 0;
};

// The TrueType file's bytes, or empty when the build found no DejaVu to embed.
FontData EmbeddedFont(bool bold);

} // namespace paralens::app
