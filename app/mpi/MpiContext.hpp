// The MPI process context of `paralens run --backend mpi`: MPI set up and torn down (RAII), this
// rank's identity, errors returned instead of aborting, and waits with a deadline so that a dead
// or hung peer ends the run with a message naming it instead of a hang. mpirun's SIGTERM (sent
// when another rank dies) is noticed by the waits, so this rank can still write its trace.
// Not thread-safe: one Context per process, used from the main thread.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace paralens::app::mpi {

// A failure of the run that names the ranks involved; what() is the one-line message.
class Failure : public std::runtime_error {
public:
    explicit Failure(const std::string& message) : std::runtime_error(message) {}
};

// Throws Failure with the expression, place and MPI's error string when `rc` is not MPI_SUCCESS.
void CheckMpi(int rc, const char* expression, const char* file, int line);
#define PARALENS_MPI_CHECK(expr) ::paralens::app::mpi::CheckMpi((expr), #expr, __FILE__, __LINE__)

class Context {
public:
    Context(int* argc, char*** argv);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    int Rank() const { return m_rank; }
    int Size() const { return m_size; }
    const std::string& Host() const { return m_host; }
    bool Terminated() const; // mpirun (or the user) asked this process to stop

    // This rank's clock in ns (steady clock; for tests, PARALENS_TEST_CLOCK_SKEW_NS adds rank x that
    // many ns and PARALENS_TEST_CLOCK_DRIFT_PPM makes rank r's clock run r x that many ppm fast, so
    // that clock alignment can be checked on one machine).
    int64_t NowNs() const;

    // Waits for every request; returns each one's completion time (NowNs). `peers[i]` is the rank
    // request i talks to. Throws Failure naming the peers still pending after `timeoutSec`, or when
    // the process is asked to stop. `what` says what was being done ("allreduce/ring step 3").
    std::vector<int64_t> WaitAll(std::span<MPI_Request> requests, std::span<const int> peers, double timeoutSec,
                                 const std::string& what) const;

private:
    int m_rank = 0;
    int m_size = 1;
    std::string m_host;
    int64_t m_skewNs = 0;
    double m_drift = 0.0;
};

} // namespace paralens::app::mpi
