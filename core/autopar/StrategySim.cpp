#include "autopar/StrategySim.hpp"

#include "common/Units.hpp"

namespace paralens::core {

ClusterModel MeshCluster(const DeviceMesh& mesh)
{
    ClusterModel c;
    c.alphaSec = mesh.fast.alphaSec;
    c.betaSecPerByte = mesh.fast.betaSecPerByte;
    c.gammaSecPerByte = mesh.fast.gammaSecPerByte;
    for (int a = 0; a < mesh.Devices(); ++a)
        for (int b = 0; b < mesh.Devices(); ++b)
            if (a / mesh.cols != b / mesh.cols) c.links.push_back({a, b, mesh.slow.alphaSec, mesh.slow.betaSecPerByte});
    return c;
}

std::vector<std::vector<int>> MeshGroups(const DeviceMesh& mesh, int axis)
{
    std::vector<std::vector<int>> groups;
    if (axis == 1) {
        for (int r = 0; r < mesh.rows; ++r) {
            groups.emplace_back();
            for (int c = 0; c < mesh.cols; ++c) groups.back().push_back(r * mesh.cols + c);
        }
    } else {
        for (int c = 0; c < mesh.cols; ++c) {
            groups.emplace_back();
            for (int r = 0; r < mesh.rows; ++r) groups.back().push_back(r * mesh.cols + c);
        }
    }
    return groups;
}

namespace {

std::string_view KindText(CommKind k)
{
    switch (k) {
    case CommKind::PartialSum: return "partial sum";
    case CommKind::GradientSync: return "gradient";
    case CommKind::Repartition: break;
    }
    return "re-partition";
}

std::vector<std::string> DeviceNames(const DeviceMesh& mesh)
{
    std::vector<std::string> names;
    for (int d = 0; d < mesh.Devices(); ++d)
        names.push_back(mesh.rows == 1 ? "device " + std::to_string(d)
                                       : "device " + std::to_string(d) + " (row " + std::to_string(d / mesh.cols) + ")");
    return names;
}

} // namespace

Workload StrategyWorkload(const IntraOpProblem& p, const std::vector<int>& choice)
{
    const DeviceMesh& mesh = p.mesh;
    Workload w(mesh.Devices(), DeviceNames(mesh));
    std::vector<TaskId> last(static_cast<size_t>(mesh.Devices()));
    std::vector<bool> started(last.size(), false);
    auto depsOf = [&](const std::vector<int>& devices) {
        std::vector<TaskId> deps;
        for (int d : devices)
            if (started[static_cast<size_t>(d)]) deps.push_back(last[static_cast<size_t>(d)]);
        return deps;
    };
    auto record = [&](const std::vector<int>& devices, TaskId id) {
        for (int d : devices) {
            last[static_cast<size_t>(d)] = id;
            started[static_cast<size_t>(d)] = true;
        }
    };
    for (const ExecStep& s : p.Steps(choice)) {
        const GraphOp& op = p.graph->ops[static_cast<size_t>(s.op)];
        const bool fwd = s.phase == CommPhase::Forward;
        if (s.compute) {
            const OpStrategy& st = p.strategies[static_cast<size_t>(s.op)][static_cast<size_t>(choice[static_cast<size_t>(s.op)])];
            double split = 1.0;
            for (int a = 0; a < 2; ++a)
                if (st.loop[a] >= 0) split *= mesh.AxisSize(a);
            ComputeTask t;
            t.seconds = s.seconds;
            t.flops = op.ForwardFlops() / split * (fwd ? 1.0 : 2.0);
            t.category = fwd ? SpanCategory::Forward : SpanCategory::Backward;
            t.tags.name = w.Name(op.name);
            for (int d = 0; d < mesh.Devices(); ++d) {
                t.device = d;
                const TaskId id = w.Add(t, depsOf({d}));
                record({d}, id);
            }
            continue;
        }
        const CommItem& c = s.comm;
        const std::string name = std::string(Name(c.collective)) + " " + p.graph->tensors[static_cast<size_t>(c.tensor)].name +
                                 (fwd ? "" : " grad") + " (" + std::string(KindText(c.kind)) + ")";
        for (const std::vector<int>& group : MeshGroups(mesh, c.axis)) {
            CollectiveTask t;
            t.spec = CollectiveSpec{c.collective, c.algorithm, c.ranks, c.bytes, 0, 1};
            t.devices = group;
            t.tags.name = w.Name(name);
            const TaskId id = w.Add(t, depsOf(group));
            record(group, id);
        }
    }
    return w;
}

WorkloadResult SimulateStrategy(const IntraOpProblem& p, const std::vector<int>& choice, const std::string& solver, bool buildTrace)
{
    WorkloadOptions o;
    o.buildTrace = buildTrace;
    o.meta.title = "auto-parallelization: " + p.graph->name + " on a " + p.mesh.Text() + " mesh, " + solver;
    o.meta.workload.Set("kind", std::string("autopar"));
    o.meta.workload.Set("graph", p.graph->name);
    o.meta.workload.Set("mesh", p.mesh.Text());
    o.meta.workload.Set("solver", solver);
    o.meta.model.Set("fastAlphaUs", p.mesh.fast.alphaSec * 1e6);
    o.meta.model.Set("fastBandwidthGBps", 1e-9 / p.mesh.fast.betaSecPerByte);
    o.meta.model.Set("slowAlphaUs", p.mesh.slow.alphaSec * 1e6);
    o.meta.model.Set("slowBandwidthGBps", 1e-9 / p.mesh.slow.betaSecPerByte);
    o.meta.results.Set("predictedSeconds", p.Cost(choice));
    o.finishMeta = [](Metadata& m, const WorkloadResult& r) { m.results.Set("simulatedSeconds", r.seconds); };
    return SimulateWorkload(StrategyWorkload(p, choice), MeshCluster(p.mesh), o);
}

} // namespace paralens::core
