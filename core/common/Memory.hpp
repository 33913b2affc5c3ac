// Process-wide allocator tuning for an interactive tool that rebuilds large Traces again and
// again (every slider move re-simulates): keep freed memory in the heap instead of returning it
// to the system, so a rebuild reuses warm pages instead of page-faulting fresh ones (which costs
// about as much as the simulation itself). Call once at start-up, before other threads exist.
#pragma once

namespace paralens {

void KeepFreedMemoryForReuse();

} // namespace paralens
