// How fast a collective plan is built and simulated: the GUI re-simulates while a slider moves.
// Targets (issue "Foundation"): 1024-rank ring allreduce (about 2 million transfers) under 1 s;
// 64-rank under 5 ms. Times are the best of several runs; "with trace" includes building the
// Trace the views draw. Also the speed issue's 1024-rank ring saved by the CLI as .json.gz in 3 s.
#include "BenchMachine.hpp"

#include "common/Memory.hpp"

#include "plan/Plan.hpp"
#include "sim/Simulator.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <unistd.h>

using namespace paralens::core;

namespace {

// The speed issue's `paralens simulate --ranks 1024 --out t.json.gz` in 3 s (plan, simulation,
// trace, its dependencies and the JSON compressed into a file), timed as a user runs it: the
// binary built beside this one, in a process of its own, best of two.
void SavedByTheCli()
{
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path cli = self.parent_path() / "paralens";
    if (ec || !std::filesystem::exists(cli)) {
        std::printf("not run: the 1024-rank ring saved by `paralens simulate --out` needs the paralens binary beside this one\n");
        return;
    }
    const std::string out = "/tmp/paralens-bench-" + std::to_string(getpid()) + ".json.gz";
    const std::string command = "'" + cli.string() + "' simulate --collective allreduce --ranks 1024 --out '" + out + "' > /dev/null";
    double best = 1e9;
    for (int run = 0; run < 2; ++run) {
        const auto t0 = std::chrono::steady_clock::now();
        const int rc = std::system(command.c_str());
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (rc != 0) {
            std::printf("paralens simulate --out failed (exit %d)\n", rc);
            ReportTarget("simulator: 1024-rank ring saved by `paralens simulate --out t.json.gz`", "<= 3 s", "failed", false);
            return;
        }
        best = std::min(best, s);
    }
    std::printf("%-36s %6d   saved by `paralens simulate --out t.json.gz`: %.2f s\n", "", 1024, best);
    std::filesystem::remove(out, ec);
    ReportTarget("simulator: 1024-rank ring saved by `paralens simulate --out t.json.gz`", "<= 3 s", Fixed(best, 2, "s"), best <= 3);
}

} // namespace

int main()
{
    paralens::KeepFreedMemoryForReuse(); // as the app does
    std::printf("paralens simulator benchmark on %s\n\n", MachineDescription().c_str());
    std::printf("%-36s %6s %10s %10s %12s %12s %12s %10s\n", "case", "ranks", "transfers", "plan (ms)", "sim (ms)",
                "sim+trace (ms)", "total (ms)", "target");
    struct Case {
        Collective c;
        Algorithm a;
        int ranks;
        double targetMs;
    };
    const Case cases[] = {
        {Collective::AllReduce, Algorithm::Ring, 64, 5},
        {Collective::AllReduce, Algorithm::Ring, 1024, 1000},
        {Collective::AllReduce, Algorithm::HalvingDoubling, 1024, 0},
        {Collective::AllReduce, Algorithm::Tree, 1024, 0},
        {Collective::AllToAll, Algorithm::Pairwise, 1024, 0},
    };
    const ClusterModel cluster = ClusterModel::FromUnits(5, 100, 50);
    for (const Case& k : cases) {
        CollectiveSpec spec{k.c, k.a, k.ranks, 1ull << 30, 0, 4};
        const int repeats = k.ranks > 256 ? 3 : 20;
        auto shared = std::make_shared<Plan>();
        const Plan& plan = *shared;
        double planS = BestSeconds(repeats, [&] { *shared = BuildPlan(spec); });
        double simS = BestSeconds(repeats, [&] { (void)Simulate(shared, cluster, {false}); });
        double traceS = BestSeconds(repeats, [&] { (void)Simulate(shared, cluster, {true}); }); // as the app: a shared plan
        char name[64], target[32] = "-";
        std::snprintf(name, sizeof name, "%s / %s", std::string(Name(k.c)).c_str(), std::string(Name(k.a)).c_str());
        double totalMs = (planS + traceS) * 1e3;
        if (k.targetMs > 0)
            std::snprintf(target, sizeof target, "%s %g", totalMs < k.targetMs ? "<" : "MISSED", k.targetMs);
        std::printf("%-36s %6d %10zu %10.2f %12.2f %12.2f %12.2f %10s\n", name, k.ranks, plan.transfers.size(),
                    planS * 1e3, simS * 1e3, traceS * 1e3, totalMs, target);
        if (k.targetMs > 0)
            ReportTarget(std::string("simulator: ") + name + ", " + std::to_string(k.ranks) + " ranks, plan + simulation + trace",
                         "< " + Fixed(k.targetMs, 0, "ms"), Fixed(totalMs, 1, "ms"), totalMs < k.targetMs);
        if (k.ranks == 1024 && k.a == Algorithm::Ring) { // the speed issue's: the trace within 5x the bare simulation
            ReportTarget("simulator: 1024-rank ring with its trace", "<= 500 ms", Fixed(traceS * 1e3, 0, "ms"), traceS <= 0.5);
            ReportTarget("simulator: 1024-rank ring, trace / bare simulation", "<= 5x", Fixed(traceS / simS, 1, "x"), traceS <= 5 * simS);
            // The dependencies are derived from the plan when a consumer (critical path, what-if,
            // a saved file) first asks: shown, not a target.
            double depsS = BestSeconds(repeats, [&] {
                SimResult r = Simulate(shared, cluster, {true});
                (void)r.trace->Dependencies();
            }) - traceS;
            std::printf("%-36s %6d   its %zu dependencies derived when first asked: %.0f ms more\n", "", k.ranks,
                        Simulate(shared, cluster, {true}).trace->Dependencies().size(), depsS * 1e3);
            SavedByTheCli();
        }
    }
    std::printf("\ntotal = plan + simulation with trace; target in ms (from the foundation issue)\n");
    return 0;
}
