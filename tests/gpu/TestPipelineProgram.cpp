// gpu/PipelineProgram: a core Schedule as GEMMs and sends, with exact FLOPs.
#include "gpu/PipelineProgram.hpp"

#include "model/Flops.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::gpu;

namespace {

PipelineRun Run(core::ScheduleKind kind, int D, int N, int v = 1, int layers = 2)
{
    PipelineRun r;
    r.schedule = kind;
    r.stages = D;
    r.microBatches = N;
    r.chunks = v;
    r.layersPerStage = layers;
    r.hidden = 64;
    r.ffn = 256;
    r.tokens = 32;
    r.dtype = DType::BFloat16;
    return r;
}

size_t Count(const PipelineProgram& p, PipeStepKind k)
{
    size_t n = 0;
    for (const PipeStep& s : p.steps) n += s.kind == k;
    return n;
}

// Forward FLOPs of the whole model for all micro-batches: D stages x layers x 4 t h f.
double ForwardFlops(const PipelineRun& r)
{
    return static_cast<double>(r.stages) * r.microBatches * r.layersPerStage * 2 * core::MatmulFlops(r.tokens, r.ffn, r.hidden);
}

} // namespace

TEST_CASE("1F1B over 4 stages: every op, every send, training FLOPs = 3 x forward", "[gpu]")
{
    const PipelineRun r = Run(core::ScheduleKind::OneFOneB, 4, 8);
    const PipelineProgram p = BuildPipelineProgram(r);
    CHECK(Count(p, PipeStepKind::Forward) == 32);
    CHECK(Count(p, PipeStepKind::Backward) == 32);
    CHECK(Count(p, PipeStepKind::WeightGrad) == 0);
    CHECK(Count(p, PipeStepKind::SendActivation) == 3 * 8);
    CHECK(Count(p, PipeStepKind::SendGradient) == 3 * 8);
    CHECK(p.ModelFlops() == Approx(core::TrainingFlops(ForwardFlops(r))));
    CHECK(p.HardwareFlops() == p.ModelFlops());
    for (const PipeStep& s : p.steps) {
        if (s.kind == PipeStepKind::Forward) CHECK(s.gemmCount == 4);  // 2 blocks x 2 GEMMs
        if (s.kind == PipeStepKind::Backward) CHECK(s.gemmCount == 8); // input and weight gradients
        if (s.onSendStream) {
            CHECK(s.bytes == 32u * 64u * 2u);
            CHECK(s.gemmCount == 0);
        }
    }
}

TEST_CASE("every awaited step is issued before its consumer, and sends go to the right stage", "[gpu]")
{
    for (core::ScheduleKind k : core::AllScheduleKinds()) {
        PipelineRun r = Run(k, 4, 8, k == core::ScheduleKind::Interleaved ? 2 : 1, 4);
        const PipelineProgram p = BuildPipelineProgram(r);
        INFO(core::Name(k));
        for (size_t i = 0; i < p.steps.size(); ++i) {
            const PipeStep& s = p.steps[i];
            if (s.waitFor >= 0) REQUIRE(static_cast<size_t>(s.waitFor) < i);
            const int vstages = r.stages * r.chunks;
            if (s.kind == PipeStepKind::Forward && s.virtualStage > 0) {
                REQUIRE(s.waitFor >= 0);
                const PipeStep& send = p.steps[static_cast<size_t>(s.waitFor)];
                CHECK(send.kind == PipeStepKind::SendActivation);
                CHECK(send.microBatch == s.microBatch);
                CHECK(send.peerDevice == s.device);
                CHECK(send.peerChunk == s.chunk);
                CHECK(send.virtualStage == s.virtualStage - 1);
            }
            if (s.kind == PipeStepKind::Backward && s.virtualStage + 1 < vstages) {
                REQUIRE(s.waitFor >= 0);
                CHECK(p.steps[static_cast<size_t>(s.waitFor)].kind == PipeStepKind::SendGradient);
                CHECK(p.steps[static_cast<size_t>(s.waitFor)].virtualStage == s.virtualStage + 1);
            }
            if (s.onSendStream) {
                const PipeStep& producer = p.steps[static_cast<size_t>(s.waitFor)];
                CHECK(producer.device == s.device);
                CHECK(producer.microBatch == s.microBatch);
            }
        }
    }
}

TEST_CASE("each stage runs its ops in the schedule's order", "[gpu]")
{
    const PipelineRun r = Run(core::ScheduleKind::ZeroBubbleH1, 4, 8);
    const PipelineProgram p = BuildPipelineProgram(r);
    for (int d = 0; d < r.stages; ++d) {
        std::vector<std::pair<core::PipeOpKind, int>> issued;
        for (const PipeStep& s : p.steps) {
            if (s.device != d || s.onSendStream) continue;
            const core::PipeOpKind k = s.kind == PipeStepKind::Forward    ? core::PipeOpKind::Forward
                                       : s.kind == PipeStepKind::Backward ? core::PipeOpKind::Backward
                                                                          : core::PipeOpKind::WeightGrad;
            issued.emplace_back(k, s.microBatch);
        }
        std::vector<std::pair<core::PipeOpKind, int>> scheduled;
        for (const core::PipeOp& op : p.schedule.stages[static_cast<size_t>(d)]) scheduled.emplace_back(op.kind, op.microBatch);
        CHECK(issued == scheduled);
    }
    // zb-h1 splits W out of B: B has the input gradients only, W the weight gradients.
    for (const PipeStep& s : p.steps) {
        if (s.kind == PipeStepKind::Backward) CHECK(s.gemmCount == 4);
        if (s.kind == PipeStepKind::WeightGrad) CHECK(s.gemmCount == 4);
    }
    CHECK(p.ModelFlops() == Approx(core::TrainingFlops(ForwardFlops(r))));
}

TEST_CASE("recomputation adds hardware FLOPs, not model FLOPs", "[gpu]")
{
    PipelineRun r = Run(core::ScheduleKind::GPipe, 2, 4);
    r.recompute = true;
    const PipelineProgram p = BuildPipelineProgram(r);
    CHECK(Count(p, PipeStepKind::Recompute) == 8);
    CHECK(p.ModelFlops() == Approx(3 * ForwardFlops(r)));
    CHECK(p.HardwareFlops() == Approx(4 * ForwardFlops(r)));
    CHECK(p.ModelFlops() / p.HardwareFlops() == Approx(0.75)); // MFU = 3/4 HFU
    for (size_t i = 0; i + 1 < p.steps.size(); ++i)
        if (p.steps[i].kind == PipeStepKind::Recompute) {
            CHECK(p.steps[i + 1].kind == PipeStepKind::Backward);
            CHECK(p.steps[i + 1].microBatch == p.steps[i].microBatch);
            CHECK(DescribeStep(p.steps[i]).detail == "recompute");
        }
}

TEST_CASE("interleaving sends between every pair of consecutive virtual stages", "[gpu]")
{
    const PipelineRun r = Run(core::ScheduleKind::Interleaved, 4, 8, 2, 4);
    const PipelineProgram p = BuildPipelineProgram(r);
    CHECK(p.blocksPerChunk == 2);
    CHECK(Count(p, PipeStepKind::SendActivation) == 7 * 8);
    CHECK(Count(p, PipeStepKind::Forward) == 4 * 8 * 2);
    // The hop from the last device's chunk 0 to the first device's chunk 1 wraps around.
    bool wrap = false;
    for (const PipeStep& s : p.steps)
        wrap |= s.kind == PipeStepKind::SendActivation && s.device == 3 && s.peerDevice == 0 && s.peerChunk == 1;
    CHECK(wrap);
}

TEST_CASE("GEMM shapes and memory of the MLP blocks", "[gpu]")
{
    const PipelineRun r = Run(core::ScheduleKind::OneFOneB, 2, 2);
    const PipelineProgram p = BuildPipelineProgram(r);
    const PipeStep& f = p.steps.front();
    REQUIRE(f.kind == PipeStepKind::Forward);
    auto g = p.GemmsOf(f);
    REQUIRE(g.size() == 4);
    CHECK((g[0].m == 32 && g[0].n == 256 && g[0].k == 64)); // H = X Wup
    CHECK(g[0].c.buf == PipeBuf::H);
    CHECK((g[3].m == 32 && g[3].n == 64 && g[3].k == 256)); // Y = H Wdown, last block
    CHECK(g[3].c.buf == PipeBuf::Yout);
    CHECK(g[1].c.buf == PipeBuf::X);
    CHECK(g[1].c.block == 1);
    // Per micro-batch: 2 blocks x (X, GX: 32x64; H, G: 32x256) + Yout, dY.
    CHECK(p.ActivationElementsPerMicroBatch() == 2 * (2 * 32 * 64 + 2 * 32 * 256) + 2 * 32 * 64);
    CHECK(p.WeightElementsPerChunk() == 2 * 4 * 64 * 256);
    CHECK(p.BytesPerStage() == (2 * p.ActivationElementsPerMicroBatch() + p.WeightElementsPerChunk()) * 2);
    CHECK(DescribeStep(f).name == "F0");
    CHECK(DescribeStep(f).category == core::SpanCategory::Forward);
}

TEST_CASE("every operand of a stage has its own place in the stage's allocation", "[gpu]")
{
    const PipelineRun r = Run(core::ScheduleKind::Interleaved, 2, 4, 2, 4);
    const PipelineProgram p = BuildPipelineProgram(r);
    struct Range {
        uint64_t begin, end;
    };
    std::vector<Range> ranges;
    for (int c = 0; c < r.chunks; ++c)
        for (int b = 0; b < p.blocksPerChunk; ++b)
            for (PipeBuf w : {PipeBuf::Wup, PipeBuf::Wdown, PipeBuf::dWup, PipeBuf::dWdown}) {
                const PipeOperand o{w, b};
                ranges.push_back({p.OperandOffset(o, c, 0), p.OperandOffset(o, c, 0) + p.OperandElements(o)});
            }
    for (int c = 0; c < r.chunks; ++c)
        for (int m = 0; m < r.microBatches; ++m) {
            for (int b = 0; b < p.blocksPerChunk; ++b)
                for (PipeBuf a : {PipeBuf::X, PipeBuf::GX, PipeBuf::H, PipeBuf::G}) {
                    const PipeOperand o{a, b};
                    ranges.push_back({p.OperandOffset(o, c, m), p.OperandOffset(o, c, m) + p.OperandElements(o)});
                }
            for (PipeBuf a : {PipeBuf::Yout, PipeBuf::dY}) {
                const PipeOperand o{a, 0};
                ranges.push_back({p.OperandOffset(o, c, m), p.OperandOffset(o, c, m) + p.OperandElements(o)});
            }
        }
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
    CHECK(ranges.front().begin == 0);
    for (size_t i = 1; i < ranges.size(); ++i) CHECK(ranges[i - 1].end == ranges[i].begin); // disjoint and packed
    CHECK(ranges.back().end * p.ElementBytes() == p.BytesPerStage());
}

TEST_CASE("green-context partitions: an even share of the SMs, aligned, or none", "[gpu]")
{
    CHECK(GreenGroupSize(132, 4, 8, 8) == 32); // H100 SXM: 4 stages of 32 SMs (4 left over)
    CHECK(GreenGroupSize(132, 4, 8, 2) == 32);
    CHECK(GreenGroupSize(108, 8, 2, 2) == 12); // A100
    CHECK(GreenGroupSize(132, 3, 8, 8) == 40);
    CHECK(GreenGroupSize(16, 4, 8, 8) == 0);   // too small to split
    CHECK(GreenGroupSize(132, 0, 8, 8) == 0);
    CHECK(GreenGroupSize(132, 1, 0, 0) == 132);
}
