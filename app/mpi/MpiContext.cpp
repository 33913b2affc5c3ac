#include "mpi/MpiContext.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>
#include <unistd.h>

namespace paralens::app::mpi {

namespace {

volatile std::sig_atomic_t g_stopSignal = 0;

extern "C" void OnStopSignal(int signal) { g_stopSignal = signal; }

int64_t SteadyNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

void CheckMpi(int rc, const char* expression, const char* file, int line)
{
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw Failure(std::string(expression) + " failed at " + file + ":" + std::to_string(line) + ": " + std::string(text, static_cast<size_t>(length)));
}

Context::Context(int* argc, char*** argv)
{
    int provided = 0;
    CheckMpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread", __FILE__, __LINE__);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    m_host = host;
    if (const char* s = std::getenv("PARALENS_TEST_CLOCK_SKEW_NS")) m_skewNs = std::atoll(s) * m_rank;
    if (const char* d = std::getenv("PARALENS_TEST_CLOCK_DRIFT_PPM")) m_drift = std::atof(d) * 1e-6 * m_rank;
    std::signal(SIGTERM, OnStopSignal);
    std::signal(SIGINT, OnStopSignal);
}

Context::~Context()
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

bool Context::Terminated() const { return g_stopSignal != 0; }

int64_t Context::NowNs() const
{
    const int64_t t = SteadyNs();
    return t + m_skewNs + static_cast<int64_t>(static_cast<double>(t) * m_drift);
}

std::vector<int64_t> Context::WaitAll(std::span<MPI_Request> requests, std::span<const int> peers, double timeoutSec,
                                      const std::string& what) const
{
    std::vector<int64_t> done(requests.size(), -1);
    size_t pending = requests.size();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSec);
    int idleRounds = 0;
    while (pending > 0) {
        bool progressed = false;
        for (size_t i = 0; i < requests.size(); ++i) {
            if (done[i] >= 0) continue;
            int flag = 0;
            PARALENS_MPI_CHECK(MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE));
            if (!flag) continue;
            done[i] = NowNs();
            --pending;
            progressed = true;
        }
        if (pending == 0) break;
        if (Terminated())
            throw Failure("rank " + std::to_string(m_rank) + ": stopped by signal " + std::to_string(g_stopSignal) + " during " +
                          what + " (mpirun stops the other ranks when one fails)");
        if (std::chrono::steady_clock::now() > deadline) {
            std::set<int> silent;
            for (size_t i = 0; i < requests.size(); ++i)
                if (done[i] < 0) silent.insert(peers[i]);
            std::string who;
            for (int r : silent) who += (who.empty() ? "rank " : ", rank ") + std::to_string(r);
            char limit[32];
            std::snprintf(limit, sizeof limit, "%g", timeoutSec);
            throw Failure("rank " + std::to_string(m_rank) + ": no answer from " + who + " within " + limit + " s during " +
                          what + "; it may have died or hung");
        }
        // Spin briefly, then yield: ranks may outnumber cores (mpirun --oversubscribe).
        if (!progressed && ++idleRounds > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
        if (progressed) idleRounds = 0;
    }
    return done;
}

} // namespace paralens::app::mpi
