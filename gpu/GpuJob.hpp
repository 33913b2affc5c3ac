// A GPU run on a worker thread, for the app and the CLI: it publishes Trace snapshots while it
// runs (about every 100 ms: each is the whole run so far, immutable, so a view just swaps to the
// newest), reports progress, can be cancelled, and hands over its report at the end.
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
#include <string>
#include <thread>
#include <vector>

namespace paralens::gpu {

struct RunReport {
    std::shared_ptr<const core::Trace> trace;
    core::MetaSection summary;            // headline numbers and settings
    std::vector<core::MetaSection> rows;  // one per size / dtype / shape: the table
    std::vector<std::string> notes;       // warnings a user should read (fallbacks, drops, skipped checks)
    bool checksPassed = true;             // every result compared equal to the CPU reference
};

struct JobProgress {
    std::string phase; // "NCCL allreduce 64 MiB", "pipeline 1f1b", ...
    double fraction = 0.0;
};

// Thrown by JobContext::ThrowIfCancelled: the run stopped because it was asked to.
class Cancelled : public std::runtime_error {
public:
    Cancelled() : std::runtime_error("cancelled") {}
};

class GpuJob;

// What the body sees of its job. Thread-safe.
class JobContext {
public:
    explicit JobContext(GpuJob& job) : m_job(job) {}
    bool CancelRequested() const;
    void ThrowIfCancelled() const;
    void SetProgress(std::string phase, double fraction);
    void Publish(std::shared_ptr<const core::Trace> snapshot);

private:
    GpuJob& m_job;
};

class GpuJob {
public:
    using Body = std::function<RunReport(JobContext&)>;
    // Starts the body on a new thread.
    explicit GpuJob(Body body);
    ~GpuJob();
    GpuJob(const GpuJob&) = delete;
    GpuJob& operator=(const GpuJob&) = delete;

    void Cancel() { m_cancel = true; }
    bool Done() const { return m_done.load(); }
    JobProgress Progress() const;
    // The newest snapshot when its version is greater than *version (then *version is updated),
    // else nullptr. Start with *version = 0.
    std::shared_ptr<const core::Trace> Latest(uint64_t* version) const;
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
    std::shared_ptr<const core::Trace> m_snapshot;
    uint64_t m_version = 0;
    RunReport m_report;
    std::exception_ptr m_error;
    std::thread m_thread;
};

} // namespace paralens::gpu
