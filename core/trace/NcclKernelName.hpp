// Names that NCCL, PyTorch and nccl-tests give to collectives, algorithms and data types, read
// into paralens's canonical names. Pure functions; thread-safe.
#pragma once

#include "model/Collective.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace paralens::core {

// What an NCCL kernel's name says. Three spellings are read:
//   ncclDevKernel_<Coll>[_<RedOp>_<type>]_<ALGO>_<PROTO>  (NCCL >= 2.19: e.g. ncclDevKernel_AllReduce_Sum_f32_RING_LL,
//                                                          ncclDevKernel_AllGather_RING_LL, ncclDevKernel_SendRecv)
//   ncclKernel_<Coll>_<ALGO>_<PROTO>_<RedOp>_<type>       (NCCL 2.8-2.18: ncclKernel_AllReduce_RING_LL_Sum_float)
//   nccl<Coll><Algo><Proto>Kernel_<op>_<type>             (NCCL <= 2.7: ncclAllReduceRingLLKernel_sum_f32)
// Argument lists "(...)" after the name are ignored. Since NCCL 2.19 one kernel serves several
// algorithms and protocols (an NVLS or SIMPLE allreduce runs in ..._RING_LL), so `algorithm` and
// `protocol` then name the kernel's specialisation, which is a hint, not proof.
struct NcclKernelInfo {
    std::string collective; // canonical: "allreduce", "allgather", "reduce-scatter", "broadcast", "reduce", "sendrecv"; "" for Generic
    std::string algorithm;  // lower case: "ring", "tree", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"; may be ""
    std::string protocol;   // "LL", "LL128", "SIMPLE"; may be ""
    std::string redop;      // lower case: "sum", "prod", "minmax", "premulsum", "sumpostdiv"; may be ""
    std::string dtype;      // canonical (CanonicalDtype); may be ""
};

// nullopt when the name is not an NCCL kernel's.
std::optional<NcclKernelInfo> ParseNcclKernelName(std::string_view kernelName);

// A collective named by NCCL ("AllReduce"), PyTorch ("allreduce", "_allgather_base",
// "nccl:all_to_all", "c10d::_reduce_scatter_base_", "send"), nccl-tests ("all_reduce_perf") or
// paralens ("reduce-scatter"). nullopt for anything else ("barrier").
std::optional<Collective> CollectiveFromName(std::string_view name);

// Data types from NCCL ("f32", "bf16"), C ("float", "int8_t", "__nv_bfloat16"), PyTorch ("Float",
// "BFloat16", "unsigned char", "Long") and nccl-tests ("float", "half"): the nccl-tests spelling
// (int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, fp8_e4m3, fp8_e5m2,
// int16, bool), or "" when unknown.
std::string CanonicalDtype(std::string_view name);
// Bytes per element of a dtype in any of those spellings; 0 when unknown.
uint64_t DtypeSizeBytes(std::string_view name);

// NCCL's algorithm names read as the lectures' algorithm they follow: RING -> ring, TREE,
// NVLS_TREE, COLLNET_CHAIN -> tree; nullopt for others (NVLS, COLLNET_DIRECT, PAT).
std::optional<Algorithm> AlgorithmFromNcclName(std::string_view name);

} // namespace paralens::core
