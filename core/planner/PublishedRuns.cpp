#include "planner/PublishedRuns.hpp"

#include "planner/PlannerInternal.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace paralens::core {

namespace {

constexpr const char* kMegatron = "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using "
                                  "Megatron-LM (SC'21, arXiv:2104.04473), Table 1";
constexpr const char* kLlama3 = "Dubey et al. 2024, The Llama 3 Herd of Models (arXiv:2407.21783), Table 4";

PlanCluster Selene(int gpus)
{ // DGX A100 80GB: NVLink 3 (300 GB/s each way), 8 x 200 Gb/s HDR InfiniBand per node
    PlanCluster c;
    c.gpu = *FindGpu("a100-sxm");
    c.gpus = gpus;
    c.nvlinkGBps = 300;
    c.networkGBps = 25;
    return c;
}

PublishedRun Megatron(const char* size, int heads, int hidden, int layers, int tp, int pp, int gpus, int batch, double tflops)
{
    PublishedRun run;
    run.id = std::string("megatron-") + size;
    run.held.cp = true; // 2021: no context parallelism yet
    run.source = kMegatron;
    TransformerModel& m = run.request.model;
    m.id = run.id;
    m.source = kMegatron;
    m.layers = layers;
    m.hidden = hidden;
    m.heads = m.kvHeads = heads;
    m.ffn = 4 * hidden;
    m.vocab = 51200;
    m.seq = 2048;
    m.tiedEmbeddings = true;
    run.request.cluster = Selene(gpus);
    run.request.globalBatch = batch;
    run.request.tp = tp;
    run.request.pp = pp;
    run.request.recompute = Recompute::Full; // the paper trains with activation recomputation
    run.request.zero = 0;                    // 2021: no distributed optimizer, no sequence parallelism
    run.request.sequenceParallel = false;
    run.request.flashAttention = false;      // 2021: attention scores are stored (recomputed with the layer)
    run.request.dpCommExposed = true;        // 2021: local DDP all-reduces the gradients after the backward
    run.schedules = {ScheduleKind::OneFOneB, ScheduleKind::Interleaved};
    run.tflopsPerGpu = tflops;
    run.convention = FlopConvention::Megatron96;
    return run;
}

PublishedRun Llama405(int gpus, int dp, double tflops)
{
    PublishedRun run;
    run.id = "llama3-405b-" + std::to_string(gpus / 1024) + "k";
    run.source = kLlama3;
    run.request.model = *FindModelPreset("llama3-405b");
    PlanCluster c; // H100 80GB HBM3 (700 W), NVLink 900 GB/s (450 each way), 400 Gb/s RoCE per GPU
    c.gpu = *FindGpu("h100-sxm");
    c.gpus = gpus;
    c.networkGBps = 50;
    run.request.cluster = c;
    run.request.globalBatch = 2048; // 16M tokens of 8192
    run.request.tp = 8;
    run.request.pp = 16;
    run.request.dp = dp;
    run.request.recompute = Recompute::None; // Sec. 3.3.2: 8K-sequence pre-training without activation checkpointing
    run.request.zero = 2;                    // its FSDP shards the optimizer states and gradients, keeps the weights gathered
    run.schedules = {ScheduleKind::Interleaved, ScheduleKind::OneFOneB};
    run.tflopsPerGpu = tflops;
    run.convention = FlopConvention::ModelFlops;
    return run;
}

const std::vector<PublishedRun>& Runs()
{
    static const std::vector<PublishedRun> runs = [] {
        std::vector<PublishedRun> v;
        v.push_back(Megatron("1.7b", 24, 2304, 24, 1, 1, 32, 512, 137));
        v.push_back(Megatron("3.6b", 32, 3072, 30, 2, 1, 64, 512, 138));
        v.push_back(Megatron("7.5b", 32, 4096, 36, 4, 1, 128, 512, 142));
        v.push_back(Megatron("18b", 48, 6144, 40, 8, 1, 256, 1024, 135));
        v.push_back(Megatron("39b", 64, 8192, 48, 8, 2, 512, 1536, 138));
        v.push_back(Megatron("76b", 80, 10240, 60, 8, 4, 1024, 1792, 140));
        v.push_back(Megatron("146b", 96, 12288, 80, 8, 8, 1536, 2304, 148));
        v.push_back(Megatron("310b", 128, 16384, 96, 8, 16, 1920, 2160, 155));
        v.push_back(Megatron("530b", 128, 20480, 105, 8, 35, 2520, 2520, 163));
        v.push_back(Megatron("1t", 160, 25600, 128, 8, 64, 3072, 3072, 163));
        v.push_back(Llama405(8192, 64, 430));
        v.push_back(Llama405(16384, 128, 400));
        return v;
    }();
    return runs;
}

} // namespace

double PublishedRun::PublishedStepSeconds() const
{
    const PlanRequest& r = request;
    const double B = r.globalBatch, s = r.Seq(), l = r.model.layers, h = r.model.hidden, V = r.model.vocab;
    const double flops = convention == FlopConvention::Megatron96
                             ? 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h))
                             : ModelFlopsPerStep(r);
    return flops / (tflopsPerGpu * 1e12 * r.cluster.gpus);
}

std::span<const PublishedRun> PublishedRuns() { return Runs(); }

PlanResult FastestOverSchedules(const PlanRequest& request, std::span<const ScheduleKind> schedules)
{
    if (schedules.empty() || request.pp.value_or(1) == 1) return PlanTraining(request);
    PlanResult fastest;
    for (size_t i = 0; i < schedules.size(); ++i) {
        PlanRequest r = request;
        r.schedule = schedules[i];
        PlanResult res;
        try {
            res = PlanTraining(r);
        } catch (const Error&) {
            if (i == 0) throw;
            continue; // this schedule does not allow these degrees (layers, micro-batches)
        }
        const bool faster = res.fitting > 0 && (fastest.fitting == 0 || res.rows.front().time.step < fastest.rows.front().time.step);
        if (i == 0 || faster) fastest = std::move(res);
    }
    return fastest;
}

PlanRequest AsRecipeSplits(const PlanRequest& request)
{
    PlanRequest r = request;
    r.lightenLastStage = false;
    return r;
}

PlanResult ChoicesWithTechniques(const PlanRequest& request, std::span<const ScheduleKind> schedules, HeldChoices held)
{
    PlanRequest free = request;
    free.ep = free.microBatch = free.chunks = std::nullopt;
    if (!held.tpPp) free.tp = free.pp = std::nullopt;
    if (!held.dp) free.dp = std::nullopt;
    if (!held.cp) free.cp = std::nullopt;
    else if (!free.cp) free.cp = 1;
    free.firstStageLayers = free.lastStageLayers = std::nullopt;
    free.layout = nullptr; // the stages split as the search splits them
    free.lightenLastStage = true;
    free.schedule = std::nullopt;
    PlanResult all = PlanTraining(free);
    PlanResult out;
    out.candidates = all.candidates;
    out.notes = std::move(all.notes);
    for (size_t i = 0; i < all.rows.size(); ++i) {
        PlanRow& row = all.rows[i];
        if (row.config.pp > 1 && std::find(schedules.begin(), schedules.end(), row.config.schedule) == schedules.end()) continue;
        out.fitting += i < all.fitting;
        out.rows.push_back(std::move(row));
    }
    out.pareto = ParetoFront(out.rows);
    return out;
}

Ranking RankAmongChoices(const PlanRequest& request, double seconds, std::span<const ScheduleKind> schedules, HeldChoices held)
{
    return RankIn(ChoicesWithTechniques(request, schedules, held), seconds);
}

Ranking RankIn(const PlanResult& choices, double seconds)
{
    Ranking out;
    if (choices.fitting > 0) out.best = choices.rows.front();
    for (size_t i = 0; i < choices.fitting; ++i) out.rank += choices.rows[i].time.step < seconds * (1 - 1e-9);
    return out;
}

PublishedCheck CheckPublishedRun(const PublishedRun& run)
{
    PublishedCheck out;
    out.run = &run;
    out.publishedSeconds = run.PublishedStepSeconds();
    const PlanResult res = FastestOverSchedules(AsRecipeSplits(run.request), run.schedules);
    Require(res.fitting > 0, run.id + ": the published configuration does not fit in the planner's memory model");
    out.predicted = res.rows.front();
    out.errorPct = (out.predicted.time.step - out.publishedSeconds) / out.publishedSeconds * 100.0;
    // The same model, cluster, batch and techniques (recomputation, ZeRO, sequence parallelism as
    // the run had them, its schedules); the degrees, micro-batch and chunks open.
    const Ranking ranking = RankAmongChoices(run.request, out.predicted.time.step, run.schedules, run.held);
    out.rank = ranking.rank;
    // The run itself where no searched configuration is faster (its micro-batch may be one the
    // search does not try).
    out.best = ranking.best && ranking.best->time.step < out.predicted.time.step ? *ranking.best : out.predicted;
    out.vsBestPct = (out.predicted.time.step / out.best.time.step - 1.0) * 100.0;
    return out;
}

} // namespace paralens::core
