#include "TextGantt.hpp"

#include "analysis/DeviceUsage.hpp"
#include "common/Units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace paralens::app {

namespace {

// Forward: 0-9 then A-Z; backward: the same in a different alphabet so the two read apart:
// micro-batch m backward prints 'a'+m (a-z); weight-gradient passes print 'w'; other compute '#'.
char Symbol(const core::Span& s)
{
    const int m = s.microBatch;
    switch (s.category) {
    case core::SpanCategory::Forward:
        if (m < 0) return 'F';
        return m < 10 ? static_cast<char>('0' + m) : m < 36 ? static_cast<char>('A' + m - 10) : '+';
    case core::SpanCategory::Backward:
        if (m < 0) return 'B';
        return m < 26 ? static_cast<char>('a' + m) : '-';
    case core::SpanCategory::WeightGrad: return 'w';
    default: return '#';
    }
}

} // namespace

std::string TextGantt(const core::Trace& t, int width, int64_t endNs)
{
    const int64_t begin = t.BeginNs();
    if (endNs <= begin || width < 8) return {};
    // Columns as a whole fraction or multiple of the shortest compute span, so that equal ops
    // print equally wide.
    int64_t quantum = 0;
    for (const core::Track& tr : t.Tracks())
        for (const core::Span& s : tr.spans)
            if (core::KindOf(s.category) == core::SpanKind::Compute && s.endNs > s.startNs)
                quantum = quantum ? std::min(quantum, s.endNs - s.startNs) : s.endNs - s.startNs;
    const double total = static_cast<double>(endNs - begin);
    double perColumn = total / width;
    if (quantum > 0) {
        const double quanta = total / static_cast<double>(quantum);
        perColumn = quanta <= width ? static_cast<double>(quantum) / std::min(3.0, std::floor(width / quanta))
                                    : static_cast<double>(quantum) * std::ceil(quanta / width);
        width = std::min(width, static_cast<int>(std::ceil(total / perColumn)));
    }
    std::string out;
    size_t nameWidth = 0;
    for (const core::Device& d : t.Devices()) nameWidth = std::max(nameWidth, t.Str(d.name).size());
    for (const core::Device& d : t.Devices()) {
        std::string row(static_cast<size_t>(width), '.');
        for (uint32_t tr : d.tracks)
            for (const core::Span& s : t.Tracks()[tr].spans) {
                if (core::KindOf(s.category) != core::SpanKind::Compute) continue;
                int a = static_cast<int>((s.startNs - begin) / perColumn + 0.5);
                int b = static_cast<int>((s.endNs - begin) / perColumn + 0.5);
                for (int c = std::max(a, 0); c < std::min(std::max(b, a + 1), width); ++c) row[static_cast<size_t>(c)] = Symbol(s);
            }
        std::string name(t.Str(d.name));
        out += name + std::string(nameWidth - name.size(), ' ') + " |" + row + "|\n";
    }
    char legend[200];
    std::snprintf(legend, sizeof legend, "%s  one column = %s; forward: 0-9 A-Z, backward: a-z, W: w, idle: .\n",
                  std::string(nameWidth, ' ').c_str(), core::FormatSeconds(perColumn * 1e-9).c_str());
    out += legend;
    return out;
}

} // namespace paralens::app
