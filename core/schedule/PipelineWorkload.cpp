#include "schedule/PipelineWorkload.hpp"

#include "common/Error.hpp"
#include "schedule/ScheduleDeps.hpp"

namespace paralens::core {

PipeOpCost CostOf(const PipelineSpec& s, PipeOpKind kind, int stage)
{
    const double v = s.chunks, slow = s.Slowdown(stage);
    switch (kind) {
    case PipeOpKind::Forward: return {s.forwardSec / v * slow, s.forwardFlops / v};
    case PipeOpKind::Backward:
        if (s.SplitsWeightGrad()) return {(s.BackwardSec() - s.WeightSec()) / v * slow, s.forwardFlops / v};
        return {s.BackwardSec() / v * slow, 2.0 * s.forwardFlops / v};
    case PipeOpKind::WeightGrad: return {s.WeightSec() / v * slow, s.forwardFlops / v};
    }
    return {0, 0};
}

SpanCategory CategoryOf(PipeOpKind k)
{
    switch (k) {
    case PipeOpKind::Forward: return SpanCategory::Forward;
    case PipeOpKind::Backward: return SpanCategory::Backward;
    default: return SpanCategory::WeightGrad;
    }
}

PipelineWorkload BuildPipelineWorkload(const Schedule& s, bool freeComm)
{
    std::vector<std::pair<int, int>> order;
    const ScheduleCheck check = ValidateSchedule(s, &order);
    if (!check.ok) throw Error(std::string(Name(s.spec.kind)) + " schedule is invalid: " + check.message);
    const PipelineSpec& spec = s.spec;
    const int D = spec.stages, V = spec.VirtualStages();
    std::vector<std::string> names;
    for (int d = 0; d < D; ++d) names.push_back("stage " + std::to_string(d));
    PipelineWorkload out;
    out.workload = Workload(D, names);
    Workload& w = out.workload;
    w.Reserve(order.size() * 3, order.size() * 4);
    const uint16_t opName[] = {w.Name("F"), w.Name("B"), w.Name("W")};
    const uint16_t recomputeName = w.Name("recompute"), actName = w.Name("activation"), gradName = w.Name("gradient");
    OpTable taskOf(spec.TotalMicroBatches(), V);
    std::array<OpKey, 2> deps{};
    std::vector<TaskId> lastOfDevice(static_cast<size_t>(D), 0);
    for (const auto& [d, i] : order) {
        const PipeOp& op = s.stages[static_cast<size_t>(d)][static_cast<size_t>(i)];
        const OpKey key = KeyOf(op, d, D);
        const int batch = spec.kind == ScheduleKind::PipeDream ? op.microBatch / spec.microBatches : 0;
        TaskTags tags{opName[static_cast<int>(op.kind)], op.microBatch, op.chunk, batch};
        std::array<TaskId, 3> need{};
        size_t needCount = 0;
        const int n = DependenciesOf(key, V, deps);
        for (int j = 0; j < n; ++j) {
            const TaskId producer = static_cast<TaskId>(taskOf[deps[j]]);
            // The producer's device: F's comes from the previous virtual stage, B's from the next.
            const int from = deps[j].virtualStage == key.virtualStage ? d
                             : deps[j].kind == PipeOpKind::Forward   ? (d == 0 ? D - 1 : d - 1)
                                                                     : (d == D - 1 ? 0 : d + 1);
            if (from == d || freeComm) {
                need[needCount++] = producer;
                continue;
            }
            MessageTask m{from, d, spec.activationBytes,
                          TaskTags{op.kind == PipeOpKind::Forward ? actName : gradName, op.microBatch, op.chunk, batch}};
            need[needCount++] = w.Add(m, {producer});
        }
        if (op.kind == PipeOpKind::Backward && spec.recompute) {
            const PipeOpCost f = CostOf(spec, PipeOpKind::Forward, d);
            ComputeTask r{d, f.seconds, f.flops, true, SpanCategory::Forward, TaskTags{recomputeName, op.microBatch, op.chunk, batch}};
            // Recomputation is part of the backward: it waits for the gradient as B does (and for
            // its own forward, which B needs too), so it cannot fill the bubble before B is due.
            const TaskId rt = w.Add(r, std::span<const TaskId>(need.data(), needCount));
            out.pipelineTasks.push_back(rt);
            need[0] = rt;
            needCount = 1;
        }
        const PipeOpCost c = CostOf(spec, op.kind, d);
        ComputeTask t{d, c.seconds, c.flops, false, CategoryOf(op.kind), tags};
        const TaskId id = w.Add(t, std::span<const TaskId>(need.data(), needCount));
        taskOf[key] = id;
        out.pipelineTasks.push_back(id);
        lastOfDevice[static_cast<size_t>(d)] = id;
    }
    if (spec.optimizerSec > 0 && spec.kind != ScheduleKind::PipeDream) {
        const uint16_t optName = w.Name("optimizer");
        for (int d = 0; d < D; ++d) // after the flush: every stage's last op
            w.Add(ComputeTask{d, spec.optimizerSec * spec.Slowdown(d), 0.0, false, SpanCategory::Compute, TaskTags{optName}},
                  std::span<const TaskId>(lastOfDevice));
    }
    return out;
}

} // namespace paralens::core
