// The planner's models: the presets' parameter counts as their sources state them (DeepSeek-V3's
// latent attention, shared expert and dense first layers included), and a model described by hand
// or changed from a preset saying what it kept.
#include "PlannerTestSupport.hpp"
#include "planner/PlannerInternal.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

using namespace paralens;
using namespace paralens::core;
using test::Config;
using test::Request;

TEST_CASE("planner: the presets have their published parameter counts", "[planner]")
{
    auto params = [](const char* id) { return FindModelPreset(id)->TotalParams() * 1e-9; };
    CHECK(params("gpt3-175b") == Approx(175.0).epsilon(0.01));
    CHECK(params("llama3-8b") == Approx(8.03).epsilon(0.01));
    CHECK(params("llama3-70b") == Approx(70.6).epsilon(0.01));
    CHECK(params("llama3-405b") == Approx(405.8).epsilon(0.01));
    CHECK(params("megatron-1t") == Approx(1008.0).epsilon(0.01));
    CHECK(params("mixtral-8x7b") == Approx(46.7).epsilon(0.01));
    CHECK(FindModelPreset("mixtral-8x7b")->ActiveParams() * 1e-9 == Approx(12.9).epsilon(0.01));
    // Qwen3's mixtures of experts (the report's Table 2: 30.5B / 3.3B and 235B / 22B), heads 128 wide.
    CHECK(params("qwen3-30b-a3b") == Approx(30.5).epsilon(0.01));
    CHECK(FindModelPreset("qwen3-30b-a3b")->ActiveParams() * 1e-9 == Approx(3.3).epsilon(0.02));
    CHECK(params("qwen3-235b-a22b") == Approx(235).epsilon(0.01));
    CHECK(FindModelPreset("qwen3-235b-a22b")->ActiveParams() * 1e-9 == Approx(22).epsilon(0.02));
    CHECK(FindModelPreset("qwen3-30b-a3b")->QueryWidth() == 4096); // 32 heads x 128, not the hidden 2048
    CHECK(FindModelPreset("nope") == nullptr);
    TransformerModel bad = *FindModelPreset("llama3-8b");
    bad.kvHeads = 5;
    CHECK_THROWS_WITH(CheckModel(bad), Catch::Contains("--kv-heads 5 must divide --heads 32"));
}

TEST_CASE("planner: a model by hand starts neutral, a changed preset says what it kept", "[core][planner]")
{
    // By hand: the fields the user gave for GPT-3, nothing inherited from a preset.
    ModelInput hand;
    hand.layers = 96, hand.hidden = 12288, hand.heads = 96;
    CHECK_THROWS_WITH(ResolveModel(hand), Catch::Contains("--vocab") && Catch::Contains("--model"));
    hand.vocab = 51200;
    const ResolvedModel gpt = ResolveModel(hand);
    CHECK(gpt.model.id == "custom");
    CHECK(gpt.model.kvHeads == 96);
    CHECK(gpt.model.ffn == 4 * 12288);
    CHECK(gpt.model.mlp == MlpKind::Gelu);
    CHECK(gpt.model.seq == 2048);
    CHECK(gpt.fromPreset.empty());
    CHECK(gpt.defaulted.size() == 6);
    CHECK(gpt.model.dropout); // Megatron-LM's default
    CHECK(gpt.model.TotalParams() == Approx(FindModelPreset("gpt3-175b")->TotalParams()).epsilon(1e-12)); // the same model
    ModelInput custom = hand;
    custom.preset = "custom";
    CHECK(ResolveModel(custom).model.TotalParams() == gpt.model.TotalParams());

    // A preset changed: its id says so and every field it still gives is listed.
    ModelInput changed;
    changed.preset = "llama3-70b";
    changed.layers = 40;
    const ResolvedModel l = ResolveModel(changed);
    CHECK(l.model.id == "llama3-70b*");
    CHECK(l.model.layers == 40);
    const auto has = [&](const std::string& field) { return std::find(l.fromPreset.begin(), l.fromPreset.end(), field) != l.fromPreset.end(); };
    CHECK(has("kv-heads 8"));
    CHECK(has("mlp swiglu"));
    CHECK(has("ffn 28672"));
    CHECK_FALSE(has("layers 80"));
    CHECK(has("no dropout"));
    CHECK_FALSE(l.model.dropout);
    changed.dropout = true;
    CHECK(ResolveModel(changed).model.dropout);
    changed.dropout.reset();
    changed.heads = 128; // 8 KV heads still divide 128: kept, and said
    CHECK(ResolveModel(changed).model.kvHeads == 8);
    changed.heads = 4; // they do not divide 4: multi-head attention
    CHECK(ResolveModel(changed).model.kvHeads == 4);

    ModelInput plain;
    plain.preset = "llama3.1-405b";
    const ResolvedModel alias = ResolveModel(plain);
    CHECK(alias.model.id == "llama3.1-405b");
    CHECK(alias.model.layers == 126);
    plain.preset = "llama4";
    CHECK_THROWS_WITH(ResolveModel(plain), Catch::Contains("--model") && Catch::Contains("nemotron4-340b"));
}

TEST_CASE("planner: today's presets count their parameters as their sources state", "[core][planner]")
{
    auto billions = [](const char* id) { return FindModelPreset(id)->TotalParams() * 1e-9; };
    CHECK(billions("nemotron4-15b") == Approx(15.6).epsilon(0.01));  // "15-billion-parameter"
    CHECK(billions("nemotron4-340b") == Approx(341).epsilon(0.01));  // 340B
    CHECK(billions("mixtral-8x22b") == Approx(140.6).epsilon(0.01)); // 141B total
    CHECK(FindModelPreset("mixtral-8x22b")->ActiveParams() * 1e-9 == Approx(39).epsilon(0.01)); // 39B active
    const TransformerModel* n = FindModelPreset("nemotron4-15b");
    CHECK(n->mlp == MlpKind::SquaredRelu);
    CHECK(n->MlpParams() == 2.0 * n->hidden * n->ffn); // squared ReLU: two matrices, as GeLU
    CHECK(ParseMlpKind("squared-relu") == MlpKind::SquaredRelu);
    CHECK_FALSE(ParseMlpKind("swish").has_value());
    for (const TransformerModel& m : ModelPresets()) CHECK_FALSE(m.source.empty());
}

TEST_CASE("planner: DeepSeek-V3's latent attention, shared expert and dense first layers as its report counts them", "[core][planner]")
{
    const TransformerModel& m = *FindModelPreset("deepseek-v3");
    CHECK(m.TotalParams() * 1e-9 == Approx(671).epsilon(0.005));  // "671B total parameters"
    CHECK(m.ActiveParams() * 1e-9 == Approx(37).epsilon(0.02));   // "37B activated for each token"
    // Megatron-LM's MLA term (megatron/training/theoretical_memory_usage.py @ d98e8a64), norms aside:
    // q_lora (h + heads (qk + rope)) + kv_lora (h + heads (qk + v)) + h rope + heads v h.
    const double h = 7168, heads = 128, qk = 128, rope = 64, v = 128;
    CHECK(m.AttentionParams() == 1536 * (h + heads * (qk + rope)) + 512 * (h + heads * (qk + v)) + h * rope + heads * v * h);
    CHECK(m.QueryWidth() == heads * (qk + rope));
    CHECK(m.KeyWidth() == heads * (qk + rope));
    CHECK(m.ValueWidth() == heads * v);
    CHECK(m.OutputWidth() == heads * v);
    CHECK(m.MlpsPerToken() == 9); // 8 routed + 1 shared
    // Scores (queries against keys, 192 wide a head) and values (128): 2 s (192 + 128) heads a layer.
    CHECK(m.AttentionScoreFlopsPerToken(4096) == 2.0 * 4096 * heads * (qk + rope + v) * 61);
    // Its dense first layers (ffn 18432 = 9 x 2048) do a MoE layer's active FLOPs: every layer timed as one.
    CHECK(m.ForwardFlopsPerToken(4096) == Approx(2.0 * (61 * m.LayerActiveParams() + 129280.0 * h) + m.AttentionScoreFlopsPerToken(4096)).epsilon(1e-3));
    // Standard attention is unchanged by the widths: Q and O heads x headDim, K and V kv-heads x headDim.
    const TransformerModel& q = *FindModelPreset("qwen3-30b-a3b");
    CHECK(q.AttentionParams() == 2.0 * 2048 * 32 * 128 + 2.0 * 2048 * 4 * 128);
    CHECK(q.AttentionScoreFlopsPerToken(4096) == 4.0 * 4096 * 32 * 128 * 48);
    // The planner: the preset fits 256 GB200s as Megatron-Bridge ran it (R014), MLA's up-projections
    // recomputed as its recipe does (recompute_modules=["mla_up_proj"]); without that it does not.
    PlanRequest r = Request("deepseek-v3", "gb200", 256, 4096);
    r.cluster.gpusPerNode = 72;
    r.seq = 4096;
    TrainingConfig c = Config(64, 1, 4, 1, ScheduleKind::Interleaved, 4, Recompute::None, 1, false, 64);
    c.firstStageLayers = c.lastStageLayers = 15; // 61 + 2 over 4 stages: 16 each
    const PlanRow kept = Evaluate(r, c);
    CHECK_FALSE(kept.fits);
    r.recomputeModules.mlaUpProj = true;
    const PlanRow row = Evaluate(r, c);
    CHECK(row.fits);
    CHECK(row.time.step > 0);
    // Q, K and V (2 s b q + 2 s b (k + v) bytes a layer, bf16) freed on every layer and micro-batch in flight...
    const double qkv = 2.0 * 4096 * (m.QueryWidth() + m.KeyWidth() + m.ValueWidth());
    REQUIRE(kept.memory.stage == row.memory.stage);
    const int layersThere = row.memory.stage == 0 || row.memory.stage == 3 ? 15 : 16;
    CHECK(kept.memory.activations - row.memory.activations == Approx(row.memory.inFlight * layersThere * qkv).epsilon(1e-9));
    // ...and the up-projections run again in each backward.
    CHECK(row.time.backwardSec > kept.time.backwardSec);
    CHECK(row.time.forwardSec == Approx(kept.time.forwardSec));
    // Megatron-Core refuses a module the model has none of, and so does the planner, by name.
    PlanRequest dense = Request("llama3-8b", "h100-sxm", 8, 64);
    CheckPlanRequest(dense);
    dense.recomputeModules.mlaUpProj = true;
    CHECK_THROWS_WITH(CheckPlanRequest(dense), Catch::Contains("--recompute-modules: mla_up_proj") && Catch::Contains("llama3-8b has no multi-head latent attention"));
    dense.recomputeModules = {};
    dense.recomputeModules.moeAct = true;
    CHECK_THROWS_WITH(CheckPlanRequest(dense), Catch::Contains("--recompute-modules: moe_act") && Catch::Contains("llama3-8b is not a mixture of experts"));
    dense.recomputeModules = {};
    dense.recomputeModules.layernorm = true; // every model has its norms
    CheckPlanRequest(dense);
    ModelInput in;
    in.preset = "deepseek-v3";
    in.layers = 30;
    const ResolvedModel changed = ResolveModel(in);
    CHECK(std::find(changed.fromPreset.begin(), changed.fromPreset.end(),
                    "multi-head latent attention (q rank 1536, kv rank 512, rope 64, value head 128)") != changed.fromPreset.end());
    CHECK(std::find(changed.fromPreset.begin(), changed.fromPreset.end(), "shared experts 1") != changed.fromPreset.end());
    CHECK(std::find(changed.fromPreset.begin(), changed.fromPreset.end(), "first 3 layers dense (ffn 18432)") != changed.fromPreset.end());
}

TEST_CASE("planner: GPT-OSS's sliding window as its card counts it, and its attention at the window's cost", "[core][planner]")
{
    // The model card's Table 1: 116.83B parameters, 5.13B active (the output layer counted, the
    // input embedding not); 18 of the 36 layers windowed (every other one, the first windowed).
    const TransformerModel& m = *FindModelPreset("gpt-oss-120b");
    CHECK(m.TotalParams() * 1e-9 == Approx(116.83).epsilon(0.002));
    CHECK((m.ActiveParams() - 201088.0 * 2880) * 1e-9 == Approx(5.13).epsilon(0.005));
    CHECK(FindModelPreset("gpt-oss-20b")->TotalParams() * 1e-9 == Approx(20.91).epsilon(0.005));
    CHECK(m.WindowedLayers() == 18);
    CHECK(m.QueryWidth() == 64 * 64); // heads 64 wide, not the hidden 2880 / 64
    // The scores' FLOPs: a full layer's whole sequence, a windowed one's band of 2 x 128 keys.
    CHECK(m.AttentionKeys(4096) == (18 * 4096.0 + 18 * 256.0) / 36);
    CHECK(m.AttentionScoreFlopsPerToken(4096) == Approx(2.0 * (18 * 4096.0 + 18 * 256.0) * 2 * 4096));
    TransformerModel every = m;
    every.fullAttentionEvery = 0; // every layer windowed
    CHECK(every.WindowedLayers() == 36);
    every.window = 0;
    CHECK(every.WindowedLayers() == 0);
    CHECK(every.AttentionKeys(4096) == 4096);

    // The time: a windowed layer's kernel computes the window and the rest of its first 128-key
    // tile, 2 (128 + 128) / seq of the full square, at the rate of a 512-token sequence.
    PlanRequest r = Request("gpt-oss-120b", "b200", 64, 512);
    r.seq = 4096;
    const TrainingConfig c = Config(64, 1, 1, 4, ScheduleKind::OneFOneB, 1, Recompute::None, 1, false, 8);
    PlanRequest full = r;
    full.model.window = 0;
    const Shape s = ShapeOf(r, c);
    const double square = s.layers * 4.0 * s.tokens * s.seq * m.QueryWidth() / r.cluster.GemmFlops() / r.cluster.gpu.AttentionVsGemm();
    const double fullLayers = square / FlashAttentionBlockFactor(4096);
    const double windowed = 0.5 * fullLayers + 0.5 * square * (512.0 / 4096) / FlashAttentionBlockFactor(512);
    CHECK(OpCostsOf(full, c, s).computeF - OpCostsOf(r, c, s).computeF == Approx(fullLayers - windowed).epsilon(1e-9));
    // A window as long as the sequence changes nothing.
    PlanRequest wide = r;
    wide.model.window = 1 << 20;
    CHECK(OpCostsOf(wide, c, s).computeF == Approx(OpCostsOf(full, c, s).computeF).epsilon(1e-12));
    CHECK(wide.model.ForwardFlopsPerToken(4096) == full.model.ForwardFlopsPerToken(4096));

    // Given by hand or changed: the window is said where it came from the preset.
    ModelInput in;
    in.preset = "gpt-oss-120b";
    in.layers = 24;
    const ResolvedModel changed = ResolveModel(in);
    CHECK(std::find(changed.fromPreset.begin(), changed.fromPreset.end(),
                    "window 128 on 12 of 24 layers (1 in 2 attends to the whole sequence)") != changed.fromPreset.end());
    in.window = -1;
    CHECK_THROWS_WITH(ResolveModel(in), Catch::Contains("--window must not be negative"));
    ModelInput dense;
    dense.preset = "llama3-8b";
    dense.fullAttentionEvery = 2; // without a window it would change nothing: refused
    CHECK_THROWS_WITH(ResolveModel(dense), Catch::Contains("--full-attention-every needs a sliding window"));
    dense.window = 4096;
    CHECK(ResolveModel(dense).model.WindowedLayers() == 16);
}

TEST_CASE("planner: DeepSeek-V3's multi-token prediction module as its report counts it, on the last stage", "[core][planner]")
{
    // The report's 685B on Hugging Face: the 671B main model and 14B of MTP weights, which hold
    // the module (a MoE layer and its 2h x h projection) and their own copies of the embedding and
    // the output layer (shared in training, so counted once here).
    TransformerModel m = *FindModelPreset("deepseek-v3");
    CHECK(m.mtpLayers == 0);
    const double base = m.TotalParams(), flops = m.ForwardFlopsPerToken(4096), h = m.hidden, vocab = m.vocab;
    m.mtpLayers = 1;
    CHECK(m.TotalParams() - base == Approx(m.LayerParams() + 2 * h * h).epsilon(1e-12));
    CHECK((m.TotalParams() + 2 * vocab * h) * 1e-9 == Approx(685).epsilon(0.005));
    // FLOPs: the module's layer (its attention too), projection and output layer again.
    CHECK(m.ForwardFlopsPerToken(4096) - flops ==
          Approx(2 * (m.LayerActiveParams() + 2 * h * h + vocab * h) + m.AttentionScoreFlopsPerToken(4096) / m.layers).epsilon(1e-9));

    // The planner: on 4 stages the last holds its 15 layers, the module's layer, and the output layer
    // and loss twice; its weights the module's and the input embedding again.
    PlanRequest r = Request("deepseek-v3", "gb200", 256, 4096);
    r.seq = 4096;
    const TrainingConfig c = Config(64, 1, 4, 1, ScheduleKind::Interleaved, 4, Recompute::None, 1, false, 64);
    PlanRequest with = r;
    with.model.mtpLayers = 1;
    const Shape s = ShapeOf(r, c), sm = ShapeOf(with, c);
    REQUIRE(s.head == 1); // 16 layers on each of the first stages, 13 and the output layer on the last
    CHECK(sm.layers == s.layers + 1);
    CHECK(sm.head == 2);
    CHECK(sm.mtp == 1);
    const StageParams p = ParamsOn(r, c, s, 3), pm = ParamsOn(with, c, sm, 3);
    CHECK(pm.expert - p.expert == Approx(m.experts * m.MlpParams() / 64).epsilon(1e-12));
    CHECK(pm.dense - p.dense == Approx(m.AttentionParams() + h * m.experts + m.sharedExperts * m.MlpParams() + 2 * h * h + vocab * h).epsilon(1e-12));
    CHECK(ParamsOn(with, c, sm, 0).dense == ParamsOn(r, c, s, 0).dense); // the first stage as without
    // Embeddings tied to the output layer: the last stage already holds the table the module reads.
    PlanRequest tied = Request("gpt3-175b", "h100-sxm", 64, 64), tiedMtp = tied;
    REQUIRE(tied.model.tiedEmbeddings);
    tiedMtp.model.mtpLayers = 1;
    const TrainingConfig g = Config(1, 8, 8, 1);
    const double gh = tied.model.hidden;
    CHECK(ParamsOn(tiedMtp, g, ShapeOf(tiedMtp, g), 7).dense - ParamsOn(tied, g, ShapeOf(tied, g), 7).dense ==
          Approx((tied.model.LayerParams() + 2 * gh * gh) / 8).epsilon(1e-12));
    CHECK(OpCostsOf(with, c, sm).computeF > OpCostsOf(r, c, s).computeF);
    CHECK(Evaluate(with, c).time.step > Evaluate(r, c).time.step);
    // The first stage, with the most micro-batches in flight, still bounds the memory here.
    CHECK(Evaluate(with, c).memory.Total() == Evaluate(r, c).memory.Total());
    CHECK(Evaluate(with, c).memory.stage == 0);
    // Refused below zero, as the option.
    ModelInput in;
    in.preset = "deepseek-v3";
    in.mtpLayers = -1;
    CHECK_THROWS_WITH(ResolveModel(in), Catch::Contains("--mtp-layers must not be negative"));
    in.mtpLayers = 1;
    const ResolvedModel given = ResolveModel(in);
    CHECK(given.model.mtpLayers == 1);
    CHECK(given.model.id == "deepseek-v3*");
}

TEST_CASE("planner: GB amounts are written as printf's %.1f writes them, halves included", "[core][planner]")
{
    uint64_t state = 99;
    std::vector<double> values = {0.0, 1.0, 49'999'999.0, 50'000'000.0, 150'000'000.0, 250'000'000.0, 1.05e9, 1.15e9, 1.25e9,
                                  93.15e9, 72e9, 85'899'345'920.0, 1e15, 123456789012345.6, 3.5e22, -2.5e8};
    for (int i = 0; i < 2000; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const double x = static_cast<double>(state >> 11) / 9007199254740992.0;
        values.push_back(i % 2 ? x * 200e9 : std::round(x * 2000) * 5e7); // and exact halves of a tenth
    }
    for (double bytes : values) {
        char expected[64];
        std::snprintf(expected, sizeof expected, "%.1f GB", bytes / 1e9);
        INFO(bytes);
        CHECK(GbText(bytes) == expected);
    }
}

TEST_CASE("planner: an amount over the memory never reads 0.0 GB", "[core][planner]")
{
    CHECK(OverText(38.2e6) == "39 MB");
    CHECK(OverText(1.0) == "1 MB");
    CHECK(OverText(0.0) == "1 MB");
    CHECK(OverText(49.9e6) == "50 MB");
    CHECK(OverText(0.05e9) == "0.1 GB");
    CHECK(OverText(21.1e9) == "21.1 GB");
}
