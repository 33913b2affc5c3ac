#include "planner/PlannerTrace.hpp"

#include "planner/PlannerInternal.hpp"
#include "sim/WorkloadSimulator.hpp"

#include <algorithm>

namespace paralens::core {

namespace {

struct OpParts {
    double compute = 0, comm = 0, flops = 0;
    SpanCategory category = SpanCategory::Forward;
    bool recompute = false;
};

OpParts PartsOf(const OpCosts& o, PipeOpKind kind, bool split, bool fullRecompute, double share)
{
    OpParts p;
    switch (kind) {
    case PipeOpKind::Forward:
        p = {o.computeF, o.tpF + o.cpF + o.epF + o.gatherF, o.flopsF, SpanCategory::Forward, false};
        break;
    case PipeOpKind::Backward:
        p = {split ? o.computeB - o.times.weight : o.computeB, o.tpB + o.cpB + o.epB + o.gatherB, (split ? 1.0 : 2.0) * o.flopsF,
             SpanCategory::Backward, fullRecompute};
        break;
    case PipeOpKind::WeightGrad: p = {o.times.weight, 0.0, o.flopsF, SpanCategory::WeightGrad, false}; break;
    }
    p.compute *= share;
    p.comm *= share;
    p.flops *= share;
    return p;
}

Workload StepWorkload(const TrainingConfig& c, const OpCosts& o, const PipelineStructure* pipe, const std::vector<double>& shares,
                      const StepBreakdown& t, int microBatches)
{
    const int tp = c.tp, D = c.pp;
    std::vector<std::string> names;
    for (int s = 0; s < D; ++s)
        for (int j = 0; j < tp; ++j) names.push_back("stage " + std::to_string(s) + " / tp " + std::to_string(j));
    Workload w(D * tp, names);
    const uint16_t opName[3] = {w.Name("F"), w.Name("B"), w.Name("W")};
    std::string comm = "tp";
    if (c.cp > 1) comm += " + cp ring";
    if (c.ep > 1) comm += " + ep";
    comm += " comm";
    if (c.zero == 3) comm += " + zero-3 gather";
    const uint16_t commName = w.Name(comm);
    const uint16_t actName = w.Name("activation"), gradName = w.Name("gradient");
    const bool split = c.schedule == ScheduleKind::ZeroBubbleH1, full = c.recompute == Recompute::Full;
    const double v = c.pp > 1 ? c.chunks : 1;
    // pp = 1: N micro-batches of F then B (gradient accumulation).
    std::vector<PipeOpKind> kinds;
    std::vector<int32_t> mbs, chunks;
    if (!pipe)
        for (int m = 0; m < microBatches; ++m) {
            kinds.insert(kinds.end(), {PipeOpKind::Forward, PipeOpKind::Backward});
            mbs.insert(mbs.end(), {m, m});
            chunks.insert(chunks.end(), {0, 0});
        }
    const size_t ops = pipe ? pipe->ops.size() : kinds.size();
    w.Reserve(ops * static_cast<size_t>(tp) * 3, ops * static_cast<size_t>(tp) * 4);
    std::vector<TaskId> last(ops * static_cast<size_t>(tp));
    std::vector<TaskId> lastOfDevice(static_cast<size_t>(D * tp));
    std::vector<bool> any(static_cast<size_t>(D * tp), false);
    for (size_t i = 0; i < ops; ++i) {
        const PipeOpKind kind = pipe ? static_cast<PipeOpKind>(pipe->ops[i].kind) : kinds[i];
        const int stage = pipe ? pipe->ops[i].device : 0;
        const int32_t mb = pipe ? pipe->microBatch[i] : mbs[i], chunk = pipe ? pipe->chunk[i] : chunks[i];
        const OpParts p = PartsOf(o, kind, split, full, shares.empty() ? 1.0 / v : shares[static_cast<size_t>(stage * c.chunks + chunk)]);
        for (int j = 0; j < tp; ++j) {
            const int dev = stage * tp + j;
            std::vector<TaskId> need;
            if (pipe)
                for (int k = 0; k < 2; ++k) {
                    const int32_t dep = pipe->ops[i].Dep(k);
                    if (dep < 0) continue;
                    const TaskId producer = last[static_cast<size_t>(dep) * static_cast<size_t>(tp) + static_cast<size_t>(j)];
                    if (!pipe->ops[i].Cross(k)) {
                        need.push_back(producer);
                        continue;
                    }
                    const int from = pipe->ops[static_cast<size_t>(dep)].device * tp + j;
                    MessageTask msg{from, dev, static_cast<uint64_t>(o.sendBytes),
                                    TaskTags{kind == PipeOpKind::Forward ? actName : gradName, mb, chunk, kNone}};
                    need.push_back(w.Add(msg, {producer}));
                }
            TaskId id = w.Add(ComputeTask{dev, p.compute, p.flops, p.recompute, p.category, TaskTags{opName[static_cast<int>(kind)], mb, chunk, kNone}},
                              std::span<const TaskId>(need));
            if (p.comm > 0)
                id = w.Add(ComputeTask{dev, p.comm, 0.0, false, SpanCategory::Collective, TaskTags{commName, mb, chunk, kNone}}, {id});
            last[i * static_cast<size_t>(tp) + static_cast<size_t>(j)] = id;
            lastOfDevice[static_cast<size_t>(dev)] = id;
            any[static_cast<size_t>(dev)] = true;
        }
    }
    const double dpExposed = t.dpExposedSec;
    const uint16_t dpName = w.Name("dp gradient sync (not hidden)"), optName = w.Name("optimizer");
    for (int dev = 0; dev < D * tp; ++dev) {
        if (!any[static_cast<size_t>(dev)]) continue;
        TaskId id = lastOfDevice[static_cast<size_t>(dev)];
        if (dpExposed > 0) id = w.Add(ComputeTask{dev, dpExposed, 0.0, false, SpanCategory::Collective, TaskTags{dpName}}, {id});
        if (t.optimizer > 0) w.Add(ComputeTask{dev, t.optimizer, 0.0, false, SpanCategory::Compute, TaskTags{optName}}, {id});
    }
    return w;
}

void Describe(Metadata& m, const PlanRequest& r, const TrainingConfig& c, const PlanRow& row)
{
    m.source = TraceSource::Simulated;
    m.title = "plan: " + r.model.id + " on " + std::to_string(r.cluster.gpus) + " x " + r.cluster.gpu.id + ", " + ConfigText(c);
    m.workload.Set("kind", std::string("plan"));
    m.workload.Set("model", r.model.id);
    m.workload.Set("config", ConfigText(c));
    m.workload.Set("schedule", std::string(Name(c.schedule)));
    m.workload.Set("stages", int64_t{c.pp});
    m.workload.Set("microbatches", int64_t{row.microBatches});
    m.workload.Set("chunks", int64_t{c.chunks});
    m.workload.Set("globalBatch", int64_t{r.globalBatch});
    m.workload.Set("seq", int64_t{r.Seq()});
    m.hardware.Set("gpu", r.cluster.gpu.id);
    m.hardware.Set("gpus", int64_t{r.cluster.gpus});
    m.model.Set("efficiency", r.cluster.EfficiencyFor(r.cluster.dtype));
    m.model.Set("nvlinkGBps", r.cluster.NvlinkGBps());
    m.model.Set("networkGBps", r.cluster.networkGBps);
    m.results.Set("predictedSeconds", row.time.step);
    m.results.Set("mfu", row.mfu);
    m.results.Set("memoryBytesPerGpu", row.memory.Total());
}

} // namespace

PlanStepSimulation SimulatePlanStep(const PlanRequest& r, const TrainingConfig& c, bool buildTrace)
{
    const PlanRow row = Evaluate(r, c);
    const Shape s = ShapeOf(r, c);
    const OpCosts o = OpCostsOf(r, c, s);
    std::shared_ptr<const PipelineStructure> pipe;
    if (c.pp > 1) pipe = PipelineStructureOf(PipelineShapeOf(r, c));
    const Workload w = StepWorkload(c, o, pipe.get(), OpShares(r, c), row.time, row.microBatches);
    ClusterModel links;
    links.alphaSec = o.sendLink.alphaSec;
    links.betaSecPerByte = o.sendLink.betaSecPerByte;
    WorkloadOptions options;
    options.buildTrace = buildTrace;
    Describe(options.meta, r, c, row);
    options.finishMeta = [](Metadata& meta, const WorkloadResult& res) { meta.results.Set("simulatedSeconds", res.seconds); };
    WorkloadResult res = SimulateWorkload(w, links, options);
    PlanStepSimulation out;
    out.seconds = res.seconds;
    out.predictedSeconds = row.time.step;
    out.trace = std::move(res.trace);
    return out;
}

} // namespace paralens::core
