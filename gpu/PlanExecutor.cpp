// The Plan executor: any core Plan run step by step on GPUs. Ranks are GPUs (peer copies or
// ncclSend/ncclRecv per transfer, a reduction kernel per reduce) or, on one GPU, virtual ranks
// (a buffer and streams each). What runs where and what waits for what is gpu/PlanProgram's
// host-side decision; this file only issues it, times it and checks the result on the GPU
// against core's expected regions.
#include "gpu/CudaEnvironment.hpp"
#include "gpu/PlanProgram.hpp"
#include "gpu/detail/Kernels.hpp"
#include "gpu/detail/Nccl.hpp"
#include "gpu/detail/Timeline.hpp"
#include "gpu/detail/Workloads.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/CostModel.hpp"
#include "model/Hardware.hpp"
#include "plan/Reference.hpp"
#include "plan/SharedMemoryCost.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace paralens::gpu::detail {

namespace {

// A captured CUDA graph and its executable, destroyed with the object.
class Graph {
public:
    Graph() = default;
    ~Graph()
    {
        if (m_exec) IgnoreCuda(cudaGraphExecDestroy(m_exec));
        if (m_graph) IgnoreCuda(cudaGraphDestroy(m_graph));
    }
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    cudaGraph_t* Out() { return &m_graph; }
    void Instantiate() { PARALENS_CUDA(cudaGraphInstantiate(&m_exec, m_graph, 0)); }
    void Launch(cudaStream_t stream) const { PARALENS_CUDA(cudaGraphLaunch(m_exec, stream)); }

private:
    cudaGraph_t m_graph = nullptr;
    cudaGraphExec_t m_exec = nullptr;
};

struct RankMem {
    int device = 0;
    DeviceBuffer buffer, staging, counters;
    Stream send, recv;
    Event tail;
};

class PlanRun {
public:
    PlanRun(const RunRequest& req, JobContext& job) : m_req(req), m_job(job), m_gpus(OpenGpus(req.gpus)) {}
    RunReport Run();

private:
    void Setup(RunReport& report);
    void Allocate(uint64_t bufferBytes, uint64_t stagingBytes);
    // `traced`: each op bracketed on the timeline; false while a graph is captured.
    void Issue(const PlanProgram& prog, const std::string& detail, bool traced = true);
    void IssueOp(const PlanProgram& prog, size_t index, const std::string& detail, bool traced);
    void MakeEvents(const PlanProgram& prog);
    void TimeGraph(const core::Plan& plan, const PlanProgram& prog, core::MetaSection& row);
    void Fill(const core::Plan& plan);
    uint64_t Check(const core::Plan& plan);
    void Wait(const char* what);
    core::MetaSection RunSize(const core::Plan& plan, const PlanProgram& prog);
    uint8_t* Ptr(const BufferRef& b) const
    {
        const RankMem& r = m_ranks[static_cast<size_t>(b.rank)];
        return (b.staging ? r.staging : r.buffer).Bytes() + b.offset;
    }
    cudaStream_t StreamOf(int32_t index) const
    {
        const RankMem& r = m_ranks[static_cast<size_t>(index / 2)];
        return (index % 2 == 0 ? r.send : r.recv).Get();
    }

    const RunRequest& m_req;
    JobContext& m_job;
    Gpus m_gpus;
    int m_p = 0;
    bool m_virtual = false;
    bool m_nccl = false;
    double m_alphaSec = 0, m_betaSecPerByte = 0;
    double m_memoryBytesPerSec = 0; // virtual ranks: the GPU memory their copies share
    std::vector<RankMem> m_ranks;
    Stream m_control;
    Event m_begin, m_end;
    std::vector<Event> m_done, m_recvDone; // per op of the current program
    std::unique_ptr<Timeline> m_timeline;
    std::unique_ptr<NcclComms> m_comms;
};

void PlanRun::Wait(const char* what)
{
    std::vector<cudaStream_t> streams{m_control.Get()};
    for (const RankMem& r : m_ranks) {
        streams.push_back(r.send.Get());
        streams.push_back(r.recv.Get());
    }
    WaitStreams(streams, m_job, std::chrono::seconds(static_cast<int64_t>(TimeoutSeconds())),
                [&] {
                    if (m_comms) m_comms->Poll();
                },
                what);
}

// Ranks, devices, transport, streams, the timeline and NCCL: everything but the buffers.
void PlanRun::Setup(RunReport& report)
{
    const auto& pr = m_req.plan;
    const int gpus = static_cast<int>(m_gpus.used.size());
    m_p = pr.ranks > 0 ? pr.ranks : gpus;
    m_virtual = pr.virtualRanks || m_p > gpus || (gpus == 1 && m_p > 1);
    if (m_virtual && gpus > 1)
        report.notes.push_back("virtual ranks: all " + std::to_string(m_p) + " ranks share GPU " +
                               std::to_string(m_gpus.used.front().index) + "; the other GPUs are not used");
    if (pr.root >= m_p) throw Error("--root " + std::to_string(pr.root) + " is not a rank (0 to " + std::to_string(m_p - 1) + ")");
    m_nccl = pr.transport == Transport::Nccl || (pr.transport == Transport::Auto && !m_virtual && m_p > 1);
    if (m_nccl && pr.graph)
        throw Error("--graph: the Plan's graph is of peer copies and reductions; with NCCL transfers use --transport peer");
    if (m_nccl && m_virtual)
        throw Error("--transport nccl: virtual ranks share one GPU and NCCL allows one rank per GPU; use --transport peer "
                    "(or give each rank its own GPU with --gpus)");
    std::vector<int> devices;
    for (int r = 0; r < m_p; ++r) devices.push_back(m_gpus.used[m_virtual ? 0 : static_cast<size_t>(r)].index);
    if (!m_virtual && !m_nccl)
        for (const std::string& pair : EnablePeerAccess(devices))
            report.notes.push_back("no peer access " + pair + ": its copies go through the host");

    const DeviceInfo& gpu = m_gpus.used.front();
    double bw = m_req.bandwidthGBps;
    if (bw <= 0) {
        const core::GpuSpec* spec = core::FindGpu(gpu.specId.empty() ? gpu.name : gpu.specId);
        if (spec) bw = m_virtual ? spec->hbmGBps / 2 : (spec->nvlinkUniGBps > 0 ? spec->nvlinkUniGBps : spec->pcieGBps);
    }
    m_alphaSec = m_req.alphaUs * 1e-6;
    m_betaSecPerByte = bw > 0 ? 1.0 / (bw * 1e9) : 0.0;
    // Virtual ranks' copies all go through the one GPU's memory (a copy alone gets half of it: it
    // reads and writes): a step's prediction shares that memory among its transfers.
    m_memoryBytesPerSec = m_virtual && bw > 0 ? 2 * bw * 1e9 : 0.0;
    const std::string queues = m_virtual ? QueueSharingNote(2 * m_p + 1) : std::string(); // send, recv per rank; control
    if (!queues.empty()) report.notes.push_back(queues);
    if (m_memoryBytesPerSec > 0)
        report.notes.push_back("virtual ranks: predicted with the shared-memory model (each step alpha plus the bytes its copies "
                               "and reductions read and write, over " + std::to_string(static_cast<int>(2 * bw)) + " GB/s of GPU memory)");

    const std::string title = std::string(core::Name(pr.collective)) + " / " + std::string(core::Name(pr.algorithm)) + " on " +
                              std::to_string(m_p) + (m_virtual ? " virtual ranks" : " GPUs");
    m_timeline = std::make_unique<Timeline>(m_req.timing, m_job, TraceOptions(title, 0.0), m_req.apiSpans);
    for (int r = 0; r < m_p; ++r) {
        RankMem mem;
        mem.device = devices[static_cast<size_t>(r)];
        mem.send = Stream(mem.device);
        mem.recv = Stream(mem.device);
        mem.tail = Event(mem.device, false);
        m_timeline->AddRank({r, mem.device, m_virtual, m_gpus.used[m_virtual ? 0 : static_cast<size_t>(r)].name});
        m_ranks.push_back(std::move(mem));
    }
    for (int r = 0; r < m_p; ++r) {
        m_timeline->PlaceStream(m_ranks[static_cast<size_t>(r)].send.Get(), devices[static_cast<size_t>(r)], r, "send");
        m_timeline->PlaceStream(m_ranks[static_cast<size_t>(r)].recv.Get(), devices[static_cast<size_t>(r)], r, "recv");
    }
    m_control = Stream(devices.front());
    m_begin = Event(devices.front(), true);
    m_end = Event(devices.front(), true);
    if (m_nccl) m_comms = std::make_unique<NcclComms>(devices, m_job, "", "", "", "");
    m_timeline->EditMeta([&](core::Metadata& m) {
        m.workload.Set("workload", std::string("plan"));
        m.workload.Set("collective", std::string(core::Name(pr.collective)));
        m.workload.Set("algorithm", std::string(core::Name(pr.algorithm)));
        m.workload.Set("ranks", static_cast<int64_t>(m_p));
        m.workload.Set("virtualRanks", m_virtual);
        m.workload.Set("transport", std::string(m_nccl ? "nccl send/recv" : (m_virtual ? "copies within one GPU" : "peer copies")));
        m.workload.Set("iters", static_cast<int64_t>(m_req.iters));
        // One size: the window builds this Plan again for its flow view (a sweep has no one n).
        if (m_req.sizes.size() == 1) m.workload.Set("bytes", static_cast<int64_t>(m_req.sizes.front()));
        m.model.Set("alphaUs", m_req.alphaUs);
        m.model.Set("bandwidthGBps", bw);
        if (m_memoryBytesPerSec > 0) m.model.Set("sharedMemoryGBps", m_memoryBytesPerSec / 1e9);
        DescribeHardware(m.hardware, m_gpus);
    });
}

void PlanRun::Allocate(uint64_t bufferBytes, uint64_t stagingBytes)
{
    // Ask before allocating, so that a sweep too big for the GPU says so in numbers.
    std::map<int, uint64_t> need;
    for (const RankMem& r : m_ranks) need[r.device] += bufferBytes + stagingBytes + 256;
    for (const auto& [device, bytes] : need)
        for (const DeviceInfo& g : m_gpus.report.devices)
            if (g.index == device && bytes > g.freeBytes)
                throw Error("the plan needs " + core::FormatBytes(bytes) + " on GPU " + std::to_string(device) + ", which has " +
                            core::FormatBytes(g.freeBytes) + " free: lower --max-bytes/--bytes or --ranks");
    for (RankMem& r : m_ranks) {
        r.buffer = DeviceBuffer(r.device, bufferBytes);
        r.staging = DeviceBuffer(r.device, std::max<uint64_t>(stagingBytes, 16));
        r.counters = DeviceBuffer(r.device, 2 * sizeof(unsigned long long));
    }
}

void PlanRun::Fill(const core::Plan& plan)
{
    for (size_t r = 0; r < m_ranks.size(); ++r) {
        DeviceScope scope(m_ranks[r].device);
        LaunchFillPlanBytes(m_ranks[r].buffer.Bytes(), plan.bufferBytes, m_req.seed, static_cast<int>(r), 0, m_ranks[r].recv.Get());
        PARALENS_CUDA_LAUNCHED("the Plan buffers' fill kernel");
    }
    Wait("filling the Plan buffers");
}

void PlanRun::IssueOp(const PlanProgram& prog, size_t index, const std::string& detail, bool traced)
{
    const GpuOp& op = prog.ops[index];
    const bool nccl = m_nccl && op.kind == GpuOpKind::Transfer && op.src != op.dst;
    const cudaStream_t main = StreamOf(op.stream);
    const cudaStream_t other = nccl ? m_ranks[static_cast<size_t>(op.dst)].recv.Get() : nullptr;
    for (uint32_t d : prog.DepsOf(op)) {
        for (cudaStream_t s : {main, other}) {
            if (!s) continue;
            PARALENS_CUDA(cudaStreamWaitEvent(s, m_done[d].Get(), 0));
            if (m_recvDone[d].Get()) PARALENS_CUDA(cudaStreamWaitEvent(s, m_recvDone[d].Get(), 0));
        }
    }
    const OpLabelParts parts = DescribeOp(op, m_alphaSec, m_betaSecPerByte);
    prof::OpLabel label;
    label.name = parts.name;
    label.category = parts.category;
    label.predictedNs = parts.predictedNs;
    label.step = op.step;
    label.chunk = op.block;
    label.bytes = op.bytes;
    label.detail = detail;
    if (op.kind == GpuOpKind::Transfer) {
        label.srcRank = op.src;
        label.dstRank = op.dst;
    }
    const RankMem& owner = m_ranks[static_cast<size_t>(op.stream / 2)];
    DeviceScope scope(owner.device);
    Timeline::Op span;
    if (traced) span = m_timeline->Begin(main, owner.device, op.stream / 2, op.stream % 2 == 0 ? "send" : "recv", label);
    if (nccl) {
        NcclGroup group(*m_comms);
        for (const Piece& p : prog.PiecesOf(op)) {
            PARALENS_NCCL(ncclSend(Ptr(p.src), p.bytes, ncclUint8, op.dst, (*m_comms)[static_cast<size_t>(op.src)], main));
            PARALENS_NCCL(ncclRecv(Ptr(p.dst), p.bytes, ncclUint8, op.src, (*m_comms)[static_cast<size_t>(op.dst)], other));
        }
        group.End("a Plan transfer (ncclSend/ncclRecv)");
    } else {
        for (const Piece& p : prog.PiecesOf(op)) {
            const int srcDev = m_ranks[static_cast<size_t>(p.src.rank)].device;
            const int dstDev = m_ranks[static_cast<size_t>(p.dst.rank)].device;
            if (op.kind == GpuOpKind::Reduce) {
                LaunchReduceBytes(Ptr(p.dst), Ptr(p.src), p.bytes, main);
                PARALENS_CUDA_LAUNCHED("the Plan's reduction kernel");
            } else if (srcDev == dstDev) {
                PARALENS_CUDA(cudaMemcpyAsync(Ptr(p.dst), Ptr(p.src), p.bytes, cudaMemcpyDeviceToDevice, main));
            } else {
                PARALENS_CUDA(cudaMemcpyPeerAsync(Ptr(p.dst), dstDev, Ptr(p.src), srcDev, p.bytes, main));
            }
        }
    }
    if (traced) m_timeline->End(span);
    PARALENS_CUDA(cudaEventRecord(m_done[index].Get(), main));
    if (nccl) {
        DeviceScope receiver(m_ranks[static_cast<size_t>(op.dst)].device);
        PARALENS_CUDA(cudaEventRecord(m_recvDone[index].Get(), other));
    }
}

// One run of the program: every stream starts after the control stream's begin event, and the
// control stream's end event follows every stream's last op (in a capture, the same fork and join
// make every stream's work part of the control stream's graph).
void PlanRun::Issue(const PlanProgram& prog, const std::string& detail, bool traced)
{
    PARALENS_CUDA(cudaEventRecord(m_begin.Get(), m_control.Get()));
    for (const RankMem& r : m_ranks) {
        PARALENS_CUDA(cudaStreamWaitEvent(r.send.Get(), m_begin.Get(), 0));
        PARALENS_CUDA(cudaStreamWaitEvent(r.recv.Get(), m_begin.Get(), 0));
    }
    for (size_t i = 0; i < prog.ops.size(); ++i) IssueOp(prog, i, detail, traced);
    for (RankMem& r : m_ranks) {
        DeviceScope scope(r.device);
        for (cudaStream_t s : {r.send.Get(), r.recv.Get()}) {
            PARALENS_CUDA(cudaEventRecord(r.tail.Get(), s));
            PARALENS_CUDA(cudaStreamWaitEvent(m_control.Get(), r.tail.Get(), 0));
        }
    }
    DeviceScope scope(m_control.Device());
    PARALENS_CUDA(cudaEventRecord(m_end.Get(), m_control.Get()));
}

uint64_t PlanRun::Check(const core::Plan& plan)
{
    uint64_t wrong = 0;
    for (size_t r = 0; r < m_ranks.size(); ++r) {
        RankMem& mem = m_ranks[r];
        DeviceScope scope(mem.device);
        const unsigned long long init[2] = {0, ~0ull};
        PARALENS_CUDA(cudaMemcpyAsync(mem.counters.Get(), init, sizeof init, cudaMemcpyHostToDevice, mem.recv.Get()));
        for (const core::ExpectedRegion& e : core::ExpectedRegions(plan, static_cast<int>(r))) {
            const check::PlanRegion region{e.offset, e.bytes, e.kind == core::ExpectedRegion::Kind::SumOfAll ? 1 : 0,
                                           e.sourceRank, e.sourceOffset};
            LaunchCheckPlanRegion(mem.buffer.Bytes(), region, m_p, m_req.seed,
                                  static_cast<unsigned long long*>(mem.counters.Get()), mem.recv.Get());
            PARALENS_CUDA_LAUNCHED("the Plan's check kernel");
        }
        unsigned long long counters[2] = {0, 0};
        PARALENS_CUDA(cudaMemcpyAsync(counters, mem.counters.Get(), sizeof counters, cudaMemcpyDeviceToHost, mem.recv.Get()));
        PARALENS_CUDA(cudaStreamSynchronize(mem.recv.Get()));
        wrong += counters[0];
    }
    return wrong;
}

void PlanRun::MakeEvents(const PlanProgram& prog)
{
    m_done.clear();
    m_recvDone.clear();
    for (const GpuOp& op : prog.ops) {
        m_done.emplace_back(m_ranks[static_cast<size_t>(op.stream / 2)].device, false);
        const bool nccl = m_nccl && op.kind == GpuOpKind::Transfer && op.src != op.dst;
        m_recvDone.push_back(nccl ? Event(m_ranks[static_cast<size_t>(op.dst)].device, false) : Event());
    }
}

// --graph: the program captured once from the control stream into a CUDA graph, launched once to
// check its result and warm it, then --iters times timed by two events around each launch.
void PlanRun::TimeGraph(const core::Plan& plan, const PlanProgram& prog, core::MetaSection& row)
{
    MakeEvents(prog);
    Graph graph;
    {
        DeviceScope scope(m_control.Device());
        PARALENS_CUDA(cudaStreamBeginCapture(m_control.Get(), cudaStreamCaptureModeThreadLocal));
        try {
            Issue(prog, "", false);
        } catch (...) {
            cudaGraph_t partial = nullptr;
            IgnoreCuda(cudaStreamEndCapture(m_control.Get(), &partial));
            if (partial) IgnoreCuda(cudaGraphDestroy(partial));
            throw;
        }
        PARALENS_CUDA(cudaStreamEndCapture(m_control.Get(), graph.Out()));
        graph.Instantiate();
    }
    uint64_t wrong = 0;
    Fill(plan);
    graph.Launch(m_control.Get());
    Wait("the checked graph run");
    if (m_req.check) wrong = Check(plan);
    const Event begin(m_control.Device(), true), end(m_control.Device(), true);
    std::vector<double> seconds;
    for (int it = 0; it < m_req.iters; ++it) {
        m_job.ThrowIfCancelled();
        DeviceScope scope(m_control.Device());
        PARALENS_CUDA(cudaEventRecord(begin.Get(), m_control.Get()));
        graph.Launch(m_control.Get());
        PARALENS_CUDA(cudaEventRecord(end.Get(), m_control.Get()));
        Wait("the timed graph run");
        float ms = 0;
        PARALENS_CUDA(cudaEventElapsedTime(&ms, begin.Get(), end.Get()));
        seconds.push_back(ms * 1e-3);
    }
    row.Set("graphTimeUs", std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size()) * 1e6);
    row.Set("graphMinTimeUs", *std::min_element(seconds.begin(), seconds.end()) * 1e6);
    row.Set("graphWrong", static_cast<int64_t>(wrong));
}

core::MetaSection PlanRun::RunSize(const core::Plan& plan, const PlanProgram& prog)
{
    MakeEvents(prog);
    uint64_t wrong = 0;
    if (m_req.check) {
        Fill(plan);
        Issue(prog, "check");
        Wait("the checked Plan run");
        wrong = Check(plan);
    }
    for (int w = 0; w < m_req.warmupIters; ++w) Issue(prog, "warmup");
    std::vector<double> seconds;
    for (int it = 0; it < m_req.iters; ++it) {
        Issue(prog, "iteration " + std::to_string(it));
        Wait("the timed Plan run");
        float ms = 0;
        PARALENS_CUDA(cudaEventElapsedTime(&ms, m_begin.Get(), m_end.Get()));
        seconds.push_back(ms * 1e-3);
    }
    const double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
    const double best = *std::min_element(seconds.begin(), seconds.end());
    const double predicted = m_memoryBytesPerSec > 0
                                 ? core::SharedMemoryPlanCost(plan, m_alphaSec, m_memoryBytesPerSec).seconds
                                 : core::PredictSeconds(plan.spec, core::CostParams{m_alphaSec, m_betaSecPerByte, 0.0}).seconds;
    core::MetaSection row;
    row.Set("bytes", static_cast<int64_t>(plan.spec.bytes));
    row.Set("steps", static_cast<int64_t>(plan.steps.size()));
    row.Set("transfers", static_cast<int64_t>(plan.transfers.size()));
    row.Set("timeUs", mean * 1e6);
    row.Set("minTimeUs", best * 1e6);
    row.Set("algbwGBps", core::AlgBwGBps(plan.spec.bytes, mean));
    row.Set("busbwGBps", core::AlgBwGBps(plan.spec.bytes, mean) * core::BusBwFactor(plan.spec.collective, m_p));
    if (m_betaSecPerByte > 0) row.Set("predictedUs", predicted * 1e6);
    row.Set("checked", m_req.check);
    row.Set("wrong", static_cast<int64_t>(wrong));
    return row;
}

RunReport PlanRun::Run()
{
    RunReport report;
    Setup(report);
    const auto& pr = m_req.plan;
    std::vector<core::Plan> plans;
    std::vector<PlanProgram> programs;
    uint64_t maxBuffer = 0, maxStaging = 0;
    for (uint64_t size : m_req.sizes) {
        core::CollectiveSpec spec;
        spec.collective = pr.collective;
        spec.algorithm = pr.algorithm;
        spec.ranks = m_p;
        spec.bytes = size;
        spec.root = pr.root;
        plans.push_back(core::BuildPlan(spec));
        programs.push_back(BuildPlanProgram(plans.back()));
        maxBuffer = std::max(maxBuffer, programs.back().bufferBytes);
        maxStaging = std::max(maxStaging, programs.back().stagingBytes);
    }
    Allocate(maxBuffer, maxStaging);
    m_timeline->StartPublishing();
    for (size_t i = 0; i < plans.size(); ++i) {
        m_job.ThrowIfCancelled();
        m_job.SetProgress("Plan " + std::string(core::Name(pr.collective)) + " " + core::FormatBytes(plans[i].spec.bytes),
                          static_cast<double>(i) / static_cast<double>(plans.size()));
        core::MetaSection row = RunSize(plans[i], programs[i]);
        if (row.GetNumber("wrong") > 0) report.checksPassed = false;
        report.rows.push_back(std::move(row));
    }
    Wait("the Plan runs");
    if (m_comms) m_comms->Destroy();
    report.trace = m_timeline->Finish();
    // Graphs after the capture has stopped: their kernels and copies stay out of the Trace.
    for (size_t i = 0; i < plans.size() && pr.graph; ++i) {
        m_job.SetProgress("Plan graph " + core::FormatBytes(plans[i].spec.bytes), static_cast<double>(i) / static_cast<double>(plans.size()));
        TimeGraph(plans[i], programs[i], report.rows[i]);
        if (report.rows[i].GetNumber("graphWrong") > 0) report.checksPassed = false;
    }
    if (pr.graph)
        report.notes.push_back("--graph: each size also ran as one CUDA graph of the whole step (graphTimeUs, not in the trace): "
                               "the GPU's time without the host issuing each transfer and reduction");
    for (const std::string& n : m_timeline->Notes()) report.notes.push_back(n);
    report.summary.Set("workload", std::string("plan"));
    report.summary.Set("collective", std::string(core::Name(pr.collective)));
    report.summary.Set("algorithm", std::string(core::Name(pr.algorithm)));
    report.summary.Set("ranks", static_cast<int64_t>(m_p));
    report.summary.Set("virtualRanks", m_virtual);
    report.summary.Set("transport", std::string(m_nccl ? "nccl" : "peer"));
    report.summary.Set("gpu", m_gpus.used.front().name);
    report.summary.Set("timing", report.trace->Meta().extra.GetString("timing"));
    return report;
}

} // namespace

RunReport RunPlanWorkload(const RunRequest& request, JobContext& job)
{
    PlanRun run(request, job);
    return run.Run();
}

} // namespace paralens::gpu::detail
