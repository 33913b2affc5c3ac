// Internal to core/planner: how the planner prices communication. Each group's collective goes
// through the cost model (model/CostModel.hpp PredictSeconds) on NVLink inside a node or on the
// network between nodes, with a measured fit of either level where one is given, and overlapped
// collectives slow the compute beside them.
#pragma once

#include "model/Collective.hpp"
#include "model/CostModel.hpp"
#include "planner/Planner.hpp"

namespace paralens::core {

// The links a group's traffic takes: inside a node (NVLink) or between nodes; `perNode`: the
// group's GPUs in each node (each with its own NIC, as on rail-optimised clusters).
struct LinkModel {
    const PlanCluster& cluster;
    bool insideNode;
    int perNode = 1;
};

// The members per node of a group of `ranks` GPUs `stride` apart in the rank order.
int PerNode(const PlanCluster& k, long stride, int ranks);

// A collective on one level (see PlannerComm.cpp).
double CollectiveSec(Collective c, int ranks, double bytes, const LinkModel& link);

// One message of `bytes` between two GPUs (a stage's send, a ring-attention step); `used`: the
// alpha and beta it took.
double SendSec(double bytes, const LinkModel& link, CostParams* used = nullptr);

// Allreduce, or with sequence parallelism / ZeRO its two halves (the same bytes on a ring).
double ReduceSec(bool split, int ranks, double bytes, const LinkModel& link);

// How much longer compute takes while a collective runs beside it (see PlannerComm.cpp).
double CommSlowdown(const GpuSpec& gpu);

// What one layer loses to TP's collectives under Transformer Engine's userbuffers overlap.
struct TpOverlap {
    double forward = 0, backward = 0;
};
TpOverlap TpOverlapSec(const TransformerModel& m, const GpuSpec& gpu, int tp, double one, double linear);

// One layer's compute on one GPU for one micro-batch, as the EP overlap pairs it: outside the
// experts (attention, norms, the router, casts) and the experts' GEMMs, forward and backward.
struct MoeLayerCompute {
    double attentionF = 0, expertsF = 0, attentionB = 0, expertsB = 0;
};
// What one layer of a forward-backward pair loses to its four all-to-alls of `a2a` each under
// Megatron-Core's batch-level EP overlap (see PlannerComm.cpp).
double EpOverlapPairSec(double a2a, const MoeLayerCompute& layer, const GpuSpec& gpu);

} // namespace paralens::core
