// Internal to core/planner: the pieces Evaluate is made of, for the search (PlannerSearch.cpp)
// and the simulated step (PlannerTrace.cpp), so that all three use one model.
#pragma once

#include "planner/PipelineTiming.hpp"
#include "planner/PlannerComm.hpp"
#include "planner/Planner.hpp"

#include "model/CostModel.hpp"

#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace paralens::core {

// An integer in a message or a configuration's text.
inline std::string Num(int v) { return std::to_string(v); }

struct Shape { // the derived quantities of one configuration
    // The stage that bounds the pipeline (every stage is timed as it): its layers, and whether it
    // is the last one, with the output layer and the loss (1) or not (0).
    double layers = 0;
    double head = 1;
    // Of those, multi-token prediction modules (each a layer counted in `layers`, its 2h x h
    // projection, and one more output layer and loss counted in `head`): the last stage's.
    double mtp = 0;
    double tokens = 0;     // per micro-batch on one GPU: b x s / cp (its queries)
    double seq = 0, h = 0; // seq: the whole sequence (the keys each query attends to)
    int microBatches = 1;
};
Shape ShapeOf(const PlanRequest& r, const TrainingConfig& c);

// What a stage or chunk holds weighed by forward FLOPs a token (PlannerStages.cpp): its layers and
// MTP modules (a layer each), the output layer where the loss is and again for each module, and
// the modules' 2h x h projections. The embedding's lookup weighs nothing.
double PartFlops(const TransformerModel& m, int seq, const PipelineLayout::Part& part);
// What the output layer and the MTP modules (the last stage's extra work) weigh in layers.
double HeadInLayers(const PlanRequest& r);
// Each pipeline op's share of the bounding stage's micro-batch (PipelineOpTimes::share), by stage
// and chunk: a layout's chunks as laid out; where Megatron-Core's flags cut equal chunks, each
// stage's layers in v equal chunks (of L + 2 units, the ends a layer lighter, when the embedding
// and the loss count as layers), the output layer and the MTP modules in the last stage's last
// chunk, where Megatron-Core builds them; where they cannot (a layout not given), each stage's
// work balanced over its chunks. Empty for pp 1.
std::vector<double> OpShares(const PlanRequest& r, const TrainingConfig& c);

struct StageParams {
    double dense = 0, expert = 0; // on one GPU of the stage
};
StageParams ParamsOn(const PlanRequest& r, const TrainingConfig& c, const Shape& s, int stage);

// Bytes a mixture of experts' token dispatch moves through HBM in one layer's forward per GPU, for
// `sbh` = tokens x hidden on it (0 for a dense model): Megatron-LM's all-to-all dispatcher's
// permutation, sort by local expert and back, and unpermutation.
double DispatchBytes(const TransformerModel& m, const TrainingConfig& c, double sbh);

// One micro-batch through the heaviest stage: its parts and the op times the pipeline is timed with.
struct OpCosts {
    double computeF = 0, computeB = 0, tpF = 0, tpB = 0, cpF = 0, cpB = 0, epF = 0, epB = 0, gatherF = 0, gatherB = 0;
    double flopsF = 0;          // model FLOPs of the forward on one GPU
    ComputeParts parts;         // computeF + computeB by what they run
    double sendBytes = 0;       // per TP rank between stages
    CostParams sendLink;
    PipelineOpTimes times;
};
OpCosts OpCostsOf(const PlanRequest& r, const TrainingConfig& c, const Shape& s);
// The parallel dimensions' communication of one micro-batch through the stage (PlannerComm.cpp):
// the CP ring, the TP collectives and the EP all-to-alls, into `o`'s cpF/B, tpF/B and epF/B.
// `linearSec` and `attentionSec`: one layer's linear GEMMs and attention products, forward.
void ParallelComm(const PlanRequest& r, const TrainingConfig& c, const Shape& s, double linearSec, double attentionSec, OpCosts& o);
// The EP all-to-alls under the batch-level EP overlap (PlanRequest::epCommOverlap), where it
// applies: `layer` is one layer's compute the all-to-alls pair with (PlannerComm.cpp).
void OverlapEp(const PlanRequest& r, const TrainingConfig& c, const Shape& s, const MoeLayerCompute& layer, OpCosts& o);

void CheckPlannerConfig(const PlanRequest& r, const TrainingConfig& c);
// Indices of `rows` (fitting rows fastest first) on the Pareto front: each faster than every smaller one.
std::vector<size_t> ParetoFront(const std::vector<PlanRow>& rows);
PipelineShape PipelineShapeOf(const PlanRequest& r, const TrainingConfig& c);
// `pipe` null: pp = 1, or for the search a lower bound (the first stage holding GPipe's N or
// 1F1B's min(pp, N) micro-batches, which every schedule holds at least).
MemoryBreakdown PlannerMemory(const PlanRequest& r, const TrainingConfig& c, const PipelineStructure* pipe);
// What pipeline stage `stage` holds with `inFlight` micro-batches' activations (PlannerMemory's
// worst of them).
MemoryBreakdown MemoryOn(const PlanRequest& r, const TrainingConfig& c, const Shape& s, int stage, double inFlight);
// Pipeline makespans already timed in one search, by structure and op times: candidates that
// differ only in what the pipeline does not see (the ZeRO stage, a lighter first and last stage)
// replay it once. Thread-safe.
class PipelineMemo {
public:
    struct Request {
        const PipelineStructure* structure;
        PipelineOpTimes times;
    };
    using Key = std::tuple<const PipelineStructure*, double, double, double, double, const std::vector<double>*>;

    // `t.share` must be one of Shares' (a share table is known by its address).
    double Seconds(const PipelineStructure& s, const PipelineOpTimes& t);
    // Times what Seconds will be asked, those of one structure side by side in one pass over its
    // ops (PipelineSecondsBatch), structures on every core; what is known already is skipped.
    void Prefill(std::vector<Request> wanted);
    // OpShares of `c`'s split, computed once a search (the request is the search's); stable.
    const std::vector<double>* Shares(const PlanRequest& r, const TrainingConfig& c);

private:
    using SplitKey = std::tuple<int, int, int, int, const PipelineLayout*>;
    std::mutex m_mutex;
    std::map<Key, double> m_seconds;
    std::map<SplitKey, std::vector<double>> m_shares;
};

// The op times PlannerTime asks `memo` to replay `c`'s pipeline with (`o`: OpCostsOf `c`), for
// Prefill to time them first.
PipelineOpTimes PipelineTimesOf(const PlanRequest& r, const TrainingConfig& c, const OpCosts& o, PipelineMemo& memo);

// `breakdown`: also time the pipeline with free sends, to split bubble from send time. `memo`:
// where the search keeps the makespans it timed (null: time it).
StepBreakdown PlannerTime(const PlanRequest& r, const TrainingConfig& c, const PipelineStructure* pipe, bool breakdown,
                          PipelineMemo* memo = nullptr);
// FlashAttention's rate on blocks of `blockTokens` queries and keys, as a fraction of its rate on
// long ones (a published H100 measurement: 0.69 at 512 tokens, 0.83 at 1K, 0.95 at 4K, 1 from 16K).
double FlashAttentionBlockFactor(double blockTokens);
// fits / rejected / tokens per second / MFU / HFU from memory and time; lowerBound: the memory is
// a lower bound (no schedule built to count the micro-batches in flight), "needs at least ...".
void FinishRow(const PlanRequest& r, PlanRow& row, bool lowerBound = false);

} // namespace paralens::core
