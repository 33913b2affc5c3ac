// Inter-op parallelism over a stack of layers (Alpa's two levels, as the lectures sketch them):
// cut the layers into pipeline stages and the mesh into sub-meshes, each stage's layers
// parallelised intra-op on its sub-mesh at their optimum, minimising the pipeline's step time
//     T = sum_s t_s + (N - 1) max_s t_s        (GPipe / 1F1B, N micro-batches)
// where t_s is stage s's forward + backward time for one micro-batch. Sub-meshes are 1 x 2^k
// pieces of a row (any divisor of the row on a 1-D mesh) or whole rows, so they always tile.
// A stage's t comes from per-layer tables: for a layer and a sub-mesh shape, the intra-op
// optimum (the DP) for each layout its input arrives in and each its output leaves in; a range of
// layers chains them, exactly as the whole range solved at once would cost. A stage's input
// arrives in whatever layout without partial sums it wants (the send between stages is not
// priced here, as in Alpa; the pipeline simulation charges it).
#pragma once

#include "autopar/OpGraph.hpp"
#include "autopar/Sharding.hpp"
#include "sim/PipelineSimulator.hpp"

#include <optional>
#include <vector>

namespace paralens::core {

struct SubMesh {
    int rows = 1;
    int cols = 1;
    int Devices() const { return rows * cols; }
    bool operator==(const SubMesh&) const = default;
};

// The sub-mesh shapes a stage may take on `mesh`.
std::vector<SubMesh> SubMeshShapes(const DeviceMesh& mesh);

// One layer of a stack as a graph of its own: the activation it reads from the layer before is a
// LayerInput, the one the next layer reads its output. Throws Error when the layer reads or
// leaves more than one activation (then it is not a chain of layers).
struct LayerGraph {
    OpGraph graph;
    int input = -1;  // tensor id in `graph`
    int output = -1; // tensor id in `graph`
};
LayerGraph ExtractLayer(const OpGraph& stack, int layer);

// Stage costs of every layer range on every sub-mesh shape: t[shape][first][count].
class StageCosts {
public:
    // `microBatchGraph` is the stack for one micro-batch. Solves each distinct layer on each shape.
    // Throws Error when a layer is not joined to the next by one tensor.
    StageCosts(const OpGraph& microBatchGraph, const DeviceMesh& mesh);

    int Layers() const { return m_layers; }
    const std::vector<SubMesh>& Shapes() const { return m_shapes; }
    // Forward + backward seconds of layers [first, first + count) on shape `s`, one micro-batch.
    double Seconds(size_t s, int first, int count) const;
    double SolveSeconds() const { return m_solveSeconds; }
    int Solves() const { return m_solves; } // DP runs (one per distinct layer, input layout and shape)

private:
    int m_layers = 0;
    std::vector<SubMesh> m_shapes;
    std::vector<std::vector<double>> m_t; // per shape: [first * (layers + 1) + count]
    double m_solveSeconds = 0.0;
    int m_solves = 0;
};

struct PipelineStagePlan {
    int firstLayer = 0;
    int layers = 0;
    SubMesh shape;
    double seconds = 0.0; // t_s: forward + backward of one micro-batch
};

struct InterOpResult {
    std::vector<PipelineStagePlan> stages;
    int microBatches = 1;
    double stepSeconds = 0.0;     // T of the formula above
    double maxStageSeconds = 0.0;
    double solveSeconds = 0.0;    // the dynamic program (StageCosts excluded)
};

// Alpa's dynamic program: for each candidate bound on the slowest stage, the cheapest sum of
// stage times covering all layers with all devices; T minimised over the bounds.
InterOpResult SolveInterOp(const StageCosts& costs, int devices, int microBatches);
// Every cut into stages and every shape per stage: the test oracle (small cases only).
InterOpResult EnumerateInterOp(const StageCosts& costs, int devices, int microBatches);

// The stages as a 1F1B pipeline on the simulator: stage s a device whose forward takes t_s / 3
// and backward 2 t_s / 3; activations of `activationBytes` between stages cost the slow links
// when the mesh has several rows, the fast ones otherwise.
PipelineSimResult SimulateInterOp(const InterOpResult& r, const DeviceMesh& mesh, uint64_t activationBytes, double forwardFlopsPerLayer,
                                  bool buildTrace = true);

} // namespace paralens::core
