// A run on a worker thread, the one interface every backend implements (the simulator, local
// processes, GPUs): it publishes Trace snapshots while it runs (each is the whole run so far,
// immutable, so a view just swaps to the newest), reports progress, can be cancelled, and hands
// over its report at the end.
//
// For the GUI: poll Latest(&version) once per frame (a mutex and a shared_ptr copy, never a wait)
// and swap the view's trace when the version grew; show Progress(); call Cancel() from a button;
// once Done(), Wait() returns the report at once (or rethrows the run's Error, which the GUI
// shows in a dialog). Destroying a job cancels it and joins its thread.
//
// Thread-safety: every public member may be called from any thread. The body runs on the job's
// own thread; no exception escapes it (it is kept and rethrown by Wait()).
#pragma once

#include "trace/Trace.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace paralens::core {

struct RunReport {
    std::shared_ptr<const Trace> trace;
    MetaSection summary;            // headline numbers and settings
    std::vector<MetaSection> rows;  // one per size / dtype / shape / case: the table
    std::vector<std::string> notes; // warnings a user should read (fallbacks, drops, skipped checks)
    bool checksPassed = true;       // every result compared equal to its reference
};

struct JobProgress {
    std::string phase; // "allreduce/ring iteration 3 of 20", "pipeline 1f1b", ...
    double fraction = 0.0;
};

// Thrown by JobContext::ThrowIfCancelled: the run stopped because it was asked to.
class Cancelled : public std::runtime_error {
public:
    Cancelled() : std::runtime_error("cancelled") {}
};

class Job;

// What the body sees of its job. Thread-safe.
class JobContext {
public:
    explicit JobContext(Job& job) : m_job(job) {}
    bool CancelRequested() const;
    void ThrowIfCancelled() const;
    void SetProgress(std::string phase, double fraction);
    void Publish(std::shared_ptr<const Trace> snapshot);

private:
    Job& m_job;
};

class Job {
public:
    using Body = std::function<RunReport(JobContext&)>;
    // Starts the body on a new thread.
    explicit Job(Body body);
    ~Job();
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;

    void Cancel() { m_cancel = true; }
    bool CancelRequested() const { return m_cancel.load(); }
    bool Done() const { return m_done.load(); }
    JobProgress Progress() const;
    // The newest snapshot when its version is greater than *version (then *version is updated),
    // else nullptr. Start with *version = 0.
    std::shared_ptr<const Trace> Latest(uint64_t* version) const;
    // Blocks until the body ends; returns its report or rethrows its exception.
    RunReport Wait();

private:
    friend class JobContext;
    void Run(Body body);

    std::atomic<bool> m_cancel{false};
    std::atomic<bool> m_done{false};
    mutable std::mutex m_mutex;
    std::condition_variable m_finished;
    JobProgress m_progress;
    std::shared_ptr<const Trace> m_snapshot;
    uint64_t m_version = 0;
    RunReport m_report;
    std::exception_ptr m_error;
    std::thread m_thread;
};

} // namespace paralens::core
