// The pipeline runner: D stages of MLP blocks on GPUs (or virtual stages sharing one GPU, each in
// its own green context), every F, B and W op of a core Schedule as cuBLAS GEMMs in bf16, fp16 or
// fp32, activations and gradients sent between stages by peer copy or NCCL, in the order
// gpu/PipelineProgram decided on the host. FLOPs of every op are known, so MFU is exact.
#include "gpu/CudaEnvironment.hpp"
#include "gpu/PipelineProgram.hpp"
#include "gpu/detail/Cublas.hpp"
#include "gpu/detail/GreenContexts.hpp"
#include "gpu/detail/Kernels.hpp"
#include "gpu/detail/Nccl.hpp"
#include "gpu/detail/Timeline.hpp"
#include "gpu/detail/Workloads.hpp"

#include "analysis/PipelineMetrics.hpp"
#include "sim/MeasuredPipeline.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>

namespace paralens::gpu::detail {

namespace {

cudaDataType_t CudaType(DType d)
{
    switch (d) {
    case DType::BFloat16: return CUDA_R_16BF;
    case DType::Half: return CUDA_R_16F;
    default: return CUDA_R_32F;
    }
}

struct Stage {
    int device = 0;
    DeviceBuffer mem;
    Stream compute, send, recv;
    // --copy-on receiver: the copies coming in from the previous and the next stage (in the ring
    // of stages), in this stage's context; each placed on its sender's send track.
    Stream fromPrev, fromNext;
    std::unique_ptr<CublasHandle> blas;
    std::array<const Stream*, 5> Streams() const { return {&compute, &send, &recv, &fromPrev, &fromNext}; }
};

class PipelineRun {
public:
    PipelineRun(const RunRequest& req, JobContext& job)
        : m_req(req), m_job(job), m_gpus(OpenGpus(req.gpus)), m_prog(BuildPipelineProgram(req.pipeline))
    {
    }
    RunReport Run();

private:
    void Setup(RunReport& report);
    void MakeStreams(RunReport& report);
    void FillInputs();
    void Issue(int iteration, const std::string& detail);
    void IssueStep(size_t index, int iteration, const std::string& detail);
    void Gemm(Stage& s, const GemmCall& g, int32_t chunk, int32_t mb);
    // A copy between virtual stages that the receiving stage's stream runs (--copy-on receiver).
    bool OnReceiver(const PipeStep& s) const
    {
        return s.onSendStream && m_receiverCopies && s.peerDevice >= 0 && s.peerDevice != s.device;
    }
    int32_t Prev(int32_t d) const { return (d + static_cast<int32_t>(m_stages.size()) - 1) % static_cast<int32_t>(m_stages.size()); }
    int32_t Next(int32_t d) const { return (d + 1) % static_cast<int32_t>(m_stages.size()); }
    void Wait(const char* what);
    uint8_t* Ptr(int32_t stage, PipeBuf buf, int32_t block, int32_t chunk, int32_t mb)
    {
        const PipeOperand o{buf, block};
        return m_stages[static_cast<size_t>(stage)].mem.Bytes() + m_prog.OperandOffset(o, chunk, mb) * m_prog.ElementBytes();
    }

    const RunRequest& m_req;
    JobContext& m_job;
    Gpus m_gpus;
    PipelineProgram m_prog;
    bool m_virtual = false;
    bool m_nccl = false;
    bool m_receiverCopies = false; // --copy-on receiver on one GPU's virtual stages
    double m_peakPerStage = 0, m_gpuPeak = 0;
    std::unique_ptr<GreenContexts> m_green; // before the stages: their streams go first
    std::vector<Stage> m_stages;
    Stream m_control;
    Event m_begin, m_end, m_tail;
    std::vector<Event> m_done;
    std::unique_ptr<Timeline> m_timeline;
    std::unique_ptr<NcclComms> m_comms;
};

void PipelineRun::Wait(const char* what)
{
    std::vector<cudaStream_t> streams{m_control.Get()};
    for (const Stage& s : m_stages)
        for (const Stream* st : s.Streams())
            if (st->Get()) streams.push_back(st->Get());
    WaitStreams(streams, m_job, std::chrono::seconds(static_cast<int64_t>(TimeoutSeconds())),
                [&] {
                    if (m_comms) m_comms->Poll();
                },
                what);
}

void PipelineRun::MakeStreams(RunReport& report)
{
    const auto& pr = m_req.pipeline;
    const int D = pr.stages;
    if (m_virtual && D > 1 && pr.smPartition != SmPartition::None) {
        std::string why;
        m_green = GreenContexts::Create(m_stages.front().device, D, &why);
        if (!m_green && pr.smPartition == SmPartition::Green) throw Unavailable("--sm-partition green: " + why);
        if (!m_green) report.notes.push_back("virtual stages share all SMs (no green contexts: " + why + ")");
        else
            report.notes.push_back("virtual stages: " + std::to_string(D) + " green contexts of " +
                                   std::to_string(m_green->SmsPerGroup()) + " SMs each");
    } else if (m_virtual && D > 1) {
        report.notes.push_back("virtual stages share all SMs (--sm-partition none): they compete for them");
    }
    m_receiverCopies = m_virtual && !m_nccl && D > 1 && pr.copyOn == CopyOn::Receiver;
    if (m_virtual && !m_nccl && D > 1)
        report.notes.push_back(m_receiverCopies ? "copies between stages run on the receiving stage's stream and SMs (--copy-on receiver)"
                                                : "copies between stages run on the sending stage's stream and SMs (--copy-on sender)");
    // The streams that carry work on the one GPU: each stage's compute stream, and its send stream
    // or its two receiving streams.
    const std::string queues = m_virtual ? QueueSharingNote(D + (m_receiverCopies ? 2 * (D - 1) : D)) : std::string();
    if (!queues.empty()) report.notes.push_back(queues);
    for (int d = 0; d < D; ++d) {
        Stage& s = m_stages[static_cast<size_t>(d)];
        if (m_green) {
            s.compute = Stream(s.device, m_green->NewStream(d));
            s.send = Stream(s.device, m_green->NewStream(d));
        } else {
            s.compute = Stream(s.device);
            s.send = Stream(s.device);
        }
        if (m_nccl) s.recv = Stream(s.device);
        if (m_receiverCopies) {
            s.fromPrev = m_green ? Stream(s.device, m_green->NewStream(d)) : Stream(s.device);
            s.fromNext = m_green ? Stream(s.device, m_green->NewStream(d)) : Stream(s.device);
        }
        GreenContexts::Scope green(m_green.get(), d); // the handle in the stage's context
        s.blas = std::make_unique<CublasHandle>(s.device);
        DeviceScope scope(s.device);
        PARALENS_CUBLAS(Cublas().setStream(s.blas->Get(), s.compute.Get()));
    }
}

void PipelineRun::Setup(RunReport& report)
{
    const auto& pr = m_req.pipeline;
    const int D = pr.stages;
    const int gpus = static_cast<int>(m_gpus.used.size());
    m_virtual = pr.virtualStages || D > gpus || (gpus == 1 && D > 1);
    m_nccl = !m_virtual && D > 1 && pr.transport == Transport::Nccl;
    if (pr.transport == Transport::Nccl && m_virtual)
        throw Error("--transport nccl: virtual stages share one GPU and NCCL allows one rank per GPU; use --transport peer");
    std::vector<int> devices;
    for (int d = 0; d < D; ++d) devices.push_back(m_gpus.used[m_virtual ? 0 : static_cast<size_t>(d)].index);
    if (!m_virtual && !m_nccl && D > 1) {
        const auto missing = EnablePeerAccess(devices);
        if (!missing.empty() && pr.transport == Transport::Auto) m_nccl = true; // NCCL finds a path
        for (const std::string& pair : missing) report.notes.push_back("no peer access " + pair);
    }
    // Memory first, in numbers, before anything is allocated.
    std::map<int, uint64_t> need;
    for (int dev : devices) need[dev] += m_prog.BytesPerStage();
    for (const auto& [dev, bytes] : need)
        for (const DeviceInfo& g : m_gpus.report.devices)
            if (g.index == dev && bytes > g.freeBytes)
                throw Error("the pipeline needs " + core::FormatBytes(bytes) + " on GPU " + std::to_string(dev) + ", which has " +
                            core::FormatBytes(g.freeBytes) + " free: lower --tokens, --hidden, --ffn, --layers or --microbatches");
    const DeviceInfo& gpu = m_gpus.used.front();
    m_gpuPeak = m_req.peakTflops > 0 ? m_req.peakTflops * 1e12 : SpecPeakFlops(gpu, std::string(ShortName(pr.dtype)));
    m_peakPerStage = m_virtual ? m_gpuPeak / D : m_gpuPeak; // a virtual stage's share of its GPU
    const std::string title = std::string(core::Name(pr.schedule)) + " pipeline, " + std::to_string(D) +
                              (m_virtual ? " virtual stages" : " GPUs") + ", " + std::to_string(pr.microBatches) + " micro-batches";
    m_timeline = std::make_unique<Timeline>(m_req.timing, m_job, TraceOptions(title, m_peakPerStage), m_req.apiSpans);
    for (int d = 0; d < D; ++d) {
        Stage s;
        s.device = devices[static_cast<size_t>(d)];
        s.mem = DeviceBuffer(s.device, m_prog.BytesPerStage());
        m_stages.push_back(std::move(s));
        m_timeline->AddRank({d, devices[static_cast<size_t>(d)], m_virtual, m_gpus.used[m_virtual ? 0 : static_cast<size_t>(d)].name});
    }
    MakeStreams(report);
    for (int d = 0; d < D; ++d) {
        m_timeline->PlaceStream(m_stages[static_cast<size_t>(d)].compute.Get(), devices[static_cast<size_t>(d)], d, "compute");
        m_timeline->PlaceStream(m_stages[static_cast<size_t>(d)].send.Get(), devices[static_cast<size_t>(d)], d, "send");
        if (m_nccl) m_timeline->PlaceStream(m_stages[static_cast<size_t>(d)].recv.Get(), devices[static_cast<size_t>(d)], d, "recv");
        if (m_receiverCopies) { // on the sender's send track, as the sender's own copies are
            m_timeline->PlaceStream(m_stages[static_cast<size_t>(d)].fromPrev.Get(), devices[static_cast<size_t>(d)], Prev(d), "send");
            m_timeline->PlaceStream(m_stages[static_cast<size_t>(d)].fromNext.Get(), devices[static_cast<size_t>(d)], Next(d), "send");
        }
    }
    if (m_nccl) m_comms = std::make_unique<NcclComms>(devices, m_job, "", "", "", "");
    m_control = Stream(devices.front());
    m_begin = Event(devices.front(), true);
    m_end = Event(devices.front(), true);
    for (const PipeStep& s : m_prog.steps) {
        // Recorded on the stage's stream (the receiver's for an NCCL send or a copy the receiver
        // runs): made in that context.
        const int32_t where = (s.onSendStream && m_nccl && s.peerDevice != s.device) || OnReceiver(s) ? s.peerDevice : s.device;
        GreenContexts::Scope green(m_green.get(), where);
        m_done.emplace_back(m_stages[static_cast<size_t>(where)].device, false);
    }
    m_timeline->EditMeta([&](core::Metadata& m) {
        m.workload.Set("workload", std::string("pipeline"));
        m.workload.Set("schedule", std::string(core::Name(pr.schedule)));
        m.workload.Set("stages", static_cast<int64_t>(D));
        m.workload.Set("microbatches", static_cast<int64_t>(pr.microBatches));
        m.workload.Set("chunks", static_cast<int64_t>(pr.chunks));
        m.workload.Set("recompute", pr.recompute);
        m.workload.Set("layersPerStage", static_cast<int64_t>(pr.layersPerStage));
        m.workload.Set("hidden", static_cast<int64_t>(pr.hidden));
        m.workload.Set("ffn", static_cast<int64_t>(pr.ffn));
        m.workload.Set("tokens", static_cast<int64_t>(pr.tokens));
        m.workload.Set("dtype", std::string(ShortName(pr.dtype)));
        m.workload.Set("virtualStages", m_virtual);
        m.workload.Set("transport", std::string(m_nccl ? "nccl send/recv" : (m_virtual ? "copies within one GPU" : "peer copies")));
        m.workload.Set("smPartition", std::string(m_green ? "green contexts" : "none"));
        if (m_virtual && !m_nccl) m.workload.Set("copyOn", std::string(m_receiverCopies ? "receiver" : "sender"));
        m.model.Set("peakFlopsPerStage", m_peakPerStage);
        m.model.Set("peakSource", std::string(m_req.peakTflops > 0 ? "--peak-tflops" : "spec sheet"));
        DescribeHardware(m.hardware, m_gpus);
    });
    Wait("the pipeline's setup");
}

void PipelineRun::FillInputs()
{
    const auto& pr = m_req.pipeline;
    const KType kt = static_cast<KType>(static_cast<int>(pr.dtype));
    const uint64_t perStage = m_prog.BytesPerStage() / m_prog.ElementBytes();
    for (size_t d = 0; d < m_stages.size(); ++d) {
        Stage& s = m_stages[d];
        GreenContexts::Scope green(m_green.get(), static_cast<int>(d));
        DeviceScope scope(s.device);
        // Everything small and random (weights ~ 1/sqrt(h)): values stay far from overflow in fp16.
        LaunchFillUniform(s.mem.Get(), kt, perStage, m_req.seed + d, 1.0f / std::sqrt(static_cast<float>(pr.hidden)),
                          s.compute.Get());
        PARALENS_CUDA_LAUNCHED("the pipeline's fill kernel");
    }
    Wait("filling the pipeline's buffers");
}

void PipelineRun::Gemm(Stage& s, const GemmCall& g, int32_t chunk, int32_t mb)
{
    const uint64_t elt = m_prog.ElementBytes();
    auto ptr = [&](const PipeOperand& o) { return s.mem.Bytes() + m_prog.OperandOffset(o, chunk, mb) * elt; };
    const float alpha = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
    const cudaDataType_t t = CudaType(m_req.pipeline.dtype);
    // Row-major C (m x n) = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
    const cublasOperation_t opB = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opA = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = g.transB ? g.k : g.n;
    const int lda = g.transA ? g.m : g.k;
    PARALENS_CUBLAS(Cublas().gemmEx(s.blas->Get(), opB, opA, g.n, g.m, g.k, &alpha, ptr(g.b), t, ldb, ptr(g.a), t, lda, &beta,
                                    ptr(g.c), t, g.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void PipelineRun::IssueStep(size_t index, int iteration, const std::string& detail)
{
    const PipeStep& step = m_prog.steps[index];
    Stage& stage = m_stages[static_cast<size_t>(step.device)];
    const bool onReceiver = OnReceiver(step);
    const Stage& to = m_stages[static_cast<size_t>(onReceiver ? step.peerDevice : step.device)];
    const cudaStream_t stream = onReceiver ? (step.device == Prev(step.peerDevice) ? to.fromPrev : to.fromNext).Get()
                                : step.onSendStream ? stage.send.Get()
                                                    : stage.compute.Get();
    // The op's events live in the context of the stage whose stream runs it.
    GreenContexts::Scope green(m_green.get(), onReceiver ? step.peerDevice : step.device);
    DeviceScope scope(stage.device);
    if (step.waitFor >= 0) PARALENS_CUDA(cudaStreamWaitEvent(stream, m_done[static_cast<size_t>(step.waitFor)].Get(), 0));
    const PipeLabel parts = DescribeStep(step);
    prof::OpLabel label;
    label.name = parts.name;
    label.category = parts.category;
    label.microBatch = step.microBatch;
    label.chunk = step.chunk;
    label.step = iteration;
    label.flops = step.hardwareFlops;
    label.bytes = step.bytes;
    label.detail = parts.detail.empty() ? detail : parts.detail;
    if (step.onSendStream) {
        label.srcRank = step.device;
        label.dstRank = step.peerDevice;
    }
    Timeline::Op op = m_timeline->Begin(stream, stage.device, step.device, step.onSendStream ? "send" : "compute", label);
    if (!step.onSendStream) {
        for (const GemmCall& g : m_prog.GemmsOf(step)) Gemm(stage, g, step.chunk, step.microBatch);
    } else {
        const bool act = step.kind == PipeStepKind::SendActivation;
        uint8_t* src = Ptr(step.device, act ? PipeBuf::Yout : PipeBuf::GX, 0, step.chunk, step.microBatch);
        uint8_t* dst = Ptr(step.peerDevice, act ? PipeBuf::X : PipeBuf::dY, 0, step.peerChunk, step.microBatch);
        const Stage& peer = m_stages[static_cast<size_t>(step.peerDevice)];
        if (m_nccl && step.peerDevice != step.device) {
            NcclGroup group(*m_comms);
            PARALENS_NCCL(ncclSend(src, step.bytes, ncclUint8, step.peerDevice, (*m_comms)[static_cast<size_t>(step.device)], stream));
            PARALENS_NCCL(ncclRecv(dst, step.bytes, ncclUint8, step.device, (*m_comms)[static_cast<size_t>(step.peerDevice)], peer.recv.Get()));
            group.End("a pipeline send (ncclSend/ncclRecv)");
        } else if (peer.device == stage.device) {
            PARALENS_CUDA(cudaMemcpyAsync(dst, src, step.bytes, cudaMemcpyDeviceToDevice, stream));
        } else {
            PARALENS_CUDA(cudaMemcpyPeerAsync(dst, peer.device, src, stage.device, step.bytes, stream));
        }
    }
    m_timeline->End(op);
    // With NCCL the consumer waits for the receiver's side; otherwise for the op's own stream.
    if (step.onSendStream && m_nccl && step.peerDevice != step.device) {
        DeviceScope receiver(m_stages[static_cast<size_t>(step.peerDevice)].device);
        PARALENS_CUDA(cudaEventRecord(m_done[index].Get(), m_stages[static_cast<size_t>(step.peerDevice)].recv.Get()));
    } else {
        PARALENS_CUDA(cudaEventRecord(m_done[index].Get(), stream));
    }
}

void PipelineRun::Issue(int iteration, const std::string& detail)
{
    PARALENS_CUDA(cudaEventRecord(m_begin.Get(), m_control.Get()));
    for (size_t d = 0; d < m_stages.size(); ++d) {
        GreenContexts::Scope green(m_green.get(), static_cast<int>(d));
        for (const Stream* st : m_stages[d].Streams())
            if (st->Get()) PARALENS_CUDA(cudaStreamWaitEvent(st->Get(), m_begin.Get(), 0));
    }
    for (size_t i = 0; i < m_prog.steps.size(); ++i) IssueStep(i, iteration, detail);
    for (size_t d = 0; d < m_stages.size(); ++d) {
        Stage& s = m_stages[d];
        GreenContexts::Scope green(m_green.get(), static_cast<int>(d));
        DeviceScope scope(s.device);
        Event tail(s.device, false);
        for (const Stream* st : s.Streams()) {
            if (!st->Get()) continue;
            PARALENS_CUDA(cudaEventRecord(tail.Get(), st->Get()));
            PARALENS_CUDA(cudaStreamWaitEvent(m_control.Get(), tail.Get(), 0));
        }
    }
    DeviceScope scope(m_control.Device());
    PARALENS_CUDA(cudaEventRecord(m_end.Get(), m_control.Get()));
}

// The model for every schedule, closed form or not: the run's order at its measured op times.
void AddModel(core::MetaSection& summary, const core::Trace& t)
{
    const auto model = core::CheckPipelineModel(t);
    if (!model) return;
    summary.Set("bubbleModel", model->model);
    summary.Set("forwardMs", model->times.forwardSec * 1e3);
    summary.Set("backwardMs", model->times.backwardSec * 1e3);
    if (model->spec.SplitsWeightGrad()) summary.Set("weightMs", model->times.weightSec * 1e3);
}

RunReport PipelineRun::Run()
{
    RunReport report;
    Setup(report);
    FillInputs();
    m_timeline->StartPublishing();
    const auto& pr = m_req.pipeline;
    m_job.SetProgress("pipeline warm-up", 0.0);
    for (int w = 0; w < m_req.warmupIters; ++w) {
        Issue(-1 - w, "warmup");
        Wait("the pipeline's warm-up");
    }
    std::vector<double> seconds;
    for (int it = 0; it < m_req.iters; ++it) {
        m_job.ThrowIfCancelled();
        m_job.SetProgress(std::string(core::Name(pr.schedule)) + " iteration " + std::to_string(it + 1), static_cast<double>(it) / m_req.iters);
        Issue(it, "");
        Wait("a pipeline iteration");
        float ms = 0;
        PARALENS_CUDA(cudaEventElapsedTime(&ms, m_begin.Get(), m_end.Get()));
        seconds.push_back(ms * 1e-3);
    }
    if (m_comms) m_comms->Destroy();
    report.trace = m_timeline->Finish();
    for (const std::string& n : m_timeline->Notes()) report.notes.push_back(n);
    const core::Trace& t = *report.trace;
    const double flops = m_prog.ModelFlops();
    core::PipelineSpec spec;
    spec.kind = pr.schedule;
    spec.stages = pr.stages;
    spec.microBatches = pr.microBatches;
    spec.chunks = pr.chunks;
    const double formula = core::BubbleFractionFormula(spec);
    for (int it = 0; it < m_req.iters; ++it) {
        // The iteration's window: its ops' extent in the Trace (GPU time, whatever the source).
        const core::UsageWindow w = core::StepWindow(t, it);
        core::MetaSection row;
        row.Set("iteration", static_cast<int64_t>(it));
        row.Set("timeUs", seconds[static_cast<size_t>(it)] * 1e6);
        row.Set("modelFlops", flops);
        if (m_gpuPeak > 0) row.Set("mfu", flops / seconds[static_cast<size_t>(it)] / (m_gpuPeak * (m_virtual ? 1 : pr.stages)));
        if (w.endNs > w.beginNs) row.Set("bubble", core::ComputeBubbleFraction(t, w));
        report.rows.push_back(std::move(row));
    }
    const std::vector<int> held = core::PeakActivations(t);
    const double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
    report.summary.Set("workload", std::string("pipeline"));
    report.summary.Set("schedule", std::string(core::Name(pr.schedule)));
    report.summary.Set("stages", static_cast<int64_t>(pr.stages));
    report.summary.Set("microbatches", static_cast<int64_t>(pr.microBatches));
    report.summary.Set("virtualStages", m_virtual);
    report.summary.Set("gpu", m_gpus.used.front().name);
    report.summary.Set("meanTimeUs", mean * 1e6);
    report.summary.Set("modelFlopsPerIteration", flops);
    const double peak = m_gpuPeak * (m_virtual ? 1 : pr.stages);
    if (m_gpuPeak > 0) report.summary.Set("mfu", flops / mean / peak);
    if (m_gpuPeak > 0) report.summary.Set("hfu", m_prog.HardwareFlops() / mean / peak); // recomputation counted
    report.summary.Set("peakFlopsPerGpu", m_gpuPeak);
    if (formula >= 0) report.summary.Set("bubbleFormula", formula);
    AddModel(report.summary, t);
    std::string heldText;
    for (int h : held) {
        if (!heldText.empty()) heldText += ' ';
        heldText += std::to_string(h);
    }
    report.summary.Set("peakActivations", heldText);
    report.summary.Set("timing", t.Meta().extra.GetString("timing"));
    return report;
}

} // namespace

RunReport RunPipelineWorkload(const RunRequest& request, JobContext& job)
{
    PipelineRun run(request, job);
    return run.Run();
}

} // namespace paralens::gpu::detail
