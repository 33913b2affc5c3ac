// Intra-op parallelism as the lectures set it up: a device mesh, tensor layouts on it (replicated,
// sharded on one dimension, partial sums), each op's strategies (which loop each mesh axis splits)
// and the costs an assignment pays: node costs (compute, forward and backward; weight-gradient
// synchronisation) and edge costs (re-partitioning a tensor between the producer's layout and the
// consumer's, forward, and its gradient back). Every collective is priced by PredictSeconds
// (core/model) over the Plans paralens runs, the fastest algorithm for its size. Training is
// modelled: backward = 2 x forward FLOPs; the gradient of a replicated input of an op that splits
// a loop the input lacks is a partial sum.
#pragma once

#include "autopar/OpGraph.hpp"
#include "model/Collective.hpp"
#include "model/CostModel.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace paralens::core {

// rows x cols devices; device (r, c) is r * cols + c. Mesh axis 0 runs across rows (the slow
// links), axis 1 along a row (the fast ones). A 1-D mesh of p devices is 1 x p.
struct DeviceMesh {
    int rows = 1;
    int cols = 1;
    CostParams fast{5e-6, 1.0 / 300e9, 0.0}; // inside a row (NVLink-like)
    CostParams slow{10e-6, 1.0 / 25e9, 0.0}; // between rows (network-like)
    double peakFlops = 989e12;               // per device (H100 SXM bf16 dense)
    double efficiency = 0.5;                 // of peak that ops reach

    int Devices() const { return rows * cols; }
    int AxisSize(int axis) const { return axis == 0 ? rows : cols; }
    const CostParams& AxisLink(int axis) const { return axis == 0 ? slow : fast; }
    std::string Text() const; // "2x4"
};

// Parses "8" (1 x 8) or "2x4"; throws Error naming `option`.
DeviceMesh ParseMeshShape(const std::string& text, const std::string& option);

constexpr int8_t kReplicated = -1;
constexpr int8_t kPartial = -2;

// Per mesh axis: kReplicated, kPartial, or the tensor dimension sharded over that axis.
struct Layout {
    std::array<int8_t, 2> axis{kReplicated, kReplicated};
    bool operator==(const Layout&) const = default;
    bool HasPartial() const { return axis[0] == kPartial || axis[1] == kPartial; }
    // Partial sums summed: what a partial-sum output's gradient must be (the whole gradient).
    Layout Resolved() const
    {
        Layout l = *this;
        for (int8_t& a : l.axis)
            if (a == kPartial) a = kReplicated;
        return l;
    }
};

// "R", "S0", "P", "S0xS2" (axis 0 x axis 1) for tables; `tensor` names dims by the op's loop
// letters when given ("S(f)").
std::string LayoutText(const Layout& l, const DeviceMesh& mesh);

struct OpStrategy {
    std::array<int8_t, 2> loop{-1, -1}; // the loop each mesh axis splits (-1: none)
    std::vector<Layout> inputs;         // what each input operand must be
    std::vector<Layout> inputGrads;     // the gradient each input's backward yields
    Layout output;
    double computeSeconds = 0.0;        // forward + backward on one device
};

// "replicated", "split f", "split b x f" (axis 0 x axis 1).
std::string StrategyText(const GraphOp& op, const OpStrategy& s, const DeviceMesh& mesh);

enum class CommPhase : uint8_t { Forward, Backward };
enum class CommKind : uint8_t {
    PartialSum,   // resolving a reduction split's partial sums (the lectures' node allreduce)
    Repartition,  // changing a tensor's layout between ops (the lectures' edge cost)
    GradientSync, // a weight's gradient summed over the devices that replicate it
};

// One collective an assignment adds: over the groups along `axis`, all concurrently.
struct CommItem {
    int op = -1;          // the op that pays it (the consumer for edges)
    int tensor = -1;
    CommPhase phase = CommPhase::Forward;
    CommKind kind = CommKind::Repartition;
    Collective collective = Collective::AllReduce;
    Algorithm algorithm = Algorithm::Ring;
    int axis = 1;
    int ranks = 1;
    uint64_t bytes = 0;   // n of the collective (the group's whole vector)
    double seconds = 0.0;
};

// The collective to move `bytes` of a tensor from `from` to `to` over the mesh, axis 0 then 1;
// appends what it runs to `items` when given. Slices are free; P -> R allreduce, P -> S
// reduce-scatter, S -> R allgather, S(i) -> S(j) all-to-all.
double ConvertSeconds(const Layout& from, const Layout& to, uint64_t bytes, const DeviceMesh& mesh, std::vector<CommItem>* items = nullptr);

// The fastest algorithm's predicted time for one collective on `ranks` devices of `link`.
double CollectiveSeconds(Collective c, int ranks, uint64_t bytes, const CostParams& link, Algorithm* chosen = nullptr);

// Forward + backward seconds of `op` split `split` ways on one device of the mesh.
double ComputeSecondsOf(const GraphOp& op, double split, const DeviceMesh& mesh);

// The strategies of every op on the mesh (at least "replicated").
std::vector<OpStrategy> EnumerateStrategies(const GraphOp& op, const OpGraph& g, const DeviceMesh& mesh);

// Layouts fixed at the graph's boundary, for solving one layer of a stack at a time: an input
// arrives in a fixed layout (its conversion and its gradient's are paid by the consumers), an
// output must leave in one.
struct Boundary {
    std::vector<std::pair<int, Layout>> inputs;  // tensor id -> layout
    std::vector<std::pair<int, Layout>> outputs; // tensor id -> layout
    std::vector<int> open; // outputs handed on as produced: whoever reads them outside pays
};

// What a graph output in layout `out` pays to leave as the graph asks (replicated, or when the
// graph allows any layout, without partial sums), forward and its gradient back; the cheapest
// target, written to `chosen` when given.
double LeaveSeconds(const OpGraph& g, int tensor, const Layout& out, const DeviceMesh& mesh, Layout* chosen = nullptr);

struct ExecStep {
    int op = -1;
    CommPhase phase = CommPhase::Forward;
    bool compute = false;  // else `comm`
    double seconds = 0.0;
    CommItem comm;
};

struct EdgeCosts {
    int producer = -1;
    int consumer = -1;
    int slot = 0;               // input operand of the consumer
    std::vector<double> cost;   // [producerStrategy * consumerStrategies + consumerStrategy]
};

// The whole search problem: node costs per op and strategy, edge cost matrices. Every solver
// reads this and nothing else; Cost() and Comms() give an assignment's total and its collectives.
struct IntraOpProblem {
    const OpGraph* graph = nullptr;
    DeviceMesh mesh;
    Boundary boundary;
    std::vector<std::vector<OpStrategy>> strategies; // per op
    std::vector<std::vector<double>> nodeCost;       // per op per strategy
    std::vector<EdgeCosts> edges;

    size_t Ops() const { return strategies.size(); }
    double Cost(const std::vector<int>& choice) const;
    // What the assignment runs, in order: the forward in op order (each op's input conversions,
    // its compute, its output's), then the backward in reverse op order (its compute, then its
    // inputs' gradient conversions and weight-gradient reductions). Their seconds sum to Cost().
    std::vector<ExecStep> Steps(const std::vector<int>& choice) const;
    std::vector<CommItem> Comms(const std::vector<int>& choice) const;
};

// `graph` must outlive the problem. Throws Error when an op has no strategy on the mesh.
IntraOpProblem BuildIntraOpProblem(const OpGraph& graph, const DeviceMesh& mesh, const Boundary& boundary = {});

struct CostBreakdown {
    double computeSeconds = 0.0;
    double partialSumSeconds = 0.0;   // intra-op communication
    double repartitionSeconds = 0.0;  // edge costs
    double gradientSyncSeconds = 0.0; // data-parallel style weight-gradient reductions
    double Total() const { return computeSeconds + partialSumSeconds + repartitionSeconds + gradientSyncSeconds; }
};

CostBreakdown Breakdown(const IntraOpProblem& p, const std::vector<int>& choice);

} // namespace paralens::core
