#include "AutoparRuns.hpp"

#include "TrainingRuns.hpp"

#include "autopar/StrategySim.hpp"
#include "common/Error.hpp"
#include "model/Hardware.hpp"

namespace paralens::app {

core::AutoparRequest AutoparParams::ToRequest() const
{
    core::AutoparRequest r;
    r.graph = graph;
    r.layers = layers;
    r.dims = core::TransformerDims{batch, seq, hidden, heads, ffn, 2};
    r.mesh = core::BuildMesh(mesh);
    r.solvers = core::ParseSolverList(solvers);
    r.microBatches = microBatches;
    return r;
}

std::string AutoparTitle(const AutoparParams& a)
{
    std::string g = a.graph == "transformer" && a.layers > 1 ? "transformer x " + std::to_string(a.layers) : a.graph;
    std::string s = "autopar: " + g + " on " + std::to_string(a.mesh.rows) + "x" + std::to_string(a.mesh.cols) + ", " + a.show + " shown";
    if (a.microBatches > 0) s += ", pipeline of " + std::to_string(a.microBatches) + " micro-batches searched";
    return s;
}

std::shared_ptr<RunResult> BuildAutopar(const Experiment& e)
{
    const AutoparParams& a = e.autopar;
    const core::AutoparRequest req = a.ToRequest();
    auto result = std::make_shared<const core::AutoparResult>(core::RunAutopar(req));
    const core::IntraOpSolution* shown = result->Find(a.show);
    if (!shown) shown = result->Best();
    core::WorkloadResult sim = core::SimulateStrategy(result->problem, shown->choice, shown->name, true);
    auto r = std::make_shared<RunResult>();
    r->trace = std::make_shared<const core::Trace>(std::move(*sim.trace));
    r->windowBeginNs = r->trace->BeginNs();
    r->windowEndNs = r->trace->EndNs();
    FillUsage(*r);
    r->simulatedSeconds = sim.seconds;
    r->predictedSeconds = shown->costSeconds;
    r->predictionExact = true;
    FillMfu(*r, req.mesh.peakFlops, core::FindGpu(a.mesh.gpu)->name + ", " + a.mesh.dtype + " dense peak: spec table (assets/hardware.json)");
    r->autoparShown = static_cast<int>(shown - result->solutions.data());
    if (result->interOp) {
        const core::OpGraph& mb = *result->microBatchGraph;
        const core::GraphTensor& act = mb.tensors[static_cast<size_t>(mb.outputs[0])];
        r->interOpSimulatedSeconds =
            core::SimulateInterOp(*result->interOp, req.mesh, act.Bytes(), mb.ForwardFlops() / std::max(1, mb.layers), false).pipelineSeconds;
    }
    r->autopar = std::move(result);
    return r;
}

} // namespace paralens::app
