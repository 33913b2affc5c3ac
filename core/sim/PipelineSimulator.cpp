#include "sim/PipelineSimulator.hpp"

#include "schedule/PipelineWorkload.hpp"
#include "schedule/ScheduleDeps.hpp"
#include "sim/WorkloadSimulator.hpp"
#include "trace/TraceBuilder.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <memory>
#include <span>

namespace paralens::core {

ClusterModel FreeLinks()
{
    ClusterModel m;
    m.alphaSec = 0.0;
    m.betaSecPerByte = 0.0;
    m.gammaSecPerByte = 0.0;
    return m;
}

namespace {

Metadata PipelineMeta(const PipelineSpec& s, const ClusterModel& link)
{
    Metadata m;
    m.source = TraceSource::Simulated;
    m.title = std::string(Name(s.kind)) + " pipeline, " + std::to_string(s.stages) + " stages, " +
              std::to_string(s.microBatches) + " micro-batches";
    m.workload.Set("kind", std::string("pipeline"));
    m.workload.Set("schedule", std::string(Name(s.kind)));
    m.workload.Set("stages", int64_t{s.stages});
    m.workload.Set("microbatches", int64_t{s.microBatches});
    m.workload.Set("chunks", int64_t{s.chunks});
    if (s.kind == ScheduleKind::PipeDream) m.workload.Set("batches", int64_t{s.batches});
    m.workload.Set("forwardMs", s.forwardSec * 1e3);
    m.workload.Set("backwardMs", s.BackwardSec() * 1e3);
    if (s.SplitsWeightGrad()) m.workload.Set("weightMs", s.WeightSec() * 1e3);
    if (!s.stageSlowdown.empty()) m.workload.Set("stageSlowdown", StageSlowdownText(s.stageSlowdown)); // read back exactly
    m.workload.Set("activationBytes", static_cast<int64_t>(s.activationBytes));
    m.workload.Set("recompute", s.recompute);
    if (s.forwardFlops > 0) m.workload.Set("forwardFlops", s.forwardFlops);
    m.model.Set("alphaUs", link.alphaSec * 1e6);
    m.model.Set("bandwidthGBps", link.BandwidthGBps());
    return m;
}

void FinishPipelineMeta(Metadata& meta, const PipelineSpec& s, double makespan, double window)
{
    meta.results.Set("makespanSeconds", makespan);
    meta.results.Set("pipelineSeconds", window);
    if (BubbleFractionFormula(s) >= 0) meta.results.Set("bubbleFractionFormula", BubbleFractionFormula(s));
}

int64_t Ns(double seconds) { return static_cast<int64_t>(seconds * 1e9 + 0.5); }

// The direct path's recorded dependencies, kept as each task's span and producers and listed
// when first asked for (as the workload simulator lists them: task by task, producer by producer).
class TaskDependencies : public DependencySource {
public:
    std::vector<SpanRef> spanOf; // per task
    std::vector<uint32_t> depBegin{0}, deps;

    std::vector<Dependency> Derive() const override
    {
        std::vector<Dependency> out;
        out.reserve(deps.size());
        for (size_t t = 0; t + 1 < depBegin.size(); ++t)
            for (uint32_t k = depBegin[t]; k < depBegin[t + 1]; ++k) out.push_back({spanOf[deps[k]], spanOf[t]});
        return out;
    }
};

// A schedule whose communication is free, simulated straight from its ops: the same tasks, times
// and Trace as its PipelineWorkload through SimulateWorkload (tested), without building the
// general task graph. Each op starts when its stage is free and its producers have ended.
class DirectPipeline {
public:
    DirectPipeline(const Schedule& s, bool buildTrace)
        : m_s(s), m_spec(s.spec), m_trace(buildTrace), m_taskOf(s.spec.TotalMicroBatches(), s.spec.VirtualStages(), 0),
          m_cost(static_cast<size_t>(s.spec.stages)), m_lastOfDevice(static_cast<size_t>(s.spec.stages), 0),
          m_stageFree(static_cast<size_t>(s.spec.stages), 0.0)
    {
        const int D = m_spec.stages;
        for (int d = 0; d < D; ++d)
            for (PipeOpKind k : {PipeOpKind::Forward, PipeOpKind::Backward, PipeOpKind::WeightGrad})
                m_cost[static_cast<size_t>(d)][static_cast<size_t>(k)] = CostOf(m_spec, k, d);
        size_t ops = 0;
        for (const auto& st : s.stages) ops += st.size();
        const size_t tasks = ops * (m_spec.recompute ? 2 : 1) + static_cast<size_t>(D);
        m_done.reserve(tasks);
        if (!m_trace) return;
        for (int d = 0; d < D; ++d) {
            const uint32_t dev = m_b.AddDevice("stage " + std::to_string(d), DeviceKind::Modelled, d);
            m_track.push_back(m_b.AddTrack(dev, "compute"));
            m_b.ReserveSpans(m_track.back(), s.stages[static_cast<size_t>(d)].size() * (m_spec.recompute ? 2 : 1) + 1);
        }
        m_b.ReserveFlows(ops * 2);
        m_deps = std::make_shared<TaskDependencies>();
        m_deps->spanOf.reserve(tasks);
        m_deps->depBegin.reserve(tasks + 1);
        m_deps->deps.reserve(ops * 2);
        m_opName = {m_b.Intern("F"), m_b.Intern("B"), m_b.Intern("W")};
        m_recomputeName = m_b.Intern("recompute");
        m_optimizerName = m_b.Intern("optimizer");
    }

    void Step(int device, int index);
    PipelineSimResult Finish(const ClusterModel& link);

private:
    struct Task {
        int device;
        double seconds, flops;
        bool recompute;
        SpanCategory category;
        StringId name;
        int32_t microBatch, chunk, step;
    };
    // `local`: bit j set when deps[j] ran on t's own stage (known from the op's keys).
    uint32_t Add(const Task& t, std::span<const uint32_t> deps, uint32_t local = 0);
    static bool IsLocal(uint32_t local, size_t j) { return j < 32 && ((local >> j) & 1) != 0; }

    const Schedule& m_s;
    const PipelineSpec& m_spec;
    bool m_trace;
    OpTableOf<uint32_t> m_taskOf;                  // each op's task, once timed
    std::vector<std::array<PipeOpCost, 3>> m_cost; // per stage, per op kind
    std::vector<uint32_t> m_lastOfDevice;
    double m_window = 0.0;
    std::vector<double> m_stageFree;
    struct Done { // a task timed: what the ops waiting on it read, side by side (one cache line)
        double end;
        int32_t device;
        StringId name;
    };
    std::vector<Done> m_done; // per task
    TraceBuilder m_b;
    std::vector<uint32_t> m_track;
    std::shared_ptr<TaskDependencies> m_deps;
    std::array<StringId, 3> m_opName{};
    StringId m_recomputeName = 0, m_optimizerName = 0;
};

uint32_t DirectPipeline::Add(const Task& t, std::span<const uint32_t> deps, uint32_t local)
{
    const auto d = static_cast<size_t>(t.device);
    double start = m_stageFree[d];
    // A producer on this stage ran before it, so it ended by the time the stage is free: only the
    // others' ends are read (a backward's forward ran long ago, its record out of the cache).
    for (size_t j = 0; j < deps.size(); ++j)
        if (!IsLocal(local, j)) start = std::max(start, m_done[deps[j]].end);
    const double end = start + t.seconds;
    const auto id = static_cast<uint32_t>(m_done.size());
    m_done.push_back({end, t.device, t.name});
    m_stageFree[d] = end;
    if (!m_trace) return id;
    Span s;
    s.startNs = Ns(start);
    s.endNs = std::max(Ns(end), s.startNs);
    s.name = t.name;
    s.microBatch = t.microBatch;
    s.chunk = t.chunk;
    s.step = t.step;
    s.category = t.category;
    s.flops = t.flops;
    s.predictedNs = Ns(t.seconds);
    if (t.recompute) s.detail = m_recomputeName;
    m_b.AddSpan(m_track[d], s);
    for (size_t j = 0; j < deps.size(); ++j) {
        if (IsLocal(local, j)) continue;
        const uint32_t p = deps[j];
        const auto from = static_cast<size_t>(m_done[p].device);
        if (from == d) continue;
        Flow f; // a producer on another stage: drawn as an arrow
        f.srcDevice = static_cast<uint32_t>(from);
        f.dstDevice = static_cast<uint32_t>(d);
        f.srcTrack = m_track[from];
        f.dstTrack = m_track[d];
        f.srcNs = Ns(m_done[p].end);
        f.dstNs = Ns(start);
        f.step = t.step;
        f.chunk = t.microBatch;
        f.name = m_done[p].name;
        m_b.AddFlow(f);
    }
    m_deps->spanOf.push_back({m_track[d], s.startNs, s.endNs});
    m_deps->deps.insert(m_deps->deps.end(), deps.begin(), deps.end());
    m_deps->depBegin.push_back(static_cast<uint32_t>(m_deps->deps.size()));
    return id;
}

// Times op `i` of stage `d`, which can run now (ValidateSchedule hands the ops so).
void DirectPipeline::Step(int d, int i)
{
    const int D = m_spec.stages;
    const PipeOp& op = m_s.stages[static_cast<size_t>(d)][static_cast<size_t>(i)];
    const OpKey key = KeyOf(op, d, D);
    const int batch = m_spec.kind == ScheduleKind::PipeDream ? op.microBatch / m_spec.microBatches : 0;
    std::array<OpKey, 2> keys{};
    std::array<uint32_t, 2> need{};
    size_t needCount = 0;
    uint32_t local = 0;
    const int n = DependenciesOf(key, m_spec.VirtualStages(), keys);
    for (int j = 0; j < n; ++j) {
        if (DeviceOf(keys[static_cast<size_t>(j)].virtualStage, D) == d) local |= 1u << needCount;
        need[needCount++] = m_taskOf[keys[static_cast<size_t>(j)]];
    }
    const auto& cost = m_cost[static_cast<size_t>(d)];
    if (op.kind == PipeOpKind::Backward && m_spec.recompute) { // as BuildPipelineWorkload: F again, then B
        const PipeOpCost& f = cost[static_cast<size_t>(PipeOpKind::Forward)];
        const uint32_t rt = Add({d, f.seconds, f.flops, true, SpanCategory::Forward, m_recomputeName, op.microBatch, op.chunk, batch},
                                std::span<const uint32_t>(need.data(), needCount), local);
        m_window = std::max(m_window, m_done[rt].end);
        need[0] = rt;
        needCount = 1;
        local = 1;
    }
    const PipeOpCost& c = cost[static_cast<size_t>(op.kind)];
    const uint32_t id = Add({d, c.seconds, c.flops, false, CategoryOf(op.kind), m_opName[static_cast<size_t>(op.kind)], op.microBatch,
                             op.chunk, batch},
                            std::span<const uint32_t>(need.data(), needCount), local);
    m_taskOf[key] = id;
    m_window = std::max(m_window, m_done[id].end);
    m_lastOfDevice[static_cast<size_t>(d)] = id;
}

PipelineSimResult DirectPipeline::Finish(const ClusterModel& link)
{
    if (m_spec.optimizerSec > 0 && m_spec.kind != ScheduleKind::PipeDream)
        for (int d = 0; d < m_spec.stages; ++d) // after the flush: every stage's last op
            Add({d, m_spec.optimizerSec * m_spec.Slowdown(d), 0.0, false, SpanCategory::Compute, m_optimizerName, kNone, kNone, kNone},
                m_lastOfDevice);
    PipelineSimResult out;
    for (double e : m_stageFree) out.seconds = std::max(out.seconds, e);
    out.pipelineSeconds = m_window;
    if (m_trace) {
        m_b.Meta() = PipelineMeta(m_spec, link);
        FinishPipelineMeta(m_b.Meta(), m_spec, out.seconds, m_window);
        m_b.SetDependencySource(std::move(m_deps));
        out.trace = std::move(m_b).Finish();
    }
    return out;
}

} // namespace

PipelineSimResult SimulatePipelineAsWorkload(const Schedule& schedule, const ClusterModel& link, bool buildTrace)
{
    const PipelineSpec& s = schedule.spec;
    const bool free = link.alphaSec == 0 && (s.activationBytes == 0 || link.betaSecPerByte == 0) && link.links.empty();
    PipelineWorkload pw = BuildPipelineWorkload(schedule, free);
    WorkloadOptions options;
    options.buildTrace = buildTrace;
    options.meta = PipelineMeta(s, link);
    options.finishMeta = [&](Metadata& meta, const WorkloadResult& r) {
        double window = 0.0;
        for (TaskId t : pw.pipelineTasks) window = std::max(window, r.tasks[t].end);
        FinishPipelineMeta(meta, s, r.seconds, window);
    };
    WorkloadResult r = SimulateWorkload(pw.workload, link, options);
    PipelineSimResult out;
    out.seconds = r.seconds;
    for (TaskId t : pw.pipelineTasks) out.pipelineSeconds = std::max(out.pipelineSeconds, r.tasks[t].end);
    out.trace = std::move(r.trace);
    return out;
}

PipelineSimResult SimulatePipeline(const Schedule& schedule, const ClusterModel& link, bool buildTrace)
{
    const PipelineSpec& s = schedule.spec;
    const bool free = link.alphaSec == 0 && (s.activationBytes == 0 || link.betaSecPerByte == 0) && link.links.empty() &&
                      link.stragglers.empty();
    if (!free) return SimulatePipelineAsWorkload(schedule, link, buildTrace);
    DirectPipeline direct(schedule, buildTrace);
    const ScheduleCheck check = ValidateSchedule(schedule, [&](int d, int i) { direct.Step(d, i); }); // timed as validated
    if (!check.ok) throw Error(std::string(Name(s.kind)) + " schedule is invalid: " + check.message);
    return direct.Finish(link);
}

} // namespace paralens::core
