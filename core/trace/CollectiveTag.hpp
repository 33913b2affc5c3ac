// What a collective span is, written into its Span::detail so that it survives our trace files
// and the analysis can read it back: "collective=allreduce algorithm=ring protocol=LL redop=sum
// dtype=float ranks=8 group=0 seq=12 bytesFrom=args". Importers (Kineto, nccl-tests) write it;
// the analysis (matching across ranks, busbw, fits) reads it. Keys are optional; values escape
// ' ' and '%' as %20 and %25. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace paralens::core {

struct CollectiveTag {
    std::string collective; // canonical collective name (model/Collective.hpp), or the source's own
    std::string algorithm;  // NCCL's algorithm in lower case ("ring", "tree", "nvls"), or ""
    std::string protocol;   // "LL", "LL128", "SIMPLE", or ""
    std::string redop;      // "sum", ...
    std::string dtype;      // nccl-tests spelling (CanonicalDtype)
    std::string group;      // process group / communicator name; "" when unknown
    std::string half;       // nccl-tests: "out-of-place" or "in-place"
    std::string bytesFrom;  // where Span::bytes came from: "args", "cpu-op", "log", ...
    int32_t ranks = 0;      // ranks taking part (the group size); 0 when unknown
    int64_t seq = -1;       // position in the group's sequence of collectives; -1 when unknown
    std::string kernel;     // the kernel's own name when it differs from the span name (rare)
};

std::string FormatCollectiveTag(const CollectiveTag& tag);
// nullopt unless the text has a "collective=" key.
std::optional<CollectiveTag> ParseCollectiveTag(std::string_view detail);

} // namespace paralens::core
