#include "trace/NcclKernelName.hpp"

#include "common/Text.hpp"

#include <array>
#include <cctype>
#include <utility>
#include <vector>

namespace paralens::core {

namespace {

// Lower case, letters and digits only: "_All_Gather-Base" -> "allgatherbase".
std::string Squash(std::string_view s)
{
    std::string out;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::vector<std::string_view> SplitUnderscore(std::string_view s)
{
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || s[i] == '_') {
            parts.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    return parts;
}

bool IsProtocol(std::string_view p) { return p == "LL" || p == "LL128" || p == "SIMPLE"; }

// Algorithms may hold an underscore (COLLNET_DIRECT, NVLS_TREE): joins parts[i] and parts[i+1]
// when they form one; returns how many parts were used (0 when parts[i] is no algorithm).
size_t ReadAlgorithm(const std::vector<std::string_view>& parts, size_t i, std::string& algo)
{
    static constexpr std::array<std::string_view, 4> kOne{"RING", "TREE", "NVLS", "PAT"};
    if (i + 1 < parts.size()) {
        std::string two = std::string(parts[i]) + "_" + std::string(parts[i + 1]);
        if (two == "COLLNET_DIRECT" || two == "COLLNET_CHAIN" || two == "NVLS_TREE") {
            algo = LowerAscii(two);
            return 2;
        }
    }
    for (std::string_view a : kOne)
        if (i < parts.size() && parts[i] == a) {
            algo = LowerAscii(a);
            return 1;
        }
    return 0;
}

std::string CollectiveName(std::string_view ncclColl)
{
    if (ncclColl == "Generic" || ncclColl == "Nop") return "";
    auto c = CollectiveFromName(ncclColl);
    return c ? std::string(Name(*c)) : LowerAscii(ncclColl);
}

// ncclDevKernel_<Coll>[_<RedOp>_<type>]_<ALGO>_<PROTO>
NcclKernelInfo ParseDevKernel(const std::vector<std::string_view>& parts)
{
    NcclKernelInfo info;
    info.collective = CollectiveName(parts[0]);
    size_t i = 1;
    if (i < parts.size() && !ReadAlgorithm(parts, i, info.algorithm)) { // a reduction: redop and type first
        info.algorithm.clear();
        info.redop = LowerAscii(parts[i++]);
        if (i < parts.size()) info.dtype = CanonicalDtype(parts[i++]);
    }
    if (size_t used = ReadAlgorithm(parts, i, info.algorithm)) i += used;
    if (i < parts.size() && IsProtocol(parts[i])) info.protocol = parts[i];
    return info;
}

// ncclKernel_<Coll>_<ALGO>_<PROTO>_<RedOp>_<type>; the type may hold underscores (__nv_bfloat16).
NcclKernelInfo ParseKernel(const std::vector<std::string_view>& parts)
{
    NcclKernelInfo info;
    info.collective = CollectiveName(parts[0]);
    size_t i = 1;
    if (size_t used = ReadAlgorithm(parts, i, info.algorithm)) i += used;
    if (i < parts.size() && IsProtocol(parts[i])) info.protocol = parts[i++];
    if (i < parts.size()) info.redop = LowerAscii(parts[i++]);
    std::string type;
    for (size_t k = i; k < parts.size(); ++k) type += (k > i ? "_" : "") + std::string(parts[k]);
    info.dtype = CanonicalDtype(type);
    return info;
}

// nccl<Coll><Algo><Proto>Kernel_<op>_<type> (NCCL <= 2.7)
std::optional<NcclKernelInfo> ParseLegacyKernel(std::string_view name)
{
    size_t k = name.find("Kernel_");
    if (k == std::string_view::npos || k < 5) return std::nullopt;
    std::string_view head = name.substr(4, k - 4); // AllReduceRingLL
    static constexpr std::array<std::string_view, 7> kColls{"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                                            "Reduce", "SendRecv", "AllToAll"};
    NcclKernelInfo info;
    for (std::string_view c : kColls) {
        if (!StartsWith(head, c)) continue;
        info.collective = CollectiveName(c);
        std::string_view rest = head.substr(c.size());
        for (std::string_view a : {"CollNet", "Ring", "Tree"})
            if (StartsWith(rest, a)) {
                info.algorithm = LowerAscii(a == "CollNet" ? "collnet_direct" : a);
                rest.remove_prefix(a.size());
            }
        if (!rest.empty()) info.protocol = rest == "LL128" ? "LL128" : rest == "LL" ? "LL" : LowerAscii(rest);
        auto parts = SplitUnderscore(name.substr(k + 7));
        if (!parts.empty()) info.redop = LowerAscii(parts[0]);
        if (parts.size() > 1) info.dtype = CanonicalDtype(parts[1]);
        return info;
    }
    return std::nullopt;
}

} // namespace

std::optional<NcclKernelInfo> ParseNcclKernelName(std::string_view name)
{
    size_t paren = name.find('(');
    if (paren != std::string_view::npos) name = name.substr(0, paren);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    for (std::string_view prefix : {"void ", "__global__ void "})
        if (StartsWith(name, prefix)) name.remove_prefix(prefix.size());
    if (StartsWith(name, "ncclDevKernel_") && name.size() > 14) return ParseDevKernel(SplitUnderscore(name.substr(14)));
    if (StartsWith(name, "ncclKernel_") && name.size() > 11) return ParseKernel(SplitUnderscore(name.substr(11)));
    if (StartsWith(name, "nccl")) return ParseLegacyKernel(name);
    return std::nullopt;
}

std::optional<Collective> CollectiveFromName(std::string_view name)
{
    std::string s = Squash(name);
    for (std::string_view prefix : {"nccldevkernel", "ncclkernel", "c10d", "nccl"})
        if (StartsWith(s, prefix)) {
            s.erase(0, prefix.size());
            break;
        }
    static constexpr std::pair<std::string_view, Collective> kPrefixes[] = {
        {"allreduce", Collective::AllReduce},   {"allgather", Collective::AllGather},
        {"reducescatter", Collective::ReduceScatter}, {"alltoall", Collective::AllToAll},
        {"broadcast", Collective::Broadcast},   {"sendrecv", Collective::SendRecv},
        {"send", Collective::SendRecv},         {"recv", Collective::SendRecv},
        {"p2p", Collective::SendRecv},          {"reduce", Collective::Reduce},
        {"gather", Collective::Gather},         {"scatter", Collective::Scatter},
    };
    for (const auto& [prefix, c] : kPrefixes)
        if (StartsWith(s, prefix)) return c;
    return std::nullopt;
}

std::string CanonicalDtype(std::string_view name)
{
    std::string s = LowerAscii(name);
    if (StartsWith(s, "torch.")) s.erase(0, 6);
    static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
        {"i8", "int8"}, {"int8", "int8"}, {"int8_t", "int8"}, {"char", "int8"}, {"signed char", "int8"},
        {"u8", "uint8"}, {"uint8", "uint8"}, {"uint8_t", "uint8"}, {"byte", "uint8"}, {"unsigned char", "uint8"},
        {"i32", "int32"}, {"int32", "int32"}, {"int32_t", "int32"}, {"int", "int32"},
        {"u32", "uint32"}, {"uint32", "uint32"}, {"uint32_t", "uint32"},
        {"i64", "int64"}, {"int64", "int64"}, {"int64_t", "int64"}, {"long", "int64"}, {"long int", "int64"},
        {"u64", "uint64"}, {"uint64", "uint64"}, {"uint64_t", "uint64"},
        {"f16", "half"}, {"half", "half"}, {"float16", "half"}, {"fp16", "half"},
        {"f32", "float"}, {"float", "float"}, {"float32", "float"}, {"fp32", "float"},
        {"f64", "double"}, {"double", "double"}, {"float64", "double"}, {"fp64", "double"},
        {"bf16", "bfloat16"}, {"bfloat16", "bfloat16"}, {"__nv_bfloat16", "bfloat16"},
        {"f8e4m3", "fp8_e4m3"}, {"__nv_fp8_e4m3", "fp8_e4m3"}, {"float8_e4m3fn", "fp8_e4m3"}, {"fp8_e4m3", "fp8_e4m3"},
        {"f8e5m2", "fp8_e5m2"}, {"__nv_fp8_e5m2", "fp8_e5m2"}, {"float8_e5m2", "fp8_e5m2"}, {"fp8_e5m2", "fp8_e5m2"},
        {"short", "int16"}, {"int16", "int16"}, {"bool", "bool"},
    };
    for (const auto& [from, to] : kNames)
        if (s == from) return std::string(to);
    return "";
}

uint64_t DtypeSizeBytes(std::string_view name)
{
    std::string c = CanonicalDtype(name);
    if (c == "int8" || c == "uint8" || c == "fp8_e4m3" || c == "fp8_e5m2" || c == "bool") return 1;
    if (c == "half" || c == "bfloat16" || c == "int16") return 2;
    if (c == "int32" || c == "uint32" || c == "float") return 4;
    if (c == "int64" || c == "uint64" || c == "double") return 8;
    return 0;
}

std::optional<Algorithm> AlgorithmFromNcclName(std::string_view name)
{
    std::string s = LowerAscii(name);
    if (s == "ring") return Algorithm::Ring;
    if (s == "tree" || s == "nvls_tree" || s == "collnet_chain") return Algorithm::Tree;
    return std::nullopt;
}

} // namespace paralens::core
