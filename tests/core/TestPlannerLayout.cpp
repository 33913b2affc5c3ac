// A pipeline laid out by hand (Megatron-Core's --pipeline-model-parallel-layout): the string read
// as Megatron reads it, each stage timed and its memory counted from what its chunks hold, and the
// same split as an even or first/last one giving the same answer.
#include "PlannerTestSupport.hpp"
#include "common/Error.hpp"
#include "planner/PlannerInternal.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>

using namespace paralens;
using namespace paralens::core;
using test::Config;
using test::Request;

namespace {

std::shared_ptr<const PipelineLayout> Layout(const char* text, int pp) { return std::make_shared<const PipelineLayout>(ParsePipelineLayout(text, pp)); }

} // namespace

TEST_CASE("planner: a pipeline layout reads as Megatron-Core reads it", "[planner]")
{
    // Megatron-LM's guide (docs/user-guide/features/pipeline_parallel_layout.md): DeepSeek-V3 on
    // PP 16, VPP 2: stage 0 the embedding and 3 + 2 layers, stages 1-13 2 + 2, stage 14 2 and the
    // MTP module, stage 15 2 and the loss.
    const PipelineLayout guide = ParsePipelineLayout("Et*3|(tt|)*29,m|L", 16);
    CHECK(guide.pp == 16);
    CHECK(guide.chunks == 2);
    CHECK(guide.Total().layers == 61);
    CHECK(guide.Total().mtp == 1);
    CHECK(guide.Stage(0).layers == 5);
    CHECK(guide.Stage(0).embedding);
    for (int stage = 1; stage <= 13; ++stage) CHECK(guide.Stage(stage).layers == 4);
    CHECK(guide.Stage(14).layers == 2);
    CHECK(guide.Stage(14).mtp == 1);
    CHECK_FALSE(guide.Stage(14).loss);
    CHECK(guide.Stage(15).layers == 2);
    CHECK(guide.Stage(15).loss);
    // Megatron-Bridge's DeepSeek-V3 recipe on GB300 (PP 2, VP 8): chunk i on stage i % 2.
    const PipelineLayout gb300 = ParsePipelineLayout("Et*4|(t*4|)*14tmL", 2);
    CHECK(gb300.chunks == 8);
    CHECK(gb300.Stage(0).layers == 32);
    CHECK(gb300.Stage(1).layers == 29);
    CHECK(gb300.Stage(1).mtp == 1);
    CHECK(gb300.Stage(1).loss);
    // Nested groups, spaces and commas, and empty chunks (Megatron allows "E||t|L").
    CHECK(ParsePipelineLayout("E((t|)*2)*2 , t|L", 2).Stage(0).layers == 3); // Et|t|t|t|t|L: chunks 0, 2, 4
    const PipelineLayout gaps = ParsePipelineLayout("E||t|L", 2);
    CHECK(gaps.Stage(0).layers == 1);
    CHECK(gaps.Stage(1).layers == 0);
    CHECK(gaps.Stage(1).loss);

    struct Bad { const char* text; int pp; const char* message; };
    const Bad bad[] = {
        {"Et*4|tX|tL", 3, "unknown symbol 'X'"},
        {"Et*|tL", 2, "'*' needs a count"},
        {"E(t|t|tL", 2, "a '(' without its ')'"},
        {"Et)|tL", 2, "a ')' without its '('"},
        {"Et|t|tL", 2, "has 3 chunks, not a multiple of --pp 2"},
        {"tE|tL", 2, "the embedding (E) must be the first symbol"},
        {"Et|Lt", 2, "the loss (L) must be the last symbol"},
        {"Et|mtL", 2, "a transformer layer after a multi-token prediction module"},
        {"Et*999999999|L", 2, "more than a million symbols"},
    };
    for (const Bad& b : bad) {
        INFO(b.text);
        CHECK_THROWS_WITH(ParsePipelineLayout(b.text, b.pp), Catch::Contains(b.message) && Catch::Contains("--pp-layout"));
    }
    const TransformerModel llama = *FindModelPreset("llama3-8b");
    CHECK_THROWS_WITH(CheckPipelineLayout(ParsePipelineLayout("Et*15|t*16L", 2), llama), Catch::Contains("holds 31 transformer layers (t), the model 32"));
    CHECK_THROWS_WITH(CheckPipelineLayout(ParsePipelineLayout("Et*16|t*16mL", 2), llama), Catch::Contains("(--mtp-layers)"));
    CHECK_THROWS_WITH(CheckPipelineLayout(ParsePipelineLayout("t*16|t*16L", 2), llama), Catch::Contains("the embedding (E) and the loss (L) once each"));
}

TEST_CASE("planner: a layout of an even or first/last split plans as that split", "[planner]")
{
    PlanRequest r = Request("llama3-8b", "h100-sxm", 32, 128);
    const TrainingConfig even = Config(4, 2, 4, 1, ScheduleKind::Interleaved, 2, Recompute::None, 1, true);
    TrainingConfig laid = even;
    laid.layout = Layout("Et*4|(t*4|)*6t*4L", 4);
    const PlanRow a = Evaluate(r, even), b = Evaluate(r, laid);
    CHECK(b.time.step == Approx(a.time.step).epsilon(1e-12));
    CHECK(b.memory.Total() == Approx(a.memory.Total()).epsilon(1e-12));
    CHECK(ConfigText(laid) == "dp 4 tp 2 pp 4 layout Et*4|(t*4|)*6t*4L mb 1 interleaved v2 recompute none zero1 sp");

    TrainingConfig ends = Config(4, 2, 4, 1, ScheduleKind::OneFOneB, 1, Recompute::None, 1, true);
    ends.firstStageLayers = ends.lastStageLayers = 7;
    TrainingConfig same = Config(4, 2, 4, 1, ScheduleKind::OneFOneB, 1, Recompute::None, 1, true);
    same.layout = Layout("Et*7|t*9|t*9|t*7L", 4);
    const PlanRow c = Evaluate(r, ends), d = Evaluate(r, same);
    CHECK(d.time.step == Approx(c.time.step).epsilon(1e-12));
    CHECK(d.memory.Total() == Approx(c.memory.Total()).epsilon(1e-12));
    CHECK(d.memory.stage == c.memory.stage);

    // pp and v are the layout's.
    TrainingConfig wrong = laid;
    wrong.chunks = 4;
    CHECK_THROWS_WITH(Evaluate(r, wrong), Catch::Contains("lays out pp 4 x v 2, not pp 4 x v 4"));
}

TEST_CASE("planner: a layout's stages hold what it places: the MTP module and the loss where it puts them", "[planner]")
{
    // DeepSeek-V3 with its MTP module on PP 2, VP 8, as Megatron-Bridge's GB300 recipe lays it out:
    // stage 0 the embedding and 32 layers, stage 1 29 layers, the module and the output layer. An
    // even split gives the last stage 31 layers besides those: it bounds the pipeline either way,
    // two layers lighter laid out.
    PlanRequest r = Request("deepseek-v3", "gb300", 256, 2048);
    r.model.mtpLayers = 1;
    r.cluster.gpusPerNode = 72;
    const TrainingConfig even = Config(128, 1, 2, 1, ScheduleKind::Interleaved, 8, Recompute::None, 1, false, 32);
    TrainingConfig laid = even;
    laid.layout = Layout("Et*4|(t*4|)*14tmL", 2);
    const Shape se = ShapeOf(r, even), sl = ShapeOf(r, laid);
    CHECK(se.layers == 31 + 1);
    CHECK(sl.layers == 29 + 1);
    CHECK(sl.head == 2); // the output layer, and the module's again
    CHECK(sl.mtp == 1);
    CHECK(Evaluate(r, laid).time.step < Evaluate(r, even).time.step);
    // Stage 0 holds the embedding table and 32 layers' weights, stage 1 29 layers, the module's
    // layer and projection, the output layer and the module's own embedding copy.
    const StageParams p0 = ParamsOn(r, laid, sl, 0), p1 = ParamsOn(r, laid, sl, 1);
    const double table = 129280.0 * 7168, projection = r.model.MtpProjectionParams();
    const StageParams e1 = ParamsOn(r, even, se, 1);
    CHECK(p1.expert / e1.expert == Approx(30.0 / 32.0).epsilon(1e-12)); // every layer counted as a MoE layer, as before
    CHECK(p0.expert / e1.expert == Approx(32.0 / 32.0).epsilon(1e-12));
    CHECK(p1.dense - p0.dense == Approx((-2.0) * (p0.dense - table) / 32.0 + projection + table).epsilon(1e-9));
}

TEST_CASE("planner: a layout's text is written back as Megatron-Core reads it, and a balancing layout is proposed", "[planner]")
{
    // Written back: runs of equal chunks before the last as "(...|)*n", symbols as "t*n".
    for (const char* text : {"Et*4|(t*4|)*14tmL", "Et*3|(t*2|)*29m|L", "Et|t*2|t|tL", "Et*16|t*16L"}) {
        const PipelineLayout a = ParsePipelineLayout(text, 2);
        const PipelineLayout b = ParsePipelineLayout(PipelineLayoutText(a.parts), 2);
        REQUIRE(b.parts.size() == a.parts.size());
        for (size_t i = 0; i < a.parts.size(); ++i) {
            CHECK(b.parts[i].layers == a.parts[i].layers);
            CHECK(b.parts[i].mtp == a.parts[i].mtp);
            CHECK(b.parts[i].embedding == a.parts[i].embedding);
            CHECK(b.parts[i].loss == a.parts[i].loss);
        }
    }
    CHECK(PipelineLayoutText(ParsePipelineLayout("Et*4|t*4|t*4|t*4|t*4|tmL", 2).parts) == "Et*4|(t*4|)*4tmL");

    // Llama 3 8B at 8K tokens on 4 stages of 8 chunks: its output layer (1.8 layers) alone
    // outweighs a chunk's share (34 / 32), so the last chunk holds it alone and the first one
    // layer more: 'Et*2|(t|)*30L'. It is faster than the flags' chunks of one layer, where the
    // last also holds a layer beside the output layer.
    PlanRequest r = Request("llama3-8b", "h100-sxm", 16, 16);
    const auto layout = BalancedLayout(r, 4, 8);
    REQUIRE(layout);
    CHECK(layout->text == "Et*2|(t|)*30L");
    CHECK(layout->Total().layers == 32);
    const PlanRow even = Evaluate(r, Config(4, 1, 4, 1, ScheduleKind::Interleaved, 8, Recompute::None, 1));
    const std::optional<PlanRow> laid = BalancedLayoutRow(r, even);
    REQUIRE(laid);
    CHECK(laid->config.layout->text == "Et*2|(t|)*30L");
    CHECK(laid->time.step < 0.99 * even.time.step);
    // DeepSeek-V3 with its MTP module on 16 stages: the last holds the module and the loss alone
    // (they weigh about four layers), the others 61 layers, 4 or 5 each, the extra ones first.
    PlanRequest ds = Request("deepseek-v3", "b200", 256, 1024);
    ds.model.mtpLayers = 1;
    const auto dsLayout = BalancedLayout(ds, 16, 1);
    REQUIRE(dsLayout);
    CHECK(dsLayout->Stage(15).layers == 0);
    CHECK(dsLayout->Stage(15).mtp == 1);
    CHECK(dsLayout->Stage(0).layers == 5);
    CHECK(dsLayout->Stage(14).layers == 4);
    // Nothing to propose for a row already laid out, without a pipeline, or with more chunks than layers.
    TrainingConfig byHand = Config(4, 1, 4, 1, ScheduleKind::Interleaved, 8, Recompute::None, 1);
    byHand.layout = layout;
    CHECK_FALSE(BalancedLayoutRow(r, Evaluate(r, byHand)));
    CHECK_FALSE(BalancedLayoutRow(r, Evaluate(r, Config(16, 1, 1, 1))));
    CHECK_FALSE(BalancedLayout(r, 8, 8));
}
