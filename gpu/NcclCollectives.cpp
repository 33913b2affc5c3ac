// The collective workload: NCCL's collectives over the local GPUs (one communicator, grouped
// calls from one thread), run like nccl-tests: a checked pass against the CPU reference, warm-up
// iterations, timed iterations (CUDA events, the slowest rank), algbw and busbw, next to the
// alpha-beta model. Every iteration is an op of the timeline (NVTX range; CUPTI or events).
// In a multi-process job (RunRequest::processGroup) this process holds one rank of a communicator
// that spans the processes; its times are its own, and the launcher takes the slowest rank's.
#include "gpu/CollectiveMath.hpp"
#include "gpu/detail/Kernels.hpp"
#include "gpu/detail/Nccl.hpp"
#include "gpu/detail/Timeline.hpp"
#include "gpu/detail/Workloads.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/CostModel.hpp"
#include "model/Hardware.hpp"
#include "profiler/CudaCompat.hpp"
#include "profiler/NcclProfileData.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace paralens::gpu::detail {

namespace {

ncclDataType_t NcclType(DType d)
{
    switch (d) {
    case DType::Half: return ncclFloat16;
#if PARALENS_NCCL_HAS_BF16
    case DType::BFloat16: return ncclBfloat16;
#else
    case DType::BFloat16: throw Error("--dtype bfloat16 needs NCCL 2.10 or newer");
#endif
    case DType::Double: return ncclFloat64;
    case DType::Int32: return ncclInt32;
    case DType::Float: break;
    }
    return ncclFloat32;
}

struct Rank {
    int rank = 0; // in the communicator (the process group's rank when this process holds one)
    int device = 0;
    Stream stream;
    DeviceBuffer send, recv, counters;
    Event start, end;
};

// One call of the collective on one rank (inside the caller's NCCL group).
void Launch(core::Collective c, const CollCounts& cc, DType d, int rank, int p, int root, Rank& r, ncclComm_t comm)
{
    const ncclDataType_t t = NcclType(d);
    const size_t b = cc.shape.base;
    const size_t elt = SizeOf(d);
    const void* s = r.send.Get();
    void* v = r.recv.Get();
    cudaStream_t st = r.stream.Get();
    auto at = [&](const void* base, size_t i) { return static_cast<const char*>(base) + i * b * elt; };
    switch (c) {
    case core::Collective::AllReduce: PARALENS_NCCL(ncclAllReduce(s, v, b, t, ncclSum, comm, st)); break;
    case core::Collective::Broadcast: PARALENS_NCCL(ncclBroadcast(s, v, b, t, root, comm, st)); break;
    case core::Collective::Reduce: PARALENS_NCCL(ncclReduce(s, v, b, t, ncclSum, root, comm, st)); break;
    case core::Collective::AllGather: PARALENS_NCCL(ncclAllGather(s, v, b, t, comm, st)); break;
    case core::Collective::ReduceScatter: PARALENS_NCCL(ncclReduceScatter(s, v, b, t, ncclSum, comm, st)); break;
#if PARALENS_NCCL_HAS_ALLTOALL
    case core::Collective::AllToAll: PARALENS_NCCL(ncclAlltoAll(s, v, b, t, comm, st)); break;
    case core::Collective::Gather: PARALENS_NCCL(ncclGather(s, v, b, t, root, comm, st)); break;
    case core::Collective::Scatter: PARALENS_NCCL(ncclScatter(s, v, b, t, root, comm, st)); break;
#else
    case core::Collective::AllToAll: // nccl-tests' grouped send/recv
        for (int q = 0; q < p; ++q) {
            PARALENS_NCCL(ncclSend(at(s, static_cast<size_t>(q)), b, t, q, comm, st));
            PARALENS_NCCL(ncclRecv(const_cast<char*>(at(v, static_cast<size_t>(q))), b, t, q, comm, st));
        }
        break;
    case core::Collective::Gather:
        PARALENS_NCCL(ncclSend(s, b, t, root, comm, st));
        if (rank == root)
            for (int q = 0; q < p; ++q) PARALENS_NCCL(ncclRecv(const_cast<char*>(at(v, static_cast<size_t>(q))), b, t, q, comm, st));
        break;
    case core::Collective::Scatter:
        if (rank == root)
            for (int q = 0; q < p; ++q) PARALENS_NCCL(ncclSend(at(s, static_cast<size_t>(q)), b, t, q, comm, st));
        PARALENS_NCCL(ncclRecv(v, b, t, root, comm, st));
        break;
#endif
    case core::Collective::SendRecv:
        PARALENS_NCCL(ncclSend(s, b, t, (rank + 1) % p, comm, st));
        PARALENS_NCCL(ncclRecv(v, b, t, (rank + p - 1) % p, comm, st));
        break;
    }
    (void)at;
}

std::string MakeTempDir()
{
    std::string pattern = (std::filesystem::temp_directory_path() / "paralens-nccl-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw Error("cannot create a folder for the NCCL profiler plugin under " + pattern);
    return pattern;
}

std::vector<prof::NcclProfile> ReadPluginFiles(const std::string& dir)
{
    std::vector<prof::NcclProfile> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        out.push_back(prof::ParseNcclProfileJson(text.str(), entry.path().string()));
    }
    std::filesystem::remove_all(dir, ec);
    return out;
}

// The bandwidth the model assumes between GPUs: --bandwidth-GBps, else NVLink (one way) from the
// spec table, else PCIe.
double ModelBandwidthGBps(const RunRequest& req, const DeviceInfo& gpu)
{
    if (req.bandwidthGBps > 0) return req.bandwidthGBps;
    if (const core::GpuSpec* spec = core::FindGpu(gpu.specId.empty() ? gpu.name : gpu.specId)) {
        if (spec->nvlinkUniGBps > 0 && gpu.nvlinksActive != 0) return spec->nvlinkUniGBps;
        if (spec->pcieGBps > 0) return spec->pcieGBps;
    }
    return 0.0;
}

class CollectiveRun {
public:
    CollectiveRun(const RunRequest& req, JobContext& job) : m_req(req), m_job(job), m_gpus(OpenGpus(req.gpus)) {}

    RunReport Run();

private:
    std::vector<cudaStream_t> Streams() const
    {
        std::vector<cudaStream_t> s;
        for (const Rank& r : m_ranks) s.push_back(r.stream.Get());
        return s;
    }
    void Wait(const char* what)
    {
        WaitStreams(Streams(), m_job, std::chrono::seconds(static_cast<int64_t>(TimeoutSeconds())), [&] { m_comms->Poll(); }, what);
    }
    // One collective on every rank, as one op of the timeline.
    void Once(const CollCounts& cc, const prof::OpLabel& label)
    {
        std::vector<Timeline::Place> places;
        for (const Rank& r : m_ranks) places.push_back({r.stream.Get(), r.device, r.rank, "nccl"});
        Timeline::Op op = m_timeline->Begin(places, label);
        NcclGroup group(*m_comms);
        for (size_t r = 0; r < m_ranks.size(); ++r)
            Launch(m_req.collective.collective, cc, m_req.collective.dtype, m_ranks[r].rank, m_worldSize, m_req.collective.root,
                   m_ranks[r], (*m_comms)[r]);
        group.End("an NCCL group launch");
        m_timeline->End(op);
    }
    uint64_t Check(const CollCounts& cc);
    core::MetaSection RunSize(const CollCounts& cc, size_t index, double bwGBps);

    const RunRequest& m_req;
    JobContext& m_job;
    Gpus m_gpus;
    int m_worldSize = 0; // ranks in the communicator: the local GPUs, or the process group's size
    std::vector<Rank> m_ranks;
    std::unique_ptr<Timeline> m_timeline;
    std::unique_ptr<NcclComms> m_comms;
};

uint64_t CollectiveRun::Check(const CollCounts& cc)
{
    const KType kt = static_cast<KType>(static_cast<int>(m_req.collective.dtype));
    for (Rank& r : m_ranks) {
        DeviceScope scope(r.device);
        PARALENS_CUDA(cudaMemsetAsync(r.recv.Get(), 0xFF, r.recv.Size(), r.stream.Get()));
        const unsigned long long init[2] = {0, ~0ull};
        PARALENS_CUDA(cudaMemcpyAsync(r.counters.Get(), init, sizeof init, cudaMemcpyHostToDevice, r.stream.Get()));
    }
    Wait("clearing the receive buffers");
    prof::OpLabel label;
    label.name = std::string(core::Name(m_req.collective.collective)) + " check";
    label.category = core::SpanCategory::Collective;
    label.bytes = cc.bytes;
    Once(cc, label);
    Wait("the checked collective");
    uint64_t wrong = 0;
    for (size_t i = 0; i < m_ranks.size(); ++i) {
        Rank& r = m_ranks[i];
        DeviceScope scope(r.device);
        LaunchCheckCollective(r.recv.Get(), kt, cc.recvCount, cc.shape, m_req.seed, r.rank,
                              static_cast<unsigned long long*>(r.counters.Get()), r.stream.Get());
        PARALENS_CUDA_LAUNCHED("the collective's check kernel");
        unsigned long long counters[2] = {0, 0};
        PARALENS_CUDA(cudaMemcpyAsync(counters, r.counters.Get(), sizeof counters, cudaMemcpyDeviceToHost, r.stream.Get()));
        PARALENS_CUDA(cudaStreamSynchronize(r.stream.Get()));
        wrong += counters[0];
    }
    return wrong;
}

core::MetaSection CollectiveRun::RunSize(const CollCounts& cc, size_t index, double bwGBps)
{
    const auto& c = m_req.collective;
    const int p = m_worldSize;
    const bool exact = ExactCheckPossible(c.dtype, c.collective, p);
    const bool checking = m_req.check && exact;
    const uint64_t wrong = checking ? Check(cc) : 0;

    core::CollectiveSpec spec;
    spec.collective = c.collective;
    spec.algorithm = core::AlgorithmsFor(c.collective).front();
    spec.ranks = p;
    spec.bytes = cc.bytes;
    spec.root = c.root;
    const double beta = bwGBps > 0 ? 1.0 / (bwGBps * 1e9) : 0.0;
    const double predicted = p > 1 ? core::PredictSeconds(spec, core::CostParams{m_req.alphaUs * 1e-6, beta, 0.0}).seconds : 0.0;

    prof::OpLabel label;
    label.name = std::string(core::Name(c.collective));
    label.category = core::SpanCategory::Collective;
    label.bytes = cc.bytes;
    label.chunk = static_cast<int32_t>(index);
    for (int w = 0; w < m_req.warmupIters; ++w) {
        label.detail = "warmup";
        Once(cc, label);
    }
    label.detail.clear();
    label.predictedNs = predicted > 0 ? static_cast<int64_t>(predicted * 1e9 + 0.5) : core::kNoPrediction;
    for (Rank& r : m_ranks) PARALENS_CUDA(cudaEventRecord(r.start.Get(), r.stream.Get()));
    for (int it = 0; it < m_req.iters; ++it) {
        label.step = it;
        Once(cc, label);
    }
    for (Rank& r : m_ranks) PARALENS_CUDA(cudaEventRecord(r.end.Get(), r.stream.Get()));
    Wait("the timed collectives");
    std::vector<double> totals;
    for (Rank& r : m_ranks) {
        float ms = 0;
        PARALENS_CUDA(cudaEventElapsedTime(&ms, r.start.Get(), r.end.Get()));
        totals.push_back(ms * 1e-3);
    }
    const double seconds = IterationSeconds(totals, m_req.iters);
    const Bandwidth bw = ComputeBandwidth(c.collective, p, cc.bytes, seconds);

    core::MetaSection row;
    row.Set("bytes", static_cast<int64_t>(cc.bytes));
    row.Set("count", static_cast<int64_t>(cc.shape.base));
    row.Set("dtype", std::string(Name(c.dtype)));
    row.Set("timeUs", seconds * 1e6);
    row.Set("algbwGBps", bw.algbwGBps);
    row.Set("busbwGBps", bw.busbwGBps);
    if (predicted > 0) row.Set("predictedUs", predicted * 1e6);
    row.Set("checked", checking);
    row.Set("wrong", static_cast<int64_t>(wrong));
    return row;
}

RunReport CollectiveRun::Run()
{
    const auto& c = m_req.collective;
    const ProcessGroup& group = m_req.processGroup;
    m_worldSize = group.Active() ? group.size : static_cast<int>(m_gpus.used.size());
    const int p = m_worldSize;
    const int firstRank = group.Active() ? group.rank : 0;
    RunReport report;
    if (c.root >= p) throw Error("--root " + std::to_string(c.root) + " is not a rank (ranks 0 to " + std::to_string(p - 1) + ")");
    if (p == 1)
        report.notes.push_back("one GPU: a 1-rank NCCL communicator runs and no data moves between GPUs; "
                               "real NCCL traffic needs two GPUs or more");
    const uint64_t elt = SizeOf(c.dtype);
    std::vector<CollCounts> counts;
    uint64_t maxSend = 0, maxRecv = 0;
    for (uint64_t size : m_req.sizes) {
        counts.push_back(CollectiveCounts(c.collective, size, elt, p, c.root));
        maxSend = std::max(maxSend, counts.back().sendCount);
        maxRecv = std::max(maxRecv, counts.back().recvCount);
    }
    if (m_req.check && !ExactCheckPossible(c.dtype, c.collective, p))
        report.notes.push_back("results not checked: sums over " + std::to_string(p) + " ranks are not exact in " +
                               std::string(Name(c.dtype)));
    const std::string title = "NCCL " + std::string(core::Name(c.collective)) + " on " + std::to_string(p) + " GPU(s)" +
                              (group.Active() ? ", rank " + std::to_string(group.rank) + " of " + std::to_string(p) + " processes" : "");
    m_timeline = std::make_unique<Timeline>(m_req.timing, m_job, TraceOptions(title, 0.0), m_req.apiSpans);
    for (size_t i = 0; i < m_gpus.used.size(); ++i)
        m_timeline->AddRank({firstRank + static_cast<int>(i), m_gpus.used[i].index, false, m_gpus.used[i].name});
    std::vector<int> devices;
    for (const DeviceInfo& g : m_gpus.used) {
        devices.push_back(g.index);
        Rank r;
        r.rank = firstRank + static_cast<int>(m_ranks.size());
        r.device = g.index;
        r.stream = Stream(g.index);
        r.send = DeviceBuffer(g.index, maxSend * elt);
        r.recv = DeviceBuffer(g.index, maxRecv * elt);
        r.counters = DeviceBuffer(g.index, 2 * sizeof(unsigned long long));
        r.start = Event(g.index, true);
        r.end = Event(g.index, true);
        DeviceScope scope(g.index);
        LaunchFillPattern(r.send.Get(), static_cast<KType>(static_cast<int>(c.dtype)), maxSend, m_req.seed, r.rank, r.stream.Get());
        PARALENS_CUDA_LAUNCHED("the send buffer's fill kernel");
        m_ranks.push_back(std::move(r));
    }
    const std::string pluginDir = c.ncclProfiler ? MakeTempDir() : std::string();
    const std::string pluginPath = c.ncclProfiler ? GetBuildInfo().ncclProfilerPlugin : std::string();
    m_comms = std::make_unique<NcclComms>(devices, m_job, c.ncclAlgo, c.ncclProto, pluginPath, pluginDir, group);
    for (const Rank& r : m_ranks) m_timeline->PlaceStream(r.stream.Get(), r.device, r.rank, "nccl");
    const double bwGBps = ModelBandwidthGBps(m_req, m_gpus.used.front());
    m_timeline->EditMeta([&](core::Metadata& m) {
        m.workload.Set("workload", std::string("collective"));
        m.workload.Set("collective", std::string(core::Name(c.collective)));
        m.workload.Set("ranks", static_cast<int64_t>(p));
        if (group.Active()) m.workload.Set("processRank", static_cast<int64_t>(group.rank));
        m.workload.Set("dtype", std::string(Name(c.dtype)));
        m.workload.Set("root", static_cast<int64_t>(c.root));
        m.workload.Set("ncclAlgo", c.ncclAlgo.empty() ? std::string("(NCCL's choice)") : c.ncclAlgo);
        m.workload.Set("ncclProto", c.ncclProto.empty() ? std::string("(NCCL's choice)") : c.ncclProto);
        m.workload.Set("warmupIters", static_cast<int64_t>(m_req.warmupIters));
        m.workload.Set("iters", static_cast<int64_t>(m_req.iters));
        m.model.Set("alphaUs", m_req.alphaUs);
        m.model.Set("bandwidthGBps", bwGBps);
        DescribeHardware(m.hardware, m_gpus);
    });
    Wait("filling the send buffers");
    m_timeline->StartPublishing();
    for (size_t i = 0; i < counts.size(); ++i) {
        m_job.ThrowIfCancelled();
        m_job.SetProgress("NCCL " + std::string(core::Name(c.collective)) + " " + core::FormatBytes(counts[i].bytes),
                          static_cast<double>(i) / static_cast<double>(counts.size()));
        core::MetaSection row = RunSize(counts[i], i, bwGBps);
        if (row.GetNumber("wrong") > 0) report.checksPassed = false;
        report.rows.push_back(std::move(row));
    }
    m_comms->Destroy(); // the profiler plugin writes its files as NCCL finalizes
    if (c.ncclProfiler) {
        std::vector<prof::NcclProfile> profiles = ReadPluginFiles(pluginDir);
        if (profiles.empty())
            report.notes.push_back("NCCL did not load the profiler plugin (it needs NCCL 2.25-2.28, and only the first NCCL "
                                   "initialisation of a process reads NCCL_PROFILER_PLUGIN)");
        else m_timeline->AddNccl(prof::ConvertNcclProfiles(profiles));
    }
    double sumBusbw = 0;
    for (const core::MetaSection& row : report.rows) sumBusbw += row.GetNumber("busbwGBps");
    report.trace = m_timeline->Finish();
    for (const std::string& n : m_timeline->Notes()) report.notes.push_back(n);
    report.summary.Set("workload", std::string("collective"));
    report.summary.Set("collective", std::string(core::Name(c.collective)));
    report.summary.Set("ranks", static_cast<int64_t>(p));
    report.summary.Set("gpu", m_gpus.used.front().name);
    report.summary.Set("timing", report.trace->Meta().extra.GetString("timing"));
    report.summary.Set("avgBusbwGBps", report.rows.empty() ? 0.0 : sumBusbw / static_cast<double>(report.rows.size()));
    report.summary.Set("modelBandwidthGBps", bwGBps);
    return report;
}

} // namespace

RunReport RunCollectiveWorkload(const RunRequest& request, JobContext& job)
{
    CollectiveRun run(request, job);
    return run.Run();
}

} // namespace paralens::gpu::detail
