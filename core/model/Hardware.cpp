#include "model/Hardware.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>

namespace paralens::core {

extern const std::string_view kHardwareTableJson;

namespace {

std::string Lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::vector<GpuSpec> Parse()
{
    using Json = nlohmann::json;
    Json doc = Json::parse(kHardwareTableJson);
    std::vector<GpuSpec> out;
    for (const Json& g : doc.at("gpus")) {
        GpuSpec s;
        s.id = g.at("id").get<std::string>();
        s.name = g.at("name").get<std::string>();
        s.arch = g.value("arch", "");
        s.computeCapability = g.value("computeCapability", "");
        s.match = g.value("match", std::vector<std::string>{});
        s.memoryGB = g.value("memoryGB", 0.0);
        s.hbmGBps = g.value("hbmGBps", 0.0);
        s.sms = g.value("sms", 0.0);
        s.attentionVsGemm = g.value("attentionVsGemm", 0.0);
        s.attentionSource = g.value("attentionSource", std::string());
        if (g.contains("attentionFittedOn"))
            for (const auto& id : g.at("attentionFittedOn")) s.attentionFittedOn.push_back(id.get<std::string>());
        s.nvlinkGBps = g.value("nvlinkGBps", 0.0);
        s.nvlinkUniGBps = g.value("nvlinkUniGBps", 0.0);
        s.pcieGBps = g.value("pcieGBps", 0.0);
        for (const auto& [k, v] : g.at("tflops").items()) s.tflops[k] = v.get<double>();
        s.source = g.value("source", "");
        if (g.contains("mamfTflops"))
            for (const auto& [k, v] : g.at("mamfTflops").items()) s.mamfTflops[k] = v.get<double>();
        s.mamfSource = g.value("mamfSource", std::string());
        out.push_back(std::move(s));
    }
    return out;
}

// The table's key of a dtype as callers spell it ("BF16", "bfloat16", "half"): lower case in
// `buf`, aliases to their key; empty when too long to be one. No allocation: the planner asks for
// peaks and ceilings thousands of times a search.
std::string_view DtypeKey(std::string_view dtype, std::array<char, 16>& buf)
{
    if (dtype.size() > buf.size()) return {};
    for (size_t i = 0; i < dtype.size(); ++i) buf[i] = dtype[i] >= 'A' && dtype[i] <= 'Z' ? static_cast<char>(dtype[i] - 'A' + 'a') : dtype[i];
    const std::string_view key(buf.data(), dtype.size());
    if (key == "float32" || key == "float") return "fp32";
    if (key == "bfloat16") return "bf16";
    if (key == "float16" || key == "half") return "fp16";
    if (key == "float64" || key == "double") return "fp64";
    return key;
}

} // namespace

double GpuSpec::PeakFlops(std::string_view dtype) const
{
    std::array<char, 16> buf;
    auto it = tflops.find(DtypeKey(dtype, buf));
    return it == tflops.end() ? 0.0 : it->second * 1e12;
}

double GpuSpec::MatmulCeiling(std::string_view dtype) const
{
    std::array<char, 16> buf;
    std::string_view key = DtypeKey(dtype, buf);
    auto it = mamfTflops.find(key);
    if (it == mamfTflops.end() && key == "fp16") it = mamfTflops.find("bf16"), key = "bf16";
    const double peak = PeakFlops(key);
    return it == mamfTflops.end() || peak <= 0 ? 0.0 : it->second * 1e12 / peak;
}

const std::vector<GpuSpec>& HardwareTable()
{
    static const std::vector<GpuSpec> table = Parse();
    return table;
}

const GpuSpec* FindGpu(std::string_view idOrName)
{
    const auto& table = HardwareTable();
    std::string want = Lower(idOrName);
    for (const GpuSpec& g : table)
        if (g.id == want) return &g;
    for (const GpuSpec& g : table)
        for (const std::string& m : g.match)
            if (want.find(Lower(m)) != std::string::npos) return &g;
    return nullptr;
}

std::string GpuIdsList()
{
    std::string out;
    for (const GpuSpec& g : HardwareTable()) {
        if (!out.empty()) out += ", ";
        out += g.id;
    }
    return out;
}

} // namespace paralens::core
