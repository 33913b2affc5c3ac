// The processes backend end to end: StartProcessJob runs `mpirun -np 4 paralens run --backend
// mpi` and streams the ranks' spans back while they run. Needs Open MPI (built only with it).
#include "live/ProcessJob.hpp"

#include "common/Error.hpp"
#include "LiveTestSupport.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

using namespace paralens;
using namespace paralens::app::live;

namespace {

ProcessRunRequest RingRequest(int iterations, const std::string& bytes = "1MiB")
{
    ProcessRunRequest r;
    r.ranks = 4;
    r.paralensExe = PARALENS_BINARY;
    r.title = "live ring";
    r.timeoutSec = 20;
    r.args = {"run", "--backend", "mpi", "--collective", "allreduce", "--algorithm", "ring", "--bytes", bytes,
              "--iters", std::to_string(iterations), "--warmup", "1", "--trace-iterations", std::to_string(iterations),
              "--timeout-s", "10", "--no-mpi-compare"};
    return r;
}

// Waits for a snapshot in which every rank has said hello and has spans.
std::shared_ptr<const core::Trace> WaitForAllRanks(core::Job& job, uint64_t& version)
{
    std::shared_ptr<const core::Trace> last;
    for (int i = 0; i < 3000 && !job.Done(); ++i) {
        if (auto t = job.Latest(&version)) last = t;
        if (last && last->Devices().size() == 4 && RankPids(*last).size() == 4 && RankPids(*last)[3] > 0) return last;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return last;
}

// The Error a job ended with ("" when it ended well).
std::string FailureOf(core::Job& job)
{
    try {
        job.Wait();
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

} // namespace

TEST_CASE("a 4-process ring allreduce streams partial snapshots and ends checked, with 4 rank rows", "[live][mpi]")
{
    auto job = StartProcessJob(RingRequest(150, "4MiB")); // about 0.5 s: the ranks stream every 100 ms
    uint64_t version = 0;
    std::set<size_t> partialSpanCounts;
    while (!job->Done()) {
        if (auto t = job->Latest(&version); t && !job->Done()) partialSpanCounts.insert(t->SpanCount());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const core::RunReport report = job->Wait();
    partialSpanCounts.erase(0);                              // a snapshot of the clocks alone
    partialSpanCounts.erase(report.trace->SpanCount());      // the last, published as the job ends
    INFO("partial snapshots with spans seen: " << partialSpanCounts.size());
    CHECK(partialSpanCounts.size() >= 2);
    REQUIRE(report.trace);
    REQUIRE(report.trace->Devices().size() == 4);
    for (const core::Device& d : report.trace->Devices()) {
        size_t spans = 0;
        for (uint32_t t : d.tracks) spans += report.trace->Tracks()[t].spans.size();
        CHECK(spans > 0);
    }
    CHECK(report.checksPassed);
    REQUIRE(report.rows.size() == 1);
    CHECK(report.rows[0].GetString("collective") == "allreduce");
    const core::MetaValue* correct = report.rows[0].Find("correct");
    REQUIRE(correct);
    CHECK(std::get<bool>(*correct));
    CHECK(report.trace->Flows().size() > 0); // messages paired into arrows
    if (!partialSpanCounts.empty()) CHECK(*partialSpanCounts.rbegin() < report.trace->SpanCount());
    for (pid_t p : RankPids(*report.trace)) CHECK(Gone(p));
}

TEST_CASE("Stop mid-run ends the job as cancelled, keeps what was measured and leaves no process", "[live][mpi]")
{
    auto job = StartProcessJob(RingRequest(100000));
    uint64_t version = 0;
    auto partial = WaitForAllRanks(*job, version);
    REQUIRE(partial);
    const std::vector<pid_t> pids = RankPids(*partial);
    job->Cancel();
    CHECK_THROWS_AS(job->Wait(), core::Cancelled);
    uint64_t none = 0;
    auto last = job->Latest(&none);
    REQUIRE(last);
    CHECK(last->SpanCount() >= partial->SpanCount());
    for (pid_t p : pids) CHECK(Gone(p));
}

TEST_CASE("a killed rank ends the job with an error naming it, the partial trace kept, no process left", "[live][mpi]")
{
    auto job = StartProcessJob(RingRequest(100000));
    uint64_t version = 0;
    auto partial = WaitForAllRanks(*job, version);
    REQUIRE(partial);
    const std::vector<pid_t> pids = RankPids(*partial);
    REQUIRE(pids.size() == 4);
    REQUIRE(::kill(pids[2], SIGKILL) == 0);
    const std::string message = FailureOf(*job);
    INFO(message);
    CHECK_THAT(message, Catch::Contains("rank 2"));
    uint64_t none = 0;
    auto last = job->Latest(&none);
    REQUIRE(last);
    CHECK(last->Devices().size() == 4);
    for (pid_t p : pids) CHECK(Gone(p));
}

TEST_CASE("a stopped (hung) rank is named once the others time out", "[live][mpi]")
{
    ProcessRunRequest r = RingRequest(100000);
    r.timeoutSec = 4;
    auto job = StartProcessJob(r);
    uint64_t version = 0;
    auto partial = WaitForAllRanks(*job, version);
    REQUIRE(partial);
    const std::vector<pid_t> pids = RankPids(*partial);
    REQUIRE(::kill(pids[1], SIGSTOP) == 0);
    const std::string message = FailureOf(*job);
    INFO(message);
    CHECK_THAT(message, Catch::Contains("rank 1"));
    for (pid_t p : pids) CHECK(Gone(p));
}

TEST_CASE("without mpirun the processes backend says so (Unavailable)", "[live]")
{
    ProcessRunRequest r = RingRequest(1);
    r.mpirun = "/nonexistent/mpirun";
    auto job = StartProcessJob(r);
    CHECK_THROWS_AS(job->Wait(), Unavailable);
    CHECK_THROWS_WITH(job->Wait(), Catch::Contains("mpirun"));
}
