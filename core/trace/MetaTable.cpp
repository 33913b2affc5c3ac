#include "trace/MetaTable.hpp"

#include <algorithm>
#include <cstdio>
#include <variant>
#include <vector>

namespace paralens::core {

nlohmann::ordered_json ToJson(const MetaSection& section)
{
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [key, value] : section.Entries()) std::visit([&, k = key](const auto& v) { j[k] = v; }, value);
    return j;
}

std::string FormatCell(const nlohmann::ordered_json& value)
{
    if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
    if (value.is_number_integer()) return value.dump();
    if (value.is_number()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.4g", value.get<double>());
        return buf;
    }
    return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string FormatTable(const nlohmann::ordered_json& rows)
{
    if (!rows.is_array() || rows.empty()) return {};
    std::vector<std::string> columns;
    for (const auto& [key, value] : rows.front().items()) columns.push_back(key);
    std::vector<size_t> width;
    for (const std::string& c : columns) width.push_back(std::max<size_t>(c.size(), 8));
    auto cell = [&](const nlohmann::ordered_json& row, size_t c) {
        return row.contains(columns[c]) ? FormatCell(row[columns[c]]) : std::string("-");
    };
    for (const auto& row : rows)
        for (size_t c = 0; c < columns.size(); ++c) width[c] = std::max(width[c], cell(row, c).size());
    auto pad = [&](const std::string& text, size_t c) { return std::string(width[c] - std::min(width[c], text.size()), ' ') + text; };
    std::string out = "#";
    for (size_t c = 0; c < columns.size(); ++c) out += " " + pad(columns[c], c);
    out += "\n";
    for (const auto& row : rows) {
        out += " ";
        for (size_t c = 0; c < columns.size(); ++c) out += " " + pad(cell(row, c), c);
        out += "\n";
    }
    return out;
}

} // namespace paralens::core
