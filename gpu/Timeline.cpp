#include "gpu/detail/Timeline.hpp"

#include "common/Error.hpp"

#include <chrono>

namespace paralens::gpu::detail {

int64_t SteadyNowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

// --api-spans asks the capture for the runtime/driver records and the assembler for their spans
// (on an H100 only the first was asked: the Trace had no host spans).
prof::AssemblerOptions WithApiSpans(prof::AssemblerOptions options, bool apiSpans)
{
    options.apiSpans = apiSpans;
    return options;
}

} // namespace

Timeline::Timeline(Timing requested, JobContext& job, prof::AssemblerOptions options, bool apiSpans)
    : m_job(job), m_assembler(WithApiSpans(std::move(options), apiSpans))
{
    if (requested != Timing::Events) {
        prof::CaptureOptions co;
        co.apiRecords = apiSpans;
        std::string why;
        m_capture = prof::MakeCuptiCapture(co, &why);
        if (m_capture) {
            try {
                m_capture->Start();
            } catch (const Error& e) {
                m_capture.reset();
                why = e.what();
            }
        }
        if (!m_capture) {
            if (requested == Timing::Cupti) throw Unavailable("--profile cupti: " + why);
            m_notes.push_back("timed with CUDA events instead of CUPTI: " + why);
        }
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    m_assembler.SetSource(m_capture ? core::TraceSource::Cupti : core::TraceSource::CudaEvents);
    core::Metadata& meta = m_assembler.Meta();
    meta.extra.Set("timing", std::string(m_capture ? "cupti" : "cuda-events"));
    if (m_capture) meta.extra.Set("cupti", m_capture->Describe());
    if (!m_notes.empty()) meta.extra.Set("timingNote", m_notes.front());
}

Timeline::~Timeline()
{
    {
        std::lock_guard<std::mutex> lock(m_wakeMutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_collector.joinable()) m_collector.join();
    if (m_capture) {
        try {
            m_capture->Stop();
        } catch (...) {
        }
    }
}

void Timeline::AddRank(const prof::RankInfo& rank)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_assembler.AddRank(rank);
    }
    if (!m_capture && !m_anchors.count(rank.gpuIndex)) Anchor(rank.gpuIndex);
}

// The events' zero on a device: an event recorded on an idle stream and waited for; the steady
// clock read right after is its host time (late by the wait's return, a few microseconds).
void Timeline::Anchor(int device)
{
    Stream idle(device);
    Event anchor(device, true);
    PARALENS_CUDA(cudaEventRecord(anchor.Get(), idle.Get()));
    PARALENS_CUDA(cudaEventSynchronize(anchor.Get()));
    const int64_t host = SteadyNowNs();
    m_anchors.emplace(device, std::make_pair(std::move(anchor), host));
}

void Timeline::PlaceStream(cudaStream_t stream, int device, int rank, const std::string& track)
{
    prof::StreamKey key;
    if (m_capture) key = m_capture->KeyOf(stream, device);
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_capture) m_assembler.PlaceStream(key, rank, track);
}

Timeline::Op Timeline::Begin(const std::vector<Place>& places, const prof::OpLabel& label)
{
    Op op;
    op.range = std::make_unique<NvtxRange>(prof::FormatOpLabel(label));
    for (const Place& place : places) {
        op.streams.push_back(place.stream);
        if (m_capture) continue;
        Pending p;
        p.start = Event(place.device, true);
        p.end = Event(place.device, true);
        p.device = place.device;
        p.rank = place.rank;
        p.track = place.track;
        p.label = label;
        PARALENS_CUDA(cudaEventRecord(p.start.Get(), place.stream));
        std::lock_guard<std::mutex> lock(m_mutex);
        m_pending.push_back(std::move(p));
        op.pending.push_back(static_cast<int64_t>(m_pending.size()) - 1);
    }
    return op;
}

void Timeline::End(Op& op)
{
    for (size_t i = 0; i < op.pending.size(); ++i) {
        std::lock_guard<std::mutex> lock(m_mutex);
        Pending& p = m_pending[static_cast<size_t>(op.pending[i])];
        PARALENS_CUDA(cudaEventRecord(p.end.Get(), op.streams[i]));
        p.ended = true;
    }
    op.pending.clear();
    op.range.reset();
}

void Timeline::AddNccl(prof::NcclTraceParts parts)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_assembler.AddNccl(std::move(parts));
}

// Turns completed event pairs into op spans (caller holds m_mutex). `all`: the devices are idle.
void Timeline::Harvest(bool all)
{
    for (size_t i = m_firstUndone; i < m_pending.size(); ++i) {
        Pending& p = m_pending[i];
        if (p.done) continue;
        // An event never recorded queries as complete: an op still being issued is not harvested
        // (seen on an H100: the collector took a B op between its start and end, and lost it).
        if (!p.ended && !all) continue;
        if (p.ended && cudaEventQuery(p.end.Get()) != cudaSuccess) {
            (void)cudaGetLastError(); // cudaErrorNotReady is not an error
            if (!all) continue;
        }
        p.done = true;
        const auto anchor = m_anchors.find(p.device);
        float startMs = 0, endMs = 0;
        if (anchor == m_anchors.end() || cudaEventElapsedTime(&startMs, anchor->second.first.Get(), p.start.Get()) != cudaSuccess ||
            cudaEventElapsedTime(&endMs, anchor->second.first.Get(), p.end.Get()) != cudaSuccess) {
            (void)cudaGetLastError(); // an op that never ran (the run failed): no span
            continue;
        }
        prof::OpSpan s;
        s.rank = p.rank;
        s.trackName = p.track;
        s.startNs = anchor->second.second + static_cast<int64_t>(static_cast<double>(startMs) * 1e6);
        s.endNs = anchor->second.second + static_cast<int64_t>(static_cast<double>(endMs) * 1e6);
        if (s.endNs < s.startNs) s.endNs = s.startNs;
        s.label = p.label;
        m_assembler.AddOpSpan(std::move(s));
        p.start = Event();
        p.end = Event();
    }
    while (m_firstUndone < m_pending.size() && m_pending[m_firstUndone].done) ++m_firstUndone;
}

void Timeline::StartPublishing()
{
    m_collector = std::thread([this] { CollectLoop(); });
}

void Timeline::CollectLoop()
{
    // Snapshots every 100 ms, or less often when building one takes long (at most ~20% of a core).
    auto interval = std::chrono::milliseconds(100);
    std::unique_lock<std::mutex> wake(m_wakeMutex);
    while (!m_stop) {
        m_wake.wait_for(wake, interval, [this] { return m_stop; });
        if (m_stop) break;
        wake.unlock();
        try {
            const auto t0 = std::chrono::steady_clock::now();
            std::shared_ptr<const core::Trace> snapshot;
            {
                prof::ActivityBatch batch = m_capture ? m_capture->TakeBatch() : prof::ActivityBatch{};
                std::lock_guard<std::mutex> lock(m_mutex);
                if (m_capture) {
                    m_assembler.SetClock(m_capture->Clock());
                    m_assembler.Add(std::move(batch));
                } else {
                    Harvest(false);
                }
                snapshot = std::make_shared<const core::Trace>(m_assembler.Build());
            }
            m_job.Publish(std::move(snapshot));
            const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
            interval = std::max(std::chrono::milliseconds(100), took * 5);
        } catch (...) {
            // A snapshot that cannot be built is skipped; the final Trace reports the problem.
        }
        wake.lock();
    }
}

std::shared_ptr<const core::Trace> Timeline::Finish()
{
    {
        std::lock_guard<std::mutex> lock(m_wakeMutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_collector.joinable()) m_collector.join();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_capture) {
        m_capture->Stop();
        m_assembler.SetClock(m_capture->Clock());
        m_assembler.Add(m_capture->TakeBatch());
        if (auto drift = m_capture->Clock().DriftWarning(10'000)) m_notes.push_back(*drift);
        if (m_capture->PoolExhaustions() > 0)
            m_notes.push_back("CUPTI's buffer pool ran out " + std::to_string(m_capture->PoolExhaustions()) +
                              " times: records were dropped");
    } else {
        Harvest(true);
    }
    core::Trace trace = m_assembler.Build();
    const prof::AssemblyStats& stats = m_assembler.Stats();
    if (stats.droppedRecords > 0) {
        m_notes.push_back("CUPTI dropped " + std::to_string(stats.droppedRecords) +
                          " activity records (its buffers were full): the timeline has gaps");
        trace = m_assembler.Build(); // the count is in the metadata; rebuilt so that the notes below are too
    }
    std::string joined;
    for (const std::string& n : m_notes) joined += (joined.empty() ? "" : " | ") + n;
    if (!joined.empty()) {
        m_assembler.Meta().extra.Set("notes", joined);
        trace = m_assembler.Build();
    }
    m_finished = true;
    return std::make_shared<const core::Trace>(std::move(trace));
}

} // namespace paralens::gpu::detail
