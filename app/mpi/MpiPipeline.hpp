// `paralens run --backend mpi --workload pipeline`: a pipeline schedule (core/schedule) run for
// real by the processes of an mpirun job, one stage per process. Every F, B and W op is a real
// CPU GEMM (OpenBLAS, one thread per process) sized so that a forward takes about --forward-ms on
// this CPU (its single-thread sgemm peak is probed first, rank by rank); activations (tokens x
// hidden floats) travel forward and gradients backward as real MPI messages, and every stage
// checks that what it received is the micro-batch and virtual stage it expected. Spans carry
// their FLOPs, so MFU is measured against the probed peak. Streams to a live launcher
// (app/live) when one started the job; rank 0 prints a table or JSON.
#pragma once

#include "schedule/Schedule.hpp"

#include <string>

namespace paralens::app::mpi {

struct MpiPipelineOptions {
    core::ScheduleKind schedule = core::ScheduleKind::OneFOneB;
    int microBatches = 8;
    int chunks = 1;      // v (interleaved)
    int batches = 1;     // pipedream
    bool recompute = false;
    int tokens = 256;    // rows of a micro-batch's activation
    int hidden = 0;      // 0: sized from forwardMs and the probed peak
    double forwardMs = 20.0;
    int iterations = 3;  // timed training steps
    int warmup = 1;
    double timeoutSec = 30.0;
    std::string out;     // merged trace (rank 0); per-rank traces next to it
    bool json = false;
};

// Runs in every process; returns the exit code (0 ok, 3 a rank failed, 4 a received tensor was
// not the one expected). Throws paralens::Error for options the schedule refuses.
int RunMpiPipeline(const MpiPipelineOptions& options);

} // namespace paralens::app::mpi
