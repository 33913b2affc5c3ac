// The planner's search: every configuration the request leaves open, checked cheaply against
// memory first (weights and a lower bound of activations), then timed on its real schedule.
#include "common/Error.hpp"
#include "common/Parallel.hpp"
#include "planner/PlannerInternal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

namespace paralens::core {

namespace {

std::vector<int> Divisors(int n)
{
    std::vector<int> out;
    for (int d = 1; d <= n; ++d)
        if (n % d == 0) out.push_back(d);
    return out;
}

template <class T>
std::vector<T> OneOr(const std::optional<T>& fixed, std::vector<T> all)
{
    if (fixed) return {*fixed};
    return all;
}

// A pipeline layout fixes pp, v and the stages' layers: what else is given must agree.
void CheckFixedLayout(const PlanRequest& r, const PipelineLayout& layout)
{
    const std::string name = "--pp-layout '" + layout.text + "'";
    Require(!r.firstStageLayers && !r.lastStageLayers, name + " places every layer: leave out --first-stage-layers and --last-stage-layers");
    Require(!r.pp || *r.pp == layout.pp, name + " is for pp " + Num(layout.pp) + ", not --pp " + Num(r.pp.value_or(0)));
    Require(!r.chunks || *r.chunks == layout.chunks, name + " has v " + Num(layout.chunks) + " chunks a stage, not --chunks " + Num(r.chunks.value_or(0)));
    Require(layout.chunks == 1 || layout.pp >= 2, name + ": model chunks on one stage need a pipeline (--pp >= 2)");
    Require(layout.chunks == 1 || !r.schedule || *r.schedule == ScheduleKind::Interleaved,
            name + " has " + Num(layout.chunks) + " chunks a stage: the interleaved schedule runs them");
    Require(layout.chunks > 1 || !r.schedule || *r.schedule != ScheduleKind::Interleaved, name + " has one chunk a stage: nothing to interleave");
    Require(r.cluster.gpus % layout.pp == 0, "--gpus " + Num(r.cluster.gpus) + " is not divisible by the layout's pp " + Num(layout.pp));
    CheckPipelineLayout(layout, r.model);
}

std::vector<std::pair<ScheduleKind, int>> SchedulesFor(const PlanRequest& r, const TrainingConfig& split, int microBatches)
{
    const int pp = split.pp;
    if (pp == 1) return {{ScheduleKind::OneFOneB, 1}};
    std::vector<std::pair<ScheduleKind, int>> out;
    const std::vector<ScheduleKind> kinds = OneOr<ScheduleKind>(
        r.schedule, {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1});
    if (split.layout) { // its v chunks as laid out: interleaved when v > 1 (N a multiple of pp), else the others
        const int v = split.layout->chunks;
        for (ScheduleKind k : kinds)
            if ((k == ScheduleKind::Interleaved) == (v > 1) && (v == 1 || microBatches % pp == 0)) out.push_back({k, v});
        return out;
    }
    for (ScheduleKind k : kinds) {
        if (k != ScheduleKind::Interleaved) {
            out.push_back({k, 1});
            continue;
        }
        if (microBatches % pp != 0) continue; // Megatron's interleaving needs N a multiple of pp
        if (r.chunks) { // as given: with unequal chunks where it does not divide (a pipeline layout), each stage's work spread evenly
            int lightest = r.model.layers / pp;
            if (split.Uneven())
                for (int stage : {0, pp / 2, pp - 1}) lightest = std::min(lightest, StageLayers(r.model.layers, split, stage));
            const int chunkable = ChunkableLayers(r.model.layers, split);
            // The search's lightened last stage is a --decoder-last-pipeline-num-layers split: with the flags' equal chunks only.
            const bool lightened = !r.lastStageLayers && split.firstStageLayers == 0 && split.lastStageLayers > 0;
            const bool equal = chunkable > 0 && chunkable % *r.chunks == 0;
            if (*r.chunks >= 2 && (equal || (*r.chunks <= lightest && !lightened))) out.push_back({k, *r.chunks});
            continue;
        }
        for (int v : Divisors(ChunkableLayers(r.model.layers, split))) // searched: equal chunks, Megatron-LM's standard flags
            if (v >= 2) out.push_back({k, v});
    }
    return out;
}

// The context-parallel degrees searched: those dividing the GPUs left whose chunks of 2 cp cut the
// sequence evenly and leave each GPU at least kMinCpTokens of it (fewer make the ring's sends
// outlast attention on every GPU of the spec table); only 1 without flash attention.
constexpr int kMinCpTokens = 1024;
std::vector<int> CpChoices(const PlanRequest& r, int gpusLeft)
{
    if (r.cp) return {*r.cp};
    std::vector<int> out;
    for (int cp : Divisors(gpusLeft))
        if (cp == 1 || (r.flashAttention && r.Seq() % (2 * cp) == 0 && r.Seq() / cp >= kMinCpTokens)) out.push_back(cp);
    return out;
}

// The last stage's layers that make it weigh about what each other stage does, the output layer
// and the MTP modules counted in layers by forward FLOPs (--decoder-last-pipeline-num-layers, as a
// vocabulary large beside the hidden size needs: Llama 3 8B's output layer weighs 1.8 layers at 8K tokens);
// 0 where that does not take half a layer or more off the even split's heaviest stage (smaller
// gains are not worth the search's time).
constexpr double kLighterLastStageGain = 0.5; // layers
int BalancedLastStage(const PlanRequest& r, int pp)
{
    const TransformerModel& m = r.model;
    const int L = m.layers, even = (L + pp - 1) / pp;
    if (pp < 2) return 0;
    const double extra = HeadInLayers(r);
    const double ideal = (L + extra) / pp - extra;
    int best = 0;
    double bound = even + extra - kLighterLastStageGain; // the even split's last stage, less the gain asked
    for (int last : {static_cast<int>(std::floor(ideal)), static_cast<int>(std::ceil(ideal))}) {
        if (last < 1 || last >= even || L - last < pp - 1) continue;
        const double heaviest = std::max(static_cast<double>((L - last + pp - 2) / (pp - 1)), last + extra);
        if (heaviest <= bound) best = last, bound = heaviest;
    }
    return best;
}

// The layer splits over `pp` stages: as fixed; else even and, where it makes the first and last
// stages lighter without a heavier middle one, Megatron-LM's split counting the embedding and the
// output layer as one layer each (the ends one layer lighter than the even split of L + 2), and
// where it lowers the heaviest stage, the last one lightened by the output layer's weight.
std::vector<std::pair<int, int>> StageSplits(const PlanRequest& r, int pp)
{
    if (r.layout) return {{0, 0}}; // as laid out
    if (r.firstStageLayers || r.lastStageLayers) {
        const int first = r.firstStageLayers.value_or(0), last = r.lastStageLayers.value_or(0);
        const int others = pp - (first > 0) - (last > 0), rest = r.model.layers - first - last;
        if (pp < 2 || (others == 0 ? rest != 0 : rest < others)) return {}; // CheckStages' rule, without the throw
        return {{first, last}};
    }
    std::vector<std::pair<int, int>> out = {{0, 0}};
    const int L = r.model.layers, ends = (L + 2 + pp - 1) / pp - 1, even = (L + pp - 1) / pp;
    if (pp >= 3 && ends >= 1 && L - 2 * ends >= pp - 2) {
        TrainingConfig lighter; // worth trying when the ends get lighter and no middle stage heavier than the even split
        lighter.pp = pp, lighter.firstStageLayers = lighter.lastStageLayers = ends;
        if (ends < even && StageLayers(L, lighter, 1) <= even) out.push_back({ends, ends});
    }
    if (const int last = r.lightenLastStage ? BalancedLastStage(r, pp) : 0; last > 0) out.push_back({0, last});
    return out;
}

// Every DP x TP x PP x CP split of the GPUs the request allows (ep and the rest left at their defaults).
std::vector<TrainingConfig> Splits(const PlanRequest& r)
{
    const TransformerModel& m = r.model;
    const PlanCluster& k = r.cluster;
    std::vector<TrainingConfig> out;
    for (int tp : OneOr<int>(r.tp, Divisors(k.gpus))) {
        if (m.heads % tp || m.kvHeads % tp || m.ffn % tp) continue;
        if (!r.tp && !r.tpAcrossNodes && tp > k.gpusPerNode) continue;
        for (int pp : OneOr<int>(r.layout ? std::optional<int>(r.layout->pp) : r.pp, Divisors(k.gpus / tp))) {
            if (pp > m.layers || (k.gpus / tp) % pp) continue;
            for (int cp : CpChoices(r, k.gpus / (tp * pp))) {
                if ((k.gpus / (tp * pp)) % cp) continue;
                TrainingConfig c;
                c.tp = tp, c.pp = pp, c.cp = cp, c.dp = k.gpus / (tp * pp * cp);
                if ((r.dp && *r.dp != c.dp) || r.globalBatch % c.dp) continue;
                c.layout = r.layout;
                for (const auto& [first, last] : StageSplits(r, pp)) {
                    c.firstStageLayers = first, c.lastStageLayers = last;
                    out.push_back(c);
                }
            }
        }
    }
    return out;
}

// The micro-batch sizes tried for `local` sequences per DP rank: powers of two up to 32, and the
// whole local batch up to 64 (one micro-batch a step, as FSDP runs often take; with ZeRO-3 each
// micro-batch gathers the weights again).
std::vector<int> MicroBatchSizes(int local)
{
    std::vector<int> out{1, 2, 4, 8, 16, 32};
    if (local <= 64 && std::find(out.begin(), out.end(), local) == out.end()) out.push_back(local);
    return out;
}

std::vector<TrainingConfig> Candidates(const PlanRequest& r)
{
    const TransformerModel& m = r.model;
    std::vector<TrainingConfig> out;
    for (const TrainingConfig& split : Splits(r)) {
        const int dp = split.dp, tp = split.tp, pp = split.pp, cp = split.cp;
        for (int ep : OneOr<int>(r.ep, m.IsMoe() ? Divisors(dp) : std::vector<int>{1})) {
            if (m.IsMoe() && (m.experts % ep || dp % ep)) continue;
            for (int mb : OneOr<int>(r.microBatch, MicroBatchSizes(r.globalBatch / dp))) {
                if ((r.globalBatch / dp) % mb) continue;
                const int N = r.globalBatch / (dp * mb);
                for (const auto& [kind, v] : SchedulesFor(r, split, N))
                    for (Recompute rc : OneOr<Recompute>(r.recompute, {Recompute::None, Recompute::Selective, Recompute::Full}))
                        for (int zero : OneOr<int>(r.zero, pp > 1 ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 2, 3}))
                            for (bool sp : OneOr<bool>(r.sequenceParallel, tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false}))
                                out.push_back(TrainingConfig{dp, tp, pp, ep, mb, kind, v, rc, zero, sp, cp, split.firstStageLayers,
                                                             split.lastStageLayers, split.layout});
            }
        }
    }
    return out;
}

// Builds the schedules the search will time (those of candidates whose weights and one
// micro-batch of activations fit: `bound`, each candidate's lower bound of memory) on every core,
// so the loop below finds them cached.
void PrebuildSchedules(const PlanRequest& r, const std::vector<TrainingConfig>& candidates, const std::vector<MemoryBreakdown>& bound,
                       double usable)
{
    std::set<PipelineCacheKey> seen;
    std::vector<PipelineShape> shapes;
    for (size_t i = 0; i < candidates.size(); ++i) {
        const TrainingConfig& c = candidates[i];
        if (c.pp == 1 || bound[i].Total() > usable) continue;
        const PipelineShape p = PipelineShapeOf(r, c);
        if (seen.insert(CacheKey(p)).second) shapes.push_back(p);
    }
    ParallelFor(shapes.size(), 1, [&](size_t i) { // schedules of very different sizes: one at a time
        try {
            PipelineStructureOf(shapes[i]);
        } catch (const Error&) {
            // the schedule does not allow this shape: the search skips it
        }
    });
}

// One candidate's memory: `bound`, its lower bound, then on its schedule (`pipe`, built where the
// bound fits). False when its schedule does not allow the shape.
bool SizeCandidate(const PlanRequest& r, const TrainingConfig& c, const MemoryBreakdown& bound, double usable, PlanRow& row,
                   std::shared_ptr<const PipelineStructure>& pipe)
{
    row.config = c;
    row.microBatches = r.globalBatch / (c.dp * c.microBatch);
    row.memory = bound;
    if (row.memory.Total() <= usable && c.pp > 1) {
        try {
            pipe = PipelineStructureOf(PipelineShapeOf(r, c));
        } catch (const Error&) {
            return false;
        }
        row.memory = PlannerMemory(r, c, pipe.get());
    }
    return true;
}

// A sized candidate's time, when it fits (its pipeline from `memo`), and what its row says.
void TimeCandidate(const PlanRequest& r, const PipelineStructure* pipe, double usable, PipelineMemo& memo, PlanRow& row)
{
    const TrainingConfig& c = row.config;
    if (row.memory.Total() <= usable) {
        row.time = PlannerTime(r, c, pipe, false, &memo);
        row.timed = true;
    }
    FinishRow(r, row, c.pp > 1 && !pipe); // "needs at least ...": the lower bound of micro-batches in flight
}

// Sizes every candidate, replays the pipelines of those that fit side by side (PipelineMemo::
// Prefill: candidates of one shape in one pass), then times them. False in `allowed` where a
// schedule does not allow the shape.
void EvaluateCandidates(const PlanRequest& r, const std::vector<TrainingConfig>& candidates, const std::vector<MemoryBreakdown>& bound,
                        double usable, PipelineMemo& memo, std::vector<PlanRow>& rows, std::vector<uint8_t>& allowed)
{
    std::vector<std::shared_ptr<const PipelineStructure>> pipes(candidates.size());
    ParallelFor(candidates.size(), 16, [&](size_t i) { allowed[i] = SizeCandidate(r, candidates[i], bound[i], usable, rows[i], pipes[i]); });
    std::vector<size_t> pipelined;
    for (size_t i = 0; i < candidates.size(); ++i)
        if (allowed[i] && pipes[i] && rows[i].memory.Total() <= usable) pipelined.push_back(i);
    std::vector<PipelineMemo::Request> wanted(pipelined.size());
    ParallelFor(pipelined.size(), 16, [&](size_t k) {
        const TrainingConfig& c = candidates[pipelined[k]];
        wanted[k] = {pipes[pipelined[k]].get(), PipelineTimesOf(r, c, OpCostsOf(r, c, ShapeOf(r, c)), memo)};
    });
    memo.Prefill(std::move(wanted));
    ParallelFor(candidates.size(), 16, [&](size_t i) {
        if (allowed[i]) TimeCandidate(r, pipes[i].get(), usable, memo, rows[i]);
    });
}

// The allowed rows, fitting ones fastest first, then the others smallest first; ties keep the
// candidates' order (the same ranking on any core count). The order is found on the keys and each
// row moved once (a merge sort of whole rows moves each log n times).
std::vector<PlanRow> Ranked(std::vector<PlanRow>& rows, const std::vector<uint8_t>& allowed)
{
    struct Entry {
        bool fits;
        double key;
        size_t index;
    };
    std::vector<Entry> order;
    order.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i)
        if (allowed[i]) order.push_back({rows[i].fits, rows[i].fits ? rows[i].time.step : rows[i].memory.Total(), i});
    std::stable_sort(order.begin(), order.end(), [](const Entry& a, const Entry& b) {
        if (a.fits != b.fits) return a.fits;
        return a.key < b.key;
    });
    std::vector<PlanRow> sorted;
    sorted.reserve(order.size());
    for (const Entry& e : order) sorted.push_back(std::move(rows[e.index]));
    return sorted;
}

} // namespace

std::vector<size_t> ParetoFront(const std::vector<PlanRow>& rows)
{
    std::vector<size_t> front;
    double smallest = 0;
    for (size_t i = 0; i < rows.size() && rows[i].fits; ++i) // rows are fastest first
        if (front.empty() || rows[i].memory.Total() < smallest) {
            front.push_back(i);
            smallest = rows[i].memory.Total();
        }
    return front;
}

void CheckPlanRequest(const PlanRequest& r)
{
    CheckModel(r.model);
    const int gpus = r.cluster.gpus;
    Require(gpus >= 1, "--gpus must be at least 1");
    Require(r.globalBatch >= 1, "--global-batch must be at least 1");
    Require(r.cluster.gpusPerNode >= 1, "--gpus-per-node must be at least 1");
    Require(!(r.dpCommOverlap && r.dpCommExposed), "--dp-comm-exposed and --dp-comm-overlap exclude each other: the sync is hidden "
                                                   "per model chunk, or not at all");
    for (const auto& [v, flag] : {std::pair{r.dp, "--dp"}, std::pair{r.tp, "--tp"}, std::pair{r.pp, "--pp"}, std::pair{r.cp, "--cp"}}) {
        if (!v) continue;
        Require(*v >= 1, std::string(flag) + " must be at least 1 (got " + Num(*v) + ")");
        Require(gpus % *v == 0, "--gpus " + Num(gpus) + " is not divisible by " + flag + " " + Num(*v));
    }
    for (const auto& [v, flag] : {std::pair{r.ep, "--ep"}, std::pair{r.microBatch, "--micro-batch"}, std::pair{r.chunks, "--chunks"}})
        if (v) Require(*v >= 1, std::string(flag) + " must be at least 1 (got " + Num(*v) + ")");
    if (r.zero) Require(*r.zero >= 0 && *r.zero <= 3, "--zero must be 0, 1, 2 or 3 (got " + Num(*r.zero) + ")");
    if (r.tp) {
        Require(r.model.heads % *r.tp == 0, "--heads " + Num(r.model.heads) + " is not divisible by --tp " + Num(*r.tp));
        Require(r.model.kvHeads % *r.tp == 0, "--kv-heads " + Num(r.model.kvHeads) + " is not divisible by --tp " + Num(*r.tp));
    }
    if (r.dp) Require(r.globalBatch % (*r.dp * r.microBatch.value_or(1)) == 0,
                      "--global-batch " + Num(r.globalBatch) + " is not divisible by --dp " + Num(*r.dp) +
                          (r.microBatch ? " x --micro-batch " + Num(*r.microBatch) : std::string()));
    if (r.cp && *r.cp > 1) {
        Require(r.Seq() % (2 * *r.cp) == 0, "--seq " + Num(r.Seq()) + " is not divisible by 2 x --cp " + Num(*r.cp) +
                                                " (context parallelism cuts each sequence into 2 cp chunks)");
        Require(r.flashAttention, "--cp " + Num(*r.cp) + " needs flash attention (ring attention never stores the scores)");
    }
    for (const auto& [v, flag] : {std::pair{r.firstStageLayers, "--first-stage-layers"}, std::pair{r.lastStageLayers, "--last-stage-layers"}})
        if (v) Require(*v >= 1 && *v < r.model.layers, std::string(flag) + " must be between 1 and --layers " + Num(r.model.layers) + " - 1");
    if (r.pp) Require(*r.pp <= r.model.layers, "--pp " + Num(*r.pp) + " exceeds --layers " + Num(r.model.layers));
    if (r.layout) CheckFixedLayout(r, *r.layout);
    if (r.ep && !r.model.IsMoe()) Require(*r.ep == 1, "--ep needs a mixture-of-experts model (--experts)");
    // Megatron-Core refuses these two where the model has no such module (TransformerConfig).
    Require(!r.recomputeModules.moeAct || r.model.IsMoe(), "--recompute-modules: moe_act recomputes the experts' activation, and " +
                                                               r.model.id + " is not a mixture of experts");
    Require(!r.recomputeModules.mlaUpProj || r.model.IsMla(), "--recompute-modules: mla_up_proj recomputes MLA's up-projections, and " +
                                                                  r.model.id + " has no multi-head latent attention");
}

PlanResult PlanTraining(const PlanRequest& r)
{
    CheckPlanRequest(r);
    const std::vector<TrainingConfig> candidates = Candidates(r);
    if (candidates.empty())
        throw Error("no configuration of " + Num(r.cluster.gpus) + " GPUs satisfies the request: dp x tp x pp x cp must be --gpus, "
                    "TP must divide --heads " + Num(r.model.heads) + " and --kv-heads " + Num(r.model.kvHeads) +
                    (r.tpAcrossNodes ? "" : " and stay inside a node of " + Num(r.cluster.gpusPerNode)) +
                    ", DP x micro-batch must divide --global-batch " + Num(r.globalBatch) +
                    (r.firstStageLayers || r.lastStageLayers ? ", --first/--last-stage-layers must leave each other stage a layer" : "") +
                    (r.chunks && *r.chunks > 1 ? ", --chunks must leave each stage a layer a chunk" : ""));
    PlanResult res;
    res.candidates = candidates.size();
    const double usable = r.cluster.UsableBytes();
    std::vector<MemoryBreakdown> bound(candidates.size()); // before a schedule is built
    ParallelFor(candidates.size(), 256, [&](size_t i) { bound[i] = PlannerMemory(r, candidates[i], nullptr); });
    PrebuildSchedules(r, candidates, bound, usable);
    std::vector<PlanRow> rows(candidates.size());
    std::vector<uint8_t> allowed(candidates.size());
    PipelineMemo memo;
    EvaluateCandidates(r, candidates, bound, usable, memo, rows, allowed);
    res.rows = Ranked(rows, allowed);
    // The breakdown (bubble apart from sends) for the rows people read: the best and the front.
    res.pareto = ParetoFront(res.rows);
    std::vector<size_t> shown;
    for (size_t i = 0; i < res.rows.size() && res.rows[i].fits; ++i) {
        res.fitting = i + 1;
        if (res.rows[i].config.pp > 1 && (i < 50 || std::find(res.pareto.begin(), res.pareto.end(), i) != res.pareto.end()))
            shown.push_back(i);
    }
    // The memo has their pipelines; the free-send ones are new, replayed side by side first.
    std::vector<std::shared_ptr<const PipelineStructure>> pipes(shown.size());
    std::vector<PipelineMemo::Request> freeSends(shown.size());
    ParallelFor(shown.size(), 4, [&](size_t k) {
        const TrainingConfig& c = res.rows[shown[k]].config;
        pipes[k] = PipelineStructureOf(PipelineShapeOf(r, c));
        freeSends[k] = {pipes[k].get(), PipelineTimesOf(r, c, OpCostsOf(r, c, ShapeOf(r, c)), memo)};
        freeSends[k].times.send = 0.0;
    });
    memo.Prefill(std::move(freeSends));
    ParallelFor(shown.size(), 4, [&](size_t k) { res.rows[shown[k]].time = PlannerTime(r, res.rows[shown[k]].config, pipes[k].get(), true, &memo); });
    if (res.fitting == 0 && !res.rows.empty())
        res.notes.push_back("nothing fits in " + std::to_string(static_cast<int>(usable / 1e9)) + " GB per GPU; the closest, " +
                            ConfigText(res.rows.front().config) + ", " + res.rows.front().rejected);
    return res;
}

} // namespace paralens::core
