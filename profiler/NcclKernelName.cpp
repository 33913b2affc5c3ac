#include "NcclKernelName.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

namespace paralens::prof {

namespace {

std::string Lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::vector<std::string_view> SplitUnderscore(std::string_view s)
{
    std::vector<std::string_view> parts;
    size_t begin = 0;
    while (begin <= s.size()) {
        size_t end = s.find('_', begin);
        if (end == std::string_view::npos) end = s.size();
        if (end > begin) parts.push_back(s.substr(begin, end - begin));
        begin = end + 1;
    }
    return parts;
}

std::optional<std::string> CollectiveName(std::string_view token)
{
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kNames{{
        {"AllReduce", "allreduce"}, {"AllGather", "allgather"}, {"ReduceScatter", "reduce-scatter"},
        {"Broadcast", "broadcast"}, {"Reduce", "reduce"},       {"SendRecv", "sendrecv"},
        {"AllToAll", "alltoall"},   {"Gather", "gather"},       {"Scatter", "scatter"},
        {"Generic", ""},
    }};
    for (const auto& [nccl, ours] : kNames)
        if (token == nccl) return std::string(ours);
    return std::nullopt;
}

bool IsProtocol(std::string_view t) { return t == "LL" || t == "LL128" || t == "SIMPLE"; }

bool IsRedOp(std::string_view t)
{
    return t == "Sum" || t == "Prod" || t == "Max" || t == "Min" || t == "PreMulSum" || t == "SumPostDiv" ||
           t == "MinMax";
}

// Algorithms spelled with one or two tokens; returns the tokens used (0 when none matches).
int MatchAlgorithm(const std::vector<std::string_view>& t, size_t i, std::string& out)
{
    if (i + 1 < t.size()) {
        const std::string two = std::string(t[i]) + "_" + std::string(t[i + 1]);
        if (two == "COLLNET_DIRECT" || two == "COLLNET_CHAIN" || two == "NVLS_TREE") {
            out = Lower(two);
            return 2;
        }
    }
    if (i < t.size() && (t[i] == "RING" || t[i] == "TREE" || t[i] == "NVLS" || t[i] == "PAT" || t[i] == "COLLNET")) {
        out = Lower(t[i]);
        return 1;
    }
    return 0;
}

std::string_view StripDecorations(std::string_view name)
{
    if (name.substr(0, 5) == "void ") name.remove_prefix(5);
    const size_t paren = name.find('(');
    if (paren != std::string_view::npos) name = name.substr(0, paren);
    const size_t angle = name.find('<');
    if (angle != std::string_view::npos) name = name.substr(0, angle);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    return name;
}

} // namespace

std::optional<NcclKernelInfo> ParseNcclKernelName(std::string_view kernelName)
{
    std::string_view name = StripDecorations(kernelName);
    bool modern = false;
    if (name.substr(0, 14) == "ncclDevKernel_") {
        modern = true;
        name.remove_prefix(14);
    } else if (name.substr(0, 11) == "ncclKernel_") {
        name.remove_prefix(11);
    } else {
        return std::nullopt;
    }
    const std::vector<std::string_view> t = SplitUnderscore(name);
    if (t.empty()) return std::nullopt;
    auto coll = CollectiveName(t[0]);
    if (!coll) return std::nullopt;
    NcclKernelInfo info;
    info.collective = *coll;
    size_t i = 1;
    // Modern: [RedOp type] ALGO PROTO. Legacy: ALGO PROTO [RedOp type].
    auto readRedOp = [&] {
        if (i < t.size() && IsRedOp(t[i])) {
            info.redop = Lower(t[i++]);
            // A type may itself contain underscores in the legacy spelling ("int8_t", "__nv_bfloat16").
            std::string type;
            std::string ignored;
            while (i < t.size() && !IsProtocol(t[i]) && MatchAlgorithm(t, i, ignored) == 0) {
                if (!type.empty()) type += '_';
                type += std::string(t[i++]);
            }
            info.dtype = type;
        }
    };
    auto readAlgoProto = [&] {
        if (int used = MatchAlgorithm(t, i, info.algorithm)) i += static_cast<size_t>(used);
        if (i < t.size() && IsProtocol(t[i])) info.protocol = std::string(t[i++]);
    };
    if (modern) {
        readRedOp();
        readAlgoProto();
    } else {
        readAlgoProto();
        readRedOp();
    }
    // A trailing part not understood (the "_1" of "Generic_1", a future field) is ignored: the
    // collective is known, which is what classification needs.
    return info;
}

std::string Describe(const NcclKernelInfo& info)
{
    std::string out = info.collective.empty() ? "nccl" : info.collective;
    for (const std::string* part : {&info.algorithm, &info.protocol, &info.dtype})
        if (!part->empty()) out += " " + *part;
    return out;
}

} // namespace paralens::prof
