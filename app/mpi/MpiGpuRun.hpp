// `mpirun -np N paralens run --backend mpi --workload collective|gemm`: one process per GPU, on
// one host or many. Every process picks its GPU from its place on its host; rank 0 makes the NCCL
// unique id and MPI hands it to the others; each process then runs the GPU backend's workload as
// its rank of one NCCL communicator (collective) or on its own GPU (gemm), timed and captured
// (CUPTI, else CUDA events) like `paralens run --backend gpu`. Clocks are aligned by ping-pong
// at the start and the end; each rank writes its trace, rank 0 merges them (one row per rank,
// grouped by host) and prints the table (the slowest rank's time per size). A process that
// cannot run (no GPU, too few GPUs) makes every process stop with one message naming it.
#pragma once

#include "gpu/RunRequest.hpp"

#include <string>

namespace paralens::app::mpi {

struct MpiGpuRunOptions {
    gpu::RunRequest request; // workload collective or gemm; request.gpus: the GPUs a host's processes share out
    double timeoutSec = 300.0;
    std::string out;         // merged trace (rank 0); per-rank traces next to it (.rankN)
    bool json = false;
};

// Runs in every process; returns the exit code: 0 ok, 3 a rank cannot run or failed, 4 a result
// was wrong. Rank 0 prints the table or JSON.
int RunMpiGpuBackend(const MpiGpuRunOptions& options);

} // namespace paralens::app::mpi
