// paralens autopar: the lectures' auto-parallelization. Searches each op's sharding on a device
// mesh (ILP, dynamic programming, greedy, random search) against the manual baselines (data
// parallel, Megatron-LM), optionally cuts a layer stack into pipeline stages (inter-op), and
// writes the chosen strategy's simulated timeline.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "autopar/Autopar.hpp"
#include "autopar/StrategySim.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"
#include "trace/TraceFile.hpp"

#include <cstdio>
#include <memory>

namespace paralens::app {

namespace {

using Json = nlohmann::json;

struct AutoparOptions {
    core::AutoparRequest request;
    std::string mesh = "4";
    std::string solvers = "ilp,dp,greedy,random,data-parallel,megatron";
    core::MeshOptions links; // all but the shape, which --mesh gives
    std::string trace, traceSolver = "ilp", pipelineTrace;
    bool ops = false;
    bool json = false;
};

core::AutoparRequest ToRequest(const AutoparOptions& o)
{
    core::AutoparRequest r = o.request;
    core::MeshOptions m = o.links;
    const core::DeviceMesh shape = core::ParseMeshShape(o.mesh, "--mesh");
    m.rows = shape.rows;
    m.cols = shape.cols;
    r.mesh = core::BuildMesh(m);
    r.solvers = core::ParseSolverList(o.solvers);
    return r;
}

std::string_view PhaseName(core::CommPhase p) { return p == core::CommPhase::Forward ? "forward" : "backward"; }

std::string_view KindName(core::CommKind k)
{
    switch (k) {
    case core::CommKind::PartialSum: return "partial-sum";
    case core::CommKind::GradientSync: return "gradient-sync";
    case core::CommKind::Repartition: break;
    }
    return "re-partition";
}

Json SolutionJson(const core::AutoparResult& res, const core::IntraOpSolution& s)
{
    const core::IntraOpProblem& p = res.problem;
    const core::CostBreakdown b = core::Breakdown(p, s.choice);
    Json ops = Json::array();
    for (size_t i = 0; i < p.Ops(); ++i) {
        const core::GraphOp& op = res.graph->ops[i];
        const core::OpStrategy& st = p.strategies[i][static_cast<size_t>(s.choice[i])];
        ops.push_back({{"op", op.name}, {"kind", op.kind}, {"strategy", core::StrategyText(op, st, p.mesh)},
                       {"output", core::LayoutText(st.output, p.mesh)}});
    }
    Json comms = Json::array();
    for (const core::CommItem& c : p.Comms(s.choice))
        comms.push_back({{"op", res.graph->ops[static_cast<size_t>(c.op)].name},
                         {"tensor", res.graph->tensors[static_cast<size_t>(c.tensor)].name},
                         {"phase", PhaseName(c.phase)},
                         {"kind", KindName(c.kind)},
                         {"collective", core::Name(c.collective)},
                         {"algorithm", core::Name(c.algorithm)},
                         {"meshAxis", c.axis},
                         {"ranks", c.ranks},
                         {"bytes", c.bytes},
                         {"seconds", c.seconds}});
    return {{"name", s.name},
            {"costSeconds", s.costSeconds},
            {"solveSeconds", s.solveSeconds},
            {"optimal", s.optimal},
            {"note", s.note},
            {"breakdown",
             {{"computeSeconds", b.computeSeconds},
              {"partialSumSeconds", b.partialSumSeconds},
              {"repartitionSeconds", b.repartitionSeconds},
              {"gradientSyncSeconds", b.gradientSyncSeconds}}},
            {"ops", ops},
            {"collectives", comms}};
}

Json InterOpJson(const core::AutoparResult& res, double simulatedSeconds)
{
    const core::InterOpResult& r = *res.interOp;
    Json stages = Json::array();
    for (const core::PipelineStagePlan& s : r.stages)
        stages.push_back({{"firstLayer", s.firstLayer},
                          {"layers", s.layers},
                          {"subMesh", std::to_string(s.shape.rows) + "x" + std::to_string(s.shape.cols)},
                          {"secondsPerMicroBatch", s.seconds}});
    return {{"microBatches", r.microBatches}, {"stepSeconds", r.stepSeconds},         {"maxStageSeconds", r.maxStageSeconds},
            {"simulatedSeconds", simulatedSeconds}, {"solveSeconds", r.solveSeconds},   {"stageTableSeconds", res.stageCostSeconds},
            {"stageSolves", res.stageSolves}, {"stages", stages}};
}

void PrintTable(const core::AutoparResult& res, const AutoparOptions& o)
{
    const core::OpGraph& g = *res.graph;
    const core::IntraOpSolution* best = res.Best();
    std::printf("# graph %s: %zu ops, %.3g GFLOP forward, %s of weights; mesh %s (%d devices)\n", g.name.c_str(), g.ops.size(),
                g.ForwardFlops() * 1e-9, core::FormatBytes(g.WeightBytes()).c_str(), res.problem.mesh.Text().c_str(), res.problem.mesh.Devices());
    std::printf("# one training step (forward + backward) per strategy; communication priced by the cost model\n");
    std::printf("%-14s %12s %8s %12s %12s %12s %12s %10s\n", "strategy", "step", "vs best", "compute", "partial-sum", "re-partition",
                "grad-sync", "solve");
    for (const core::IntraOpSolution& s : res.solutions) {
        const core::CostBreakdown b = core::Breakdown(res.problem, s.choice);
        std::printf("%-14s %12s %7.2fx %12s %12s %12s %12s %8.1f ms%s\n", s.name.c_str(), core::FormatSeconds(s.costSeconds).c_str(),
                    s.costSeconds / best->costSeconds, core::FormatSeconds(b.computeSeconds).c_str(),
                    core::FormatSeconds(b.partialSumSeconds).c_str(), core::FormatSeconds(b.repartitionSeconds).c_str(),
                    core::FormatSeconds(b.gradientSyncSeconds).c_str(), s.solveSeconds * 1e3, s.optimal ? " (optimal)" : "");
    }
    for (const std::string& n : res.notes) std::printf("# %s\n", n.c_str());
    const size_t shown = o.ops ? g.ops.size() : std::min<size_t>(g.ops.size(), 16);
    std::printf("\n# %s's choice per op%s\n", best->name.c_str(), shown < g.ops.size() ? " (first 16; --ops lists all)" : "");
    for (size_t i = 0; i < shown; ++i) {
        const core::OpStrategy& st = res.problem.strategies[i][static_cast<size_t>(best->choice[i])];
        std::printf("  %-22s %-15s %-14s -> %s\n", g.ops[i].name.c_str(), g.ops[i].kind.c_str(),
                    core::StrategyText(g.ops[i], st, res.problem.mesh).c_str(), core::LayoutText(st.output, res.problem.mesh).c_str());
    }
    std::printf("# collectives added by %s:\n", best->name.c_str());
    size_t listed = 0;
    const std::vector<core::CommItem> comms = res.problem.Comms(best->choice);
    for (const core::CommItem& c : comms) {
        if (!o.ops && ++listed > 16) break;
        std::printf("  %-8s %-13s %-14s %-9s of %-18s %10s  %s\n", std::string(PhaseName(c.phase)).c_str(), std::string(KindName(c.kind)).c_str(),
                    std::string(core::Name(c.collective)).c_str(), c.axis == 0 ? "(rows)" : "(in row)",
                    res.graph->tensors[static_cast<size_t>(c.tensor)].name.c_str(), core::FormatBytes(c.bytes).c_str(),
                    core::FormatSeconds(c.seconds).c_str());
    }
    if (!o.ops && comms.size() > 16) std::printf("  ... %zu more (--ops lists all)\n", comms.size() - 16);
}

void PrintInterOp(const core::AutoparResult& res, double simulated)
{
    const core::InterOpResult& r = *res.interOp;
    std::printf("\n# inter-op + intra-op: %zu pipeline stages, %d micro-batches (stage tables: %d DP runs, %.0f ms; stage search %.1f ms)\n",
                r.stages.size(), r.microBatches, res.stageSolves, res.stageCostSeconds * 1e3, r.solveSeconds * 1e3);
    for (size_t s = 0; s < r.stages.size(); ++s) {
        const core::PipelineStagePlan& st = r.stages[s];
        std::printf("  stage %zu: layers %d-%d on a %dx%d sub-mesh, %s per micro-batch\n", s, st.firstLayer, st.firstLayer + st.layers - 1,
                    st.shape.rows, st.shape.cols, core::FormatSeconds(st.seconds).c_str());
    }
    std::printf("  step: %s by the formula sum t + (N-1) max t; %s simulated as 1F1B with the sends\n", core::FormatSeconds(r.stepSeconds).c_str(),
                core::FormatSeconds(simulated).c_str());
    if (const core::IntraOpSolution* best = res.Best())
        std::printf("  vs intra-op only (%s): %.2fx\n", best->name.c_str(), best->costSeconds / r.stepSeconds);
}

void Run(const AutoparOptions& o)
{
    const core::AutoparRequest req = ToRequest(o);
    if (!o.trace.empty()) CheckWritable("--trace", o.trace);
    if (!o.pipelineTrace.empty()) {
        Require(req.microBatches > 0, "--pipeline-trace needs --micro-batches (the inter-op search)");
        CheckWritable("--pipeline-trace", o.pipelineTrace);
    }
    const core::AutoparResult res = core::RunAutopar(req);
    double simulated = 0.0;
    if (res.interOp) {
        const core::OpGraph& mb = *res.microBatchGraph;
        const core::GraphTensor& act = mb.tensors[static_cast<size_t>(mb.outputs[0])];
        const core::PipelineSimResult sim =
            core::SimulateInterOp(*res.interOp, req.mesh, act.Bytes(), mb.ForwardFlops() / std::max(1, mb.layers), !o.pipelineTrace.empty());
        simulated = sim.pipelineSeconds;
        if (sim.trace) core::WriteTraceFile(*sim.trace, o.pipelineTrace);
    }
    if (!o.trace.empty()) {
        const core::IntraOpSolution* s = res.Find(o.traceSolver);
        Require(s != nullptr, "--trace-solver: '" + o.traceSolver + "' is not among the solvers run (--solvers)");
        core::WriteTraceFile(*core::SimulateStrategy(res.problem, s->choice, s->name, true).trace, o.trace);
    }
    if (o.json) {
        Json doc{{"graph", {{"name", res.graph->name}, {"ops", res.graph->ops.size()}, {"forwardFlops", res.graph->ForwardFlops()},
                            {"weightBytes", res.graph->WeightBytes()}}},
                 {"mesh", req.mesh.Text()},
                 {"devices", req.mesh.Devices()},
                 {"strategies", Json::array()},
                 {"notes", res.notes}};
        for (const core::IntraOpSolution& s : res.solutions) doc["strategies"].push_back(SolutionJson(res, s));
        if (res.interOp) doc["interOp"] = InterOpJson(res, simulated);
        PrintJson(doc);
        return;
    }
    PrintTable(res, o);
    if (res.interOp) PrintInterOp(res, simulated);
}

} // namespace

void AddAutoparCommand(CLI::App& root)
{
    auto o = std::make_shared<AutoparOptions>();
    CLI::App* cmd = root.add_subcommand("autopar", "Auto-parallelization: search each op's sharding on a device mesh (ILP, DP, greedy, "
                                                   "random) against data parallelism and Megatron-LM; optionally pipeline stages too");
    cmd->add_option("--graph", o->request.graph, "mlp (the lectures' Y = X W1 W2), transformer, convnet, or a graph .json file")
        ->capture_default_str();
    cmd->add_option("--layers", o->request.layers, "Transformer layers")->capture_default_str()->check(CLI::Range(1, 512));
    cmd->add_option("--mesh", o->mesh, "Devices: P (1-D) or RxC (R rows of C; fast links inside a row, slow between rows)")->capture_default_str();
    cmd->add_option("--batch", o->request.dims.batch, "Sequences (images for convnet) per step")->capture_default_str()->check(PositiveOption());
    cmd->add_option("--seq", o->request.dims.seq, "Sequence length")->capture_default_str()->check(PositiveOption());
    cmd->add_option("--hidden", o->request.dims.hidden, "Hidden size")->capture_default_str()->check(PositiveOption());
    cmd->add_option("--heads", o->request.dims.heads, "Attention heads")->capture_default_str()->check(PositiveOption());
    cmd->add_option("--ffn", o->request.dims.ffn, "MLP inner size")->capture_default_str()->check(PositiveOption());
    cmd->add_option("--fast-alpha-us", o->links.fastAlphaUs, "Latency inside a row, microseconds")->capture_default_str();
    cmd->add_option("--fast-GBps", o->links.fastGBps, "Bandwidth inside a row, GB/s")->capture_default_str();
    cmd->add_option("--slow-alpha-us", o->links.slowAlphaUs, "Latency between rows, microseconds")->capture_default_str();
    cmd->add_option("--slow-GBps", o->links.slowGBps, "Bandwidth between rows, GB/s")->capture_default_str();
    cmd->add_option("--gpu", o->links.gpu, "GPU of the spec table whose peak sets compute times")->capture_default_str();
    cmd->add_option("--dtype", o->links.dtype, "Data type of that peak")->capture_default_str();
    cmd->add_option("--efficiency", o->links.efficiency, "Fraction of peak ops reach")->capture_default_str();
    cmd->add_option("--solvers", o->solvers, "Comma-separated: " + core::SolverNamesList())->capture_default_str();
    cmd->add_option("--micro-batches", o->request.microBatches, "Also search pipeline stages (inter-op) with N micro-batches of batch/N")
        ->check(CLI::Range(1, 4096));
    cmd->add_option("--time-limit", o->request.ilpTimeLimitSeconds, "ILP time limit, seconds")->capture_default_str()->check(PositiveOption());
    cmd->add_flag("--ops", o->ops, "List every op and collective (the table shows the first 16)");
    cmd->add_option("--trace", o->trace, "Write the simulated timeline of one strategy (.json or .json.gz)");
    cmd->add_option("--trace-solver", o->traceSolver, "Which strategy --trace writes")->capture_default_str();
    cmd->add_option("--pipeline-trace", o->pipelineTrace, "Write the inter-op pipeline's simulated 1F1B timeline");
    cmd->add_flag("--json", o->json, "Machine-readable output: one object per strategy compared");
    cmd->callback([o] { Run(*o); });
}

} // namespace paralens::app
