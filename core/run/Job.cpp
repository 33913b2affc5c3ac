#include "run/Job.hpp"

#include "common/Error.hpp"

namespace paralens::core {

bool JobContext::CancelRequested() const { return m_job.m_cancel.load(); }

void JobContext::ThrowIfCancelled() const
{
    if (CancelRequested()) throw Cancelled();
}

void JobContext::SetProgress(std::string phase, double fraction)
{
    std::lock_guard<std::mutex> lock(m_job.m_mutex);
    m_job.m_progress = JobProgress{std::move(phase), fraction};
}

void JobContext::Publish(std::shared_ptr<const Trace> snapshot)
{
    std::lock_guard<std::mutex> lock(m_job.m_mutex);
    m_job.m_snapshot = std::move(snapshot);
    ++m_job.m_version;
}

Job::Job(Body body) { m_thread = std::thread([this, b = std::move(body)]() mutable { Run(std::move(b)); }); }

Job::~Job()
{
    Cancel();
    if (m_thread.joinable()) m_thread.join();
}

void Job::Run(Body body)
{
    RunReport report;
    std::exception_ptr error;
    try {
        JobContext ctx(*this);
        report = body(ctx);
    } catch (...) {
        error = std::current_exception(); // no exception leaves the thread
    }
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_report = std::move(report);
        m_error = error;
        if (m_report.trace) {
            m_snapshot = m_report.trace;
            ++m_version;
        }
        m_progress.fraction = 1.0;
        m_done = true;
    }
    m_finished.notify_all();
}

JobProgress Job::Progress() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_progress;
}

std::shared_ptr<const Trace> Job::Latest(uint64_t* version) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_snapshot || m_version <= *version) return nullptr;
    *version = m_version;
    return m_snapshot;
}

RunReport Job::Wait()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    m_finished.wait(lock, [this] { return m_done.load(); });
    if (m_error) std::rethrow_exception(m_error);
    return m_report;
}

} // namespace paralens::core
