// `paralens run --backend mpi --workload training`: a data-parallel training step of the lectures
// (core/schedule/DataParallel: forward and backward per layer, then the gradients summed by an
// allreduce, or pushed to parameter servers and the parameters pulled back) run for real by the
// processes of an mpirun job, one worker or server per process, through the WorkloadExecutor:
// real CPU GEMMs sized from --forward-ms and the probed sgemm peak, real gradient bytes, the
// allreduce's Plan checked. Rank 0 simulates the same workload on the alpha-beta model and
// reports each iteration measured beside it. Streams to a live launcher (app/live) when one
// started the job; rank 0 prints a table or JSON.
#pragma once

#include "model/Collective.hpp"

#include <cstdint>
#include <string>

namespace paralens::app::mpi {

struct MpiTrainingOptions {
    std::string workload = "dp";  // dp (allreduce) or ps (parameter servers, BSP)
    int layers = 4;
    int iterations = 3;           // traced training iterations
    int warmup = 1;               // iterations run before them, not traced
    double forwardMs = 5.0;       // a layer's forward on this CPU; its backward takes twice that
    uint64_t gradBytes = uint64_t{4} << 20; // per layer
    core::Algorithm algorithm = core::Algorithm::Ring; // dp
    int servers = 1;              // ps: the last `servers` processes
    int stragglerRank = -1;       // this worker's compute takes `slowdown` times longer
    double slowdown = 1.0;
    double alphaUs = 5.0;         // the model the run is compared with
    double bandwidthGBps = 2.0;
    double timeoutSec = 60.0;
    uint64_t seed = 1;
    std::string out;              // merged trace (rank 0); per-rank traces next to it
    bool json = false;
};

// Runs in every process; returns the exit code (0 ok, 3 a rank failed, 4 an allreduce's result
// was wrong). Throws paralens::Error for options the workload refuses.
int RunMpiTraining(const MpiTrainingOptions& options);

} // namespace paralens::app::mpi
