// Requests and configurations the planner's tests share.
#pragma once

#include "planner/Planner.hpp"

namespace paralens::core::test {

inline PlanRequest Request(const char* model, const char* gpu, int gpus, int batch)
{
    PlanRequest r;
    r.model = *FindModelPreset(model);
    r.cluster.gpu = *FindGpu(gpu);
    r.cluster.gpus = gpus;
    r.globalBatch = batch;
    return r;
}

inline TrainingConfig Config(int dp, int tp, int pp, int mb, ScheduleKind k = ScheduleKind::OneFOneB, int v = 1,
                             Recompute rc = Recompute::None, int zero = 0, bool sp = false, int ep = 1)
{
    TrainingConfig c;
    c.dp = dp, c.tp = tp, c.pp = pp, c.ep = ep, c.microBatch = mb, c.schedule = k, c.chunks = v, c.recompute = rc, c.zero = zero,
    c.sequenceParallel = sp;
    return c;
}

} // namespace paralens::core::test
