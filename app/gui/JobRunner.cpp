#include "JobRunner.hpp"

#include <chrono>
#include <exception>

namespace paralens::app {

struct JobRunner::Job {
    std::string label;
    JobWork work;
    JobError onError;
    std::shared_ptr<JobContext> context = std::make_shared<JobContext>();
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

struct JobRunner::Lane {
    std::string name;
    std::unique_ptr<Job> queued;
    std::unique_ptr<Job> running;
    std::thread thread;
};

JobRunner::JobRunner(std::function<void()> wake) : m_wake(std::move(wake)) {}

JobRunner::~JobRunner()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        for (auto& lane : m_lanes) {
            lane->queued.reset();
            if (lane->running) lane->running->context->Cancel();
        }
    }
    m_cv.notify_all();
    for (auto& lane : m_lanes)
        if (lane->thread.joinable()) lane->thread.join();
}

JobRunner::Lane& JobRunner::LaneFor(const std::string& name)
{
    for (auto& lane : m_lanes)
        if (lane->name == name) return *lane;
    m_lanes.push_back(std::make_unique<Lane>());
    Lane& lane = *m_lanes.back();
    lane.name = name;
    lane.thread = std::thread([this, &lane] { Worker(lane); });
    return lane;
}

void JobRunner::Submit(const std::string& lane, const std::string& label, JobWork work, JobError onError)
{
    auto job = std::make_unique<Job>();
    job->label = label;
    job->work = std::move(work);
    job->onError = std::move(onError);
    {
        std::lock_guard lock(m_mutex);
        Lane& l = LaneFor(lane);
        if (l.running) l.running->context->Cancel();
        l.queued = std::move(job);
    }
    m_cv.notify_all();
}

void JobRunner::Cancel(const std::string& lane)
{
    std::lock_guard lock(m_mutex);
    for (auto& l : m_lanes) {
        if (l->name != lane) continue;
        l->queued.reset();
        if (l->running) l->running->context->Cancel();
    }
}

JobStatus JobRunner::Status(const std::string& lane) const
{
    std::lock_guard lock(m_mutex);
    JobStatus s;
    for (const auto& l : m_lanes) {
        if (l->name != lane) continue;
        const Job* job = l->running && !l->running->context->Cancelled() ? l->running.get() : l->queued.get();
        if (!job) break;
        s.running = true;
        s.label = job->label;
        s.progress = job->context->Progress();
        s.elapsedSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - job->started).count();
    }
    return s;
}

bool JobRunner::Busy() const
{
    std::lock_guard lock(m_mutex);
    for (const auto& l : m_lanes)
        if (l->queued || l->running) return true;
    return false;
}

int JobRunner::Poll()
{
    std::vector<Apply> done;
    {
        std::lock_guard lock(m_mutex);
        done.swap(m_done);
    }
    for (Apply& apply : done)
        if (apply) apply();
    return static_cast<int>(done.size());
}

void JobRunner::Worker(Lane& lane)
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_cv.wait(lock, [&] { return m_stopping || lane.queued; });
        if (m_stopping) return;
        lane.running = std::move(lane.queued);
        Job& job = *lane.running;
        lock.unlock();
        Apply result;
        try {
            result = job.work(*job.context);
        } catch (const std::exception& e) {
            if (job.onError) result = job.onError(e.what());
        } catch (...) {
            if (job.onError) result = job.onError("unknown error");
        }
        lock.lock();
        // A cancelled job's result is dropped: a newer job (or the user) superseded it.
        if (!job.context->Cancelled() && result) m_done.push_back(std::move(result));
        lane.running.reset();
        if (m_wake) m_wake();
    }
}

} // namespace paralens::app
