// The GPU timeline of one run: CUPTI when it was built and is permitted (the GPU's own clock),
// otherwise CUDA events around each op (the fallback, said in the Trace's metadata and the
// report's notes). Every op is bracketed by Begin/End: an NVTX range in the "paralens" domain
// (always, so Nsight Systems labels our ops), plus two events on the op's stream when timing by
// events. A collector thread turns what arrived into a Trace snapshot about every 100 ms and
// publishes it on the job (live views); Finish() returns the complete Trace.
//
// Thread-safety: Begin/End/PlaceStream on the run's thread; the collector runs on its own;
// shared state is behind one mutex. No exception leaves the collector.
#pragma once

#include "gpu/GpuJob.hpp"
#include "gpu/RunRequest.hpp"
#include "gpu/detail/Nvtx.hpp"
#include "gpu/detail/Resources.hpp"

#include "profiler/ActivityTrace.hpp"
#include "profiler/Capture.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace paralens::gpu::detail {

class Timeline {
public:
    // Chooses the timing source for `requested` (Auto: CUPTI, else events). Throws Unavailable
    // when CUPTI is required but not built or refused. Fallbacks are explained in `notes`.
    Timeline(Timing requested, JobContext& job, prof::AssemblerOptions options, bool apiSpans);
    ~Timeline();
    Timeline(const Timeline&) = delete;
    Timeline& operator=(const Timeline&) = delete;

    bool UsesCupti() const { return m_capture != nullptr; }
    const std::vector<std::string>& Notes() const { return m_notes; }

    void AddRank(const prof::RankInfo& rank);
    // Where `stream`'s work goes in the Trace.
    void PlaceStream(cudaStream_t stream, int device, int rank, const std::string& track);
    // Trace metadata (workload, model, hardware, results), applied to every snapshot.
    template <class Fn>
    void EditMeta(Fn&& fn)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        fn(m_assembler.Meta());
    }

    // Where one op runs: a stream of a rank (an op of a collective runs on every rank's stream).
    struct Place {
        cudaStream_t stream = nullptr;
        int device = 0;
        int rank = 0;
        std::string track;
    };
    struct Op {
        std::unique_ptr<NvtxRange> range;
        std::vector<int64_t> pending; // its event pairs (events timing), one per place
        std::vector<cudaStream_t> streams;
    };
    // Opens the op: NVTX range, and a start event on each place's stream when timing by events.
    Op Begin(const std::vector<Place>& places, const prof::OpLabel& label);
    Op Begin(cudaStream_t stream, int device, int rank, const std::string& track, const prof::OpLabel& label)
    {
        return Begin(std::vector<Place>{Place{stream, device, rank, track}}, label);
    }
    // Closes it: the end events, then the NVTX range.
    void End(Op& op);

    // NCCL's own events (the profiler plugin's files, converted) into the Trace.
    void AddNccl(prof::NcclTraceParts parts);

    // Starts the collector thread (snapshots for live views).
    void StartPublishing();
    // The devices must be synchronised. Stops the capture and the collector; the whole Trace.
    std::shared_ptr<const core::Trace> Finish();

private:
    struct Pending {
        Event start, end;
        int device = 0;
        int rank = 0;
        std::string track;
        prof::OpLabel label;
        bool ended = false; // End() recorded `end`: until then a query of it says "complete"
        bool done = false;
    };
    void Anchor(int device);
    void Harvest(bool all);
    void CollectLoop();

    JobContext& m_job;
    std::unique_ptr<prof::Capture> m_capture;
    std::vector<std::string> m_notes;
    std::mutex m_mutex; // guards the assembler and the pending ops
    prof::TraceAssembler m_assembler;
    std::deque<Pending> m_pending;
    size_t m_firstUndone = 0;
    std::map<int, std::pair<Event, int64_t>> m_anchors; // device -> (event, steady ns when it completed)
    std::thread m_collector;
    std::mutex m_wakeMutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    bool m_finished = false;
};

int64_t SteadyNowNs();

} // namespace paralens::gpu::detail
