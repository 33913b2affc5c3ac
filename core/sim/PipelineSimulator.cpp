#include "sim/PipelineSimulator.hpp"

#include "schedule/PipelineWorkload.hpp"
#include "sim/WorkloadSimulator.hpp"

#include <algorithm>

namespace paralens::core {

ClusterModel FreeLinks()
{
    ClusterModel m;
    m.alphaSec = 0.0;
    m.betaSecPerByte = 0.0;
    m.gammaSecPerByte = 0.0;
    return m;
}

PipelineSimResult SimulatePipeline(const Schedule& schedule, const ClusterModel& link, bool buildTrace)
{
    const PipelineSpec& s = schedule.spec;
    const bool free = link.alphaSec == 0 && (s.activationBytes == 0 || link.betaSecPerByte == 0) && link.links.empty();
    PipelineWorkload pw = BuildPipelineWorkload(schedule, free);
    WorkloadOptions options;
    options.buildTrace = buildTrace;
    Metadata& m = options.meta;
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
    m.workload.Set("activationBytes", static_cast<int64_t>(s.activationBytes));
    m.workload.Set("recompute", s.recompute);
    if (s.forwardFlops > 0) m.workload.Set("forwardFlops", s.forwardFlops);
    m.model.Set("alphaUs", link.alphaSec * 1e6);
    m.model.Set("bandwidthGBps", link.BandwidthGBps());
    options.finishMeta = [&](Metadata& meta, const WorkloadResult& r) {
        double window = 0.0;
        for (TaskId t : pw.pipelineTasks) window = std::max(window, r.tasks[t].end);
        meta.results.Set("makespanSeconds", r.seconds);
        meta.results.Set("pipelineSeconds", window);
        if (BubbleFractionFormula(s) >= 0) meta.results.Set("bubbleFractionFormula", BubbleFractionFormula(s));
    };
    WorkloadResult r = SimulateWorkload(pw.workload, link, options);
    PipelineSimResult out;
    out.seconds = r.seconds;
    for (TaskId t : pw.pipelineTasks) out.pipelineSeconds = std::max(out.pipelineSeconds, r.tasks[t].end);
    out.trace = std::move(r.trace);
    return out;
}

} // namespace paralens::core
