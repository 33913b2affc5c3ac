// The GPU backend of a build without CUDA and NCCL: it says so.
#include "GpuBackend.hpp"

#include "common/Error.hpp"
#include "profiler/Capture.hpp"

namespace paralens::gpu {

namespace {
constexpr const char* kNotBuilt =
    "the GPU backend is not built into this paralens (CUDA and NCCL were not found when it was configured; "
    "see README, GPU backend). The simulator, importers and GUI work without it";
}

BuildInfo GetBuildInfo()
{
    BuildInfo b;
    b.cupti = prof::CuptiBuilt();
    return b;
}

bool BackendBuilt() { return false; }

DeviceReport DiscoverDevices()
{
    DeviceReport r;
    r.problem = kNotBuilt;
    return r;
}

std::array<uint8_t, ProcessGroup::kNcclIdBytes> NewNcclUniqueId() { throw Unavailable(kNotBuilt); }

std::unique_ptr<GpuJob> StartGpuJob(const RunRequest& request)
{
    ValidateRunRequest(request);
    throw Unavailable(kNotBuilt);
}

} // namespace paralens::gpu
