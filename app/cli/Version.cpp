// paralens --version [--json]: the version and what this binary was built with.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "gpu/GpuBackend.hpp"

#include <cstdio>

#ifndef PARALENS_VERSION
#define PARALENS_VERSION "dev"
#endif
#ifndef PARALENS_HAVE_GUI
#define PARALENS_HAVE_GUI 0
#endif
#ifndef PARALENS_HAVE_MPI
#define PARALENS_HAVE_MPI 0
#endif
#ifndef PARALENS_BUILD_TYPE
#define PARALENS_BUILD_TYPE ""
#endif

namespace paralens::app {

int PrintVersion(bool json)
{
    const gpu::BuildInfo b = gpu::GetBuildInfo();
    if (json) {
        nlohmann::json j{{"version", PARALENS_VERSION},
                         {"buildType", PARALENS_BUILD_TYPE},
                         {"gui", PARALENS_HAVE_GUI != 0},
                         {"gpuBackend", b.gpuBackend},
                         {"cuda", {{"built", b.gpuBackend}, {"version", b.cudaVersion}, {"architectures", b.cudaArchitectures}}},
                         {"nccl", {{"built", b.gpuBackend}, {"version", b.ncclVersion}, {"profilerPlugin", b.ncclProfilerPlugin}}},
                         {"cupti", {{"built", b.cupti}, {"apiVersion", b.cuptiVersion}}},
                         {"mpi", PARALENS_HAVE_MPI != 0}};
        PrintJson(j);
        return 0;
    }
    std::printf("paralens %s\n", PARALENS_VERSION);
    if (b.gpuBackend)
        std::printf("  GPU backend: built with CUDA %s (architectures %s) and NCCL %s\n", b.cudaVersion.c_str(),
                    b.cudaArchitectures.c_str(), b.ncclVersion.c_str());
    else std::printf("  GPU backend: not built (CUDA and NCCL were not found when paralens was configured)\n");
    if (b.cupti) std::printf("  CUPTI: built (API %s)\n", b.cuptiVersion.c_str());
    else std::printf("  CUPTI: not built\n");
    std::printf("  GUI: %s\n", PARALENS_HAVE_GUI ? "built" : "not built");
    std::printf("  MPI backend: %s\n", PARALENS_HAVE_MPI ? "built (mpirun -np N paralens run --backend mpi ...)" : "not built (Open MPI was not found)");
    return 0;
}

} // namespace paralens::app
