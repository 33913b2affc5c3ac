// What an NCCL kernel's name says: collective, algorithm, protocol, reduction and data type.
// Two spellings are read (the "ncclKernel_ and ncclDevKernel_"):
//   ncclDevKernel_<Coll>[_<RedOp>_<type>]_<ALGO>_<PROTO>   NCCL >= 2.19, e.g. ncclDevKernel_AllReduce_Sum_f32_RING_LL,
//                                                          ncclDevKernel_AllGather_RING_LL, ncclDevKernel_SendRecv
//   ncclKernel_<Coll>_<ALGO>_<PROTO>[_<RedOp>_<type>]      NCCL 2.8 - 2.18, e.g. ncclKernel_AllReduce_RING_LL_Sum_float
// A "void " prefix and an argument list "(...)" are ignored. Since NCCL 2.19 one kernel serves
// several algorithms and protocols, so the algorithm and protocol name the kernel's
// specialisation: a hint, not proof (NCCL's profiler plugin reports the real ones).
// Pure functions; thread-safe.
//
// (The importer issue writes the same parser into core/trace; when it lands, this one should
// become a thin alias of it.)
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace paralens::prof {

struct NcclKernelInfo {
    std::string collective; // "allreduce", "allgather", "reduce-scatter", "broadcast", "reduce", "sendrecv",
                            // "alltoall", "gather", "scatter"; "" for NCCL's Generic kernel
    std::string algorithm;  // "ring", "tree", "nvls", "nvls_tree", "collnet_direct", "collnet_chain", "pat"; may be ""
    std::string protocol;   // "LL", "LL128", "SIMPLE"; may be ""
    std::string redop;      // "sum", "prod", "max", "min", "premulsum", "sumpostdiv"; may be ""
    std::string dtype;      // as in the name ("f32", "bf16", "float"); may be ""
};

// nullopt when the name is not an NCCL kernel's.
std::optional<NcclKernelInfo> ParseNcclKernelName(std::string_view kernelName);

// "allreduce ring LL" (the parts that are known, separated by spaces), for span details.
std::string Describe(const NcclKernelInfo& info);

} // namespace paralens::prof
