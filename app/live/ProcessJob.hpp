// The processes backend's launcher: starts `mpirun -np N paralens run --backend mpi ...` (paralens
// itself, one process per rank), listens on a private Unix socket for what the ranks stream
// (LiveProtocol.hpp), and publishes the merged Trace as it grows (a core::Job). Nothing is polled
// from files; the window never waits on it.
//
// Faults end the job with an Error naming the cause and the rank (mpirun missing, a rank that died
// or went silent past the timeout, a message that does not validate, a wrong result), after the
// last snapshot of what was measured has been published; Cancel() stops the job the same way
// (core::Cancelled). Either way every process of the job is gone when the job ends: mpirun runs
// in its own process group, which gets SIGTERM and, 2 s later, SIGKILL; the ranks' own PIDs
// (from their hellos) get the same.
#pragma once

#include "model/CostModel.hpp"
#include "run/Job.hpp"

#include <memory>
#include <string>
#include <vector>

namespace paralens::app::live {

struct ProcessRunRequest {
    int ranks = 4;
    std::vector<std::string> args; // paralens's arguments for each rank ("run", "--backend", "mpi", ...)
    std::string title;             // the snapshots' title
    double timeoutSec = 30.0;      // a rank silent this long (while not done) is declared hung
    std::string paralensExe;       // "" = $PARALENS_EXE, else this process's own executable
    std::string mpirun;            // "" = $PARALENS_MPIRUN, else "mpirun" from PATH
    int publishIntervalMs = 40;    // at most one snapshot per this many ms
    bool predict = false;          // give the spans the model's durations (outlines) with `model`
    core::CostParams model;
};

// The paralens executable ranks run: `request`'s, else $PARALENS_EXE, else /proc/self/exe.
std::string ParalensExecutable(const std::string& requested);
// mpirun's path, or "" when it cannot be found (then StartProcessJob's job fails with Unavailable).
std::string FindMpirun(const std::string& requested);

// Starts the job (the launch itself happens on the job's thread, so this never blocks).
std::unique_ptr<core::Job> StartProcessJob(const ProcessRunRequest& request);

} // namespace paralens::app::live
