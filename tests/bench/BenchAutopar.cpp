// How fast the auto-parallelization search answers: the intra-op solvers on the lectures' graphs
// and on a 24-layer transformer stack, and the inter-op search. Targets (auto-parallelization
// issue): the ILP for a 24-layer transformer graph on 8 devices under 2 s; the lectures' small
// graphs re-solve (every solver the window compares) in under 50 ms, so sliders feel instant.
#include "BenchMachine.hpp"

#include "common/Error.hpp"

#include "autopar/Autopar.hpp"

#include <cmath>
#include <cstdio>

using namespace paralens::core;

namespace {

struct Case {
    const char* graph;
    int layers;
    const char* mesh;
    std::vector<std::string> solvers;
    int microBatches;
    double targetMs; // 0: none
};

void Row(const Case& c)
{
    AutoparRequest r;
    r.graph = c.graph;
    r.layers = c.layers;
    r.mesh = ParseMeshShape(c.mesh, "--mesh");
    r.solvers = c.solvers;
    r.microBatches = c.microBatches;
    AutoparResult res;
    const int repeats = c.layers > 1 ? 1 : 5;
    std::string solvers;
    for (const std::string& s : c.solvers) solvers += (solvers.empty() ? "" : ",") + s;
    if (c.microBatches > 0) solvers += " +inter-op";
    double total = 0;
    try {
        total = BestSeconds(repeats, [&] { res = RunAutopar(r); }) * 1e3;
    } catch (const paralens::Error& e) { // a solver that answers nothing in its time: the row says so
        std::printf("%-12s %3d %5s %5s %-42s %10s %10s  %s\n", c.graph, c.layers, c.mesh, "-", solvers.c_str(), "-", "MISSED", e.what());
        if (c.targetMs > 0)
            ReportTarget(std::string("autopar: ") + c.graph + " x" + std::to_string(c.layers) + " on " + c.mesh + " (" + solvers + ")",
                         "< " + Fixed(c.targetMs, 0, "ms"), "no solution", false);
        return;
    }
    std::string times;
    for (const IntraOpSolution& s : res.solutions) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%s %.1f", times.empty() ? "" : ", ", s.name.c_str(), s.solveSeconds * 1e3);
        times += buf;
    }
    if (res.interOp) {
        char buf[64];
        std::snprintf(buf, sizeof buf, ", stage tables %.1f, stage DP %.1f", res.stageCostSeconds * 1e3, res.interOp->solveSeconds * 1e3);
        times += buf;
    }
    for (const std::string& n : res.notes) times += " [" + n + "]";
    char target[32] = "-";
    if (c.targetMs > 0) std::snprintf(target, sizeof target, "%s %g", total < c.targetMs ? "<" : "MISSED", c.targetMs);
    std::printf("%-12s %3d %5s %5zu %-42s %10.1f %10s  %s\n", c.graph, c.layers, c.mesh, res.graph->ops.size(), solvers.c_str(), total,
                target, times.c_str());
    if (c.targetMs > 0)
        ReportTarget(std::string("autopar: ") + c.graph + " x" + std::to_string(c.layers) + " on " + c.mesh + " (" + solvers + ")",
                     "< " + Fixed(c.targetMs, 0, "ms"), Fixed(total, 1, "ms"), total < c.targetMs);
}

} // namespace

int main()
{
    std::printf("paralens auto-parallelization benchmark on %s\n\n", MachineDescription().c_str());
    std::printf("%-12s %3s %5s %5s %-42s %10s %10s  %s\n", "graph", "L", "mesh", "ops", "solvers", "total (ms)", "target", "per solver (ms)");
    const std::vector<std::string> all{"ilp", "dp", "greedy", "random", "data-parallel", "megatron"};
    const Case cases[] = {
        {"mlp", 1, "2", all, 0, 50},
        {"mlp", 1, "4", all, 0, 50},
        {"convnet", 1, "4", all, 0, 50},
        {"transformer", 1, "8", all, 0, 50},
        {"transformer", 1, "2x4", all, 0, 50},
        {"transformer", 1, "2x4", {"dp", "greedy", "random", "data-parallel", "megatron"}, 0, 50},
        {"transformer", 24, "8", {"ilp"}, 0, 2000},
        {"transformer", 24, "8", {"dp"}, 0, 0},
        {"transformer", 24, "2x4", {"ilp"}, 0, 2000}, // the speed issue's: optimal on 2x4 in < 2 s
        {"transformer", 24, "2x4", {"dp"}, 0, 0},
        {"transformer", 24, "2x4", {"dp"}, 8, 0},
    };
    for (const Case& c : cases) Row(c);
    // The speed issue: keep the DP and show that the ILP and the DP agree on the optimum.
    for (const char* mesh : {"8", "2x4"}) {
        AutoparRequest r;
        r.graph = "transformer";
        r.layers = 24;
        r.mesh = ParseMeshShape(mesh, "--mesh");
        r.solvers = {"ilp", "dp"};
        const AutoparResult res = RunAutopar(r);
        const IntraOpSolution &ilp = *res.Find("ilp"), &dp = *res.Find("dp");
        const double diff = std::abs(ilp.costSeconds - dp.costSeconds) / dp.costSeconds;
        std::printf("transformer x24 on %s: ILP %.6f s (%s), DP %.6f s, relative difference %.1e\n", mesh, ilp.costSeconds,
                    ilp.note.c_str(), dp.costSeconds, diff);
        char measured[32];
        std::snprintf(measured, sizeof measured, "%.1e", diff);
        ReportTarget(std::string("autopar: transformer x24 on ") + mesh + ", ILP and DP optimum agree", "within 1e-9", measured,
                     ilp.optimal && dp.optimal && diff <= 1e-9);
    }
    std::printf("\ntotal = the whole request (graph, cost tables, every solver listed, inter-op when asked), best of 5 runs\n"
                "(1 for 24 layers); the default sizes (batch 8, seq 1024, hidden 4096, ffn 16384, bf16)\n");
    return 0;
}
