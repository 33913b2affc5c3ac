#include "schedule/Workload.hpp"

#include "common/Error.hpp"

namespace paralens::core {

Workload::Workload(int devices, std::vector<std::string> deviceNames, DeviceKind kind)
    : m_devices(devices), m_deviceNames(std::move(deviceNames)), m_deviceKind(kind)
{
    Require(devices >= 1, "a workload needs at least one device");
    for (int d = static_cast<int>(m_deviceNames.size()); d < devices; ++d) m_deviceNames.push_back("device " + std::to_string(d));
    m_names.emplace_back("");
}

uint16_t Workload::Name(std::string_view text)
{
    for (size_t i = 0; i < m_names.size(); ++i)
        if (m_names[i] == text) return static_cast<uint16_t>(i);
    Require(m_names.size() < 65535, "too many distinct task names in one workload");
    m_names.emplace_back(text);
    return static_cast<uint16_t>(m_names.size() - 1);
}

void Workload::Reserve(size_t tasks, size_t deps)
{
    m_kinds.reserve(tasks);
    m_slot.reserve(tasks);
    m_depBegin.reserve(tasks + 1);
    m_deps.reserve(deps);
}

void Workload::CheckDevice(int device) const
{
    if (device < 0 || device >= m_devices)
        throw Error("task names device " + std::to_string(device) + " but the workload has devices 0.." +
                    std::to_string(m_devices - 1));
}

TaskId Workload::Push(TaskKind kind, uint32_t slot, std::span<const TaskId> deps)
{
    const TaskId id = static_cast<TaskId>(m_kinds.size());
    for (TaskId d : deps)
        if (d >= id) throw Error("task " + std::to_string(id) + " depends on task " + std::to_string(d) + ", which is not added yet");
    m_kinds.push_back(kind);
    m_slot.push_back(slot);
    m_deps.insert(m_deps.end(), deps.begin(), deps.end());
    m_depBegin.push_back(static_cast<uint32_t>(m_deps.size()));
    return id;
}

TaskId Workload::Add(const ComputeTask& t, std::span<const TaskId> deps)
{
    CheckDevice(t.device);
    Require(t.seconds >= 0, "a compute task cannot take negative time");
    m_compute.push_back(t);
    return Push(TaskKind::Compute, static_cast<uint32_t>(m_compute.size() - 1), deps);
}

TaskId Workload::Add(const MessageTask& t, std::span<const TaskId> deps)
{
    CheckDevice(t.src);
    CheckDevice(t.dst);
    m_messages.push_back(t);
    return Push(TaskKind::Message, static_cast<uint32_t>(m_messages.size() - 1), deps);
}

TaskId Workload::Add(const CollectiveTask& t, std::span<const TaskId> deps)
{
    Require(t.spec.ranks == static_cast<int>(t.devices.size()), "a collective task needs one device per rank");
    for (int d : t.devices) CheckDevice(d);
    m_collectives.push_back(t);
    return Push(TaskKind::Collective, static_cast<uint32_t>(m_collectives.size() - 1), deps);
}

} // namespace paralens::core
