#include "OpLabel.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace paralens::prof {

namespace {

template <class T>
bool ParseInt(std::string_view text, T& out)
{
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

bool ParseDouble(std::string_view text, double& out)
{
    // std::from_chars for double is in libstdc++ 11+; strtod on a bounded copy is portable.
    std::string copy(text);
    char* end = nullptr;
    out = std::strtod(copy.c_str(), &end);
    return !copy.empty() && end == copy.c_str() + copy.size();
}

void AppendInt(std::string& out, const char* key, long long value)
{
    out += ' ';
    out += key;
    out += '=';
    out += std::to_string(value);
}

bool ApplyField(OpLabel& label, std::string_view key, std::string_view value, bool& sawCategory)
{
    if (key == "cat") {
        label.category = core::ParseSpanCategory(value);
        sawCategory = true;
        return core::Name(label.category) == value;
    }
    if (key == "mb") return ParseInt(value, label.microBatch);
    if (key == "ch") return ParseInt(value, label.chunk);
    if (key == "st") return ParseInt(value, label.step);
    if (key == "by") return ParseInt(value, label.bytes);
    if (key == "fl") return ParseDouble(value, label.flops);
    if (key == "pr") return ParseInt(value, label.predictedNs);
    if (key == "src") return ParseInt(value, label.srcRank);
    if (key == "dst") return ParseInt(value, label.dstRank);
    if (key == "op") return ParseInt(value, label.opId);
    if (key == "dt") {
        label.detail = std::string(value);
        return !value.empty();
    }
    return true; // unknown keys are skipped: later versions may add fields
}

} // namespace

std::string FormatOpLabel(const OpLabel& label)
{
    std::string out = label.name.empty() ? std::string("op") : label.name;
    for (char& c : out)
        if (c == ' ') c = '_';
    out += " cat=";
    out += core::Name(label.category);
    if (label.microBatch != core::kNone) AppendInt(out, "mb", label.microBatch);
    if (label.chunk != core::kNone) AppendInt(out, "ch", label.chunk);
    if (label.step != core::kNone) AppendInt(out, "st", label.step);
    if (label.bytes != 0) out += " by=" + std::to_string(label.bytes);
    if (label.flops != 0.0) {
        char buf[40];
        std::snprintf(buf, sizeof buf, " fl=%.17g", label.flops);
        out += buf;
    }
    if (label.predictedNs != core::kNoPrediction) AppendInt(out, "pr", label.predictedNs);
    if (label.srcRank != core::kNone) AppendInt(out, "src", label.srcRank);
    if (label.dstRank != core::kNone) AppendInt(out, "dst", label.dstRank);
    if (label.opId != 0) out += " op=" + std::to_string(label.opId);
    if (!label.detail.empty()) {
        std::string detail = label.detail;
        for (char& c : detail)
            if (c == ' ') c = '_';
        out += " dt=" + detail;
    }
    return out;
}

std::optional<OpLabel> ParseOpLabel(std::string_view text)
{
    OpLabel label;
    size_t pos = text.find(' ');
    label.name = std::string(text.substr(0, pos));
    if (label.name.empty()) return std::nullopt;
    bool sawCategory = false;
    while (pos != std::string_view::npos) {
        const size_t begin = pos + 1;
        pos = text.find(' ', begin);
        const std::string_view field = text.substr(begin, pos == std::string_view::npos ? std::string_view::npos : pos - begin);
        if (field.empty()) continue;
        const size_t eq = field.find('=');
        if (eq == std::string_view::npos) return std::nullopt;
        if (!ApplyField(label, field.substr(0, eq), field.substr(eq + 1), sawCategory)) return std::nullopt;
    }
    if (!sawCategory) return std::nullopt;
    return label;
}

} // namespace paralens::prof
