#include "gpu/CudaEnvironment.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

namespace paralens::gpu {

namespace {
constexpr const char* kVariable = "CUDA_DEVICE_MAX_CONNECTIONS";
}

void PrepareCudaEnvironment() { setenv(kVariable, std::to_string(kParalensQueues).c_str(), 0); }

int HardwareQueues()
{
    const char* value = std::getenv(kVariable);
    if (!value) return kCudaDefaultQueues;
    int n = 0;
    const char* end = value + std::strlen(value);
    const auto [at, ec] = std::from_chars(value, end, n);
    return ec == std::errc() && at == end && n >= 1 && n <= kParalensQueues ? n : kCudaDefaultQueues;
}

std::string QueueSharingNote(int streams)
{
    const int queues = HardwareQueues();
    if (streams <= queues) return {};
    return std::to_string(streams) + " streams on one GPU share its " + std::to_string(queues) +
           " hardware queues (CUDA_DEVICE_MAX_CONNECTIONS): work on one may wait behind another's; up to " +
           std::to_string(kParalensQueues) + " queues avoid it";
}

} // namespace paralens::gpu
