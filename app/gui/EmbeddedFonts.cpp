#include "EmbeddedFonts.hpp"

#if PARALENS_EMBEDDED_FONTS

// The files' bytes in .rodata, between a begin and an end symbol (the assembler reads the files:
// no generated source of a megabyte of hex).
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".global paralens_font_regular_begin\n"
        "paralens_font_regular_begin:\n"
        ".incbin \"" PARALENS_FONT_REGULAR "\"\n"
        ".global paralens_font_regular_end\n"
        "paralens_font_regular_end:\n"
        ".balign 16\n"
        ".global paralens_font_bold_begin\n"
        "paralens_font_bold_begin:\n"
        ".incbin \"" PARALENS_FONT_BOLD "\"\n"
        ".global paralens_font_bold_end\n"
        "paralens_font_bold_end:\n"
        ".previous\n");

extern "C" {
extern const unsigned char paralens_font_regular_begin[], paralens_font_regular_end[];
extern const unsigned char paralens_font_bold_begin[], paralens_font_bold_end[];
}

namespace paralens::app {

FontData EmbeddedFont(bool bold)
{
    if (bold) return {paralens_font_bold_begin, static_cast<size_t>(paralens_font_bold_end - paralens_font_bold_begin)};
    return {paralens_font_regular_begin, static_cast<size_t>(paralens_font_regular_end - paralens_font_regular_begin)};
}

} // namespace paralens::app

#else

namespace paralens::app {

FontData EmbeddedFont(bool) { return {}; }

} // namespace paralens::app

#endif
