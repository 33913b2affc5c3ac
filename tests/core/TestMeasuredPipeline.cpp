// The model beside a measured pipeline (sim/MeasuredPipeline.hpp): a simulated schedule read back
// as if measured must be its own model, its op times recovered; the order is the one the trace
// recorded, not the one paralens would build today.
#include "analysis/PipelineMetrics.hpp"
#include "schedule/Schedule.hpp"
#include "sim/MeasuredPipeline.hpp"
#include "sim/PipelineSimulator.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

using namespace paralens;
using namespace paralens::core;

namespace {

PipelineSpec Spec(ScheduleKind k, int D, int N, int v = 1)
{
    PipelineSpec s;
    s.kind = k;
    s.stages = D;
    s.microBatches = N;
    s.chunks = v;
    s.forwardSec = 1.3e-3;
    s.backwardSec = 2.9e-3;
    s.weightSec = 1.1e-3;
    s.stageSlowdown.assign(static_cast<size_t>(D), 1.0);
    s.stageSlowdown[1] = 1.25;
    s.stageSlowdown.back() = 0.9;
    return s;
}

} // namespace

TEST_CASE("a simulated pipeline read back as measured is its own model, its op times recovered", "[core][measured-pipeline]")
{
    std::vector<PipelineSpec> specs = {Spec(ScheduleKind::Naive, 4, 4),       Spec(ScheduleKind::GPipe, 4, 8),
                                             Spec(ScheduleKind::OneFOneB, 4, 8),    Spec(ScheduleKind::Interleaved, 4, 8, 2),
                                             Spec(ScheduleKind::ZeroBubbleH1, 4, 8), Spec(ScheduleKind::ZeroBubbleH1, 6, 12),
                                             Spec(ScheduleKind::PipeDream, 3, 6),   Spec(ScheduleKind::OneFOneB, 4, 8),
                                             Spec(ScheduleKind::ZeroBubbleH1, 4, 8)};
    specs[specs.size() - 2].recompute = specs.back().recompute = true; // recomputation spans are not forwards
    for (const PipelineSpec& spec : specs) {
        INFO(Name(spec.kind) << " D=" << spec.stages << " N=" << spec.microBatches);
        const PipelineSimResult sim = SimulatePipeline(BuildSchedule(spec), FreeLinks());
        const std::optional<PipelineModelCheck> c = CheckPipelineModel(*sim.trace);
        REQUIRE(c);
        INFO("recompute " << spec.recompute);
        CHECK(c->spec.kind == spec.kind);
        CHECK(c->spec.recompute == spec.recompute);
        CHECK(c->model == Approx(c->measured).margin(1e-9));
        CHECK(c->formula == Approx(BubbleFractionFormula(spec)).margin(1e-12));
        const double meanSlow = (spec.stages - 2 + 1.25 + 0.9) / spec.stages;
        CHECK(c->times.forwardSec == Approx(spec.forwardSec * meanSlow).epsilon(1e-6));
        if (spec.SplitsWeightGrad()) CHECK(c->times.weightSec == Approx(spec.weightSec * meanSlow).epsilon(1e-6));
        CHECK(c->times.backwardSec == Approx(spec.backwardSec * meanSlow).epsilon(1e-6));
        REQUIRE(c->times.stageSlowdown.size() == static_cast<size_t>(spec.stages));
        CHECK(c->times.stageSlowdown[1] / c->times.stageSlowdown[0] == Approx(1.25).epsilon(1e-6));
    }
}

TEST_CASE("the model times the order the trace recorded, not the order paralens builds", "[core][measured-pipeline]")
{
    // A zb-h1 run whose stages kept every W to the end (as paralens' zb-h1 did before the twenty-
    // fifth session, and as the H200 captures ran): its model is its own order, whose bubble differs
    // from today's ZB-H1 order at the same times.
    PipelineSpec spec = Spec(ScheduleKind::ZeroBubbleH1, 4, 8);
    spec.stageSlowdown.clear();
    spec.weightSec = 0.4e-3; // W much shorter than F and B: where the Ws go matters
    Schedule late = BuildSchedule(spec);
    for (auto& ops : late.stages)
        std::stable_partition(ops.begin(), ops.end(), [](const PipeOp& op) { return op.kind != PipeOpKind::WeightGrad; });
    REQUIRE(ValidateSchedule(late).ok);
    const PipelineSimResult ran = SimulatePipeline(late, FreeLinks());
    const std::optional<PipelineModelCheck> c = CheckPipelineModel(*ran.trace);
    REQUIRE(c);
    CHECK(c->model == Approx(c->measured).margin(1e-9));
    const PipelineSimResult built = SimulatePipeline(BuildSchedule(spec), FreeLinks());
    const double builtBubble = ComputeBubbleFraction(*built.trace, PipelineWindow(*built.trace));
    INFO("recorded order " << c->measured << ", built order " << builtBubble);
    CHECK(std::abs(builtBubble - c->measured) > 0.01);
}

TEST_CASE("no model for a trace that is no pipeline, or whose stages are not the schedule's", "[core][measured-pipeline]")
{
    auto build = [](std::string_view schedule) {
        TraceBuilder b;
        const uint32_t d = b.AddDevice("gpu 0", DeviceKind::Gpu, 0);
        Span s;
        s.endNs = 1000;
        s.name = b.Intern("gemm");
        s.category = SpanCategory::Compute;
        b.AddSpan(b.AddTrack(d, "compute"), s);
        b.Meta().workload.Set("workload", std::string("pipeline"));
        b.Meta().workload.Set("schedule", std::string(schedule));
        b.Meta().workload.Set("stages", int64_t{4});
        b.Meta().workload.Set("microbatches", int64_t{8});
        return std::move(b).Finish();
    };
    const Trace t = build("1f1b");
    REQUIRE(PipelineSpecOf(t));
    CHECK(PipelineSpecOf(t)->stages == 4);
    CHECK_FALSE(CheckPipelineModel(t)); // no F or B spans on 4 stages
    CHECK_FALSE(PipelineSpecOf(build("round-robin")));
    // A schedule that cannot be built from the file's metadata: no model, no exception.
    const PipelineSimResult sim = SimulatePipeline(BuildSchedule(Spec(ScheduleKind::Interleaved, 4, 8, 2)), FreeLinks());
    Trace edited = TraceBuilder::WithMetadata(Trace(*sim.trace), [&] {
        Metadata m = sim.trace->Meta();
        m.workload.Set("microbatches", int64_t{6}); // not a multiple of D = 4
        return m;
    }());
    CHECK_NOTHROW(CheckPipelineModel(edited));
    CHECK_FALSE(CheckPipelineModel(edited));
}
