#include "mpi/MpiGpuRun.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "gpu/CollectiveMath.hpp"
#include "gpu/GpuBackend.hpp"
#include "mpi/ClockSync.hpp"
#include "mpi/MpiContext.hpp"
#include "mpi/MpiRun.hpp"
#include "mpi/MpiSync.hpp"
#include "mpi/NcclBootstrap.hpp"
#include "mpi/RankTraces.hpp"
#include "trace/MetaTable.hpp"
#include "trace/TraceFile.hpp"
#include "trace/TraceMerge.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

namespace paralens::app::mpi {

namespace {

using Json = nlohmann::ordered_json; // keys keep their order: the table's columns

// What one rank hands rank 0 after its run.
struct RankResult {
    std::string host;
    int gpu = -1;
    std::string gpuName;
    std::string timing; // "cupti" or "events"
    bool checksPassed = true;
    Json rows = Json::array();
    std::vector<std::string> notes;
};

Json Pack(const RankResult& r)
{
    return Json{{"host", r.host}, {"gpu", r.gpu}, {"gpuName", r.gpuName}, {"timing", r.timing},
                {"checksPassed", r.checksPassed}, {"rows", r.rows}, {"notes", r.notes}};
}

RankResult Unpack(const std::string& text)
{
    const Json j = Json::parse(text);
    RankResult r;
    r.host = j.at("host").get<std::string>();
    r.gpu = j.at("gpu").get<int>();
    r.gpuName = j.at("gpuName").get<std::string>();
    r.timing = j.at("timing").get<std::string>();
    r.checksPassed = j.at("checksPassed").get<bool>();
    r.rows = j.at("rows");
    r.notes = j.at("notes").get<std::vector<std::string>>();
    return r;
}

// The collective's table: per size, the slowest rank's time (nccl-tests' convention), the
// bandwidths from it, and the wrong elements of every rank together.
Json CombineCollectiveRows(const gpu::RunRequest& req, const std::vector<RankResult>& ranks)
{
    Json rows = Json::array();
    const int p = static_cast<int>(ranks.size());
    for (size_t i = 0; i < ranks.front().rows.size(); ++i) {
        Json row = ranks.front().rows[i];
        double slowest = 0;
        int64_t wrong = 0;
        for (const RankResult& r : ranks) {
            if (i >= r.rows.size()) throw Failure("the ranks ran different numbers of sizes");
            slowest = std::max(slowest, r.rows[i].at("timeUs").get<double>());
            wrong += r.rows[i].value("wrong", int64_t{0});
        }
        const gpu::Bandwidth bw = gpu::ComputeBandwidth(req.collective.collective, p, row.at("bytes").get<uint64_t>(), slowest * 1e-6);
        row["timeUs"] = slowest;
        row["algbwGBps"] = bw.algbwGBps;
        row["busbwGBps"] = bw.busbwGBps;
        row["wrong"] = wrong;
        rows.push_back(std::move(row));
    }
    return rows;
}

Json CombineGemmRows(const std::vector<RankResult>& ranks)
{
    Json rows = Json::array();
    for (size_t r = 0; r < ranks.size(); ++r)
        for (Json row : ranks[r].rows) {
            Json out{{"rank", r}, {"host", ranks[r].host}};
            for (auto& [key, value] : row.items()) out[key] = value;
            rows.push_back(std::move(out));
        }
    return rows;
}

void Report(const MpiGpuRunOptions& o, const std::vector<RankResult>& ranks, const std::vector<ClockModel>& clocks)
{
    const gpu::RunRequest& req = o.request;
    const bool collective = req.workload == gpu::Workload::Collective;
    const Json rows = collective ? CombineCollectiveRows(req, ranks) : CombineGemmRows(ranks);
    bool passed = true;
    std::vector<std::string> notes;
    Json perRank = Json::array();
    for (size_t r = 0; r < ranks.size(); ++r) {
        passed &= ranks[r].checksPassed;
        perRank.push_back({{"rank", r}, {"host", ranks[r].host}, {"gpu", ranks[r].gpu}, {"gpuName", ranks[r].gpuName},
                           {"timing", ranks[r].timing}});
        for (const std::string& n : ranks[r].notes)
            if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    }
    const int64_t bound = ClockBoundNs(clocks);
    if (o.json) {
        Json j{{"backend", "mpi"}, {"workload", gpu::Name(req.workload)}, {"ranks", ranks.size()}, {"rows", rows},
               {"perRank", perRank}, {"checksPassed", passed}, {"notes", notes}, {"clockBoundNs", bound}};
        if (collective) j["collective"] = core::Name(req.collective.collective);
        if (!o.out.empty()) j["out"] = o.out;
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        std::printf("# paralens run --backend mpi --workload %s: %zu processes, one GPU each%s\n",
                    std::string(gpu::Name(req.workload)).c_str(), ranks.size(),
                    collective ? (", NCCL " + std::string(core::Name(req.collective.collective)) + " (time: the slowest rank)").c_str() : "");
        std::fputs(core::FormatTable(rows).c_str(), stdout);
        for (const Json& r : perRank)
            std::printf("# rank %s: %s, GPU %s (%s), timing %s\n", core::FormatCell(r["rank"]).c_str(), r["host"].get<std::string>().c_str(),
                        core::FormatCell(r["gpu"]).c_str(), r["gpuName"].get<std::string>().c_str(), r["timing"].get<std::string>().c_str());
        std::printf("# clocks aligned to rank 0 within %s (ping-pong at start and end)\n",
                    core::FormatSeconds(static_cast<double>(bound) * 1e-9).c_str());
        for (const std::string& n : notes) std::printf("# note: %s\n", n.c_str());
        if (!o.out.empty()) std::printf("# trace: %s (one row per rank; the ranks' own files beside it)\n", o.out.c_str());
    }
    std::fflush(stdout);
}

// The rank's trace with the clock model in its metadata (and why it is incomplete, if it is).
core::Trace WithClock(const core::Trace& trace, const Context& ctx, const ClockModel& clock, bool haveEnd, const std::string& failure)
{
    core::Metadata m = trace.Meta();
    m.extra.Set("rank", int64_t{ctx.Rank()});
    m.extra.Set("ranks", int64_t{ctx.Size()});
    SetClockMeta(m, clock, haveEnd);
    if (!failure.empty()) m.extra.Set("incomplete", failure);
    return core::ShiftDeviceClocks(trace, std::vector<int64_t>(trace.Devices().size(), 0), &m);
}

// Waits for the job, cancelling it when mpirun asks this process to stop (another rank died).
// `partial` keeps the newest snapshot, so that a failed run still leaves its trace so far.
gpu::RunReport WaitForJob(const Context& ctx, gpu::GpuJob& job, std::shared_ptr<const core::Trace>& partial)
{
    uint64_t version = 0;
    while (!job.Done()) {
        if (ctx.Terminated()) job.Cancel();
        if (auto t = job.Latest(&version)) partial = std::move(t);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (auto t = job.Latest(&version)) partial = std::move(t);
    return job.Wait();
}

// This rank's GPU: its place among its host's processes picks from --gpus (or all GPUs).
GpuAssignment ChooseGpu(const Context& ctx, const gpu::RunRequest& req, gpu::DeviceReport& devices)
{
    const LocalPlace place = FindLocalPlace(ctx);
    devices = gpu::DiscoverDevices();
    std::vector<int> usable;
    if (!devices.devices.empty()) {
        if (req.gpus.empty())
            for (const gpu::DeviceInfo& d : devices.devices) usable.push_back(d.index);
        for (int g : req.gpus) {
            if (g >= static_cast<int>(devices.devices.size()))
                return {-1, "--gpus: GPU " + std::to_string(g) + " does not exist (this host has " +
                                std::to_string(devices.devices.size()) + ")"};
            usable.push_back(g);
        }
    }
    return AssignGpu(place, usable, devices.problem);
}

// What a failed rank still writes: the clock so far and the newest snapshot of its trace.
struct RankState {
    ClockModel clock;
    bool haveEnd = false;
    std::shared_ptr<const core::Trace> partial;
};

// The run of one rank once every rank has its GPU (and the NCCL id): the job between two clock
// measurements, the results and traces gathered at rank 0. Returns the exit code.
int RunRank(const Context& ctx, const MpiGpuRunOptions& o, const gpu::RunRequest& req, const std::string& gpuName, RankState& st)
{
    st.clock.start = MeasureClockOffset(ctx, kClockRounds, o.timeoutSec);
    std::unique_ptr<gpu::GpuJob> job = gpu::StartGpuJob(req);
    const gpu::RunReport report = WaitForJob(ctx, *job, st.partial);
    st.partial = report.trace;
    st.clock.end = MeasureClockOffset(ctx, kClockRounds, o.timeoutSec);
    st.haveEnd = true;
    RankResult result;
    result.host = ctx.Host();
    result.gpu = req.gpus.front();
    result.gpuName = gpuName;
    result.timing = report.trace ? report.trace->Meta().extra.GetString("timing") : std::string();
    result.checksPassed = report.checksPassed;
    for (const core::MetaSection& row : report.rows) result.rows.push_back(core::ToJson(row));
    result.notes = report.notes;
    const std::vector<std::string> packed = GatherText(ctx, Pack(result).dump(), o.timeoutSec, "gathering the results");
    const std::vector<ClockModel> clocks = GatherClocks(ctx, st.clock, o.timeoutSec);
    if (!o.out.empty() && report.trace) {
        const core::Trace rankTrace = WithClock(*report.trace, ctx, st.clock, st.haveEnd, {});
        core::WriteTraceFile(rankTrace, RankTracePath(o.out, ctx.Rank()));
        MergeAtRankZero(ctx, o.out, rankTrace, o.timeoutSec);
    }
    if (ctx.Rank() != 0) return 0;
    std::vector<RankResult> ranks;
    for (const std::string& text : packed) ranks.push_back(Unpack(text));
    Report(o, ranks, clocks);
    for (const RankResult& r : ranks)
        if (!r.checksPassed) return 4;
    return 0;
}

} // namespace

int RunMpiGpuBackend(const MpiGpuRunOptions& o)
{
    Context ctx(nullptr, nullptr);
    gpu::DeviceReport devices;
    const GpuAssignment mine = ChooseGpu(ctx, o.request, devices);
    const bool nccl = o.request.workload == gpu::Workload::Collective;
    const Bootstrap boot = ShareNcclId(
        ctx, mine.problem, [&] { return nccl ? gpu::NewNcclUniqueId() : NcclId{}; }, o.timeoutSec);
    if (!boot.ok) {
        if (ctx.Rank() == 0) std::fprintf(stderr, "paralens: --backend mpi --workload %s cannot start: %s\n",
                                          std::string(gpu::Name(o.request.workload)).c_str(), boot.problem.c_str());
        return 3; // every rank knows; MPI ends normally
    }
    gpu::RunRequest req = o.request;
    req.gpus = {mine.gpu};
    req.processGroup.rank = ctx.Rank();
    req.processGroup.size = ctx.Size();
    req.processGroup.ncclId = boot.ncclId;
    if (!std::getenv("PARALENS_GPU_TIMEOUT_S")) // NCCL's waits give up when MPI's would
        setenv("PARALENS_GPU_TIMEOUT_S", std::to_string(o.timeoutSec).c_str(), 1);
    RankState st;
    try {
        return RunRank(ctx, o, req, devices.devices[static_cast<size_t>(mine.gpu)].name, st);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "paralens: rank %d (%s, GPU %d): %s\n", ctx.Rank(), ctx.Host().c_str(), mine.gpu, e.what());
        const std::string path = o.out.empty() || !st.partial ? std::string() : RankTracePath(o.out, ctx.Rank());
        AbortRank(ctx, path, [&] { core::WriteTraceFile(WithClock(*st.partial, ctx, st.clock, st.haveEnd, e.what()), path); });
    }
}

} // namespace paralens::app::mpi
