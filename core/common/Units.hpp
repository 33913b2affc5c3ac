// Parsing and printing of sizes, durations and rates as the CLI and tables show them.
// Sizes are uint64 bytes; "GB" is 1e9 bytes and "GiB" 2^30, as in the IEC convention;
// a bare "K", "M", "G" suffix is binary, as nccl-tests reads "-b 8 -e 128M".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace paralens::core {

// Parses "8", "64KiB", "64MiB", "1GiB", "1GB", "128M", "4096B". Case-insensitive units.
// Throws Error naming the text and the accepted forms when it does not parse or overflows.
uint64_t ParseBytes(std::string_view text);

// "64 MiB", "1.5 GiB", "8 B": binary units, at most 3 significant decimals.
std::string FormatBytes(uint64_t bytes);

// "12.3 us", "4.56 ms", "1.23 s", "850 ns".
std::string FormatSeconds(double seconds);

// Rounds seconds to the simulator's resolution (1 ps) so that equal times print equal.
double RoundToPicoseconds(double seconds);

} // namespace paralens::core
