// The planner's compute of a step, by what it runs: the linear GEMMs, attention, the memory-bound
// ops (the scores' softmax among them without flash attention) and recomputation.
#include "PlannerTestSupport.hpp"
#include "planner/PlannerInternal.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::core;
using test::Config;
using test::Request;

TEST_CASE("planner: without flash attention the scores' softmax and dropout pass through HBM", "[planner]")
{
    // GPT-3 175B at TP 8: each layer's fused softmax and dropout read and write 8 bytes per score,
    // a s^2 b / t scores a GPU; the memory-bound ops' backward is twice their forward, and
    // selective recomputation runs the forward's once more.
    PlanRequest flash = Request("gpt3-175b", "a100-sxm", 64, 64);
    PlanRequest scores = flash;
    scores.flashAttention = false;
    for (Recompute rc : {Recompute::None, Recompute::Selective}) {
        const TrainingConfig c = Config(1, 8, 8, 1, ScheduleKind::OneFOneB, 1, rc, 0, true);
        const Shape s = ShapeOf(flash, c);
        const double softmax = s.layers * 8.0 * 96 / 8 * s.seq * s.tokens / (flash.cluster.gpu.hbmGBps * 1e9);
        const OpCosts with = OpCostsOf(flash, c, s), without = OpCostsOf(scores, c, s);
        INFO(Name(rc));
        CHECK(without.computeF - with.computeF == Approx(softmax).epsilon(1e-9));
        CHECK(without.computeB - with.computeB == Approx((rc == Recompute::Selective ? 3 : 2) * softmax).epsilon(1e-9));
    }
}

TEST_CASE("planner: a step's compute splits into GEMMs, attention, memory-bound ops and recomputation", "[planner]")
{
    // Dense and MoE, BF16 and FP8, flash attention or not, each recomputation: the four parts sum
    // to the step's compute.
    struct Case {
        const char* model;
        bool fp8, flash;
        TrainingConfig c;
    };
    const Case cases[] = {
        {"gpt3-175b", false, false, Config(1, 8, 8, 1, ScheduleKind::Interleaved, 3, Recompute::Selective, 0, true)},
        {"gpt3-175b", true, true, Config(1, 8, 8, 1, ScheduleKind::OneFOneB, 1, Recompute::Full, 1, true)},
        {"llama3-8b", false, true, Config(8, 1, 1, 1, ScheduleKind::OneFOneB, 1, Recompute::None, 1)},
        {"mixtral-8x7b", true, true, Config(2, 2, 2, 1, ScheduleKind::OneFOneB, 1, Recompute::None, 1, true, 2)},
    };
    for (const Case& k : cases) {
        PlanRequest r = Request(k.model, "h100-sxm", k.c.dp * k.c.tp * k.c.pp * k.c.cp, 64);
        r.cluster.fp8 = k.fp8;
        r.flashAttention = k.flash;
        const PlanRow row = Evaluate(r, k.c);
        const ComputeParts& p = row.time.computeParts;
        INFO(k.model << ": " << ConfigText(k.c));
        CHECK(p.Total() == Approx(row.time.compute).epsilon(1e-12));
        CHECK(p.gemms > p.attention);
        CHECK(p.attention > 0);
        CHECK(p.memoryBound > 0);
        CHECK((p.recompute > 0) == (k.c.recompute != Recompute::None));
    }
}

TEST_CASE("planner: one GPU's compute split by hand", "[planner]")
{
    // Two Llama 3 8B layers on one H100 without HBM traffic: the GEMMs (each with its fixed time)
    // and attention at FlashAttention's rate on 1024-token blocks, three times a micro-batch
    // (forward, and the backward's two); nothing memory-bound, nothing recomputed.
    PlanRequest r = Request("llama3-8b", "h100-sxm", 1, 4);
    r.model.layers = 2;
    r.cluster.gpu.hbmGBps = 0;
    r.cluster.efficiency = 0.5;
    r.seq = 1024;
    const PlanRow row = Evaluate(r, Config(1, 1, 1, 2));
    const double rate = 989e12 * 0.5, tokens = 4 * 1024.0;
    const double attentionFlops = 3 * 4.0 * 1024 * 1024 * r.model.QueryWidth() * r.model.layers * 4;
    const double linearFlops = 3 * r.model.ForwardFlopsPerToken(1024) * tokens - attentionFlops;
    const double gemms = 3 * 2 * (4 * r.model.layers + 1); // a layer's four, the output layer's, 3 x 2 micro-batches
    const ComputeParts& p = row.time.computeParts;
    CHECK(p.attention == Approx(attentionFlops / (rate * FlashAttentionBlockFactor(1024))).epsilon(1e-9));
    CHECK(p.gemms == Approx((linearFlops + gemms * r.cluster.GemmHalfFlops("bf16")) / rate).epsilon(1e-9));
    CHECK(p.memoryBound == 0);
    CHECK(p.recompute == 0);
}
