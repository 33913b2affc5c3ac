// The label paralens puts on each of its GPU ops as an NVTX range in the "paralens" domain, so
// that Nsight Systems and our own profiler name them, and so that a CUPTI capture can give each
// kernel and copy its op's micro-batch, step, FLOPs and ranks. Text form:
//     <name> cat=<category> [mb=<micro-batch>] [ch=<chunk>] [st=<step>] [by=<bytes>] [fl=<flops>]
//            [pr=<predicted ns>] [src=<rank>] [dst=<rank>] [op=<id>] [dt=<detail>]
// e.g. "F3 cat=forward mb=3 ch=0 st=0 fl=68719476736" or "x0>1 cat=send st=2 src=0 dst=1 by=1048576".
// Names and details have no spaces (FormatOpLabel replaces them with '_'). Pure functions; thread-safe.
#pragma once

#include "trace/Trace.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace paralens::prof {

inline constexpr const char* kNvtxDomain = "paralens";

struct OpLabel {
    std::string name;
    core::SpanCategory category = core::SpanCategory::Compute;
    int32_t microBatch = core::kNone;
    int32_t chunk = core::kNone;
    int32_t step = core::kNone;
    uint64_t bytes = 0;
    double flops = 0.0;
    int64_t predictedNs = core::kNoPrediction;
    int32_t srcRank = core::kNone; // transfers: sender and receiver
    int32_t dstRank = core::kNone;
    uint64_t opId = 0;              // unique per run when non-zero
    std::string detail;             // one word ("recompute"): the span's detail

    bool IsTransfer() const { return srcRank != core::kNone && dstRank != core::kNone; }
};

std::string FormatOpLabel(const OpLabel& label);
// nullopt when the text is not a label (no "cat=" field, or a field that does not parse).
std::optional<OpLabel> ParseOpLabel(std::string_view text);

} // namespace paralens::prof
