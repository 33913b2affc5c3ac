#include "AutoparRuns.hpp"

#include "RunBuilder.hpp"
#include "TrainingRuns.hpp"

#include "autopar/StrategySim.hpp"
#include "common/Error.hpp"
#include "model/Hardware.hpp"

#include <algorithm>

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

namespace {

// The flow view's collective: the shown strategy's largest (a partial sum's allreduce, a gradient
// sync, a re-partition), on the links its group uses (fast inside a row, slow across rows).
void AttachStrategyCollective(RunResult& r, const core::AutoparResult& result, const core::IntraOpSolution& shown, const core::MeshOptions& mesh)
{
    const core::Workload w = core::StrategyWorkload(result.problem, shown.choice);
    const core::CollectiveTask* largest = nullptr;
    for (core::TaskId t = 0; t < w.TaskCount(); ++t)
        if (w.KindOf(t) == core::TaskKind::Collective && (!largest || w.CollectiveOf(t).spec.bytes > largest->spec.bytes))
            largest = &w.CollectiveOf(t);
    if (!largest || largest->spec.ranks < 2) return;
    const int cols = std::max(1, mesh.cols);
    const bool acrossRows = std::any_of(largest->devices.begin(), largest->devices.end(),
                                        [&](int d) { return d / cols != largest->devices.front() / cols; });
    ClusterParams link;
    link.alphaUs = acrossRows ? mesh.slowAlphaUs : mesh.fastAlphaUs;
    link.bandwidthGBps = acrossRows ? mesh.slowGBps : mesh.fastGBps;
    AttachPlan(r, largest->spec, link);
}

} // namespace

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
    AttachStrategyCollective(*r, *result, *shown, a.mesh);
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
