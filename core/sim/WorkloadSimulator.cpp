#include "sim/WorkloadSimulator.hpp"

#include "trace/CollectiveTag.hpp"

#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "sim/Network.hpp"
#include "sim/PlanRunner.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <map>
#include <limits>
#include <memory>
#include <queue>
#include <span>
#include <tuple>

namespace paralens::core {

namespace {

int64_t Ns(double seconds) { return static_cast<int64_t>(seconds * 1e9 + 0.5); }

// Which lanes each device uses, so tracks are created once in a fixed order.
struct LaneUse {
    std::vector<bool> comm, ports;
};

LaneUse ScanLanes(const Workload& w, const ClusterModel& cluster, bool detail)
{
    LaneUse use{std::vector<bool>(static_cast<size_t>(w.Devices())), std::vector<bool>(static_cast<size_t>(w.Devices()))};
    for (TaskId t = 0; t < w.TaskCount(); ++t) {
        if (w.KindOf(t) == TaskKind::Collective) {
            for (int d : w.CollectiveOf(t).devices) {
                use.comm[static_cast<size_t>(d)] = true;
                if (detail) use.ports[static_cast<size_t>(d)] = true;
            }
        } else if (w.KindOf(t) == TaskKind::Message) {
            const MessageTask& m = w.MessageOf(t);
            if (cluster.alphaSec > 0 || (m.bytes > 0 && cluster.betaSecPerByte > 0) || !cluster.links.empty())
                use.ports[static_cast<size_t>(m.src)] = use.ports[static_cast<size_t>(m.dst)] = true;
        }
    }
    return use;
}

class WorkloadRecorder : public PlanObserver {
public:
    WorkloadRecorder(const Workload& w, const LaneUse& use, const Metadata& meta) : m_w(w)
    {
        m_b.Meta() = meta;
        for (int d = 0; d < w.Devices(); ++d) {
            uint32_t dev = m_b.AddDevice(w.DeviceNames()[static_cast<size_t>(d)], w.DevicesKind(), d);
            m_compute.push_back(m_b.AddTrack(dev, "compute"));
            m_comm.push_back(use.comm[static_cast<size_t>(d)] ? m_b.AddTrack(dev, "comm") : kNoTrack);
            m_send.push_back(use.ports[static_cast<size_t>(d)] ? m_b.AddTrack(dev, "send") : kNoTrack);
            m_recv.push_back(use.ports[static_cast<size_t>(d)] ? m_b.AddTrack(dev, "recv") : kNoTrack);
        }
        std::vector<size_t> computeCount(static_cast<size_t>(w.Devices()), 0);
        size_t messages = 0;
        for (TaskId t = 0; t < w.TaskCount(); ++t) {
            if (w.KindOf(t) == TaskKind::Compute) ++computeCount[static_cast<size_t>(w.ComputeOf(t).device)];
            else if (w.KindOf(t) == TaskKind::Message) ++messages;
            if (w.KindOf(t) == TaskKind::Compute) messages += w.DepsOf(t).size();
        }
        for (int d = 0; d < w.Devices(); ++d) m_b.ReserveSpans(m_compute[static_cast<size_t>(d)], computeCount[static_cast<size_t>(d)]);
        m_b.ReserveFlows(messages);
        for (size_t i = 0; i < w.NameCount(); ++i) m_names.push_back(m_b.Intern(w.NameOf(static_cast<uint16_t>(i))));
        m_recompute = m_b.Intern("recompute");
        m_reduce = m_b.Intern("reduce");
    }

    // A compute task waiting on a compute task of another device: drawn as an arrow.
    void Dependency(const ComputeTask& from, double fromEnd, const ComputeTask& to, double toStart)
    {
        Flow f;
        f.srcDevice = static_cast<uint32_t>(from.device);
        f.dstDevice = static_cast<uint32_t>(to.device);
        f.srcTrack = m_compute[static_cast<size_t>(from.device)];
        f.dstTrack = m_compute[static_cast<size_t>(to.device)];
        f.srcNs = Ns(fromEnd);
        f.dstNs = Ns(toStart);
        f.step = to.tags.step;
        f.chunk = to.tags.microBatch;
        f.name = m_names[from.tags.name];
        m_b.AddFlow(f);
    }

    void Compute(TaskId task, const ComputeTask& c, double start, double end)
    {
        Span s = Tagged(c.tags, start, end);
        s.category = c.category;
        s.flops = c.flops;
        s.predictedNs = Ns(c.seconds);
        if (c.recompute) s.detail = m_recompute;
        m_b.AddSpan(m_compute[static_cast<size_t>(c.device)], s);
        m_spans[task] = {m_compute[static_cast<size_t>(c.device)], s.startNs, s.endNs};
    }

    void Message(TaskId task, const MessageTask& m, const MessageTiming& t)
    {
        Flow f;
        f.srcDevice = static_cast<uint32_t>(m.src);
        f.dstDevice = static_cast<uint32_t>(m.dst);
        f.srcNs = Ns(t.start);
        f.dstNs = Ns(t.end);
        f.bytes = m.bytes;
        f.step = m.tags.step;
        f.chunk = m.tags.microBatch;
        f.name = m_names[m.tags.name];
        const bool drawn = t.end > t.start && m_send[static_cast<size_t>(m.src)] != kNoTrack;
        f.srcTrack = drawn ? m_send[static_cast<size_t>(m.src)] : m_compute[static_cast<size_t>(m.src)];
        f.dstTrack = drawn ? m_recv[static_cast<size_t>(m.dst)] : m_compute[static_cast<size_t>(m.dst)];
        m_b.AddFlow(f);
        if (!drawn) return;
        Span s = Tagged(m.tags, t.start, t.end);
        s.bytes = m.bytes;
        s.predictedNs = Ns(t.ideal);
        s.category = SpanCategory::Send;
        m_b.AddSpan(m_send[static_cast<size_t>(m.src)], s);
        s.category = SpanCategory::Recv;
        m_b.AddSpan(m_recv[static_cast<size_t>(m.dst)], s);
        m_spans[task] = {m_send[static_cast<size_t>(m.src)], s.startNs, s.endNs};
        if (t.usable > t.end) { // the receiver's reduction, right after the bytes arrive
            Span r = Tagged(m.tags, t.end, t.usable);
            r.bytes = m.bytes;
            r.predictedNs = Ns(t.idealReduce);
            r.category = SpanCategory::Compute;
            r.detail = m_reduce;
            m_b.AddSpan(m_recv[static_cast<size_t>(m.dst)], r);
            m_usable[task] = {m_recv[static_cast<size_t>(m.dst)], r.startNs, r.endNs};
        }
    }

    void CollectiveMember(TaskId task, const CollectiveTask& c, int device, double join, double end, double predicted)
    {
        Span s = Tagged(c.tags, join, end);
        s.category = SpanCategory::Collective;
        s.detail = TagOf(c.spec);
        s.bytes = c.spec.bytes;
        s.predictedNs = Ns(predicted);
        m_b.AddSpan(m_comm[static_cast<size_t>(device)], s);
        m_members[task].push_back({device, {m_comm[static_cast<size_t>(device)], s.startNs, s.endNs}});
    }

    void OnTransfer(const Transfer& t, int srcDevice, int dstDevice, int step, int, const MessageTiming& timing) override
    {
        Span s;
        s.startNs = Ns(timing.start);
        s.endNs = Ns(timing.end);
        s.bytes = t.bytes;
        s.chunk = t.block;
        s.step = step;
        s.name = m_currentName;
        s.predictedNs = Ns(timing.ideal);
        s.category = SpanCategory::Send;
        m_b.AddSpan(m_send[static_cast<size_t>(srcDevice)], s);
        s.category = SpanCategory::Recv;
        m_b.AddSpan(m_recv[static_cast<size_t>(dstDevice)], s);
        Flow f;
        f.srcDevice = static_cast<uint32_t>(srcDevice);
        f.dstDevice = static_cast<uint32_t>(dstDevice);
        f.srcTrack = m_send[static_cast<size_t>(srcDevice)];
        f.dstTrack = m_recv[static_cast<size_t>(dstDevice)];
        f.srcNs = s.startNs;
        f.dstNs = s.endNs;
        f.bytes = t.bytes;
        f.step = step;
        f.chunk = t.block;
        f.name = m_currentName;
        m_b.AddFlow(f);
    }
    void OnReduction(const Transfer&, int, int, int, double, double, double) override {}

    void SetCurrentName(uint16_t name) { m_currentName = m_names[name]; }
    Metadata& Meta() { return m_b.Meta(); }
    Trace Finish()
    {
        AddDependencies();
        return std::move(m_b).Finish();
    }

private:
    // What the collective ran, for the analysis and the what-if replay (CollectiveTag.hpp).
    StringId TagOf(const CollectiveSpec& spec)
    {
        StringId& id = m_tags[{static_cast<int>(spec.collective), static_cast<int>(spec.algorithm), spec.ranks}];
        if (id != 0) return id;
        CollectiveTag tag;
        tag.collective = std::string(Name(spec.collective));
        tag.algorithm = std::string(Name(spec.algorithm));
        tag.ranks = spec.ranks;
        return id = m_b.Intern(FormatCollectiveTag(tag));
    }

    Span Tagged(const TaskTags& tags, double start, double end) const
    {
        Span s;
        s.startNs = Ns(start);
        s.endNs = std::max(Ns(end), s.startNs);
        s.name = m_names[tags.name];
        s.microBatch = tags.microBatch;
        s.chunk = tags.chunk;
        s.step = tags.step;
        return s;
    }

    // The spans after which task `t` is done as far as `device` is concerned (a collective:
    // that member's, or every member's for a device outside it; a free message, which draws
    // nothing: what it waited for).
    void EndsFor(TaskId t, int device, std::vector<SpanRef>& out) const
    {
        if (m_w.KindOf(t) == TaskKind::Collective) {
            auto it = m_members.find(t);
            if (it == m_members.end()) return;
            bool member = false;
            for (const auto& [d, ref] : it->second) member = member || d == device;
            for (const auto& [d, ref] : it->second)
                if (!member || d == device) out.push_back(ref);
            return;
        }
        if (m_usable[t].track != kNoTrack) { out.push_back(m_usable[t]); return; }
        if (m_spans[t].track != kNoTrack) { out.push_back(m_spans[t]); return; }
        if (m_w.KindOf(t) == TaskKind::Message)
            for (TaskId d : m_w.DepsOf(t)) EndsFor(d, m_w.MessageOf(t).src, out);
    }

    // As the engine's Joins(): a collective member waits for its own device's dependencies and
    // for those of devices outside the group.
    bool CountsFor(TaskId t, TaskId dep, int device) const
    {
        if (m_w.KindOf(t) != TaskKind::Collective) return true;
        const int owner = m_w.KindOf(dep) == TaskKind::Compute   ? m_w.ComputeOf(dep).device
                          : m_w.KindOf(dep) == TaskKind::Message ? m_w.MessageOf(dep).dst
                                                                 : -1;
        const auto& group = m_w.CollectiveOf(t).devices;
        return owner == device || std::find(group.begin(), group.end(), owner) == group.end();
    }

    void DependOn(TaskId t, int device, const SpanRef& to, std::vector<SpanRef>& scratch)
    {
        scratch.clear();
        for (TaskId d : m_w.DepsOf(t))
            if (CountsFor(t, d, device)) EndsFor(d, device, scratch);
        for (const SpanRef& from : scratch) m_b.AddDependency({from, to});
    }

    // Each task's own dependencies as span pairs (lane order is the tracks' and not repeated).
    void AddDependencies()
    {
        std::vector<SpanRef> scratch;
        for (TaskId t = 0; t < m_w.TaskCount(); ++t) {
            switch (m_w.KindOf(t)) {
            case TaskKind::Compute:
                if (m_spans[t].track != kNoTrack) DependOn(t, m_w.ComputeOf(t).device, m_spans[t], scratch);
                break;
            case TaskKind::Message:
                if (m_spans[t].track != kNoTrack) DependOn(t, m_w.MessageOf(t).src, m_spans[t], scratch);
                break;
            case TaskKind::Collective:
                if (auto it = m_members.find(t); it != m_members.end())
                    for (const auto& [device, ref] : it->second) DependOn(t, device, ref, scratch);
                break;
            }
        }
    }

    const Workload& m_w;
    TraceBuilder m_b;
    std::vector<SpanRef> m_spans = std::vector<SpanRef>(m_w.TaskCount());  // per task: its span
    std::vector<SpanRef> m_usable = std::vector<SpanRef>(m_w.TaskCount()); // per message: its reduction, if any
    std::map<TaskId, std::vector<std::pair<int, SpanRef>>> m_members;      // per collective: member spans
    std::map<std::tuple<int, int, int>, StringId> m_tags;                  // collective, algorithm, ranks
    std::vector<uint32_t> m_compute, m_comm, m_send, m_recv;
    std::vector<StringId> m_names;
    StringId m_recompute = 0;
    StringId m_reduce = 0;
    StringId m_currentName = 0;
};

// The event-driven engine. Lane order is turned into dependencies (each compute task waits for
// the previous compute task of its device; each collective for the previous collective of each
// member), compute tasks start as soon as their dependencies are done, and messages and
// collectives take the ports in the order of the times they become ready.
class Engine {
public:
    Engine(const Workload& w, const ClusterModel& cluster, WorkloadRecorder* rec, bool detail)
        : m_w(w), m_net(cluster, w.Devices()), m_params{cluster.alphaSec, cluster.betaSecPerByte, cluster.gammaSecPerByte},
          m_rec(rec), m_detail(detail)
    {
        BuildGraph();
        m_result.tasks.resize(w.TaskCount());
        m_result.deviceEnd.assign(static_cast<size_t>(w.Devices()), 0.0);
    }

    WorkloadResult Run()
    {
        if (NothingUsesPorts()) {
            // Insertion order is topological and nothing competes for a port, so tasks can be
            // resolved in that order, walking memory sequentially.
            for (TaskId t = 0; t < m_w.TaskCount(); ++t) {
                if (m_w.KindOf(t) == TaskKind::Compute) RunCompute(t);
                else RunMessage(t, MessageReady(t));
            }
            m_finished.clear();
            for (double end : m_result.deviceEnd) m_result.seconds = std::max(m_result.seconds, end);
            return std::move(m_result);
        }
        for (TaskId t = 0; t < m_w.TaskCount(); ++t)
            if (m_remaining[t] == 0) Ready(t);
        Drain();
        while (!m_queue.empty()) {
            const Event e = m_queue.top();
            m_queue.pop();
            m_now = e.time;
            if (m_w.KindOf(e.task) == TaskKind::Message) RunMessage(e.task, m_now);
            else RunCollective(e.task);
            Drain();
        }
        for (double end : m_result.deviceEnd) m_result.seconds = std::max(m_result.seconds, end);
        return std::move(m_result);
    }

private:
    struct Event {
        double time;
        TaskId task;
        bool operator>(const Event& o) const { return time != o.time ? time > o.time : task > o.task; }
    };

    std::span<const TaskId> AllDeps(TaskId t) const
    {
        return std::span<const TaskId>(m_allDeps).subspan(m_allBegin[t], m_allBegin[t + 1] - m_allBegin[t]);
    }

    void BuildGraph()
    {
        const size_t n = m_w.TaskCount();
        std::vector<TaskId> lastCompute(static_cast<size_t>(m_w.Devices()), kNoTask), lastComm = lastCompute;
        m_allBegin.assign(1, 0);
        m_allDeps.reserve(n * 3);
        for (TaskId t = 0; t < n; ++t) {
            for (TaskId d : m_w.DepsOf(t)) m_allDeps.push_back(d);
            if (m_w.KindOf(t) == TaskKind::Compute) {
                TaskId& last = lastCompute[static_cast<size_t>(m_w.ComputeOf(t).device)];
                if (last != kNoTask) m_allDeps.push_back(last);
                last = t;
            } else if (m_w.KindOf(t) == TaskKind::Collective) {
                for (int dev : m_w.CollectiveOf(t).devices) {
                    TaskId& last = lastComm[static_cast<size_t>(dev)];
                    if (last != kNoTask) m_allDeps.push_back(last);
                    last = t;
                }
            }
            m_allBegin.push_back(static_cast<uint32_t>(m_allDeps.size()));
        }
        m_remaining.resize(n);
        std::vector<uint32_t> count(n + 1, 0);
        for (TaskId t = 0; t < n; ++t) {
            m_remaining[t] = static_cast<uint32_t>(AllDeps(t).size());
            for (TaskId d : AllDeps(t)) ++count[d + 1];
        }
        for (size_t i = 1; i <= n; ++i) count[i] += count[i - 1];
        m_depBegin = count;
        m_dependents.resize(m_allDeps.size());
        for (TaskId t = 0; t < n; ++t)
            for (TaskId d : AllDeps(t)) m_dependents[count[d]++] = t;
    }

    // When `dep` is done as far as `device` is concerned.
    double EndFor(TaskId dep, int device) const
    {
        if (m_w.KindOf(dep) == TaskKind::Collective) {
            const auto& members = m_w.CollectiveOf(dep).devices;
            for (size_t r = 0; r < members.size(); ++r)
                if (members[r] == device) return m_memberEnd.at(dep)[r];
        }
        return m_result.tasks[dep].end;
    }

    int OwnerOf(TaskId t) const
    {
        switch (m_w.KindOf(t)) {
        case TaskKind::Compute: return m_w.ComputeOf(t).device;
        case TaskKind::Message: return m_w.MessageOf(t).dst;
        default: return -1;
        }
    }

    void Ready(TaskId t)
    {
        switch (m_w.KindOf(t)) {
        case TaskKind::Compute: RunCompute(t); break;
        case TaskKind::Message: {
            const double ready = MessageReady(t);
            if (IsFree(m_w.MessageOf(t))) RunMessage(t, ready); // holds no port: no need to wait its turn
            else m_queue.push({std::max(ready, m_now), t});
            break;
        }
        case TaskKind::Collective: {
            double first = std::numeric_limits<double>::infinity();
            for (double j : Joins(t)) first = std::min(first, j);
            m_queue.push({std::max(first, m_now), t});
            break;
        }
        }
    }

    void Done(TaskId t) { m_finished.push_back(t); }

    // Resolves dependents of finished tasks until nothing more can start without the queue.
    void Drain()
    {
        while (!m_finished.empty()) {
            const TaskId t = m_finished.back();
            m_finished.pop_back();
            for (uint32_t i = m_depBegin[t]; i < m_depBegin[t + 1]; ++i) {
                const TaskId next = m_dependents[i];
                if (--m_remaining[next] == 0) Ready(next);
            }
        }
    }

    void RunCompute(TaskId t)
    {
        const ComputeTask& c = m_w.ComputeOf(t);
        double start = 0.0;
        for (TaskId d : AllDeps(t)) start = std::max(start, EndFor(d, c.device));
        const double end = start + c.seconds * m_net.Slowdown(c.device);
        m_result.tasks[t] = {start, end};
        Extend(c.device, end);
        if (m_rec) {
            m_rec->Compute(t, c, start, end);
            for (TaskId d : m_w.DepsOf(t))
                if (m_w.KindOf(d) == TaskKind::Compute && m_w.ComputeOf(d).device != c.device)
                    m_rec->Dependency(m_w.ComputeOf(d), m_result.tasks[d].end, c, start);
        }
        Done(t);
    }

    double MessageReady(TaskId t) const
    {
        double ready = 0.0;
        for (TaskId d : AllDeps(t)) ready = std::max(ready, EndFor(d, m_w.MessageOf(t).src));
        return ready;
    }

    bool NothingUsesPorts() const
    {
        for (TaskId t = 0; t < m_w.TaskCount(); ++t) {
            if (m_w.KindOf(t) == TaskKind::Collective) return false;
            if (m_w.KindOf(t) == TaskKind::Message && !IsFree(m_w.MessageOf(t))) return false;
        }
        return true;
    }

    bool IsFree(const MessageTask& m) const
    {
        const ClusterModel& c = m_net.Cluster();
        const bool reduces = m.reduce && m.bytes > 0 && c.gammaSecPerByte > 0;
        return c.alphaSec == 0 && (m.bytes == 0 || c.betaSecPerByte == 0) && c.links.empty() && !reduces;
    }

    void RunMessage(TaskId t, double ready)
    {
        const MessageTask& m = m_w.MessageOf(t);
        MessageTiming timing;
        if (IsFree(m)) timing.start = timing.end = timing.usable = ready;
        else timing = m_net.Send(m.src, m.dst, m.bytes, ready, m.reduce);
        m_result.tasks[t] = {timing.start, timing.usable};
        if (m.src != m.dst) m_result.wireBytes += m.bytes;
        Extend(m.src, timing.end);
        Extend(m.dst, timing.usable);
        if (m_rec) m_rec->Message(t, m, timing);
        Done(t);
    }

    std::vector<double> Joins(TaskId t) const
    {
        const CollectiveTask& c = m_w.CollectiveOf(t);
        std::vector<double> joins(c.devices.size(), 0.0);
        for (size_t r = 0; r < c.devices.size(); ++r) {
            const int dev = c.devices[r];
            for (TaskId d : AllDeps(t)) {
                const int owner = OwnerOf(d);
                const bool inGroup = std::find(c.devices.begin(), c.devices.end(), owner) != c.devices.end();
                if (owner == dev || !inGroup) joins[r] = std::max(joins[r], EndFor(d, dev));
            }
        }
        return joins;
    }

    void RunCollective(TaskId t)
    {
        const CollectiveTask& c = m_w.CollectiveOf(t);
        const std::vector<double> joins = Joins(t);
        const auto key = std::make_tuple(static_cast<int>(c.spec.collective), static_cast<int>(c.spec.algorithm),
                                         c.spec.ranks, c.spec.bytes, c.spec.root, c.spec.alignBytes);
        auto& plan = m_plans[key];
        if (!plan) plan = std::make_unique<Plan>(BuildPlan(c.spec));
        if (m_rec) m_rec->SetCurrentName(c.tags.name);
        PlanRunResult run = RunPlan(*plan, m_net, c.devices, joins, m_rec && m_detail ? m_rec : nullptr);
        const double predicted = PredictSeconds(c.spec, m_params).seconds;
        TaskTiming timing{*std::min_element(joins.begin(), joins.end()), 0.0};
        for (size_t r = 0; r < c.devices.size(); ++r) {
            timing.end = std::max(timing.end, run.rankEnd[r]);
            Extend(c.devices[r], run.rankEnd[r]);
            if (m_rec) m_rec->CollectiveMember(t, c, c.devices[r], joins[r], run.rankEnd[r], predicted);
        }
        m_memberEnd[t] = std::move(run.rankEnd);
        m_result.wireBytes += run.wireBytes;
        m_result.tasks[t] = timing;
        Done(t);
    }

    void Extend(int device, double end)
    {
        double& e = m_result.deviceEnd[static_cast<size_t>(device)];
        e = std::max(e, end);
    }

    static constexpr TaskId kNoTask = ~TaskId{0};
    const Workload& m_w;
    Network m_net;
    CostParams m_params;
    WorkloadRecorder* m_rec;
    bool m_detail;
    WorkloadResult m_result;
    std::vector<uint32_t> m_allBegin;
    std::vector<TaskId> m_allDeps;
    std::vector<uint32_t> m_remaining, m_depBegin;
    std::vector<TaskId> m_dependents, m_finished;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> m_queue;
    std::map<TaskId, std::vector<double>> m_memberEnd;
    std::map<std::tuple<int, int, int, uint64_t, int, uint64_t>, std::unique_ptr<Plan>> m_plans;
    double m_now = 0.0;
};

} // namespace

WorkloadResult SimulateWorkload(const Workload& w, const ClusterModel& cluster, const WorkloadOptions& options)
{
    std::optional<WorkloadRecorder> rec;
    if (options.buildTrace) rec.emplace(w, ScanLanes(w, cluster, options.transferDetail), options.meta);
    WorkloadResult result = Engine(w, cluster, rec ? &*rec : nullptr, options.transferDetail).Run();
    if (rec) {
        if (options.finishMeta) options.finishMeta(rec->Meta(), result);
        result.trace = rec->Finish();
    }
    return result;
}

} // namespace paralens::core
