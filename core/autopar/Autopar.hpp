// One auto-parallelization request and its answer, for the command line and the window alike:
// a graph (built in or from a file), a mesh, the intra-op solvers to compare, and optionally the
// inter-op search over pipeline stages. Pure function of the request; thread-safe.
#pragma once

#include "autopar/InterOp.hpp"
#include "autopar/IntraOpSolvers.hpp"
#include "autopar/OpGraph.hpp"
#include "autopar/Sharding.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace paralens::core {

// A mesh in the units people give it (the command line's options, the window's sliders).
struct MeshOptions {
    int rows = 1;
    int cols = 4;
    double fastAlphaUs = 5.0;  // inside a row
    double fastGBps = 300.0;
    double slowAlphaUs = 10.0; // between rows
    double slowGBps = 25.0;
    std::string gpu = "h100-sxm"; // its dense peak for `dtype` (assets/hardware.json) sets compute times
    std::string dtype = "bf16";
    double efficiency = 0.5;      // of that peak
    bool operator==(const MeshOptions&) const = default;
};

// Throws Error naming the option (--mesh, --fast-GBps, --gpu, --dtype, --efficiency) when invalid.
DeviceMesh BuildMesh(const MeshOptions& o);

// "ilp,dp,greedy" -> the names, each checked; throws Error naming --solvers.
std::vector<std::string> ParseSolverList(const std::string& text);

struct AutoparRequest {
    std::string graph = "mlp";   // mlp | transformer | convnet | a JSON file
    int layers = 1;              // transformer layers
    TransformerDims dims;        // dims.batch is the whole step's batch (sequences; images for convnet)
    DeviceMesh mesh;
    // Compared in this order; one that fails (the ILP past its time limit) leaves a note instead.
    std::vector<std::string> solvers{"ilp", "dp", "greedy", "random", "data-parallel", "megatron"};
    int microBatches = 0;        // > 0: also cut the layers into pipeline stages (batch / N per micro-batch)
    double ilpTimeLimitSeconds = 10.0;
};

struct AutoparResult {
    std::shared_ptr<const OpGraph> graph;  // the whole batch
    IntraOpProblem problem;                // reads *graph
    std::vector<IntraOpSolution> solutions; // in the request's order
    std::vector<std::string> notes;         // solvers skipped and why
    // Inter-op, when asked: the graph of one micro-batch, its stage costs and the best cut.
    std::shared_ptr<const OpGraph> microBatchGraph;
    std::optional<InterOpResult> interOp;
    double stageCostSeconds = 0.0;          // building the stage tables (DP runs per layer and shape)
    int stageSolves = 0;

    const IntraOpSolution* Best() const;    // the cheapest intra-op solution
    const IntraOpSolution* Find(const std::string& name) const;
};

// The graph the request names (a built-in one, or the file). Throws Error naming the option.
OpGraph BuildRequestGraph(const AutoparRequest& r, int64_t batch);

AutoparResult RunAutopar(const AutoparRequest& r);

} // namespace paralens::core
