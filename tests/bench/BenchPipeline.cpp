// How fast a pipeline schedule is built, validated and simulated (trace included): the GUI
// re-runs it while a slider moves. Targets: interleaved D=64, N=512, v=4 under 10 ms (issue
// "Speed"; the pipeline issue asked 50 ms); D=8, N=32 under 2 ms.
#include "BenchMachine.hpp"

#include "common/Memory.hpp"

#include "analysis/PipelineMetrics.hpp"
#include "schedule/Schedule.hpp"
#include "sim/PipelineSimulator.hpp"

#include <cstdio>

using namespace paralens::core;

int main()
{
    paralens::KeepFreedMemoryForReuse(); // as the app does
    std::printf("paralens pipeline benchmark on %s\n\n", MachineDescription().c_str());
    std::printf("%-12s %4s %5s %3s %9s %11s %13s %13s %11s %10s\n", "schedule", "D", "N", "v", "ops", "build (ms)",
                "validate (ms)", "simulate (ms)", "total (ms)", "target");
    struct Case {
        ScheduleKind kind;
        int D, N, v;
        double targetMs;
    };
    const Case cases[] = {
        {ScheduleKind::OneFOneB, 8, 32, 1, 2},     {ScheduleKind::GPipe, 8, 32, 1, 2},
        {ScheduleKind::Interleaved, 8, 32, 2, 2},  {ScheduleKind::ZeroBubbleH1, 8, 32, 1, 2},
        {ScheduleKind::Interleaved, 64, 512, 4, 10}, {ScheduleKind::OneFOneB, 64, 512, 1, 0},
        {ScheduleKind::ZeroBubbleH1, 64, 512, 1, 0},
    };
    for (const Case& c : cases) {
        PipelineSpec spec;
        spec.kind = c.kind;
        spec.stages = c.D;
        spec.microBatches = c.N;
        spec.chunks = c.v;
        const int repeats = c.D * c.N > 10000 ? 5 : 50;
        Schedule s;
        double build = BestSeconds(repeats, [&] { s = BuildSchedule(spec); });
        double validate = BestSeconds(repeats, [&] { (void)ValidateSchedule(s); });
        double simulate = BestSeconds(repeats, [&] { (void)SimulatePipeline(s, FreeLinks(), true); });
        size_t ops = 0;
        for (const auto& st : s.stages) ops += st.size();
        // SimulatePipeline validates again inside: total = build + simulate.
        const double total = (build + simulate) * 1e3;
        char target[32] = "-";
        if (c.targetMs > 0) std::snprintf(target, sizeof target, "%s %g", total < c.targetMs ? "<" : "MISSED", c.targetMs);
        std::printf("%-12s %4d %5d %3d %9zu %11.3f %13.3f %13.3f %11.3f %10s\n", std::string(Name(c.kind)).c_str(), c.D,
                    c.N, c.v, ops, build * 1e3, validate * 1e3, simulate * 1e3, total, target);
        if (c.targetMs > 0)
            ReportTarget("pipeline: " + std::string(Name(c.kind)) + " D=" + std::to_string(c.D) + " N=" + std::to_string(c.N) + " v=" +
                             std::to_string(c.v) + " built and simulated",
                         "< " + Fixed(c.targetMs, 0, "ms"), Fixed(total, 1, "ms"), total < c.targetMs);
    }
    std::printf("\nsimulate = validate + the ops timed straight from the schedule (free links) + Trace; total = build + simulate;\n"
                "best of several runs with freed memory kept for reuse, as the app configures malloc\n");
    return 0;
}
