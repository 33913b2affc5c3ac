// The planner's pipeline stages and their data-parallel sync: uneven stages, the model chunks the
// search offers (Megatron-LM's rule) and takes, and the gradient reduce and weight gather hidden
// per chunk with --dp-comm-overlap.
#include "PlannerTestSupport.hpp"
#include "planner/PipelineLayout.hpp"
#include "planner/PlannerInternal.hpp"
#include "planner/PlannerTrace.hpp"
#include "planner/PublishedRuns.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

using namespace paralens;
using namespace paralens::core;
using test::Config;
using test::Request;

TEST_CASE("planner: uneven stages put their layers where told, memory is the heaviest stage's, the search tries Megatron's split", "[core][planner]")
{
    TrainingConfig ends = Config(64, 8, 16, 1, ScheduleKind::OneFOneB, 1, Recompute::Full, 1, true);
    ends.firstStageLayers = ends.lastStageLayers = 7;
    CHECK(StageLayers(126, ends, 0) == 7);
    CHECK(StageLayers(126, ends, 1) == 8); // 112 layers over 14 stages
    CHECK(StageLayers(126, ends, 15) == 7);
    CHECK(ConfigText(ends) == "dp 64 tp 8 pp 16 layers 7+..+7 mb 1 1f1b recompute full zero1 sp");
    TrainingConfig even = ends;
    even.firstStageLayers = even.lastStageLayers = 0;
    CHECK(StageLayers(126, even, 0) == 8);

    PlanRequest r = Request("llama3-405b", "h100-sxm", 8192, 2048);
    const PlanRow a = Evaluate(r, even), b = Evaluate(r, ends);
    // The last stage holds the output layer and the loss: evenly split, its 8 layers and those bound
    // the pipeline; with 7 there a middle stage's 8 layers do (the head weighs less than a layer),
    // so every stage's forward is shorter by the head's GEMM and the loss's forward.
    CHECK(ShapeOf(r, even).layers == 8);
    CHECK(ShapeOf(r, even).head == 1);
    CHECK(ShapeOf(r, ends).layers == 8);
    CHECK(ShapeOf(r, ends).head == 0);
    {
        const double t = ShapeOf(r, even).tokens, V = 128256, h = 16384, tp = 8;
        const double headSec = (2.0 * t * V * h / tp + r.cluster.GemmHalfFlops("bf16")) / r.cluster.GemmFlops(), lossSec = 24.0 * t * V / tp / 3350e9;
        CHECK(a.time.forwardSec - b.time.forwardSec == Approx(headSec + lossSec).epsilon(1e-6));
    }
    // The first stage holds 16 micro-batches (1F1B) of 8 layers and the embedding; with 7 there the
    // second stage's 15 micro-batches of 8 layers are the most: one layer's input less for 8 of them.
    REQUIRE(a.memory.stage == 0);
    CHECK(b.memory.stage == 1);
    CHECK(b.memory.inFlight == 15);
    const Shape s = ShapeOf(r, even);
    const double perLayer = 2.0 * s.tokens * s.h / 8; // full recomputation keeps each layer's input, over TP with SP
    const double embedding = 16 * (8.0 * s.tokens + s.tokens * s.h) / 8;
    CHECK(a.memory.activations - b.memory.activations == Approx(8 * perLayer + embedding).epsilon(1e-9));
    CHECK(a.memory.Total() > b.memory.Total());

    // A light first stage makes a middle one the most loaded: every stage is counted.
    TrainingConfig light = Config(1, 1, 4, 1, ScheduleKind::OneFOneB);
    light.firstStageLayers = 2;
    PlanRequest small = Request("llama3-8b", "h100-sxm", 4, 16);
    const PlanRow l = Evaluate(small, light);
    CHECK(l.memory.stage == 1);
    CHECK(StageLayers(32, light, 1) == 10);

    // The search tries the split counting the embedding and the output layer as layers where it differs.
    r.tp = 8, r.pp = 16, r.dp = 64;
    bool sawEven = false, sawEnds = false;
    for (const PlanRow& row : PlanTraining(r).rows) {
        sawEven |= !row.config.Uneven();
        sawEnds |= row.config.firstStageLayers == 7 && row.config.lastStageLayers == 7;
    }
    CHECK(sawEven);
    CHECK(sawEnds);
    PlanRequest big = Request("megatron-1t", "a100-sxm", 3072, 3072); // 128 + 2 layers split no better: not tried
    big.tp = 8, big.pp = 64;
    for (const PlanRow& row : PlanTraining(big).rows) CHECK_FALSE(row.config.Uneven());

    // Impossible splits name the options.
    TrainingConfig bad = Config(8, 1, 1, 1);
    bad.firstStageLayers = 3;
    CHECK_THROWS_WITH(Evaluate(Request("llama3-8b", "h100-sxm", 8, 16), bad), Catch::Contains("need a pipeline"));
    PlanRequest tooMany = Request("llama3-8b", "h100-sxm", 8, 16);
    tooMany.pp = 4;
    tooMany.firstStageLayers = 30;
    CHECK_THROWS_WITH(PlanTraining(tooMany), Catch::Contains("--first/--last-stage-layers"));
}

TEST_CASE("planner: the search offers the v Megatron-LM's standard flags accept, and takes a v given as a layout", "[core][planner]")
{
    TrainingConfig c = Config(1, 1, 4, 1);
    CHECK(ChunkableLayers(40, c) == 10);
    c.pp = 3;
    CHECK(ChunkableLayers(40, c) == 0); // no even split: no interleaving with the standard flags
    c.pp = 16;
    c.firstStageLayers = c.lastStageLayers = 7; // 126 + embedding + output = 128 over 16: 8 each
    CHECK(ChunkableLayers(126, c) == 8);
    c.pp = 4;
    c.firstStageLayers = c.lastStageLayers = 6; // 20 middle layers: 10 each; first and last 6
    CHECK(ChunkableLayers(32, c) == 2);
    c.firstStageLayers = 5, c.lastStageLayers = 0; // 27 over 3 stages: 9 each
    CHECK(ChunkableLayers(32, c) == 1);
    c.firstStageLayers = 7; // 25 over 3 stages do not split evenly
    CHECK(ChunkableLayers(32, c) == 0);

    // The GPT of 40 layers on 4 stages: the search offers v 2, 5 and 10 (never 8, which needs a
    // pipeline layout of unequal chunks).
    PlanRequest r = Request("gpt3-175b", "a100-sxm", 256, 1024);
    r.model.id = "custom", r.model.layers = 40, r.model.hidden = 6144, r.model.heads = 48, r.model.kvHeads = 48, r.model.ffn = 4 * 6144;
    r.pp = 4, r.tp = 2, r.schedule = ScheduleKind::Interleaved, r.recompute = Recompute::Full;
    std::set<int> seen;
    for (const PlanRow& row : PlanTraining(r).rows) seen.insert(row.config.chunks);
    CHECK(seen == std::set<int>{2, 5, 10});
    // Given, v 8 is taken as a layout (chunks of 1 and 2 layers), each stage's work spread evenly over them.
    r.chunks = 8;
    const PlanResult given = PlanTraining(r);
    REQUIRE_FALSE(given.rows.empty());
    CHECK(given.rows.front().config.chunks == 8);
    CHECK_NOTHROW(Evaluate(r, Config(32, 2, 4, 4, ScheduleKind::Interleaved, 8, Recompute::Full)));
    CHECK_THROWS_WITH(Evaluate(r, Config(32, 2, 4, 4, ScheduleKind::Interleaved, 12, Recompute::Full)),
                      Catch::Contains("pp 4 x v 12 stages exceed --layers 40"));
    // 61 layers over 9 stages: not evenly, but 61 + 2 over 9 gives 7 a stage with the ends counting
    // the embedding and the loss, so v 7 is Megatron-LM's and the search offers it.
    PlanRequest odd = Request("llama3-8b", "h100-sxm", 72, 144);
    odd.model.layers = 61, odd.pp = 9, odd.schedule = ScheduleKind::Interleaved;
    bool sawSeven = false;
    for (const PlanRow& row : PlanTraining(odd).rows) sawSeven |= row.config.chunks == 7 && row.config.firstStageLayers == 6;
    CHECK(sawSeven);
}

TEST_CASE("planner: each stage's and chunk's ops take their share of the bounding stage's time, as Megatron-Core builds the chunks", "[core][planner]")
{
    // The replay: two stages, one micro-batch (F0 F1 B1 B0), the first stage holding half the work.
    const auto pipe = PipelineStructureOf(PipelineShape{ScheduleKind::OneFOneB, 2, 1, 1});
    PipelineOpTimes t{1.0, 2.0, 0.0, 0.0, nullptr};
    CHECK(PipelineSeconds(*pipe, t) == Approx(6.0));
    const std::vector<double> half = {0.5, 1.0};
    t.share = &half;
    CHECK(PipelineSeconds(*pipe, t) == Approx(0.5 + 1.0 + 2.0 + 1.0));

    // Llama 3 70B, 80 layers on 4 stages of 5 chunks (Megatron-Core's flags cut 4 layers a chunk):
    // the output layer in the last stage's last chunk, so the last stage bounds.
    const PlanRequest r70 = Request("llama3-70b", "h100-sxm", 64, 64);
    const TrainingConfig even = Config(4, 4, 4, 1, ScheduleKind::Interleaved, 5);
    const std::vector<double> e = OpShares(r70, even);
    REQUIRE(e.size() == 20);
    const double layer = e[0] / 4; // stage 0's first chunk: 4 layers
    for (int i = 0; i < 19; ++i) CHECK(e[static_cast<size_t>(i)] == Approx(4 * layer));
    const double head = e[19] - 4 * layer;
    CHECK(head > 0.5 * layer); // 2 x 128256 x 8192 FLOPs a token against a layer's 1.7 G
    CHECK(16 * layer + e[19] == Approx(1.0));
    CHECK(e[19] == Approx((4 * layer + head) / (20 * layer + head)));
    CHECK(OpShares(r70, Config(64, 1, 1, 1)).empty());

    // Llama 3.1 405B on 8 stages of 8 chunks with the embedding and the loss counted as layers
    // (15+..+15, Megatron-Bridge's recipe): chunks of 2 layers, the first stage's first and the last
    // stage's last of 1 (the latter with the output layer, lighter than a layer); a middle stage bounds.
    const PlanRequest r405 = Request("llama3-405b", "h100-sxm", 512, 512);
    TrainingConfig ends = Config(8, 8, 8, 1, ScheduleKind::Interleaved, 8);
    ends.firstStageLayers = ends.lastStageLayers = 15;
    REQUIRE(EndsCountedAsLayers(126, ends));
    const std::vector<double> u = OpShares(r405, ends);
    REQUIRE(u.size() == 64);
    CHECK(u[0] == Approx(1.0 / 16));
    CHECK(u[1] == Approx(1.0 / 8));
    CHECK(u[8] == Approx(1.0 / 8));
    CHECK(u[62] == Approx(1.0 / 8));
    CHECK(u[63] > 1.0 / 16);
    CHECK(u[63] < 1.0 / 8);
    // Without them 126 layers do not cut into equal chunks on 8 stages: a layout would, which one
    // is not known, so each stage's work is spread evenly over its chunks.
    const std::vector<double> b = OpShares(r405, Config(8, 8, 8, 1, ScheduleKind::Interleaved, 2));
    CHECK(b[14] == Approx(0.5));
    CHECK(b[15] == Approx(0.5));
    CHECK(b[0] == Approx(b[1]));
    CHECK(b[0] < 0.5);

    // A layout's chunks as laid out: DeepSeek-V3's on 16 stages, the last holding a layer, the MTP
    // module and the loss (heavier than 4 layers) bounds the 14 stages of 4 layers.
    PlanRequest ds = Request("deepseek-v3", "b200", 256, 1024);
    ds.model.mtpLayers = 1;
    TrainingConfig laid = Config(16, 1, 16, 1, ScheduleKind::OneFOneB, 1, Recompute::None, 1, false, 8);
    laid.layout = std::make_shared<const PipelineLayout>(ParsePipelineLayout("Et*4|(t*4|)*14tmL", 16));
    const std::vector<double> l = OpShares(ds, laid);
    REQUIRE(l.size() == 16);
    CHECK(l[15] == Approx(1.0));
    CHECK(l[3] == Approx(PartFlops(ds.model, ds.Seq(), PipelineLayout::Part{4, 0, false, false}) /
                         PartFlops(ds.model, ds.Seq(), PipelineLayout::Part{1, 1, false, true})));
    CHECK(l[0] == Approx(l[3])); // the embedding's lookup weighs nothing

    // The planner's step and the simulated one agree with the shares.
    const PlanStepSimulation sim = SimulatePlanStep(r405, ends);
    CHECK(sim.seconds == Approx(sim.predictedSeconds).epsilon(0.01));
}

TEST_CASE("planner: the search lightens the last stage by the output layer's weight, and a recipe's own split is timed without it", "[core][planner]")
{
    // Llama 3 8B at 8K tokens: the output layer weighs about 1.8 layers, so on 4 stages of 8 the
    // last bounds at 9.8; with 7 there (9, 8, 8 on the others) the heaviest holds 9.
    PlanRequest r = Request("llama3-8b", "h100-sxm", 16, 64);
    r.pp = 4, r.tp = 1, r.cp = 1, r.schedule = ScheduleKind::OneFOneB;
    auto lightened = [](const TrainingConfig& c) { return c.firstStageLayers == 0 && c.lastStageLayers > 0; };
    const PlanResult res = PlanTraining(r);
    REQUIRE(res.fitting > 0);
    const TrainingConfig best = res.rows.front().config;
    CHECK(best.lastStageLayers == 7);
    CHECK(best.firstStageLayers == 0);
    TrainingConfig even = best;
    even.lastStageLayers = 0;
    CHECK(Evaluate(r, even).time.step > 1.03 * res.rows.front().time.step);
    // As a published recipe ran (none of the set sets --decoder-last-pipeline-num-layers).
    for (const PlanRow& row : PlanTraining(AsRecipeSplits(r)).rows) CHECK_FALSE(lightened(row.config));
    // Given v 2, 25 layers over 3 stages do not cut into equal chunks: not taken as a layout.
    PlanRequest chunked = r;
    chunked.chunks = 2, chunked.schedule = ScheduleKind::Interleaved;
    for (const PlanRow& row : PlanTraining(chunked).rows) CHECK_FALSE(lightened(row.config));
    // Llama 3 70B on 8 stages of 10: its output layer (1.1 layers) saves less than half a layer
    // wherever it goes, and the search does not try it.
    PlanRequest big = Request("llama3-70b", "h100-sxm", 64, 64);
    big.pp = 8, big.tp = 8;
    for (const PlanRow& row : PlanTraining(big).rows) CHECK_FALSE(lightened(row.config));
}

TEST_CASE("planner: --dp-comm-overlap hides each chunk's gradient reduce and weight gather under the work left", "[core][planner]")
{
    // Llama 3 70B on 2 x 32 H100s over a slow network, so the sync outlasts a micro-batch.
    PlanRequest r = Request("llama3-70b", "h100-sxm", 64, 64);
    r.cluster.networkGBps = 5;
    TrainingConfig c = Config(2, 8, 4, 1, ScheduleKind::Interleaved, 4, Recompute::None, 1, true);
    const PlanRow off = Evaluate(r, c);
    const StepBreakdown& t = off.time;
    // Without overlap: everything but the last micro-batch's backward shows, and that backward runs
    // slower beside what it hides: 16 of an H100's 132 SMs are the collective's.
    const double slow = 132.0 / 116.0 - 1.0;
    CHECK(t.dpExposedSec ==
          Approx(std::max(0.0, t.dpSyncSec - t.backwardSec) + std::min(t.dpSyncSec, t.backwardSec) * slow).epsilon(1e-12));
    REQUIRE(t.dpExposedSec > 0);
    // ZeRO 1: a reduce-scatter of the fp32 gradient buffers, then an all-gather of the bf16 weights:
    // the sync's two parts in the ratio of their bytes, 4 : 2 a parameter (the same ring; its
    // latency, 1e-5 of it, aside).
    const double reduce = t.dpSyncSec * 2.0 / 3.0, gather = t.dpSyncSec / 3.0;
    r.dpCommOverlap = true;
    const PlanRow on = Evaluate(r, c);
    const double v = 4, window = (v - 1) * std::min(4, on.microBatches) + 1;
    auto shows = [&](double comm, double compute) {
        const double exposed = std::max({0.0, (comm - compute) / v, comm - window * compute / v});
        return exposed + (comm - exposed) * slow;
    };
    CHECK(on.time.dpSyncSec == Approx(t.dpSyncSec).epsilon(1e-12));
    CHECK(on.time.dpExposedSec == Approx(shows(reduce, t.backwardSec) + shows(gather, t.forwardSec)).epsilon(1e-4));
    CHECK(on.time.dpExposedSec < t.dpExposedSec);
    CHECK(on.time.step == Approx(off.time.step - t.dpExposedSec + on.time.dpExposedSec).epsilon(1e-9));
    // Without interleaving (v 1) the whole reduce waits on the last backward, the gather on the first forward.
    c = Config(2, 8, 4, 1, ScheduleKind::OneFOneB, 1, Recompute::None, 1, true);
    const PlanRow one = Evaluate(r, c);
    auto shows1 = [&](double comm, double compute) { return std::max(0.0, comm - compute) + std::min(comm, compute) * slow; };
    CHECK(one.time.dpExposedSec == Approx(shows1(reduce, one.time.backwardSec) + shows1(gather, one.time.forwardSec)).epsilon(1e-4));
    // --dp-comm-exposed (Megatron-LM's local DDP in 2021): the whole sync after the backward, none hidden.
    r.dpCommOverlap = false;
    r.dpCommExposed = true;
    const PlanRow exposed = Evaluate(r, Config(2, 8, 4, 1, ScheduleKind::Interleaved, 4, Recompute::None, 1, true));
    CHECK(exposed.time.dpExposedSec == Approx(t.dpSyncSec).epsilon(1e-12));
    CHECK(exposed.time.step == Approx(off.time.step - t.dpExposedSec + t.dpSyncSec).epsilon(1e-9));
    r.dpCommOverlap = true;
    CHECK_THROWS_WITH(PlanTraining(r), Catch::Contains("--dp-comm-exposed and --dp-comm-overlap exclude each other"));
}

TEST_CASE("planner: pipelines replayed side by side give each the makespan it gets alone, to the bit", "[core][planner]")
{
    uint64_t state = 12345;
    auto uniform = [&](double lo, double hi) { // a fixed sequence, the same on every machine
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return lo + (hi - lo) * static_cast<double>(state >> 11) / 9007199254740992.0;
    };
    const PipelineShape shapes[] = {
        {ScheduleKind::OneFOneB, 4, 8, 1},    {ScheduleKind::GPipe, 3, 5, 1},        {ScheduleKind::Interleaved, 4, 8, 2},
        {ScheduleKind::Interleaved, 2, 6, 3}, {ScheduleKind::ZeroBubbleH1, 4, 8, 1},
    };
    for (const PipelineShape& shape : shapes) {
        const auto pipe = PipelineStructureOf(shape);
        const size_t tables = static_cast<size_t>(shape.stages * shape.chunks);
        std::vector<std::vector<double>> shares(3, std::vector<double>(tables));
        for (auto& table : shares)
            for (double& x : table) x = uniform(0.1, 1.0) / shape.chunks;
        for (size_t count : {1, 2, 3, 5, 8, 9, 17}) {
            std::vector<PipelineOpTimes> times(count);
            for (size_t i = 0; i < count; ++i) {
                PipelineOpTimes& t = times[i];
                t.forward = uniform(0.5, 2.0), t.backward = t.forward * uniform(1.5, 2.5), t.weight = t.backward * uniform(0.3, 0.5);
                t.send = i % 3 == 0 ? 0.0 : uniform(0.0, 0.3); // some without sends, some with
                t.share = i % 2 ? &shares[i % 3] : nullptr;     // lanes with and without share tables, mixed
            }
            for (ReplayPath path : {ReplayPath::Fastest, ReplayPath::Portable}) { // AVX where this CPU has it, and SSE2
                std::vector<double> out(count, -1.0);
                PipelineSecondsBatch(*pipe, times, out.data(), path);
                for (size_t i = 0; i < count; ++i) {
                    INFO(Name(shape.kind) << " stages " << shape.stages << " chunks " << shape.chunks << ", " << count << " at once, #" << i
                                          << (path == ReplayPath::Portable ? ", portable" : ""));
                    CHECK(out[i] == PipelineSeconds(*pipe, times[i])); // exactly
                }
            }
        }
    }
    // The search replays its candidates so; each row's step is the one Evaluate gives it alone.
    const PlanRequest r = Request("llama3-8b", "h100-sxm", 64, 256);
    const PlanResult res = PlanTraining(r);
    size_t pipelined = 0;
    for (size_t i = 0; i < res.rows.size() && pipelined < 40; ++i)
        if (res.rows[i].fits && res.rows[i].config.pp > 1) {
            ++pipelined;
            INFO(ConfigText(res.rows[i].config));
            CHECK(res.rows[i].time.step == Evaluate(r, res.rows[i].config).time.step);
        }
    CHECK(pipelined == 40);
}

// The replay as first written: every op's end kept, every dependency read, its own stage's too.
namespace {
double ReplayWholeSchedule(const PipelineStructure& s, const PipelineOpTimes& t)
{
    const double v = s.shape.chunks;
    const bool split = s.shape.kind == ScheduleKind::ZeroBubbleH1;
    const double whole[3] = {t.forward, split ? t.backward - t.weight : t.backward, t.weight};
    std::vector<double> end(s.ops.size(), 0.0), free(static_cast<size_t>(s.shape.stages), 0.0);
    for (size_t i = 0; i < s.ops.size(); ++i) {
        const PipelineStructure::Op& op = s.ops[i];
        double start = free[op.device];
        for (int j = 0; j < 2; ++j)
            if (op.Dep(j) >= 0) start = std::max(start, end[static_cast<size_t>(op.Dep(j))] + (op.Cross(j) ? t.send : 0.0));
        const double share = t.share ? (*t.share)[static_cast<size_t>(op.device * s.shape.chunks + s.chunk[i])] : 1.0 / v;
        end[i] = free[op.device] = start + (t.share ? whole[op.kind] * share : whole[op.kind] / v);
    }
    return *std::max_element(free.begin(), free.end());
}
} // namespace

TEST_CASE("planner: the pipeline replay keeps a ring of op ends, not the whole schedule, to the bit", "[core][planner]")
{
    uint64_t state = 777;
    auto uniform = [&](double lo, double hi) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return lo + (hi - lo) * static_cast<double>(state >> 11) / 9007199254740992.0;
    };
    const PipelineShape shapes[] = {
        {ScheduleKind::OneFOneB, 16, 256, 1},  {ScheduleKind::GPipe, 8, 128, 1},     {ScheduleKind::Interleaved, 8, 64, 4},
        {ScheduleKind::ZeroBubbleH1, 16, 128, 1}, {ScheduleKind::OneFOneB, 2, 1, 1}, {ScheduleKind::Interleaved, 3, 6, 2},
    };
    for (const PipelineShape& shape : shapes) {
        const auto pipe = PipelineStructureOf(shape);
        INFO(Name(shape.kind) << " stages " << shape.stages << " micro-batches " << shape.microBatches << " chunks " << shape.chunks << ": "
                              << pipe->ops.size() << " ops, a ring of " << pipe->ringMask + 1);
        CHECK(((pipe->ringMask + 1) & pipe->ringMask) == 0); // a power of two
        if (pipe->ops.size() >= 4096) CHECK((pipe->ringMask + 1) * 8 <= pipe->ops.size());
        std::vector<double> shares(static_cast<size_t>(shape.stages * shape.chunks));
        for (double& x : shares) x = uniform(0.1, 1.0) / shape.chunks;
        std::vector<PipelineOpTimes> times(8);
        for (size_t i = 0; i < times.size(); ++i) {
            PipelineOpTimes& t = times[i];
            t.forward = uniform(0.5, 2.0), t.backward = t.forward * uniform(1.5, 2.5), t.weight = t.backward * uniform(0.3, 0.5);
            t.send = i % 4 == 0 ? 0.0 : uniform(0.0, 0.5);
            t.share = i >= 4 ? &shares : nullptr;
        }
        std::vector<double> batch(times.size()), portable(times.size());
        PipelineSecondsBatch(*pipe, std::vector<PipelineOpTimes>(times.begin(), times.begin() + 4), batch.data());
        PipelineSecondsBatch(*pipe, std::vector<PipelineOpTimes>(times.begin() + 4, times.end()), batch.data() + 4);
        PipelineSecondsBatch(*pipe, times, portable.data(), ReplayPath::Portable);
        for (size_t i = 0; i < times.size(); ++i) {
            const double reference = ReplayWholeSchedule(*pipe, times[i]);
            CHECK(PipelineSeconds(*pipe, times[i]) == reference); // exactly
            CHECK(batch[i] == reference);
            CHECK(portable[i] == reference);
        }
    }
}

TEST_CASE("planner: an uneven split's memory is its worst stage's, every stage weighed, with and without the schedule", "[core][planner]")
{
    const PlanRequest r = Request("llama3-405b", "h100-sxm", 4096, 2048);
    const Shape base = ShapeOf(r, Config(32, 8, 16, 1));
    struct Case { ScheduleKind kind; int v, first, last; };
    const Case cases[] = {{ScheduleKind::OneFOneB, 1, 7, 7}, {ScheduleKind::OneFOneB, 1, 2, 0}, {ScheduleKind::GPipe, 1, 0, 5},
                          {ScheduleKind::Interleaved, 2, 7, 7}, {ScheduleKind::ZeroBubbleH1, 1, 3, 3}};
    for (const Case& k : cases) {
        TrainingConfig c = Config(32, 8, 16, 1, k.kind, k.v, Recompute::Selective, 1, true);
        c.firstStageLayers = k.first, c.lastStageLayers = k.last;
        const Shape s = ShapeOf(r, c);
        REQUIRE(s.microBatches == base.microBatches);
        const auto pipe = PipelineStructureOf(PipelineShapeOf(r, c));
        for (const PipelineStructure* p : {static_cast<const PipelineStructure*>(nullptr), pipe.get()}) {
            const MemoryBreakdown got = PlannerMemory(r, c, p);
            MemoryBreakdown worst;
            for (int stage = 0; stage < c.pp; ++stage) {
                const int behind = c.pp - stage; // the search's bound without the schedule (PlannerMemory)
                const double bound = c.schedule == ScheduleKind::GPipe ? s.microBatches : std::min(behind, s.microBatches);
                const MemoryBreakdown m = MemoryOn(r, c, s, stage, p ? p->peakInFlight[static_cast<size_t>(stage)] : bound);
                if (stage == 0 || m.Total() > worst.Total()) worst = m;
            }
            INFO(ConfigText(c) << (p ? ", on its schedule" : ", the bound"));
            CHECK(got.Total() == worst.Total());
            CHECK(got.stage == worst.stage);
            CHECK(got.inFlight == worst.inFlight);
        }
    }
}
