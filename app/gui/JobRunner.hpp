// Runs work off the GUI thread. Each lane ("simulate", "file", "export") has one worker thread;
// a new job in a lane supersedes the queued one and asks the running one to stop (it checks
// JobContext::Cancelled() between pieces of work; its result is dropped either way). A finished
// job yields a closure that the GUI thread runs in Poll() (to swap in a Snapshot, open a dialog),
// so results are published on the GUI thread only. Exceptions in a job become an error closure
// built by the job's `onError`; none escapes a worker thread.
//
// Thread-safety: Submit, Cancel, Status and Poll are called from one thread (the GUI thread);
// the `wake` callback is called from workers (glfwPostEmptyEvent is safe there).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace paralens::app {

class JobContext {
public:
    bool Cancelled() const { return m_cancelled.load(std::memory_order_relaxed); }
    // Fraction done in [0, 1]; negative (the default) when unknown.
    void SetProgress(double fraction) { m_progress.store(fraction, std::memory_order_relaxed); }
    double Progress() const { return m_progress.load(std::memory_order_relaxed); }
    void Cancel() { m_cancelled.store(true, std::memory_order_relaxed); }

private:
    std::atomic<bool> m_cancelled{false};
    std::atomic<double> m_progress{-1.0};
};

using Apply = std::function<void()>;                    // runs on the GUI thread
using JobWork = std::function<Apply(JobContext&)>;       // runs on a worker
using JobError = std::function<Apply(const std::string&)>; // builds the closure for an error message

struct JobStatus {
    bool running = false;
    std::string label;
    double progress = -1.0;
    double elapsedSeconds = 0.0;
};

class JobRunner {
public:
    explicit JobRunner(std::function<void()> wake = {});
    ~JobRunner(); // cancels everything and joins the workers
    JobRunner(const JobRunner&) = delete;
    JobRunner& operator=(const JobRunner&) = delete;

    void Submit(const std::string& lane, const std::string& label, JobWork work, JobError onError);
    void Cancel(const std::string& lane);
    // The job running or queued in a lane.
    JobStatus Status(const std::string& lane) const;
    // Runs (on the calling thread) the closures of jobs finished since the last call; returns
    // how many ran.
    int Poll();
    bool Busy() const; // any job queued or running

private:
    struct Job;
    struct Lane;
    Lane& LaneFor(const std::string& name);
    void Worker(Lane& lane);

    std::function<void()> m_wake;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_stopping = false;
    std::vector<std::unique_ptr<Lane>> m_lanes;
    std::vector<Apply> m_done;
};

} // namespace paralens::app
