// The planner's mixture-of-experts communication: Megatron-Core's batch-level EP overlap
// (--overlap-moe-expert-parallel-comm --delay-wgrad-compute), each all-to-all of one micro-batch
// under the other's compute, phase by phase, and where Megatron allows it.
#include "PlannerTestSupport.hpp"
#include "planner/PlannerComm.hpp"
#include "planner/PlannerInternal.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::core;
using test::Config;
using test::Request;

TEST_CASE("planner: a forward-backward pair under the EP overlap loses what its all-to-alls outlast, phase by phase", "[core][planner]")
{
    const GpuSpec& gpu = *FindGpu("gb300");
    const double slow = CommSlowdown(gpu);
    REQUIRE(slow > 0);
    // The four phases: the backward's combine beside the attention forward (0.5), the forward's
    // dispatch beside the experts' data gradients (1), the backward's dispatch beside their weight
    // gradients and forward (1 + 1), the forward's combine beside the attention backward (1).
    const MoeLayerCompute layer{0.5, 1.0, 1.0, 2.0};
    CHECK(EpOverlapPairSec(1.0, layer, gpu) == Approx(0.5 + 3.5 * slow).epsilon(1e-12));
    // Compute-bound: every all-to-all hides, the compute beside it slowed by the SMs it takes.
    CHECK(EpOverlapPairSec(0.1, layer, gpu) == Approx(4 * 0.1 * slow).epsilon(1e-12));
    // Communication-bound: the four all-to-alls less the compute, which runs on the SMs they leave.
    const MoeLayerCompute none{0, 0, 0, 0};
    CHECK(EpOverlapPairSec(1.0, none, gpu) == Approx(4.0).epsilon(1e-12));
}

TEST_CASE("planner: the EP overlap pairs a stage's forwards and backwards but those its schedule runs alone", "[core][planner]")
{
    PlanRequest r = Request("qwen3-30b-a3b", "gb300", 8, 512);
    r.epCommOverlap = true;
    const MoeLayerCompute layer{0.5, 1.0, 1.0, 2.0};
    Shape s;
    s.layers = 10;
    s.microBatches = 8;
    const double a2a = 0.8;
    auto epAfter = [&](const TrainingConfig& c) {
        OpCosts o;
        o.epF = o.epB = s.layers * 2.0 * a2a;
        OverlapEp(r, c, s, layer, o);
        CHECK(o.epB == o.epF);
        return o.epF;
    };
    const double pair = EpOverlapPairSec(a2a, layer, r.cluster.gpu);
    // Without a pipeline: the first forward and the last backward alone, 1 of 8.
    CHECK(epAfter(Config(8, 1, 1, 8, ScheduleKind::OneFOneB, 1, Recompute::None, 1, false, 8)) ==
          Approx(s.layers * (2.0 * a2a / 8 + 7.0 / 8 * pair / 2)).epsilon(1e-12));
    // Interleaved on 4 stages of 3 chunks: pp - 1 + (v - 1) pp = 11 of the 24 chunk ops alone, on average.
    CHECK(epAfter(Config(2, 1, 4, 8, ScheduleKind::Interleaved, 3, Recompute::None, 1, false, 2)) ==
          Approx(s.layers * (11.0 / 24 * 2.0 * a2a + 13.0 / 24 * pair / 2)).epsilon(1e-12));
    // Where Megatron refuses it: full recomputation; PP > 1 without virtual stages; and off.
    CHECK(epAfter(Config(8, 1, 1, 8, ScheduleKind::OneFOneB, 1, Recompute::Full, 1, false, 8)) == s.layers * 2.0 * a2a);
    CHECK(epAfter(Config(4, 1, 2, 8, ScheduleKind::OneFOneB, 1, Recompute::None, 1, false, 4)) == s.layers * 2.0 * a2a);
    r.epCommOverlap = false;
    CHECK(epAfter(Config(8, 1, 1, 8, ScheduleKind::OneFOneB, 1, Recompute::None, 1, false, 8)) == s.layers * 2.0 * a2a);
}

TEST_CASE("planner: the EP overlap shortens a mixture of experts' step, not its compute or memory", "[core][planner]")
{
    PlanRequest r = Request("qwen3-30b-a3b", "gb300", 8, 512);
    r.seq = 4096;
    const TrainingConfig c = Config(8, 1, 1, 8, ScheduleKind::OneFOneB, 1, Recompute::None, 1, false, 8);
    const Shape s = ShapeOf(r, c);
    REQUIRE(s.microBatches == 8);
    const OpCosts plain = OpCostsOf(r, c, s);
    PlanRequest on = r;
    on.epCommOverlap = true;
    const OpCosts over = OpCostsOf(on, c, s);
    REQUIRE(plain.epF > 0);
    CHECK(over.computeF == plain.computeF);
    CHECK(over.computeB == plain.computeB);
    // Less than without, more than the one forward and backward that run alone.
    CHECK(over.epF + over.epB < plain.epF + plain.epB);
    CHECK(over.epF + over.epB > (plain.epF + plain.epB) / 8);
    CHECK(Evaluate(on, c).time.step < Evaluate(r, c).time.step);
    CHECK(Evaluate(on, c).memory.Total() == Evaluate(r, c).memory.Total());
    // A dense model has no all-to-alls to overlap.
    PlanRequest dense = Request("llama3-8b", "gb300", 8, 64);
    const TrainingConfig d = Config(8, 1, 1, 1);
    dense.epCommOverlap = true;
    CHECK(OpCostsOf(dense, d, ShapeOf(dense, d)).epF == 0);
}

TEST_CASE("planner: a mixture of experts keeps its routed copies for the experts' weight gradients, and fine-grained recomputation frees its modules'", "[core][planner]")
{
    // Qwen3 30B-A3B on 8 GB300s, one stage: every layer's activations on the one GPU.
    PlanRequest r = Request("qwen3-30b-a3b", "gb300", 8, 512);
    r.seq = 4096;
    const TrainingConfig c = Config(8, 1, 1, 1, ScheduleKind::OneFOneB, 1, Recompute::None, 1, false, 8);
    const TransformerModel& m = r.model;
    const double tokens = 4096, layers = m.layers;
    auto activations = [&](const PlanRequest& q) { return Evaluate(q, c).memory.activations; };
    // Top-k copies of each token's h (2 bytes each) beside the gated MLP's 6 bytes per expert width:
    // one more expert a token adds both, per layer.
    PlanRequest more = r;
    more.model.topK = m.topK + 1;
    const double perCopy = 2.0 * m.hidden + 6.0 * m.ffn;
    CHECK(activations(more) - activations(r) == Approx(layers * tokens * perCopy).epsilon(1e-9));
    // layernorm frees the two norms' outputs (4 s b h), moe_act the experts' activation outputs (2 s b f k).
    PlanRequest norms = r, act = r;
    norms.recomputeModules.layernorm = true;
    act.recomputeModules.moeAct = true;
    CHECK(activations(r) - activations(norms) == Approx(layers * 4.0 * tokens * m.hidden).epsilon(1e-9));
    CHECK(activations(r) - activations(act) == Approx(layers * 2.0 * tokens * m.ffn * m.topK).epsilon(1e-9));
    // Each runs again in the backward, not in the forward; mla_up_proj does nothing without MLA.
    const Shape s = ShapeOf(r, c);
    CHECK(OpCostsOf(norms, c, s).computeB > OpCostsOf(r, c, s).computeB);
    CHECK(OpCostsOf(act, c, s).computeB > OpCostsOf(r, c, s).computeB);
    CHECK(OpCostsOf(act, c, s).computeF == OpCostsOf(r, c, s).computeF);
    PlanRequest mla = r;
    mla.recomputeModules.mlaUpProj = true;
    CHECK(activations(mla) == activations(r));
    // Full recomputation keeps only each layer's input: the modules change nothing there.
    const TrainingConfig full = Config(8, 1, 1, 1, ScheduleKind::OneFOneB, 1, Recompute::Full, 1, false, 8);
    CHECK(Evaluate(act, full).memory.activations == Evaluate(r, full).memory.activations);
    CHECK(Evaluate(act, full).time.step == Evaluate(r, full).time.step);
    // The names as Megatron spells them; others refused with the ones modelled.
    const RecomputeModules parsed = ParseRecomputeModules(" layernorm,moe_act ", "--recompute-modules");
    CHECK(parsed.layernorm);
    CHECK(parsed.moeAct);
    CHECK_FALSE(parsed.mlaUpProj);
    CHECK(RecomputeModulesText(parsed) == "layernorm, moe_act");
    CHECK_THROWS_WITH(ParseRecomputeModules("mlp", "--recompute-modules"), Catch::Contains("'mlp'") && Catch::Contains("mla_up_proj"));
}
