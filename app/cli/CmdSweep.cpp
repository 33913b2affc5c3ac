// paralens sweep: a size sweep printed like nccl-tests, with the model's time of every algorithm.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "sim/Simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#if PARALENS_HAVE_MPI
#include "mpi/MpiSweep.hpp"
#endif

namespace paralens::app {

namespace {

struct SweepOptions {
    std::string collective = "allreduce";
    std::string algorithm;
    int ranks = 8;
    std::string minBytes = "8";
    std::string maxBytes = "128MiB";
    double factor = 2.0;
    std::string dtype = "float";
    int root = 0;
    ClusterOptions cluster;
    bool json = false;
    std::string backend = "sim";
    int iterations = 5;
    int warmup = 1;
    double timeoutSec = 30.0;
    std::string fitOut;
};

struct AlgoResult {
    double simulated = 0, predicted = 0;
    bool exact = false;
};

std::vector<uint64_t> Sizes(uint64_t minBytes, uint64_t maxBytes, double factor, uint64_t elem)
{
    std::vector<uint64_t> sizes;
    for (double s = static_cast<double>(minBytes); s <= static_cast<double>(maxBytes) * (1 + 1e-12); s *= factor) {
        uint64_t b = static_cast<uint64_t>(std::llround(s)) / elem * elem;
        if (sizes.empty() || b != sizes.back()) sizes.push_back(b);
        if (sizes.size() > 100000) break;
    }
    return sizes;
}

void PrintHeader(const SweepOptions& o, core::Collective c, const std::vector<core::Algorithm>& algos, bool all)
{
    std::printf("# paralens sweep: %s on %d modelled ranks, %s\n", std::string(core::Name(c)).c_str(), o.ranks,
                o.cluster.Describe().c_str());
    if (all) {
        std::printf("# time = simulated time of each algorithm; algbw/busbw of the fastest; * where the simulation "
                    "differs from the model\n#\n");
        std::printf("#%11s %13s %9s %7s %7s", "size", "count", "type", "redop", "root");
        for (auto a : algos) std::printf(" %18s", std::string(core::Name(a)).c_str());
        std::printf(" %18s %8s %8s\n", "fastest", "algbw", "busbw");
        std::printf("#%11s %13s %9s %7s %7s", "(B)", "(elements)", "", "", "");
        for (size_t i = 0; i < algos.size(); ++i) std::printf(" %18s", "(us)");
        std::printf(" %18s %8s %8s\n", "", "(GB/s)", "(GB/s)");
        return;
    }
    std::printf("# time/algbw/busbw: simulated %s; model: the formula's time of every algorithm\n#\n",
                std::string(core::Name(algos.front())).c_str());
    std::printf("#%11s %13s %9s %7s %7s %11s %8s %8s  |", "size", "count", "type", "redop", "root", "time", "algbw", "busbw");
    for (auto a : core::AlgorithmsFor(c)) std::printf(" %18s", std::string(core::Name(a)).c_str());
    std::printf(" | %s\n", "fastest (model)");
    std::printf("#%11s %13s %9s %7s %7s %11s %8s %8s  |", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
    for (size_t i = 0; i < core::AlgorithmsFor(c).size(); ++i) std::printf(" %18s", "(us)");
    std::printf(" |\n");
}

void RunSweep(const SweepOptions& o)
{
    const core::Collective c = ParseCollectiveOption(o.collective);
    const bool all = o.algorithm == "all";
    std::vector<core::Algorithm> selected;
    if (all) selected.assign(core::AlgorithmsFor(c).begin(), core::AlgorithmsFor(c).end());
    else selected.push_back(ParseAlgorithmOption(o.algorithm, c));
    Require(o.ranks >= 1, "--ranks: must be at least 1 (got " + std::to_string(o.ranks) + ")");
    Require(o.factor > 1.0, "--factor: must be greater than 1 (got " + std::to_string(o.factor) + ")");
    const uint64_t elem = DtypeBytes(o.dtype);
    const uint64_t minBytes = ParseSizeOption("--min-bytes", o.minBytes);
    const uint64_t maxBytes = ParseSizeOption("--max-bytes", o.maxBytes);
    Require(minBytes <= maxBytes, "--min-bytes: must not exceed --max-bytes");
    Require(maxBytes >= elem, "--max-bytes: must hold at least one " + o.dtype + " (" + std::to_string(elem) + " bytes)");
    if (core::HasRoot(c))
        Require(o.root >= 0 && o.root < o.ranks, "--root: must be a rank from 0 to " + std::to_string(o.ranks - 1));
    const core::ClusterModel cluster = o.cluster.ToModel();
    const core::CostParams params{cluster.alphaSec, cluster.betaSecPerByte, cluster.gammaSecPerByte};
    const auto sizes = Sizes(std::max(minBytes, elem), maxBytes, o.factor, elem);
    const auto modelAlgos = all ? selected : std::vector<core::Algorithm>(core::AlgorithmsFor(c).begin(), core::AlgorithmsFor(c).end());

    nlohmann::json rows = nlohmann::json::array();
    if (!o.json) PrintHeader(o, c, selected, all);
    const char* redop = core::Reduces(c) ? "sum" : "none";
    const int rootShown = core::HasRoot(c) ? o.root : -1;
    for (uint64_t bytes : sizes) {
        core::CollectiveSpec spec{c, selected.front(), o.ranks, bytes, o.root, elem};
        std::vector<AlgoResult> results(modelAlgos.size());
        for (size_t i = 0; i < modelAlgos.size(); ++i) {
            spec.algorithm = modelAlgos[i];
            core::Prediction pr = core::PredictSeconds(spec, params);
            results[i].predicted = core::RoundToPicoseconds(pr.seconds);
            results[i].exact = pr.exact;
            if (all || modelAlgos[i] == selected.front()) {
                core::Plan plan = core::BuildPlan(spec);
                results[i].simulated = core::RoundToPicoseconds(core::Simulate(plan, cluster, {false}).seconds);
            }
        }
        size_t fastest = 0, shown = 0;
        for (size_t i = 0; i < modelAlgos.size(); ++i) {
            double key = all ? results[i].simulated : results[i].predicted;
            double best = all ? results[fastest].simulated : results[fastest].predicted;
            if (key < best) fastest = i;
            if (modelAlgos[i] == selected.front()) shown = i;
        }
        const size_t timed = all ? fastest : shown;
        const double t = results[timed].simulated;
        const double algbw = core::AlgBwGBps(bytes, t);
        const double busbw = algbw * core::BusBwFactor(c, o.ranks);
        if (o.json) {
            nlohmann::json row{{"bytes", bytes}, {"count", bytes / elem}, {"type", o.dtype}, {"redop", redop},
                               {"root", rootShown}, {"algorithm", core::Name(modelAlgos[timed])}, {"timeSeconds", t},
                               {"algbwGBps", algbw}, {"busbwGBps", busbw}, {"fastest", core::Name(modelAlgos[fastest])}};
            nlohmann::json per = nlohmann::json::object();
            for (size_t i = 0; i < modelAlgos.size(); ++i) {
                nlohmann::json a{{"predictedSeconds", results[i].predicted}, {"predictionExact", results[i].exact}};
                if (all || i == shown) a["simulatedSeconds"] = results[i].simulated;
                per[std::string(core::Name(modelAlgos[i]))] = a;
            }
            row["algorithms"] = per;
            rows.push_back(row);
            continue;
        }
        std::printf(" %11llu %13llu %9s %7s %7d", static_cast<unsigned long long>(bytes),
                    static_cast<unsigned long long>(bytes / elem), o.dtype.c_str(), redop, rootShown);
        if (all) {
            for (const AlgoResult& r : results) {
                bool differs = std::fabs(r.simulated - r.predicted) > 1e-9 * std::max(r.predicted, 1e-30);
                std::printf(" %17.2f%s", r.simulated * 1e6, differs ? "*" : " ");
            }
            std::printf(" %18s %8.2f %8.2f\n", std::string(core::Name(modelAlgos[fastest])).c_str(), algbw, busbw);
        } else {
            std::printf(" %11.2f %8.2f %8.2f  |", t * 1e6, algbw, busbw);
            for (const AlgoResult& r : results) std::printf(" %18.2f", r.predicted * 1e6);
            std::printf(" | %s\n", std::string(core::Name(modelAlgos[fastest])).c_str());
        }
        std::fflush(stdout);
    }
    if (o.json) {
        nlohmann::json doc{{"collective", core::Name(c)}, {"ranks", o.ranks}, {"dtype", o.dtype},
                           {"alphaUs", o.cluster.alphaUs}, {"bandwidthGBps", o.cluster.bandwidthGBps},
                           {"gammaGBps", o.cluster.gammaGBps}, {"rows", rows}};
        nlohmann::json names = nlohmann::json::array();
        for (auto a : modelAlgos) names.push_back(core::Name(a));
        doc["algorithms"] = names;
        doc["simulated"] = all ? "all" : std::string(core::Name(selected.front()));
        PrintJson(doc);
    }
}

} // namespace

namespace {

// `sweep --backend mpi`: the sizes measured between the processes of an mpirun job, then fitted.
int RunMeasuredSweep(const SweepOptions& o)
{
    Require(o.backend == "mpi", "--backend: unknown backend '" + o.backend + "'; accepted: sim, mpi");
#if PARALENS_HAVE_MPI
    const core::Collective c = ParseCollectiveOption(o.collective);
    Require(o.algorithm != "all", "--algorithm all: a measured sweep fits one algorithm at a time");
    Require(o.factor > 1.0, "--factor: must be greater than 1");
    Require(o.iterations >= 1 && o.warmup >= 0 && o.timeoutSec > 0, "--iters >= 1, --warmup >= 0 and --timeout-s > 0");
    mpi::MpiSweepOptions m;
    m.collective = c;
    m.algorithm = ParseAlgorithmOption(o.algorithm, c);
    m.elementBytes = DtypeBytes(o.dtype);
    const uint64_t minBytes = ParseSizeOption("--min-bytes", o.minBytes), maxBytes = ParseSizeOption("--max-bytes", o.maxBytes);
    Require(minBytes <= maxBytes, "--min-bytes: must not exceed --max-bytes");
    m.sizes = Sizes(std::max(minBytes, m.elementBytes), maxBytes, o.factor, m.elementBytes);
    m.dtype = o.dtype;
    m.root = o.root;
    m.iterations = o.iterations;
    m.warmup = o.warmup;
    m.timeoutSec = o.timeoutSec;
    m.fitOut = o.fitOut;
    m.json = o.json;
    if (!o.fitOut.empty()) CheckWritable("--fit-out", o.fitOut);
    return mpi::RunMpiSweep(m);
#else
    throw Error("--backend mpi: this paralens was built without MPI (install openmpi-bin and libopenmpi-dev, then rebuild)");
#endif
}

} // namespace

void AddSweepCommand(CLI::App& root, int& exitCode)
{
    auto opts = std::make_shared<SweepOptions>();
    CLI::App* cmd = root.add_subcommand("sweep", "Sweep message sizes like nccl-tests, with every algorithm's model time");
    cmd->add_option("--collective,-c", opts->collective, "One of: " + core::CollectiveNamesList())->capture_default_str();
    cmd->add_option("--algorithm,-a", opts->algorithm, "The algorithm to simulate, or 'all' (default: the collective's first)");
    cmd->add_option("--ranks,-p", opts->ranks, "Number of ranks p")->capture_default_str();
    cmd->add_option("--min-bytes,-b", opts->minBytes, "Smallest size (8, 64KiB, ...)")->capture_default_str();
    cmd->add_option("--max-bytes,-e", opts->maxBytes, "Largest size")->capture_default_str();
    cmd->add_option("--factor,-f", opts->factor, "Multiply the size by this between rows (> 1)")->capture_default_str();
    cmd->add_option("--dtype,-d", opts->dtype, "Element type: float, half, bfloat16, double, int8, ...")->capture_default_str();
    cmd->add_option("--root", opts->root, "Root rank of rooted collectives")->capture_default_str();
    opts->cluster.AddTo(*cmd);
    cmd->add_flag("--json", opts->json, "Machine-readable output on stdout");
    cmd->add_option("--backend,-B", opts->backend, "sim: the modelled cluster; mpi: measured between the processes of "
                                                   "mpirun -np N paralens sweep --backend mpi, then fitted")->capture_default_str();
    cmd->add_option("--iters", opts->iterations, "[mpi] timed iterations per size")->capture_default_str();
    cmd->add_option("--warmup", opts->warmup, "[mpi] untimed iterations first")->capture_default_str();
    cmd->add_option("--timeout-s", opts->timeoutSec, "[mpi] a rank silent this long is declared dead or hung")->capture_default_str();
    cmd->add_option("--fit-out", opts->fitOut, "[mpi] save the alpha-beta fit (for paralens simulate --model)");
    cmd->callback([opts, &exitCode] {
        if (opts->backend == "sim") RunSweep(*opts);
        else exitCode = RunMeasuredSweep(*opts);
    });
}

} // namespace paralens::app
