// Starting NCCL across the processes of an mpirun job (`paralens run --backend mpi --workload
// collective|gemm`): each process picks the GPU it will drive from its place among the processes
// of its host, or says why it cannot; only when every process can does rank 0 make the NCCL
// unique id, which then reaches every process over MPI. When one cannot, every process learns
// why (one line per rank that cannot), so the job ends cleanly instead of hanging in NCCL.
// Collective over MPI_COMM_WORLD (except AssignGpu); every wait under the run's timeout.
#pragma once

#include "mpi/MpiContext.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace paralens::app::mpi {

inline constexpr size_t kNcclIdBytes = 128; // NCCL_UNIQUE_ID_BYTES
using NcclId = std::array<uint8_t, kNcclIdBytes>;

// This process's index among the job's processes on its host, and how many there are there.
struct LocalPlace {
    int rank = 0;
    int size = 1;
};
LocalPlace FindLocalPlace(const Context& ctx);

struct GpuAssignment {
    int gpu = -1;        // the CUDA ordinal this process drives
    std::string problem; // why it cannot ("" when gpu >= 0)
};
// The local rank-th of `usable` (the GPUs this process may use, in order: --gpus, or all of the
// host's). `whyNone` explains an empty list ("no CUDA device", "GPU backend not built").
GpuAssignment AssignGpu(LocalPlace place, const std::vector<int>& usable, const std::string& whyNone);

// "rank 2 (hostB): no CUDA device; ranks 0, 1 (hostA): ..." from each rank's "(host): why" ("" for
// a rank that can run), ranks with the same text named together.
std::string DescribeProblems(const std::vector<std::string>& problems);

struct Bootstrap {
    bool ok = false;
    NcclId ncclId{};
    std::string problem; // when !ok: every rank that cannot take part and why (DescribeProblems)
};
// `localProblem`: why this rank cannot take part ("" when it can). `makeId` runs on rank 0 only,
// only when every rank can; what it throws becomes the problem. Every rank gets the same result.
Bootstrap ShareNcclId(const Context& ctx, const std::string& localProblem, const std::function<NcclId()>& makeId, double timeout);

} // namespace paralens::app::mpi
