// paralens_gpu_tests: the tests that need a GPU. On a machine without one they say so and pass
// (exit 0), so that CI without GPUs runs them as a no-op; on a GPU machine they run everything.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "gpu/CudaEnvironment.hpp"

#include <cstdio>
#include <cuda_runtime_api.h>

int main(int argc, char** argv)
{
    paralens::gpu::PrepareCudaEnvironment(); // as the app does: before CUDA starts
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::printf("no CUDA device (%s): the GPU tests were not run\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return 0;
    }
    std::printf("%d CUDA device(s): running the GPU tests\n", count);
    return Catch::Session().run(argc, argv);
}
