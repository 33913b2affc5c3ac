// `paralens run --backend mpi`: under mpirun, every process is one rank; the chosen collectives
// and algorithms run as real messages between the processes (PlanExecutor), next to MPI's own
// collectives; results are checked; host timestamps of every transfer go into one trace per rank
// (clock offsets to rank 0 measured by ping-pong at the start and the end), and rank 0 merges
// them into one trace with a row per rank. A dead or hung rank ends the run with a message naming
// it, and the surviving ranks still write their traces.
#pragma once

#include "model/Collective.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace paralens::app::mpi {

struct MpiRunOptions {
    std::vector<std::pair<core::Collective, core::Algorithm>> cases;
    uint64_t bytes = 1 << 20;
    int root = 0;
    int iterations = 5;
    int warmup = 1;
    int traceIterations = 20;  // the first this many timed iterations go into the traces
    double timeoutSec = 30.0;
    bool compareMpi = true;   // also time MPI's own collective
    bool check = true;        // check every result against the definition
    uint64_t seed = 1;
    std::string out;          // merged trace (rank 0); per-rank traces next to it (.rankN)
    bool json = false;
};

// Runs in every process; returns the process exit code (0 ok, 2 bad input, 3 a rank failed,
// 4 a result was wrong). Prints (rank 0) a table or JSON.
int RunMpiBackend(const MpiRunOptions& options);

// "run.json.gz", rank 3 -> "run.rank3.json.gz"
std::string RankTracePath(const std::string& out, int rank);

} // namespace paralens::app::mpi
