// A run's summary and rows as JSON and as the command line's text table.
#include "trace/MetaTable.hpp"

#include <catch2/catch.hpp>

using namespace paralens::core;

TEST_CASE("metadata sections become JSON in their own key order", "[io]")
{
    MetaSection s;
    s.Set("size", int64_t{1024});
    s.Set("busbw", 123.456789);
    s.Set("checked", true);
    s.Set("gpu", std::string("H100"));
    const nlohmann::ordered_json j = ToJson(s);
    CHECK(j.dump() == R"({"size":1024,"busbw":123.456789,"checked":true,"gpu":"H100"})");
}

TEST_CASE("rows print as a table: the first row's columns, right-aligned, '-' where a row lacks one", "[io]")
{
    MetaSection a, b;
    a.Set("bytes", int64_t{8});
    a.Set("timeUs", 12.345678);
    a.Set("checked", true);
    b.Set("bytes", int64_t{1073741824});
    b.Set("timeUs", 0.5);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    rows.push_back(ToJson(a));
    rows.push_back(ToJson(b));
    // widths: bytes 10 (its widest cell), timeUs and checked 8 (the least)
    CHECK(FormatTable(rows) == "#      bytes   timeUs  checked\n"
                               "           8    12.35      yes\n"
                               "  1073741824      0.5        -\n");
    CHECK(FormatTable(nlohmann::ordered_json::array()).empty());
    CHECK(FormatCell(false) == "no");
    CHECK(FormatCell(nlohmann::ordered_json::array({1, 2})) == "[1,2]");
}
