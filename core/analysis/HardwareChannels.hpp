// The hardware queues GPU work went through, read back from a captured Trace. CUPTI (CUDA 13)
// tells for each kernel and copy the channel it ran in: a compute channel (work for the SMs) or an
// asynchronous copy engine's. The capture writes it into the span's detail ("hw channel 12",
// "copy engine, hw channel 40"); these functions write and read that text, and find the channels
// that several tracks (streams) shared: work queued on one of them waits behind the other's, a
// dependency the program never asked for. A GPU has one set of channels for all its contexts
// (CUDA_DEVICE_MAX_CONNECTIONS compute queues, 8 by default): green contexts, and so one GPU's
// virtual ranks, share it. Pure functions; thread-safe.
#pragma once

#include "trace/Trace.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

struct HardwareChannel {
    uint32_t id = 0;
    bool copyEngine = false;
};

// "hw channel 12" (a compute channel) or "copy engine, hw channel 40".
std::string DescribeHardwareChannel(HardwareChannel c);
// The channel a span's detail names, if any (the text above anywhere in it).
std::optional<HardwareChannel> ParseHardwareChannel(std::string_view detail);

struct SharedChannel {
    uint32_t device = 0;          // the Trace device of the first track (its GPU's channels)
    uint32_t channel = 0;
    std::vector<uint32_t> tracks; // two or more, ascending; of any device on the same GPU
};

struct ChannelReport {
    size_t spansWithChannel = 0;     // 0: the Trace does not say (older CUPTI, other sources)
    size_t copiesOnSms = 0;          // copies run in a compute channel (a kernel on some SMs)
    size_t copiesOnCopyEngine = 0;   // copies run by a copy engine
    std::vector<SharedChannel> shared; // compute channels more than one track used, per GPU (host, gpuIndex)
};
ChannelReport ComputeChannelReport(const Trace& trace);

} // namespace paralens::core
