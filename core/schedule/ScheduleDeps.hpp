// Internal: the dependency structure shared by validation, the zb-h1 builder and the pipeline
// workload: ops are identified by (kind, micro-batch, virtual stage), virtual stage = chunk * D + device.
#pragma once

#include "schedule/Schedule.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace paralens::core {

struct OpKey {
    PipeOpKind kind;
    int32_t microBatch;
    int32_t virtualStage;
};

template <class T>
class OpTableOf {
public:
    OpTableOf(int microBatches, int virtualStages, T fill = T(-1))
        : m_mb(microBatches), m_vs(virtualStages), m_values(static_cast<size_t>(3) * static_cast<size_t>(microBatches) * static_cast<size_t>(virtualStages), fill)
    {
    }
    bool Contains(const OpKey& k) const
    {
        return k.microBatch >= 0 && k.microBatch < m_mb && k.virtualStage >= 0 && k.virtualStage < m_vs;
    }
    T& operator[](const OpKey& k) { return m_values[Index(k)]; }
    T operator[](const OpKey& k) const { return m_values[Index(k)]; }

private:
    size_t Index(const OpKey& k) const
    {
        return (static_cast<size_t>(k.kind) * static_cast<size_t>(m_mb) + static_cast<size_t>(k.microBatch)) *
                   static_cast<size_t>(m_vs) + static_cast<size_t>(k.virtualStage);
    }
    int m_mb, m_vs;
    std::vector<T> m_values;
};

using OpTable = OpTableOf<int64_t>;

inline OpKey KeyOf(const PipeOp& op, int device, int stages)
{
    return {op.kind, op.microBatch, op.chunk * stages + device};
}

inline int DeviceOf(int virtualStage, int stages) { return virtualStage % stages; }

// The ops `k` needs (at most two); returns how many were written. `splitW`: B and W are separate.
inline int DependenciesOf(const OpKey& k, int virtualStages, std::array<OpKey, 2>& out)
{
    int n = 0;
    switch (k.kind) {
    case PipeOpKind::Forward:
        if (k.virtualStage > 0) out[n++] = {PipeOpKind::Forward, k.microBatch, k.virtualStage - 1};
        break;
    case PipeOpKind::Backward:
        out[n++] = {PipeOpKind::Forward, k.microBatch, k.virtualStage};
        if (k.virtualStage + 1 < virtualStages) out[n++] = {PipeOpKind::Backward, k.microBatch, k.virtualStage + 1};
        break;
    case PipeOpKind::WeightGrad: out[n++] = {PipeOpKind::Backward, k.microBatch, k.virtualStage}; break;
    }
    return n;
}

} // namespace paralens::core
