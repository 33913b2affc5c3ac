// `paralens sweep --backend mpi`: a size sweep of one collective and algorithm between the
// processes of an mpirun job, printed like nccl-tests, then a least-squares alpha-beta fit of the
// measured times (core/analysis/Fitting.hpp) with each row's model time and error; the fit can be
// saved for `paralens simulate --model` and the Model view.
#pragma once

#include "model/Collective.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::app::mpi {

struct MpiSweepOptions {
    core::Collective collective = core::Collective::AllReduce;
    core::Algorithm algorithm = core::Algorithm::Ring;
    std::vector<uint64_t> sizes;
    std::string dtype = "float";
    uint64_t elementBytes = 4;
    int root = 0;
    int iterations = 5;
    int warmup = 1;
    double timeoutSec = 30.0;
    uint64_t checkMaxBytes = 16 << 20; // results checked up to this size
    std::string fitOut;
    bool json = false;
};

// Runs in every process; returns the exit code (0 ok, 3 a rank failed, 4 a wrong result).
int RunMpiSweep(const MpiSweepOptions& options);

} // namespace paralens::app::mpi
