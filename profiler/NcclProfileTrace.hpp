// NCCL's own events (from paralens's NCCL profiler plugin, profiler/NcclProfileData.hpp) as Trace
// spans and flows: per communicator rank, collectives and point-to-points on an "NCCL ops" track,
// kernel channels on "NCCL ch <c>" tracks (GPU timestamps when NCCL gives them), proxy operations
// with their network steps on "NCCL proxy ch <c>" tracks, and a flow for every proxy step sent by
// one rank and received by its peer (matched by channel, ranks and step number). Proxy events
// exist only for transfers NCCL's proxy thread drives (network, and some PCIe paths); NVLink
// transfers inside one node run in the kernel and show as kernel channels only.
// Pure functions; thread-safe.
#pragma once

#include "NcclProfileData.hpp"

#include "trace/Trace.hpp"

#include <string>
#include <vector>

namespace paralens::prof {

struct NcclSpan {
    int32_t rank = 0;
    std::string track;
    int64_t startNs = 0;
    int64_t endNs = 0;
    std::string name;
    std::string detail;
    core::SpanCategory category = core::SpanCategory::Collective;
    uint64_t bytes = 0;
    int32_t step = core::kNone;
    int32_t chunk = core::kNone; // the NCCL channel
};

struct NcclFlow {
    int32_t srcRank = 0;
    int32_t dstRank = 0;
    std::string srcTrack;
    std::string dstTrack;
    int64_t srcNs = 0;
    int64_t dstNs = 0;
    uint64_t bytes = 0;
    int32_t step = core::kNone;
    int32_t chunk = core::kNone;
};

struct NcclTraceParts {
    std::vector<NcclSpan> spans;
    std::vector<NcclFlow> flows;
    size_t unfinished = 0;     // events never stopped (left out)
    uint64_t droppedEvents = 0; // over the plugin's limit
};

NcclTraceParts ConvertNcclProfiles(const std::vector<NcclProfile>& profiles);

// "AllReduce" -> "allreduce", "ReduceScatter" -> "reduce-scatter", "Send" -> "send".
std::string NcclFuncName(const std::string& func);

} // namespace paralens::prof
