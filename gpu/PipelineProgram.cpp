#include "PipelineProgram.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace paralens::gpu {

namespace {

core::PipelineSpec SpecOf(const PipelineRun& r)
{
    core::PipelineSpec s;
    s.kind = r.schedule;
    s.stages = r.stages;
    s.microBatches = r.microBatches;
    s.chunks = r.chunks;
    s.recompute = r.recompute;
    return s;
}

class Builder {
public:
    explicit Builder(const PipelineRun& run)
    {
        m_p.run = run;
        m_p.schedule = core::BuildSchedule(SpecOf(run));
        m_p.blocksPerChunk = run.layersPerStage / run.chunks;
        m_split = m_p.schedule.spec.SplitsWeightGrad();
        m_vstages = run.stages * run.chunks;
    }

    PipelineProgram Build()
    {
        const auto order = core::ExecutionOrder(m_p.schedule);
        Require(!order.empty(), "pipeline: the schedule deadlocks (core::ExecutionOrder found no order)");
        for (const auto& [device, index] : order) {
            const core::PipeOp& op = m_p.schedule.stages[static_cast<size_t>(device)][static_cast<size_t>(index)];
            switch (op.kind) {
            case core::PipeOpKind::Forward: AddForward(device, op); break;
            case core::PipeOpKind::Backward: AddBackward(device, op); break;
            case core::PipeOpKind::WeightGrad: AddWeightGrad(device, op); break;
            }
        }
        return std::move(m_p);
    }

private:
    int32_t Virtual(int32_t device, int32_t chunk) const { return chunk * m_p.run.stages + device; }
    int32_t DeviceOf(int32_t vstage) const { return vstage % m_p.run.stages; }
    int32_t ChunkOf(int32_t vstage) const { return vstage / m_p.run.stages; }

    PipeStep Make(PipeStepKind kind, int32_t device, const core::PipeOp& op)
    {
        PipeStep s;
        s.kind = kind;
        s.device = device;
        s.chunk = op.chunk;
        s.microBatch = op.microBatch;
        s.virtualStage = Virtual(device, op.chunk);
        s.firstGemm = static_cast<uint32_t>(m_p.gemms.size());
        return s;
    }

    void Gemm(PipeOperand a, PipeOperand b, PipeOperand c, bool ta, bool tb, int32_t m, int32_t n, int32_t k, bool acc)
    {
        m_p.gemms.push_back(GemmCall{a, b, c, ta, tb, m, n, k, acc});
    }

    // H_b = X_b Wup_b; next = H_b Wdown_b (X_{b+1}, or Yout after the last block).
    void ForwardGemms()
    {
        const int32_t t = m_p.run.tokens, h = m_p.run.hidden, f = m_p.run.ffn, nb = m_p.blocksPerChunk;
        for (int32_t b = 0; b < nb; ++b) {
            Gemm({PipeBuf::X, b}, {PipeBuf::Wup, b}, {PipeBuf::H, b}, false, false, t, f, h, false);
            const PipeOperand out = b + 1 < nb ? PipeOperand{PipeBuf::X, b + 1} : PipeOperand{PipeBuf::Yout, 0};
            Gemm({PipeBuf::H, b}, {PipeBuf::Wdown, b}, out, false, false, t, h, f, false);
        }
    }

    PipeOperand GradOut(int32_t b) const
    {
        return b + 1 < m_p.blocksPerChunk ? PipeOperand{PipeBuf::GX, b + 1} : PipeOperand{PipeBuf::dY, 0};
    }

    void WeightGemms(int32_t b)
    {
        const int32_t t = m_p.run.tokens, h = m_p.run.hidden, f = m_p.run.ffn;
        Gemm({PipeBuf::H, b}, GradOut(b), {PipeBuf::dWdown, b}, true, false, f, h, t, true);
        Gemm({PipeBuf::X, b}, {PipeBuf::G, b}, {PipeBuf::dWup, b}, true, false, h, f, t, true);
    }

    void Finish(PipeStep& s)
    {
        s.gemmCount = static_cast<uint32_t>(m_p.gemms.size()) - s.firstGemm;
        for (const GemmCall& g : m_p.GemmsOf(s)) s.hardwareFlops += g.Flops();
        if (s.kind != PipeStepKind::Recompute) s.modelFlops = s.hardwareFlops;
        m_p.steps.push_back(s);
    }

    // A send right after its producer, on the producer's device send stream.
    int32_t AddSend(PipeStepKind kind, const PipeStep& producer, int32_t toVstage)
    {
        PipeStep s;
        s.kind = kind;
        s.device = producer.device;
        s.chunk = producer.chunk;
        s.microBatch = producer.microBatch;
        s.virtualStage = producer.virtualStage;
        s.peerDevice = DeviceOf(toVstage);
        s.peerChunk = ChunkOf(toVstage);
        s.bytes = static_cast<uint64_t>(m_p.run.tokens) * static_cast<uint64_t>(m_p.run.hidden) * m_p.ElementBytes();
        s.waitFor = static_cast<int32_t>(m_p.steps.size()) - 1; // the producer, just added
        s.onSendStream = true;
        s.firstGemm = static_cast<uint32_t>(m_p.gemms.size());
        m_p.steps.push_back(s);
        return static_cast<int32_t>(m_p.steps.size()) - 1;
    }

    int32_t TakeSend(std::map<std::tuple<int32_t, int32_t, int32_t>, int32_t>& sends, int32_t mb, int32_t vstage, const char* what)
    {
        auto it = sends.find({mb, vstage, 0});
        if (it == sends.end())
            throw Error(std::string("pipeline program: the ") + what + " for micro-batch " + std::to_string(mb) +
                        " into virtual stage " + std::to_string(vstage) + " was not issued before its consumer");
        return it->second;
    }

    void AddForward(int32_t device, const core::PipeOp& op)
    {
        PipeStep s = Make(PipeStepKind::Forward, device, op);
        if (s.virtualStage > 0) s.waitFor = TakeSend(m_actSends, op.microBatch, s.virtualStage, "activation");
        ForwardGemms();
        Finish(s);
        if (s.virtualStage + 1 < m_vstages)
            m_actSends[{op.microBatch, s.virtualStage + 1, 0}] = AddSend(PipeStepKind::SendActivation, m_p.steps.back(), s.virtualStage + 1);
    }

    void AddBackward(int32_t device, const core::PipeOp& op)
    {
        const int32_t vstage = Virtual(device, op.chunk);
        const int32_t wait = vstage + 1 < m_vstages ? TakeSend(m_gradSends, op.microBatch, vstage, "gradient") : -1;
        if (m_p.run.recompute) { // re-runs the forward; needs no gradient yet
            PipeStep r = Make(PipeStepKind::Recompute, device, op);
            ForwardGemms();
            Finish(r);
        }
        PipeStep s = Make(PipeStepKind::Backward, device, op);
        s.waitFor = wait;
        const int32_t t = m_p.run.tokens, h = m_p.run.hidden, f = m_p.run.ffn;
        for (int32_t b = m_p.blocksPerChunk - 1; b >= 0; --b) {
            Gemm(GradOut(b), {PipeBuf::Wdown, b}, {PipeBuf::G, b}, false, true, t, f, h, false);
            Gemm({PipeBuf::G, b}, {PipeBuf::Wup, b}, {PipeBuf::GX, b}, false, true, t, h, f, false);
            if (!m_split) WeightGemms(b);
        }
        Finish(s);
        if (vstage > 0) m_gradSends[{op.microBatch, vstage - 1, 0}] = AddSend(PipeStepKind::SendGradient, m_p.steps.back(), vstage - 1);
    }

    void AddWeightGrad(int32_t device, const core::PipeOp& op)
    {
        PipeStep s = Make(PipeStepKind::WeightGrad, device, op);
        for (int32_t b = m_p.blocksPerChunk - 1; b >= 0; --b) WeightGemms(b);
        Finish(s);
    }

    PipelineProgram m_p;
    bool m_split = false;
    int32_t m_vstages = 0;
    std::map<std::tuple<int32_t, int32_t, int32_t>, int32_t> m_actSends, m_gradSends; // (mb, receiving vstage, 0) -> step
};

} // namespace

uint64_t PipelineProgram::ElementBytes() const { return SizeOf(run.dtype); }

double PipelineProgram::ModelFlops() const
{
    double f = 0;
    for (const PipeStep& s : steps) f += s.modelFlops;
    return f;
}

double PipelineProgram::HardwareFlops() const
{
    double f = 0;
    for (const PipeStep& s : steps) f += s.hardwareFlops;
    return f;
}

uint64_t PipelineProgram::ActivationElementsPerMicroBatch() const
{
    const uint64_t t = static_cast<uint64_t>(run.tokens), h = static_cast<uint64_t>(run.hidden), f = static_cast<uint64_t>(run.ffn);
    return static_cast<uint64_t>(blocksPerChunk) * (2 * t * h + 2 * t * f) + 2 * t * h; // X, GX, H, G per block; Yout, dY
}

uint64_t PipelineProgram::WeightElementsPerChunk() const
{
    return static_cast<uint64_t>(blocksPerChunk) * 4 * static_cast<uint64_t>(run.hidden) * static_cast<uint64_t>(run.ffn);
}

uint64_t PipelineProgram::BytesPerStage() const
{
    const uint64_t perChunk = static_cast<uint64_t>(schedule.spec.TotalMicroBatches()) * ActivationElementsPerMicroBatch() +
                              WeightElementsPerChunk();
    return perChunk * static_cast<uint64_t>(run.chunks) * ElementBytes();
}

uint64_t PipelineProgram::OperandElements(const PipeOperand& o) const
{
    const uint64_t t = static_cast<uint64_t>(run.tokens), h = static_cast<uint64_t>(run.hidden), f = static_cast<uint64_t>(run.ffn);
    switch (o.buf) {
    case PipeBuf::X:
    case PipeBuf::GX:
    case PipeBuf::Yout:
    case PipeBuf::dY: return t * h;
    case PipeBuf::H:
    case PipeBuf::G: return t * f;
    default: return h * f; // weights and their gradients
    }
}

uint64_t PipelineProgram::OperandOffset(const PipeOperand& o, int32_t chunk, int32_t microBatch) const
{
    const uint64_t t = static_cast<uint64_t>(run.tokens), h = static_cast<uint64_t>(run.hidden), f = static_cast<uint64_t>(run.ffn);
    const uint64_t nb = static_cast<uint64_t>(blocksPerChunk), b = static_cast<uint64_t>(o.block);
    const uint64_t c = static_cast<uint64_t>(chunk), m = static_cast<uint64_t>(microBatch);
    const uint64_t weightBlock = 4 * h * f;
    switch (o.buf) {
    case PipeBuf::Wup: return (c * nb + b) * weightBlock;
    case PipeBuf::Wdown: return (c * nb + b) * weightBlock + h * f;
    case PipeBuf::dWup: return (c * nb + b) * weightBlock + 2 * h * f;
    case PipeBuf::dWdown: return (c * nb + b) * weightBlock + 3 * h * f;
    default: break;
    }
    const uint64_t perMb = ActivationElementsPerMicroBatch();
    const uint64_t base = static_cast<uint64_t>(run.chunks) * nb * weightBlock +
                          (c * static_cast<uint64_t>(schedule.spec.TotalMicroBatches()) + m) * perMb;
    const uint64_t perBlock = 2 * t * h + 2 * t * f;
    switch (o.buf) {
    case PipeBuf::X: return base + b * perBlock;
    case PipeBuf::GX: return base + b * perBlock + t * h;
    case PipeBuf::H: return base + b * perBlock + 2 * t * h;
    case PipeBuf::G: return base + b * perBlock + 2 * t * h + t * f;
    case PipeBuf::Yout: return base + nb * perBlock;
    case PipeBuf::dY: return base + nb * perBlock + t * h;
    default: return base;
    }
}

int GreenGroupSize(int smCount, int groups, int minPartition, int alignment)
{
    if (groups < 1 || smCount < 1) return 0;
    const int align = std::max(1, alignment);
    const int share = smCount / groups / align * align;
    return share >= std::max(1, minPartition) ? share : 0;
}

PipelineProgram BuildPipelineProgram(const PipelineRun& run) { return Builder(run).Build(); }

PipeLabel DescribeStep(const PipeStep& s)
{
    const std::string mb = std::to_string(s.microBatch);
    switch (s.kind) {
    case PipeStepKind::Forward: return {"F" + mb, core::SpanCategory::Forward, ""};
    case PipeStepKind::Recompute: return {"R" + mb, core::SpanCategory::Forward, "recompute"};
    case PipeStepKind::Backward: return {"B" + mb, core::SpanCategory::Backward, ""};
    case PipeStepKind::WeightGrad: return {"W" + mb, core::SpanCategory::WeightGrad, ""};
    case PipeStepKind::SendActivation: return {"act" + mb, core::SpanCategory::Send, ""};
    case PipeStepKind::SendGradient: return {"grad" + mb, core::SpanCategory::Send, ""};
    }
    return {};
}

} // namespace paralens::gpu
