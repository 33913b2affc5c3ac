// Small statistics over samples, one definition for the readers, fits and tables that use them.
#pragma once

#include <algorithm>
#include <vector>

namespace paralens::core {

// The median: the middle sample, or the mean of the two middle ones; 0 for no samples.
inline double Median(std::vector<double> v)
{
    if (v.empty()) return 0.0;
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    if (v.size() % 2) return *mid;
    return (*std::max_element(v.begin(), mid) + *mid) / 2;
}

} // namespace paralens::core
