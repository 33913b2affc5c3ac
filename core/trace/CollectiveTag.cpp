#include "trace/CollectiveTag.hpp"

#include "common/CharConv.hpp"

#include <charconv>

namespace paralens::core {

namespace {

void Put(std::string& out, std::string_view key, std::string_view value)
{
    if (value.empty()) return;
    if (!out.empty()) out += ' ';
    out += key;
    out += '=';
    for (char c : value) {
        if (c == ' ') out += "%20";
        else if (c == '%') out += "%25";
        else out += c;
    }
}

std::string Unescape(std::string_view v)
{
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '%' && v.substr(i, 3) == "%20") {
            out += ' ';
            i += 2;
        } else if (v[i] == '%' && v.substr(i, 3) == "%25") {
            out += '%';
            i += 2;
        } else {
            out += v[i];
        }
    }
    return out;
}

template <class T> void ReadNumber(std::string_view v, T& out)
{
    T x{};
    auto r = paralens::FromChars(v.data(), v.data() + v.size(), x);
    if (r.ec == std::errc() && r.ptr == v.data() + v.size()) out = x;
}

} // namespace

std::string FormatCollectiveTag(const CollectiveTag& t)
{
    std::string out;
    Put(out, "collective", t.collective.empty() ? "unknown" : t.collective);
    Put(out, "algorithm", t.algorithm);
    Put(out, "protocol", t.protocol);
    Put(out, "redop", t.redop);
    Put(out, "dtype", t.dtype);
    if (t.ranks > 0) Put(out, "ranks", std::to_string(t.ranks));
    Put(out, "group", t.group);
    if (t.seq >= 0) Put(out, "seq", std::to_string(t.seq));
    Put(out, "half", t.half);
    Put(out, "bytesFrom", t.bytesFrom);
    Put(out, "kernel", t.kernel);
    return out;
}

std::optional<CollectiveTag> ParseCollectiveTag(std::string_view detail)
{
    CollectiveTag t;
    bool any = false;
    size_t i = 0;
    while (i < detail.size()) {
        size_t end = detail.find(' ', i);
        if (end == std::string_view::npos) end = detail.size();
        std::string_view item = detail.substr(i, end - i);
        i = end + 1;
        size_t eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        std::string_view key = item.substr(0, eq);
        std::string value = Unescape(item.substr(eq + 1));
        if (key == "collective") {
            t.collective = value;
            any = true;
        } else if (key == "algorithm") t.algorithm = value;
        else if (key == "protocol") t.protocol = value;
        else if (key == "redop") t.redop = value;
        else if (key == "dtype") t.dtype = value;
        else if (key == "group") t.group = value;
        else if (key == "half") t.half = value;
        else if (key == "bytesFrom") t.bytesFrom = value;
        else if (key == "kernel") t.kernel = value;
        else if (key == "ranks") ReadNumber(value, t.ranks);
        else if (key == "seq") ReadNumber(value, t.seq);
    }
    if (!any) return std::nullopt;
    return t;
}

} // namespace paralens::core
