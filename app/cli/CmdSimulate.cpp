// paralens simulate: one collective on the modelled cluster, next to its closed form.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "analysis/Extrapolation.hpp"
#include "analysis/Fitting.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"
#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "sim/Simulator.hpp"
#include "sim/TwoLevelCost.hpp"
#include "trace/TraceFile.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

namespace paralens::app {

namespace {

struct SimulateOptions {
    std::string collective = "allreduce";
    std::string algorithm;
    int ranks = 8;
    std::string bytes = "64MiB";
    int root = 0;
    int ranksPerNode = 0;
    ClusterOptions cluster;
    std::string model;    // a fit file (paralens fit --out)
    std::string netModel; // a fit file of a log across nodes: the network between them
    std::string out;
    bool json = false;
};

// Which of --alpha-us, --bandwidth-GBps, --gamma-GBps the user gave: they win over --model.
struct ExplicitCluster {
    bool alpha = false, bandwidth = false, gamma = false, netAlpha = false, netBandwidth = false;
};

// Takes alpha, beta and gamma from the fit file (--model's, read once) for the options not given
// explicitly; returns what was used, for the output.
std::string ApplyModel(SimulateOptions& o, const core::FitFile* model, const core::CollectiveSpec& spec, const ExplicitCluster& given)
{
    if (!model) return "";
    const core::FitFile& file = *model;
    std::string why;
    auto params = core::ModelFromFit(file, spec.collective, spec.ranks, spec.bytes, &why);
    if (!params) throw Error("--model: " + o.model + " holds no fit");
    if (!given.alpha) o.cluster.alphaUs = params->alphaSec * 1e6;
    if (!given.bandwidth) {
        Require(params->betaSecPerByte > 0, "--model: " + why + " has no bandwidth (give --bandwidth-GBps)");
        o.cluster.bandwidthGBps = 1.0 / params->betaSecPerByte / 1e9;
    }
    if (!given.gamma) o.cluster.gammaGBps = params->gammaSecPerByte > 0 ? 1.0 / params->gammaSecPerByte / 1e9 : 0.0;
    std::string overridden;
    if (given.alpha) overridden += " --alpha-us";
    if (given.bandwidth) overridden += " --bandwidth-GBps";
    if (given.gamma) overridden += " --gamma-GBps";
    return why + " in " + o.model + (overridden.empty() ? "" : "; given explicitly:" + overridden);
}

// --net-model: the network between nodes from a fit of a log across nodes, read per NIC as NCCL
// runs that log (analysis/Extrapolation.hpp NetworkLinkFromFit), at the line of the size whose bytes
// per NIC are this collective's (busbw factor x n / q), as `plan --network-fit` prices its
// traffic; a fit whose log named no hosts by its own line (ModelFromFit). --net-alpha-us and
// --net-bandwidth-GBps given explicitly win. Returns what was used, for the output.
std::string ApplyNetModel(SimulateOptions& o, const core::FitFile* model, const core::CollectiveSpec& spec, const ExplicitCluster& given)
{
    if (o.netModel.empty()) return "";
    Require(o.ranksPerNode > 0, "--net-model: give --ranks-per-node too (which ranks share a node)");
    const core::FitFile file = core::LoadFitFile(o.netModel);
    RequireFitOfLevel("--net-model", "--model", o.netModel, file, false);
    const double perNic = core::BusBwFactor(spec.collective, spec.ranks) * static_cast<double>(spec.bytes) / o.ranksPerNode;
    // A two-node log's latency holds its NVLink hops too: theirs as the smallest sizes of --model
    // price them (as `extrapolate` reads its node log), else --alpha-us.
    double alphaIntra = o.cluster.alphaUs * 1e-6;
    if (model && !given.alpha)
        if (auto small = core::ModelFromFit(*model, core::Collective::AllReduce, o.ranksPerNode, 1, nullptr))
            alphaIntra = small->alphaSec;
    std::string why;
    std::optional<core::CostParams> p = core::NetworkLinkFromFit(file, perNic, alphaIntra, &why);
    if (!p) p = core::ModelFromFit(file, spec.collective, spec.ranks, spec.bytes, &why);
    Require(p.has_value() && p->betaSecPerByte > 0, "--net-model: " + o.netModel + " holds no fit with a bandwidth");
    if (!given.netAlpha) o.cluster.netAlphaUs = p->alphaSec * 1e6;
    if (!given.netBandwidth) o.cluster.netBandwidthGBps = 1e-9 / p->betaSecPerByte;
    std::string overridden;
    if (given.netAlpha) overridden += " --net-alpha-us";
    if (given.netBandwidth) overridden += " --net-bandwidth-GBps";
    return why + " in " + o.netModel + (overridden.empty() ? "" : "; given explicitly:" + overridden);
}

nlohmann::json TwoLevelJson(const core::TwoLevelModel& t, double stepByStep, const core::CollectiveSpec& spec, const ClusterOptions& c)
{
    return {{"ranksPerNode", spec.ranksPerNode},
            {"nodes", spec.Nodes()},
            {"netAlphaUs", c.netAlphaUs},
            {"netBandwidthGBps", c.netBandwidthGBps},
            {"predictedSeconds", core::RoundToPicoseconds(t.seconds)},
            {"intraNodeSeconds", core::RoundToPicoseconds(t.intraSeconds)},
            {"interNodeSeconds", core::RoundToPicoseconds(t.netSeconds)},
            {"stepByStepSeconds", core::RoundToPicoseconds(stepByStep)},
            {"fromFormula", t.formula},
            {"exact", t.exact}};
}

void PrintTwoLevel(const core::TwoLevelModel& t, const core::CollectiveSpec& spec)
{
    std::printf("  model      %12.6f us   on %d nodes of %d: within nodes %.6f us, between nodes %.6f us (%s%s)\n", t.seconds * 1e6,
                spec.Nodes(), spec.ranksPerNode, t.intraSeconds * 1e6, t.netSeconds * 1e6,
                t.formula ? "formula: " : "step by step: the slowest message of each step",
                !t.formula                                ? ""
                : spec.algorithm == core::Algorithm::Ring ? "2(p-1) a' + (p-1)/p n (2b' + g), a' and b' between nodes"
                                                          : core::FormulaText(spec.collective, spec.algorithm).c_str());
}

void RunSimulate(SimulateOptions o, const ExplicitCluster& given)
{
    core::CollectiveSpec spec;
    spec.collective = ParseCollectiveOption(o.collective);
    spec.algorithm = ParseAlgorithmOption(o.algorithm, spec.collective);
    Require(o.ranks >= 1, "--ranks: must be at least 1 (got " + std::to_string(o.ranks) + ")");
    spec.ranks = o.ranks;
    spec.bytes = ParseSizeOption("--bytes", o.bytes);
    spec.root = o.root;
    Require(o.ranksPerNode >= 0, "--ranks-per-node: must be at least 0 (got " + std::to_string(o.ranksPerNode) + ")");
    spec.ranksPerNode = o.ranksPerNode;
    Require(o.cluster.netBandwidthGBps <= 0 || o.ranksPerNode > 0,
            "--net-bandwidth-GBps: give --ranks-per-node too (which ranks share a node)");
    if (core::HasRoot(spec.collective))
        Require(o.root >= 0 && o.root < o.ranks, "--root: must be a rank from 0 to " + std::to_string(o.ranks - 1) +
                                                     " (got " + std::to_string(o.root) + ")");
    std::optional<core::FitFile> model;
    if (!o.model.empty()) model = core::LoadFitFile(o.model);
    const std::string modelFrom = ApplyModel(o, model ? &*model : nullptr, spec, given);
    const std::string netModelFrom = ApplyNetModel(o, model ? &*model : nullptr, spec, given);
    core::ClusterModel cluster = o.cluster.ToModel();
    if (!o.out.empty()) CheckWritable("--out", o.out);

    const auto shared = std::make_shared<const core::Plan>(core::BuildPlan(spec)); // the trace keeps it
    const core::Plan& plan = *shared;
    core::SimOptions simOptions;
    simOptions.buildTrace = !o.out.empty();
    core::SimResult sim = core::Simulate(shared, cluster, simOptions);
    core::CostParams params{cluster.alphaSec, cluster.betaSecPerByte, cluster.gammaSecPerByte};
    core::Prediction pred = core::PredictSeconds(spec, params);
    const core::TwoLevelModel twoLevel = core::ModelOnTwoLevels(spec, cluster, &plan);
    if (twoLevel.twoLevel) pred = {twoLevel.seconds, twoLevel.exact};
    const double lecture = core::LectureSeconds(spec.collective, spec.algorithm, spec.ranks, static_cast<double>(spec.bytes), params);
    const double simulated = core::RoundToPicoseconds(sim.seconds);
    const double predicted = core::RoundToPicoseconds(pred.seconds);
    const double algbw = core::AlgBwGBps(spec.bytes, sim.seconds);
    const double factor = core::BusBwFactor(spec.collective, spec.ranks);
    if (!o.out.empty()) core::WriteTraceFile(*sim.trace, o.out);

    if (o.json) {
        nlohmann::json j;
        j["collective"] = core::Name(spec.collective);
        j["algorithm"] = core::Name(spec.algorithm);
        j["ranks"] = spec.ranks;
        j["bytes"] = spec.bytes;
        if (core::HasRoot(spec.collective)) j["root"] = spec.root;
        j["alphaUs"] = o.cluster.alphaUs;
        j["bandwidthGBps"] = o.cluster.bandwidthGBps;
        j["gammaGBps"] = o.cluster.gammaGBps;
        j["simulatedSeconds"] = simulated;
        j["predictedSeconds"] = predicted;
        j["predictionExact"] = pred.exact;
        j["lectureSeconds"] = core::RoundToPicoseconds(lecture);
        j["formula"] = core::FormulaText(spec.collective, spec.algorithm);
        j["algbwGBps"] = algbw;
        j["busbwGBps"] = algbw * factor;
        j["busbwFactor"] = factor;
        j["transfers"] = sim.transfers;
        j["steps"] = plan.steps.size();
        j["wireBytes"] = sim.wireBytes;
        if (!cluster.stragglers.empty()) j["stragglers"] = cluster.StragglersText();
        if (twoLevel.twoLevel) j["twoLevel"] = TwoLevelJson(twoLevel, core::PricePlan(plan, cluster).seconds, spec, o.cluster);
        if (!o.model.empty()) {
            j["model"] = o.model;
            j["modelFrom"] = modelFrom;
        }
        if (!o.netModel.empty()) {
            j["netModel"] = o.netModel;
            j["netModelFrom"] = netModelFrom;
        }
        if (!o.out.empty()) j["out"] = o.out;
        PrintJson(j);
        return;
    }
    std::printf("%s / %s on %d ranks, %s (%s)\n", std::string(core::Name(spec.collective)).c_str(),
                std::string(core::Name(spec.algorithm)).c_str(), spec.ranks, core::FormatBytes(spec.bytes).c_str(),
                o.cluster.Describe().c_str());
    if (!modelFrom.empty()) std::printf("  model from %s\n", modelFrom.c_str());
    if (!netModelFrom.empty()) std::printf("  network %s\n", netModelFrom.c_str());
    std::printf("  simulated  %12.6f us   %zu messages in %zu steps, %s on the wire\n", simulated * 1e6, sim.transfers,
                plan.steps.size(), core::FormatBytes(sim.wireBytes).c_str());
    if (twoLevel.twoLevel) PrintTwoLevel(twoLevel, spec);
    else
        std::printf("  model      %12.6f us   %s%s%s\n", predicted * 1e6, core::FormulaText(spec.collective, spec.algorithm).c_str(),
                    pred.exact ? "" : "  (approximate for this p, n and root)",
                    cluster.stragglers.empty() && cluster.links.empty() ? "" : "  (the formula knows no stragglers or link overrides)");
    std::printf("  algbw %.3f GB/s   busbw %.3f GB/s (factor %.4g)\n", algbw, algbw * factor, factor);
    if (!o.out.empty())
        std::printf("  trace: %s  (open it with `paralens %s`, or in https://ui.perfetto.dev)\n", o.out.c_str(), o.out.c_str());
}

} // namespace

void AddSimulateCommand(CLI::App& root)
{
    auto opts = std::make_shared<SimulateOptions>();
    CLI::App* cmd = root.add_subcommand("simulate", "Run one collective on the modelled cluster and compare it with its formula");
    cmd->add_option("--collective,-c", opts->collective, "One of: " + core::CollectiveNamesList())->capture_default_str();
    cmd->add_option("--algorithm,-a", opts->algorithm,
                    "ring, tree, halving-doubling, recursive-doubling, naive, pairwise, direct, hierarchical or "
                    "hierarchical-tree (allreduce on nodes: see --ranks-per-node) (default: the collective's first: ring; pairwise for "
                    "alltoall; direct for sendrecv)");
    cmd->add_option("--ranks,-p", opts->ranks, "Number of ranks p (>= 1)")->capture_default_str();
    cmd->add_option("--bytes,-n", opts->bytes, "Size n of the full vector: 8, 64KiB, 64MiB, 1GiB, 1GB, ...")->capture_default_str();
    cmd->add_option("--root", opts->root, "Root rank of broadcast, reduce, scatter and gather")->capture_default_str();
    cmd->add_option("--ranks-per-node", opts->ranksPerNode,
                    "Consecutive ranks per node (0: one node): the hierarchical algorithms' groups; with "
                    "--net-bandwidth-GBps, which messages cross the network")
        ->capture_default_str();
    opts->cluster.AddTo(*cmd);
    opts->cluster.AddNetworkTo(*cmd);
    cmd->add_option("--model", opts->model,
                    "Take alpha, bandwidth and gamma from a fit file (`paralens fit --out FIT.json`) or an nccl-tests log (fitted so): the fit of this "
                    "collective (nearest rank count), else the joint fit, else the first; --alpha-us, --bandwidth-GBps "
                    "and --gamma-GBps given explicitly win");
    cmd->add_option("--net-model", opts->netModel,
                    "Take the network between nodes from a fit file of a log across nodes (`paralens fit --out`), or the log itself (needs "
                    "--ranks-per-node): per NIC as NCCL ran that log, at this collective's bytes per NIC, as `plan "
                    "--network-fit` prices it; --net-alpha-us and --net-bandwidth-GBps given explicitly win");
    cmd->add_option("--out,-o", opts->out, "Write the simulated trace here (.json, or .json.gz compressed)");
    cmd->add_flag("--json", opts->json, "Machine-readable output on stdout");
    cmd->callback([opts, cmd] {
        ExplicitCluster given{cmd->count("--alpha-us") > 0, cmd->count("--bandwidth-GBps") > 0, cmd->count("--gamma-GBps") > 0,
                              cmd->count("--net-alpha-us") > 0, cmd->count("--net-bandwidth-GBps") > 0};
        RunSimulate(*opts, given);
    });
}

} // namespace paralens::app
