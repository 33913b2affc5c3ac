// The worker that keeps the GUI responsive (app/gui/JobRunner.hpp).
#include "JobRunner.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace paralens::app;

namespace {

// Polls until `done` or a few seconds pass.
template <class Pred>
bool PollUntil(JobRunner& jobs, Pred done)
{
    for (int i = 0; i < 500 && !done(); ++i) {
        jobs.Poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    jobs.Poll();
    return done();
}

} // namespace

TEST_CASE("a job's result is applied on the polling thread", "[gui]")
{
    JobRunner jobs;
    int value = 0;
    const auto gui = std::this_thread::get_id();
    std::thread::id appliedOn;
    jobs.Submit("sim", "compute", [](JobContext&) -> Apply { return [] {}; }, nullptr);
    jobs.Submit("other", "compute", [&](JobContext&) -> Apply {
        const int computed = 42;
        return [&, computed] { value = computed; appliedOn = std::this_thread::get_id(); };
    }, nullptr);
    REQUIRE(PollUntil(jobs, [&] { return value == 42; }));
    CHECK(appliedOn == gui);
    CHECK_FALSE(jobs.Busy());
}

TEST_CASE("a newer job in a lane supersedes the running one, whose result is dropped", "[gui]")
{
    JobRunner jobs;
    std::atomic<bool> started{false};
    int applied = 0;
    jobs.Submit("sim", "slow", [&](JobContext& ctx) -> Apply {
        started = true;
        while (!ctx.Cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return [&] { applied = 1; };
    }, nullptr);
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(jobs.Status("sim").running);
    CHECK(jobs.Status("sim").label == "slow");
    jobs.Submit("sim", "fast", [&](JobContext&) -> Apply { return [&] { applied = 2; }; }, nullptr);
    REQUIRE(PollUntil(jobs, [&] { return applied == 2 && !jobs.Busy(); }));
    jobs.Poll();
    CHECK(applied == 2);
}

TEST_CASE("an exception in a job becomes the error closure, cancelling drops the result", "[gui]")
{
    JobRunner jobs;
    std::string error;
    jobs.Submit("file", "load", [](JobContext&) -> Apply { throw std::runtime_error("trace.json: bad"); },
                [&](const std::string& msg) -> Apply { return [&, msg] { error = msg; }; });
    REQUIRE(PollUntil(jobs, [&] { return !error.empty(); }));
    CHECK(error == "trace.json: bad");

    std::atomic<bool> started{false};
    bool applied = false;
    jobs.Submit("file", "big", [&](JobContext& ctx) -> Apply {
        started = true;
        ctx.SetProgress(0.5);
        while (!ctx.Cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return [&] { applied = true; };
    }, nullptr);
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(jobs.Status("file").progress == Approx(0.5));
    jobs.Cancel("file");
    REQUIRE(PollUntil(jobs, [&] { return !jobs.Busy(); }));
    CHECK_FALSE(applied);
    CHECK_FALSE(jobs.Status("file").running);
}
