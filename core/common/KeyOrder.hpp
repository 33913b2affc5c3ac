// StableOrderByKey: the permutation that sorts records by an int64 key, ties in their given
// order, for records too large to move through a comparison sort (a trace's arrows by their
// source time). Keys spread over a range, as times are, cost two passes over them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace paralens::core {

// order[k] is the index of the k-th smallest key; equal keys keep their order in `keys`. Fewer
// than 2^32 keys.
std::vector<uint32_t> StableOrderByKey(std::span<const int64_t> keys);

} // namespace paralens::core
