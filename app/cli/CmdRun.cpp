// paralens run: workloads for real. Backends: mpi (collectives between the processes of an
// mpirun job; app/mpi).
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "common/Error.hpp"

#include <memory>

#if PARALENS_HAVE_MPI
#include "mpi/MpiRun.hpp"
#endif

namespace paralens::app {

namespace {

struct RunOptions {
    std::string backend = "mpi";
    std::string collective = "allreduce";
    std::string algorithm;
    std::string bytes = "1MiB";
    int root = 0;
    int iterations = 5;
    int warmup = 1;
    int traceIterations = 20;
    double timeoutSec = 30.0;
    bool noMpiCompare = false;
    bool noCheck = false;
    uint64_t seed = 1;
    std::string out;
    bool json = false;
};

#if PARALENS_HAVE_MPI
std::vector<std::pair<core::Collective, core::Algorithm>> Cases(const RunOptions& o)
{
    std::vector<core::Collective> collectives;
    if (o.collective == "all") collectives.assign(core::AllCollectives().begin(), core::AllCollectives().end());
    else collectives.push_back(ParseCollectiveOption(o.collective));
    std::vector<std::pair<core::Collective, core::Algorithm>> cases;
    for (core::Collective c : collectives) {
        if (o.algorithm == "all") {
            for (core::Algorithm a : core::AlgorithmsFor(c)) cases.emplace_back(c, a);
        } else if (o.collective == "all" && !o.algorithm.empty()) {
            auto a = core::ParseAlgorithm(o.algorithm);
            if (!a) throw Error("--algorithm: unknown algorithm '" + o.algorithm + "'");
            if (core::Supports(c, *a)) cases.emplace_back(c, *a);
        } else {
            cases.emplace_back(c, ParseAlgorithmOption(o.algorithm, c));
        }
    }
    return cases;
}
#endif

int RunRun(const RunOptions& o)
{
    if (o.backend != "mpi") throw Error("--backend: unknown backend '" + o.backend + "'; accepted: mpi");
#if PARALENS_HAVE_MPI
    Require(o.iterations >= 1, "--iterations must be at least 1");
    Require(o.warmup >= 0, "--warmup must be >= 0");
    Require(o.timeoutSec > 0, "--timeout-s must be > 0");
    mpi::MpiRunOptions m;
    m.cases = Cases(o);
    m.bytes = ParseSizeOption("--bytes", o.bytes);
    m.root = o.root;
    m.iterations = o.iterations;
    m.warmup = o.warmup;
    m.traceIterations = o.traceIterations;
    m.timeoutSec = o.timeoutSec;
    m.compareMpi = !o.noMpiCompare;
    m.check = !o.noCheck;
    m.seed = o.seed;
    m.out = o.out;
    m.json = o.json;
    if (!o.out.empty()) CheckWritable("--out", o.out);
    return mpi::RunMpiBackend(m);
#else
    throw Error("--backend mpi: this paralens was built without MPI (install openmpi-bin and libopenmpi-dev, then rebuild)");
#endif
}

} // namespace

void AddRunCommand(CLI::App& root, int& exitCode)
{
    auto o = std::make_shared<RunOptions>();
    CLI::App* cmd = root.add_subcommand("run", "Run a workload for real: --backend mpi runs collectives between the processes of "
                                               "an mpirun job");
    cmd->add_option("--backend,-b", o->backend, "mpi: start with mpirun -np N paralens run --backend mpi ...")->capture_default_str();
    cmd->add_option("--collective,-c", o->collective, "A collective, or all")->capture_default_str();
    cmd->add_option("--algorithm,-a", o->algorithm, "An algorithm, or all (default: the collective's first)");
    cmd->add_option("--bytes,-n", o->bytes, "n, the full vector")->capture_default_str();
    cmd->add_option("--root", o->root, "Root of rooted collectives")->capture_default_str();
    cmd->add_option("--iterations", o->iterations, "Timed iterations")->capture_default_str();
    cmd->add_option("--warmup", o->warmup, "Untimed iterations first")->capture_default_str();
    cmd->add_option("--trace-iterations", o->traceIterations, "Timed iterations recorded in the traces (the first ones)")
        ->capture_default_str();
    cmd->add_option("--timeout-s", o->timeoutSec, "A rank silent this long is declared dead or hung")->capture_default_str();
    cmd->add_flag("--no-mpi-compare", o->noMpiCompare, "Do not time MPI's own collective");
    cmd->add_flag("--no-check", o->noCheck, "Do not check the results");
    cmd->add_option("--seed", o->seed, "Seed of the input values")->capture_default_str();
    cmd->add_option("--out,-o", o->out, "Merged trace (rank 0); each rank also writes FILE.rankN.json");
    cmd->add_flag("--json", o->json, "Machine-readable output on stdout (rank 0)");
    cmd->callback([o, &exitCode] { exitCode = RunRun(*o); });
}

} // namespace paralens::app
