// A workload as a task graph on devices, for the simulator: compute tasks (on a device's compute
// lane, in the order they were added: a CUDA stream), point-to-point messages (on the ports of
// the Network), and collectives over a group of devices (on the members' communication lanes,
// run through their Plans). Dependencies must name tasks added earlier, so the order of addition
// is a topological order and lanes run in program order. Pipelines, data/tensor/expert
// parallelism are all generators of Workloads (core/schedule).
#pragma once

#include "model/Collective.hpp"
#include "trace/Trace.hpp"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

using TaskId = uint32_t;
enum class TaskKind : uint8_t { Compute, Message, Collective };

// Labels a task carries into its Trace spans.
struct TaskTags {
    uint16_t name = 0;          // from Workload::Name
    int32_t microBatch = kNone;
    int32_t chunk = kNone;
    int32_t step = kNone;
};

struct ComputeTask {
    int device = 0;
    double seconds = 0.0;        // before the device's straggler factor
    double flops = 0.0;          // model FLOPs (0: unknown)
    bool recompute = false;      // a forward re-run for activation recomputation: hardware FLOPs only
    SpanCategory category = SpanCategory::Compute;
    TaskTags tags;
};

struct MessageTask {
    int src = 0;
    int dst = 0;
    uint64_t bytes = 0;
    TaskTags tags;
    bool reduce = false; // the receiver adds the bytes into its copy (m * gamma, receive port held)
};

struct CollectiveTask {
    CollectiveSpec spec;         // spec.ranks == devices.size()
    std::vector<int> devices;    // rank r runs on devices[r]
    TaskTags tags;
};

class Workload {
public:
    // `deviceNames` may be empty ("device 0", ...). `kind` is what the Trace calls the devices.
    explicit Workload(int devices, std::vector<std::string> deviceNames = {}, DeviceKind kind = DeviceKind::Modelled);

    uint16_t Name(std::string_view text); // interned task names ("F", "B", "allreduce grads")

    // Each returns the new task's id. Throws Error for a device out of range or a dependency that
    // does not name an earlier task.
    TaskId Add(const ComputeTask& t, std::span<const TaskId> deps = {});
    TaskId Add(const MessageTask& t, std::span<const TaskId> deps = {});
    TaskId Add(const CollectiveTask& t, std::span<const TaskId> deps = {});
    TaskId Add(const ComputeTask& t, std::initializer_list<TaskId> deps) { return Add(t, std::span<const TaskId>(deps.begin(), deps.size())); }
    TaskId Add(const MessageTask& t, std::initializer_list<TaskId> deps) { return Add(t, std::span<const TaskId>(deps.begin(), deps.size())); }
    TaskId Add(const CollectiveTask& t, std::initializer_list<TaskId> deps) { return Add(t, std::span<const TaskId>(deps.begin(), deps.size())); }

    void Reserve(size_t tasks, size_t deps);

    int Devices() const { return m_devices; }
    size_t TaskCount() const { return m_kinds.size(); }
    TaskKind KindOf(TaskId t) const { return m_kinds[t]; }
    const ComputeTask& ComputeOf(TaskId t) const { return m_compute[m_slot[t]]; }
    const MessageTask& MessageOf(TaskId t) const { return m_messages[m_slot[t]]; }
    const CollectiveTask& CollectiveOf(TaskId t) const { return m_collectives[m_slot[t]]; }
    std::span<const TaskId> DepsOf(TaskId t) const
    {
        return std::span<const TaskId>(m_deps).subspan(m_depBegin[t], m_depBegin[t + 1] - m_depBegin[t]);
    }
    std::string_view NameOf(uint16_t name) const { return m_names[name]; }
    size_t NameCount() const { return m_names.size(); }
    const std::vector<std::string>& DeviceNames() const { return m_deviceNames; }
    DeviceKind DevicesKind() const { return m_deviceKind; }

private:
    TaskId Push(TaskKind kind, uint32_t slot, std::span<const TaskId> deps);
    void CheckDevice(int device) const;

    int m_devices;
    std::vector<std::string> m_deviceNames;
    DeviceKind m_deviceKind;
    std::vector<std::string> m_names;
    std::vector<TaskKind> m_kinds;
    std::vector<uint32_t> m_slot;
    std::vector<uint32_t> m_depBegin{0};
    std::vector<TaskId> m_deps;
    std::vector<ComputeTask> m_compute;
    std::vector<MessageTask> m_messages;
    std::vector<CollectiveTask> m_collectives;
};

} // namespace paralens::core
