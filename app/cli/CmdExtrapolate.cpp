// paralens extrapolate: an allreduce on several nodes predicted from a one-node allreduce log and
// a log across nodes (sendrecv, allreduce, allgather or reduce-scatter; analysis/Extrapolation.hpp),
// for the log's GPUs per node or another count, beside a measured log when one is given.
#include "CliCommon.hpp"
#include "Commands.hpp"

#include "analysis/Extrapolation.hpp"
#include "analysis/Fitting.hpp"
#include "common/Error.hpp"
#include "common/Units.hpp"

#include <cstdio>
#include <memory>
#include <optional>

namespace paralens::app {

namespace {

using Json = nlohmann::json;

struct ExtrapolateOptions {
    std::string node, net, compare;
    int nodes = 0, ranksPerNode = 0;
    bool json = false;
};

// The out-of-place samples of `collective` in an nccl-tests log; throws naming the option and file.
core::FitGroup GroupOf(const char* option, const std::string& path, const core::NcclTestsLog& log, core::Collective collective)
{
    for (core::FitGroup& g : core::FitGroupsFromLog(log, core::LogHalf::OutOfPlace))
        if (g.collective == collective) return std::move(g);
    throw Error(std::string(option) + ": " + path + " has no " + std::string(core::Name(collective)) + " table");
}

// The GPU a log's header names ("NVIDIA A100-SXM4-40GB"; empty when it prints no device lines).
std::string GpuOf(const core::NcclTestsLog& log)
{
    for (const core::NcclTestsBlock& b : log.blocks)
        for (const core::NcclTestsDevice& d : b.devices)
            if (!d.gpu.empty()) return d.gpu;
    return {};
}

// Logs of two machines predict neither: refused where both headers name their GPUs.
void RequireSameGpu(const char* option, const std::string& path, const core::NcclTestsLog& log, const ExtrapolateOptions& o,
                    const core::NcclTestsLog& nodeLog)
{
    const std::string gpu = GpuOf(log), nodeGpu = GpuOf(nodeLog);
    Require(gpu.empty() || nodeGpu.empty() || gpu == nodeGpu, std::string(option) + ": " + path + " ran on " + gpu + ", --node's " + o.node +
                                                                  " on " + nodeGpu + " (their headers' device lines): give logs of one machine");
}

Json ToJson(const core::Extrapolation& e, const ExtrapolateOptions& o)
{
    Json rows = Json::array();
    for (const core::ExtrapolationRow& r : e.rows) {
        Json j{{"bytes", r.bytes},
               {"ringUs", r.ringSec * 1e6},
               {"treeUs", r.treeSec * 1e6},
               {"hierarchicalUs", r.hierarchicalSec * 1e6},
               {"bestUs", r.bestSec * 1e6},
               {"ringIntraNodeUs", r.ringIntraSec * 1e6},
               {"ringInterNodeUs", r.ringNetSec * 1e6},
               {"treeIntraNodeUs", r.treeIntraSec * 1e6},
               {"treeInterNodeUs", r.treeNetSec * 1e6},
               {"hierarchicalIntraNodeUs", r.hierarchicalIntraSec * 1e6},
               {"hierarchicalInterNodeUs", r.hierarchicalNetSec * 1e6}};
        if (r.measuredSec > 0) {
            j["measuredUs"] = r.measuredSec * 1e6;
            j["bestErrorPct"] = r.ErrorPct(r.bestSec);
        }
        rows.push_back(j);
    }
    Json out{{"node", o.node},         {"net", o.net},   {"netNodes", e.netNodes}, {"netRanksPerNode", e.netRanksPerNode},
             {"ranksPerNode", e.ranksPerNode}, {"nodes", e.nodes}, {"rows", rows}};
    if (!o.compare.empty()) {
        out["compare"] = o.compare;
        out["measuredRows"] = e.measuredRows;
        out["ringMapePct"] = e.ringMapePct;
        out["treeMapePct"] = e.treeMapePct;
        out["hierarchicalMapePct"] = e.hierarchicalMapePct;
        out["bestMapePct"] = e.bestMapePct;
        out["worstErrorPct"] = e.worstErrorPct;
        out["worstBytes"] = e.worstBytes;
    }
    return out;
}

void PrintText(const core::Extrapolation& e, const ExtrapolateOptions& o)
{
    std::printf("allreduce on %d nodes of %d GPUs (%d ranks), from %s (within a node) and %s (between nodes: %d of %d GPUs)\n",
                e.nodes, e.ranksPerNode, e.nodes * e.ranksPerNode, o.node.c_str(), o.net.c_str(), e.netNodes, e.netRanksPerNode);
    std::printf("  %12s %13s %13s %13s %13s %13s %9s\n", "size", "ring (us)", "tree (us)", "best (us)", "hier. (us)",
                "measured (us)", "error");
    for (const core::ExtrapolationRow& r : e.rows) {
        std::printf("  %12s %13.2f %13.2f %13.2f %13.2f", core::FormatBytes(r.bytes).c_str(), r.ringSec * 1e6, r.treeSec * 1e6,
                    r.bestSec * 1e6, r.hierarchicalSec * 1e6);
        if (r.measuredSec > 0) std::printf(" %13.2f %8.1f%%\n", r.measuredSec * 1e6, r.ErrorPct(r.bestSec));
        else std::printf(" %13s %9s\n", "-", "-");
    }
    if (e.measuredRows > 0)
        std::printf("  against %s (%zu sizes): MAPE ring %.1f %%, tree %.1f %%, the faster (NCCL's choice) %.1f %% (worst %+.1f %% at "
                    "%s); the textbook hierarchical allreduce %.1f %%\n",
                    o.compare.c_str(), e.measuredRows, e.ringMapePct, e.treeMapePct, e.bestMapePct, e.worstErrorPct,
                    core::FormatBytes(e.worstBytes).c_str(), e.hierarchicalMapePct);
}

void RunExtrapolate(const ExtrapolateOptions& o)
{
    const core::NcclTestsLog nodeLog = core::ReadNcclTestsLogFile(o.node);
    const core::FitGroup nodeGroup = GroupOf("--node", o.node, nodeLog, core::Collective::AllReduce);
    Require(nodeGroup.nodes <= 1, "--node: " + o.node + " has its " + std::to_string(nodeGroup.ranks) + " ranks on " +
                                      std::to_string(nodeGroup.nodes) + " hosts (its header's device lines): give an allreduce log of one "
                                                                        "node (--net takes the log across nodes)");
    const core::FitResult node = core::FitAlphaBeta(nodeGroup);
    const core::NcclTestsLog netFile = core::ReadNcclTestsLogFile(o.net);
    const core::NetworkLogGroup netLog = [&] {
        try {
            return core::NetworkGroupOf(netFile, o.net);
        } catch (const Error& e) {
            throw Error(std::string("--net: ") + e.what());
        }
    }();
    RequireSameGpu("--net", o.net, netFile, o, nodeLog);
    const core::FitResult net = core::FitAlphaBeta(netLog.group);
    std::optional<core::FitGroup> measured;
    if (!o.compare.empty()) {
        const core::NcclTestsLog compareLog = core::ReadNcclTestsLogFile(o.compare);
        RequireSameGpu("--compare", o.compare, compareLog, o, nodeLog);
        measured = GroupOf("--compare", o.compare, compareLog, core::Collective::AllReduce);
    }
    // A compared log that names its hosts says how many nodes, and GPUs on each, it ran.
    const int hosts = measured && measured->nodes > 1 && measured->ranks % measured->nodes == 0 ? measured->nodes : 0;
    const int q = o.ranksPerNode > 0 ? o.ranksPerNode : hosts > 0 ? measured->ranks / hosts : node.ranks;
    int nodes = o.nodes;
    if (nodes == 0 && measured) nodes = hosts > 0 ? hosts : measured->ranks / q;
    if (hosts > 0)
        Require(nodes == hosts, "--nodes: " + std::to_string(nodes) + ", but --compare's " + o.compare + " ran on " + std::to_string(hosts) +
                                    " hosts (its header's device lines)");
    Require(nodes >= 2, "--nodes: give the number of nodes (2 or more), or --compare with a log of them");
    if (measured)
        Require(measured->ranks == nodes * q, "--compare: " + o.compare + " has " + std::to_string(measured->ranks) + " ranks, not " +
                                                  std::to_string(nodes) + " nodes of " + std::to_string(q) +
                                                  (o.ranksPerNode > 0 ? "" : " (--ranks-per-node: another count than the --node log's)"));
    const std::vector<core::FitSample> samples = measured ? measured->samples : std::vector<core::FitSample>{};
    std::vector<uint64_t> sizes; // the compared log's, else the node's
    for (const core::FitSample& s : samples)
        if (s.bytes > 0) sizes.push_back(s.bytes);
    if (sizes.empty())
        for (const core::FitRow& r : node.rows)
            if (r.bytes > 0) sizes.push_back(r.bytes);
    const core::Extrapolation e = core::ExtrapolateAllReduce(node, net, nodes, sizes, samples, q, netLog.hosts);
    if (o.json) PrintJson(ToJson(e, o));
    else PrintText(e, o);
}

} // namespace

void AddExtrapolateCommand(CLI::App& root)
{
    auto opts = std::make_shared<ExtrapolateOptions>();
    CLI::App* cmd = root.add_subcommand("extrapolate", "Predict an allreduce on several nodes from a one-node allreduce log and a "
                                                       "log across nodes (an allreduce on two nodes, or a sendrecv, allreduce, allgather "
                                                       "or reduce-scatter with one GPU per node): NCCL's ring and tree");
    cmd->add_option("--node", opts->node, "nccl-tests allreduce log of one node (its GPUs: the ranks per node)")->required();
    cmd->add_option("--net", opts->net, "nccl-tests log across nodes (its header's hosts): all_reduce_perf on two nodes of any GPU "
                                        "count, or sendrecv_perf, all_reduce_perf, all_gather_perf or reduce_scatter_perf with one GPU "
                                        "per node (2 ranks without host names: two nodes)")->required();
    cmd->add_option("--ranks-per-node", opts->ranksPerNode,
                    "GPUs per node to predict (default: the --compare log's GPUs per host when its header names them, else the "
                    "--node log's; its per-link NVLink alpha and beta price any count)")
        ->check(PositiveOption());
    cmd->add_option("--nodes", opts->nodes, "Number of nodes to predict (default: from --compare: its hosts, else its ranks over the GPUs per node)");
    cmd->add_option("--compare", opts->compare, "nccl-tests allreduce log on those nodes: each size's prediction beside it");
    cmd->add_flag("--json", opts->json, "Machine-readable output on stdout");
    cmd->callback([opts] { RunExtrapolate(*opts); });
}

} // namespace paralens::app
