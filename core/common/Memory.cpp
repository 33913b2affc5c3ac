#include "common/Memory.hpp"

#include <malloc.h>

namespace paralens {

void KeepFreedMemoryForReuse()
{
#if defined(__GLIBC__)
    // Serve large blocks from the heap (not fresh mmaps) and do not trim it back: up to 1 GiB.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

} // namespace paralens
