// `paralens run --backend processes`: the window's processes backend from the command line, through
// the same runner (gui/ExperimentRunner: one Experiment, StartExperiment, MeasuredRun): paralens
// starts `mpirun -np N paralens run --backend mpi ...` itself, shows the ranks' progress as they
// stream it, and prints the measurement next to the model. Ctrl-C stops the run and every process.
#pragma once

#include <string>

namespace paralens::app {

struct ProcessesRunOptions {
    std::string workload;   // "" or "plan": a collective's Plan; "pipeline": one stage per process;
                            // "training": one data-parallel worker (or server) per process
    std::string collective = "allreduce", algorithm, bytes;
    int ranks = 4, root = 0;
    std::string schedule = "1f1b";
    int stages = 4, microbatches = 8, chunks = 1;
    bool recompute = false;
    double forwardMs = 20.0;
    // training
    std::string training = "dp", gradBytes = "4MiB";
    int workers = 4, layers = 4, servers = 1, stragglerRank = -1;
    double slowdown = 1.0;
    int iters = -1, warmup = -1; // -1: 20 (collective) or 2 (pipeline), and 1
    double timeoutSec = 30.0;
    double alphaUs = 5.0, bandwidthGBps = 0.0; // the model beside the measurement (0: 100 GB/s)
    std::string out;
    bool json = false;
};

// Returns the exit code (0, 1 when a result was wrong); throws Error / Unavailable like every run.
int RunOnProcesses(const ProcessesRunOptions& options);

} // namespace paralens::app
