// End-to-end: opening other tools' files, `paralens analyze`, `paralens fit`, `simulate --model`.
#include "CliRunner.hpp"
#include "../core/NsysTestDb.hpp"

#include "analysis/Extrapolation.hpp"
#include "model/CostModel.hpp"
#include "trace/FileIO.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

using Json = nlohmann::json;

namespace {

Json RunJson(const std::string& args) { return RunParalensJson(args); }

std::string Ref(const std::string& rel)
{
    std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/" + rel;
    return std::filesystem::exists(path) ? path : "";
}

int Lines(const std::string& s)
{
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

// A small allreduce log on 4 ranks from the ring formula (alpha 4 us, 50 GB/s).
std::string SyntheticLog()
{
    std::string log = "# Collective test starting: all_reduce_perf\n";
    for (int r = 0; r < 4; ++r)
        log += "#  Rank  " + std::to_string(r) + " Group  0 Pid 1 on node device  " + std::to_string(r) + " [0x00] NVIDIA A100-SXM4-80GB\n";
    log += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
    const paralens::core::CostParams k{4e-6, 1.0 / 50e9, 0};
    for (uint64_t n = 1024; n <= (uint64_t{1} << 28); n *= 4) {
        double t = paralens::core::LectureSeconds(paralens::core::Collective::AllReduce, paralens::core::Algorithm::Ring, 4,
                                                  static_cast<double>(n), k);
        char row[256];
        double algbw = static_cast<double>(n) / t / 1e9;
        std::snprintf(row, sizeof row, "%12llu %13llu float sum -1 %10.3f %7.2f %7.2f 0 %10.3f %7.2f %7.2f 0\n",
                      static_cast<unsigned long long>(n), static_cast<unsigned long long>(n / 4), t * 1e6, algbw, algbw * 1.5,
                      t * 1e6, algbw, algbw * 1.5);
        log += row;
    }
    return log;
}

// An allreduce log on 8 ranks whose time is the fastest of two protocols' lines (10 us + n / 4 GB/s
// and 60 us + n / 200 GB/s, crossing near 200 KiB), the in-place half 4 % slower than the other.
std::string TwoProtocolLog()
{
    std::string log = "# Collective test starting: all_reduce_perf\n";
    for (int r = 0; r < 8; ++r)
        log += "#  Rank  " + std::to_string(r) + " Group  0 Pid 1 on node device  " + std::to_string(r) + " [0x00] NVIDIA H100\n";
    log += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
    for (uint64_t n = 8; n <= (uint64_t{1} << 32); n *= 2) {
        const double t = std::min(10e-6 + static_cast<double>(n) / 4e9, 60e-6 + static_cast<double>(n) / 200e9);
        char row[256];
        std::snprintf(row, sizeof row, "%12llu %13llu float sum -1 %10.3f 1 1 0 %10.3f 1 1 0\n", static_cast<unsigned long long>(n),
                      static_cast<unsigned long long>(n / 4), t * 1e6, t * 1.04e6);
        log += row;
    }
    return log;
}

// An nccl-tests log of `test` ("all_reduce_perf", "sendrecv_perf") on `nodes` hosts of `perNode`
// GPUs, each row's time from `seconds(n)`.
template <class F> std::string NodesLog(const char* test, int nodes, int perNode, F seconds)
{
    std::string log = std::string("# Collective test starting: ") + test + "\n";
    for (int r = 0; r < nodes * perNode; ++r)
        log += "#  Rank " + std::to_string(r) + " Group  0 Pid 1 on node" + std::to_string(r / perNode) + " device  " +
               std::to_string(r % perNode) + " [0x00] NVIDIA H100\n";
    log += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
    for (uint64_t n = 1024; n <= (uint64_t{1} << 30); n *= 4) {
        const double us = seconds(static_cast<double>(n)) * 1e6;
        char row[256];
        std::snprintf(row, sizeof row, "%12llu %13llu float sum -1 %10.3f 1 1 0 %10.3f 1 1 0\n", static_cast<unsigned long long>(n),
                      static_cast<unsigned long long>(n / 4), us, us);
        log += row;
    }
    return log;
}

} // namespace

TEST_CASE("fit of an nccl-tests log, saved and used by simulate --model", "[cli]")
{
    CliTempDir dir;
    paralens::core::WriteFileAtomic(dir.File("ar.log"), SyntheticLog());
    Json fit = RunJson("fit " + dir.File("ar.log") + " --out " + dir.File("fit.json") + " --json");
    REQUIRE(fit["fits"].size() == 1);
    const Json& f = fit["fits"][0];
    CHECK(f["collective"] == "allreduce");
    CHECK(f["ranks"] == 4);
    CHECK(f["algorithm"] == "ring");
    CHECK(f["alphaUs"].get<double>() == Approx(4).epsilon(1e-3));
    CHECK(f["bandwidthGBps"].get<double>() == Approx(50).epsilon(1e-3));
    CHECK(f["busBandwidthGBps"].get<double>() == Approx(50).epsilon(1e-3));
    CHECK(f["mapePct"].get<double>() < 0.1);
    CHECK(f["rows"].size() == 10);
    CHECK(std::filesystem::exists(dir.File("fit.json")));

    CliResult text = RunParalens("fit " + dir.File("ar.log"));
    REQUIRE(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("latency") && Catch::Contains("bus bandwidth") && Catch::Contains("MAPE") &&
                             Catch::Contains("measured (us)") && Catch::Contains("one line (us)") && Catch::Contains("regimes"));

    Json sim = RunJson("simulate -c allreduce -a ring -p 4 -n 64MiB --model " + dir.File("fit.json") + " --json");
    double expected = paralens::core::LectureSeconds(paralens::core::Collective::AllReduce, paralens::core::Algorithm::Ring,
                                                     4, 64.0 * (1 << 20), {4e-6, 1.0 / 50e9, 0});
    CHECK(sim["simulatedSeconds"].get<double>() == Approx(expected).epsilon(1e-3));
    CHECK(sim["alphaUs"].get<double>() == Approx(4).epsilon(1e-3));
    CHECK_THAT(sim["modelFrom"].get<std::string>(), Catch::Contains("allreduce on 4 ranks"));
    Json over = RunJson("simulate -c allreduce -p 4 -n 1MiB --model " + dir.File("fit.json") + " --alpha-us 10 --json");
    CHECK(over["alphaUs"] == 10.0);
    CHECK(over["bandwidthGBps"].get<double>() == Approx(50).epsilon(1e-3));
    CHECK_THAT(over["modelFrom"].get<std::string>(), Catch::Contains("given explicitly: --alpha-us"));
}

TEST_CASE("fit finds a log's regimes and protocols, and simulate --model takes the line of its size", "[cli][regimes]")
{
    CliTempDir dir;
    paralens::core::WriteFileAtomic(dir.File("ar.log"), TwoProtocolLog());
    const Json fit = RunJson("fit " + dir.File("ar.log") + " --out " + dir.File("fit.json") + " --json");
    const Json& f = fit["fits"][0];
    REQUIRE(f["segments"].size() == 2);
    const Json &small = f["segments"][0], &large = f["segments"][1];
    CHECK(small["fromBytes"] == 8);
    CHECK(small["latencyUs"].get<double>() == Approx(10).epsilon(0.01));
    CHECK(large["latencyUs"].get<double>() == Approx(60).epsilon(0.01));
    CHECK(large["toBytes"].get<uint64_t>() == uint64_t{1} << 32);
    CHECK(small["protocol"].get<std::string>().rfind("LL", 0) == 0);
    CHECK(f["segmentedMapePct"].get<double>() < 0.5);
    CHECK(f["mapePct"].get<double>() > 5 * f["segmentedMapePct"].get<double>());
    CHECK(f["noisePct"].get<double>() == Approx(3.92).epsilon(0.01)); // |1 - 1.04| / 1.02
    CHECK(f["heldOutMapePct"].get<double>() > 0);
    CHECK(f["rows"][0].contains("segmentedUs"));

    const CliResult text = RunParalens("fit " + dir.File("ar.log"));
    REQUIRE(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("regimes: 2 size ranges") && Catch::Contains("held out") && Catch::Contains("likely"));

    for (const char* size : {"4KiB", "1GiB"}) {
        const Json sim = RunJson(std::string("simulate -c allreduce -a ring -p 8 -n ") + size + " --model " + dir.File("fit.json") + " --json");
        const bool big = std::string(size) == "1GiB";
        const double bytes = big ? 1073741824.0 : 4096.0;
        const double expected = big ? 60e-6 + bytes / 200e9 : 10e-6 + bytes / 4e9;
        CHECK(sim["simulatedSeconds"].get<double>() == Approx(expected).epsilon(0.01));
        CHECK_THAT(sim["modelFrom"].get<std::string>(), Catch::Contains("protocol line lowest at"));
    }
    // A fit file without the protocol envelope (an older paralens): the regime of the size.
    Json old = Json::parse(paralens::core::ReadFileDecompressed(dir.File("fit.json")));
    old["fits"][0].erase("protocols");
    paralens::core::WriteFileAtomic(dir.File("old.json"), old.dump());
    const Json sim = RunJson("simulate -c allreduce -a ring -p 8 -n 1GiB --model " + dir.File("old.json") + " --json");
    CHECK(sim["simulatedSeconds"].get<double>() == Approx(60e-6 + 1073741824.0 / 200e9).epsilon(0.01));
    CHECK_THAT(sim["modelFrom"].get<std::string>(), Catch::Contains("regime"));
}

TEST_CASE("extrapolate predicts an allreduce on several nodes from a one-node log and a log across nodes", "[cli][twolevel]")
{
    CliTempDir dir;
    // Within a node: 8 GPUs, alpha 2 us, 300 GB/s per link; between nodes: 10 us, 25 GB/s per NIC.
    const double a = 2e-6, b = 1 / 300e9, a2 = 10e-6, b2 = 1 / 25e9;
    auto node = [&](double n) { return 14 * a + 2 * 7.0 / 8 * n * b; }; // ring allreduce on 8
    auto net = [&](double m) { return a2 + m * b2; };                    // one message per NIC
    auto eff = [](double n) { return paralens::core::NcclTreeEfficiency(static_cast<uint64_t>(n)); }; // NCCL's tuner's share for its tree
    auto tree = [&](double n) { return 2 * (a2 + 7 * a) + std::max(n / 8 * b2 / eff(n), n * b); };      // 2 nodes of 8
    auto ring = [&](double n) { return 30.0 / 16 * (2 * a2 + 14 * a) + 30.0 / 16 * std::max(n / 8 * b2, n * b); };
    paralens::core::WriteFileAtomic(dir.File("node.log"), NodesLog("all_reduce_perf", 1, 8, node));
    paralens::core::WriteFileAtomic(dir.File("p2p.log"), NodesLog("sendrecv_perf", 2, 1, net));
    paralens::core::WriteFileAtomic(dir.File("two.log"), NodesLog("all_reduce_perf", 2, 8, [&](double n) { return std::min(tree(n), ring(n)); }));
    const Json e = RunJson("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log") + " --compare " +
                           dir.File("two.log") + " --json");
    CHECK(e["ranksPerNode"] == 8);
    CHECK(e["nodes"] == 2); // from the compared log's 16 ranks
    CHECK(e["netNodes"] == 2);
    CHECK(e["measuredRows"] == 11);
    CHECK(e["bestMapePct"].get<double>() < 0.5);
    CHECK(e.contains("worstErrorPct"));
    for (const Json& r : e["rows"]) {
        const double n = r["bytes"].get<double>();
        CHECK(r["treeUs"].get<double>() == Approx(tree(n) * 1e6).epsilon(0.01));
        CHECK(r["ringUs"].get<double>() == Approx(ring(n) * 1e6).epsilon(0.01));
        CHECK(r["ringInterNodeUs"].get<double>() + r["ringIntraNodeUs"].get<double>() == Approx(r["ringUs"].get<double>()));
        CHECK(r["bestUs"].get<double>() == Approx(std::min(r["treeUs"].get<double>(), r["ringUs"].get<double>())));
        CHECK(r["hierarchicalUs"].get<double>() > 0);
    }
    CHECK(e.contains("treeMapePct"));
    const CliResult text = RunParalens("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log") + " --nodes 4");
    REQUIRE(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("4 nodes of 8") && Catch::Contains("tree (us)") && Catch::Contains("hier.") &&
                               Catch::Contains("best"));
    const CliResult wrong = RunParalens("extrapolate --node " + dir.File("p2p.log") + " --net " + dir.File("p2p.log") + " --nodes 2");
    CHECK(wrong.exitCode == 2);
    CHECK_THAT(wrong.err, Catch::Contains("--node") && Catch::Contains("allreduce"));
    const CliResult noNodes = RunParalens("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log"));
    CHECK(noNodes.exitCode == 2);
    CHECK_THAT(noNodes.err, Catch::Contains("--nodes"));
    const CliResult noRanks = RunParalens("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log") + " --nodes 4 --ranks-per-node 0");
    CHECK(noRanks.exitCode != 0);
    CHECK_THAT(noRanks.err, Catch::Contains("--ranks-per-node: must be positive (got 0)"));

    // The common logs price the network as the sendrecv does: an allreduce on 1 + 1 GPUs, and one on
    // two nodes of 8 (its hosts in the header: NCCL's tree there); one on a single node does not.
    paralens::core::WriteFileAtomic(dir.File("ar2.log"), NodesLog("all_reduce_perf", 2, 1, [&](double n) { return 2 * net(n / 2); }));
    for (const char* log : {"ar2.log", "two.log"}) {
        INFO(log);
        const Json from = RunJson("extrapolate --node " + dir.File("node.log") + " --net " + dir.File(log) + " --nodes 4 --json");
        const Json from2 = RunJson("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log") + " --nodes 4 --json");
        CHECK(from["netRanksPerNode"] == (std::string(log) == "two.log" ? 8 : 1));
        // Exact where the tree's efficiency is constant (the largest sizes), near elsewhere (its steps between sizes).
        const Json &last = from["rows"].back(), &last2 = from2["rows"].back();
        CHECK(last["bestUs"].get<double>() == Approx(last2["bestUs"].get<double>()).epsilon(0.02));
        for (size_t i = 0; i < from["rows"].size(); ++i)
            CHECK(from["rows"][i]["bestUs"].get<double>() == Approx(from2["rows"][i]["bestUs"].get<double>()).epsilon(0.25));
    }
    paralens::core::WriteFileAtomic(dir.File("ar1node.log"), NodesLog("all_reduce_perf", 1, 2, [&](double n) { return 2 * net(n / 2); }));
    const CliResult oneHost = RunParalens("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("ar1node.log") + " --nodes 2");
    CHECK(oneHost.exitCode == 2);
    CHECK_THAT(oneHost.err, Catch::Contains("node0") && Catch::Contains("across nodes"));
    // A log of two nodes is no log of one node.
    const CliResult twoNodes = RunParalens("extrapolate --node " + dir.File("two.log") + " --net " + dir.File("p2p.log") + " --nodes 4");
    CHECK(twoNodes.exitCode == 2);
    CHECK_THAT(twoNodes.err, Catch::Contains("--node: ") && Catch::Contains("on 2 hosts") && Catch::Contains("one node"));
    // Logs of two machines (their device lines name other GPUs) are refused, naming both.
    std::string a100 = NodesLog("sendrecv_perf", 2, 1, net);
    for (size_t at = a100.find("NVIDIA H100"); at != std::string::npos; at = a100.find("NVIDIA H100", at)) a100.replace(at, 11, "NVIDIA A100");
    paralens::core::WriteFileAtomic(dir.File("a100.log"), a100);
    const CliResult otherGpu = RunParalens("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("a100.log") + " --nodes 4");
    CHECK(otherGpu.exitCode == 2);
    CHECK_THAT(otherGpu.err, Catch::Contains("--net: " + dir.File("a100.log") + " ran on NVIDIA A100") && Catch::Contains("on NVIDIA H100") &&
                                 Catch::Contains("one machine"));
    const CliResult otherCompare = RunParalens("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log") + " --compare " +
                                               dir.File("a100.log"));
    CHECK(otherCompare.exitCode == 2);
    CHECK_THAT(otherCompare.err, Catch::Contains("--compare: ") && Catch::Contains("ran on NVIDIA A100"));
    // A compared log that names its hosts (4 nodes of 4) sets the nodes and the GPUs on each: not
    // 2 nodes of the node log's 8 from its 16 ranks; a --nodes that disagrees is refused.
    paralens::core::WriteFileAtomic(dir.File("four4.log"), NodesLog("all_reduce_perf", 4, 4, node));
    const Json byHosts = RunJson("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log") + " --compare " +
                                 dir.File("four4.log") + " --json");
    CHECK(byHosts["nodes"] == 4);
    CHECK(byHosts["ranksPerNode"] == 4);
    const CliResult otherNodes = RunParalens("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log") + " --compare " +
                                             dir.File("four4.log") + " --nodes 8");
    CHECK(otherNodes.exitCode == 2);
    CHECK_THAT(otherNodes.err, Catch::Contains("--nodes: 8") && Catch::Contains("on 4 hosts"));
    // Another count of GPUs per node than the node's log.
    const Json four = RunJson("extrapolate --node " + dir.File("node.log") + " --net " + dir.File("p2p.log") +
                              " --nodes 2 --ranks-per-node 4 --json");
    CHECK(four["ranksPerNode"] == 4);
    const double n = four["rows"].back()["bytes"].get<double>();
    CHECK(four["rows"].back()["treeUs"].get<double>() == Approx((2 * (a2 + 3 * a) + std::max(n / 4 * b2 / eff(n), n * b)) * 1e6).epsilon(0.01));
}

TEST_CASE("simulate --net-model prices the network per NIC from a log across nodes, as plan --network-fit does", "[cli][twolevel]")
{
    CliTempDir dir;
    // Between nodes: 10 us and 25 GB/s per NIC, measured by a sendrecv and by an allreduce on two
    // nodes of 4 (NCCL's tree there); read per NIC, either gives the network of a simulation.
    const double a2 = 10e-6, b2 = 1 / 25e9;
    auto net = [&](double m) { return a2 + m * b2; };
    auto eff = [](double n) { return paralens::core::NcclTreeEfficiency(static_cast<uint64_t>(n)); };
    paralens::core::WriteFileAtomic(dir.File("p2p.log"), NodesLog("sendrecv_perf", 2, 1, net));
    paralens::core::WriteFileAtomic(dir.File("two.log"), NodesLog("all_reduce_perf", 2, 4, [&](double n) {
                                        return 2 * (a2 + 3 * 2e-6) + n / 4 * b2 / eff(n);
                                    }));
    const std::string common = "simulate -c allreduce -a hierarchical -p 16 --ranks-per-node 4 -n 256MiB --alpha-us 2 --bandwidth-GBps 300 ";
    const Json direct = RunJson(common + "--net-alpha-us 10 --net-bandwidth-GBps 25 --json");
    for (const char* log : {"p2p.log", "two.log"}) {
        INFO(log);
        REQUIRE(RunParalens(std::string("fit ") + dir.File(log) + " --out " + dir.File("net.json")).exitCode == 0);
        const Json j = RunJson(common + "--net-model " + dir.File("net.json") + " --json");
        // Exact from the sendrecv; from the allreduce near (its line between sizes spans the steps of
        // NCCL's tree efficiency), where its ring formula's reading would give 8 times the bandwidth.
        const double within = std::string(log) == "p2p.log" ? 0.02 : 0.15;
        CHECK(j["simulatedSeconds"].get<double>() == Approx(direct["simulatedSeconds"].get<double>()).epsilon(within));
        CHECK(j["twoLevel"]["netBandwidthGBps"].get<double>() == Approx(25).epsilon(within));
        CHECK(j["twoLevel"]["netAlphaUs"].get<double>() == Approx(10).epsilon(0.02)); // the allreduce's NVLink hops at --alpha-us taken out
        CHECK_THAT(j["netModelFrom"].get<std::string>(), Catch::Contains("per NIC") && Catch::Contains(log));
        // The log itself, fitted as paralens fit fits it, in place of its fit file: the same network.
        const Json raw = RunJson(common + "--net-model " + dir.File(log) + " --json");
        CHECK(raw["simulatedSeconds"].get<double>() == Approx(j["simulatedSeconds"].get<double>()).epsilon(1e-6));
        const std::string plan = "plan --model llama3-8b --gpus 32 --global-batch 64 --seq 4096 --top 1 --json --network-fit ";
        const Json planned = RunJson(plan + dir.File("net.json")), plannedRaw = RunJson(plan + dir.File(log));
        CHECK(plannedRaw["rows"][0]["stepSeconds"].get<double>() == Approx(planned["rows"][0]["stepSeconds"].get<double>()).epsilon(1e-6));
    }
    // Given explicitly, the network's bandwidth wins; without --ranks-per-node, or with a fit of one
    // host's log, it is refused, naming what to give.
    const Json over = RunJson(common + "--net-model " + dir.File("net.json") + " --net-bandwidth-GBps 50 --json");
    CHECK(over["twoLevel"]["netBandwidthGBps"] == 50.0);
    CHECK_THAT(over["netModelFrom"].get<std::string>(), Catch::Contains("given explicitly: --net-bandwidth-GBps"));
    const CliResult noNodes = RunParalens("simulate -c allreduce -p 16 --net-model " + dir.File("net.json"));
    CHECK(noNodes.exitCode == 2);
    CHECK_THAT(noNodes.err, Catch::Contains("--net-model: give --ranks-per-node"));
    paralens::core::WriteFileAtomic(dir.File("node.log"), NodesLog("all_reduce_perf", 1, 4, net));
    REQUIRE(RunParalens("fit " + dir.File("node.log") + " --out " + dir.File("node.json")).exitCode == 0);
    const CliResult oneHost = RunParalens(common + "--net-model " + dir.File("node.json"));
    CHECK(oneHost.exitCode == 2);
    CHECK_THAT(oneHost.err, Catch::Contains("--net-model: ") && Catch::Contains("on one host") && Catch::Contains("--model"));
}

TEST_CASE("analyze an nccl-tests log: devices and collectives in JSON", "[cli]")
{
    CliTempDir dir;
    paralens::core::WriteFileAtomic(dir.File("ar.log"), SyntheticLog());
    Json a = RunJson("analyze " + dir.File("ar.log") + " --json");
    CHECK(a["startNs"] == 0);
    CHECK(a["endNs"].get<int64_t>() > 0);
    REQUIRE(a["devices"].size() == 4);
    for (const Json& d : a["devices"]) {
        for (const char* key : {"id", "name", "spanCount", "kernelCount", "busySeconds", "idleSeconds"}) CHECK(d.contains(key));
        CHECK(d["kernelCount"] == 20);
        CHECK(d["idleSeconds"] == 0.0);
    }
    REQUIRE(a["collectives"].size() == 1);
    const Json& c = a["collectives"][0];
    CHECK(c["name"] == "allreduce");
    CHECK(c["count"] == 80);
    CHECK(c["bytes"].get<uint64_t>() > 0);
    // Time-weighted over the rows: below the link's 50 GB/s (the ring's busbw limit), near it (large rows dominate).
    CHECK(c["busbwGBps"].get<double>() < 50.0);
    CHECK(c["busbwGBps"].get<double>() > 45.0);
    CliResult text = RunParalens("analyze " + dir.File("ar.log"));
    REQUIRE(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("busbw") && Catch::Contains("allreduce") && Catch::Contains("rank 3 GPU 3"));
}

TEST_CASE("analyze a pipeline: its bubble beside the schedule simulated at its measured op times", "[cli]")
{
    CliTempDir dir;
    // A simulated zb-h1 read back: its own model. The text names the schedule and both bubbles.
    REQUIRE(RunParalens("pipeline --schedule zb-h1 -D 4 -N 8 --t-forward-ms 2 --t-backward-ms 3 --t-weight-ms 1.2 "
                        "--stage-slowdown 1,1.2,1,1 --out " + dir.File("zb.json")).exitCode == 0);
    const Json a = RunJson("analyze " + dir.File("zb.json") + " --json");
    const Json& p = a["pipeline"];
    REQUIRE(p.is_object());
    CHECK(p["schedule"] == "zb-h1");
    CHECK(p["bubbleModel"].get<double>() == Approx(p["bubble"].get<double>()).margin(1e-9));
    // ZB-H1's closed form at the measured mean times, stages alike: near the run's, whose stage 1 is slower.
    CHECK(p["bubbleFormula"].get<double>() > 0.0);
    CHECK(p["bubbleFormula"].get<double>() == Approx(p["bubble"].get<double>()).margin(0.05));
    CHECK(p["weightSeconds"].get<double>() == Approx(1.2e-3 * 4.2 / 4).epsilon(1e-6));
    const CliResult text = RunParalens("analyze " + dir.File("zb.json"));
    REQUIRE(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("zb-h1 pipeline, 4 stages x 8 micro-batches") && Catch::Contains("measured op times"));
    // An nccl-tests log is no pipeline.
    paralens::core::WriteFileAtomic(dir.File("ar.log"), SyntheticLog());
    CHECK(RunJson("analyze " + dir.File("ar.log") + " --json")["pipeline"].is_null());
}

TEST_CASE("analyze and fit on the reference traces and logs", "[cli][reference]")
{
    std::string alexnet = Ref("kineto/alexnet_1gpu.json.gz");
    std::string r0 = Ref("kineto/sampled_rank-0.json.gz"), r1 = Ref("kineto/sampled_rank-1.json.gz");
    std::string h100 = Ref("nccl-tests/h100x8_nvlink_allreduce_ring.log");
    if (alexnet.empty() || r0.empty() || r1.empty() || h100.empty()) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    Json a = RunJson("analyze " + alexnet + " --json");
    REQUIRE(a["devices"].size() == 1);
    CHECK(a["devices"][0]["kernelCount"] == 79);
    CHECK(a["devices"][0]["busySeconds"].get<double>() == Approx(0.066327).epsilon(1e-12));
    CHECK(a["collectives"].empty());

    Json job = RunJson("analyze " + r0 + " " + r1 + " --align-clocks --json");
    REQUIRE(job["devices"].size() == 2);
    CHECK(job["devices"][0]["kernelCount"] == 1154);
    CHECK(job["devices"][1]["kernelCount"] == 1104);
    CHECK(job["devices"][0]["busySeconds"].get<double>() == Approx(0.547656).epsilon(1e-9));
    CHECK(job["matches"].size() == 5);
    size_t nccl = 0;
    for (const Json& c : job["collectives"]) nccl += c["count"].get<size_t>();
    CHECK(nccl == 20);
    CHECK_THAT(job["notes"].dump(), Catch::Contains("clocks aligned"));

    Json fit = RunJson("fit " + h100 + " --json");
    const Json& f = fit["fits"][0];
    CHECK(f["busBandwidthGBps"].get<double>() == Approx(365).margin(10));
    CHECK(f["latencyUs"].get<double>() == Approx(35).margin(2));
    CHECK(f["mapePct"].get<double>() < 6);

    CliResult summary = RunParalens(h100 + " " + alexnet, "DISPLAY= WAYLAND_DISPLAY=");
    REQUIRE(summary.exitCode == 0);
    CHECK_THAT(summary.out, Catch::Contains("nccl-tests trace, 8 devices") && Catch::Contains("496 collective spans") &&
                                Catch::Contains("kineto trace, 3 devices"));
}

TEST_CASE("bad files and options for analyze and fit: one line naming the file and place, exit 2", "[cli]")
{
    CliTempDir dir;
    paralens::core::WriteFileAtomic(dir.File("cut.json"), R"({"traceEvents":[{"ph":"X","name":"a","pid":0,"ts":1,"dur":1},{"ph":"X")");
    paralens::core::WriteFileAtomic(dir.File("empty.json"), "");
    paralens::core::WriteFileAtomic(dir.File("norows.log"), "# nThread 1 nGpus 8 minBytes 8 maxBytes 8\n#  size count type time algbw busbw\n");
    paralens::core::WriteFileAtomic(dir.File("junk.bin"), std::string("\x7f" "ELF\x02\x01\x01\0\0\0\0", 12));
    paralens::core::WriteFileAtomic(dir.File("notfit.json"), R"({"traceEvents":[]})");
    paralens::core::WriteFileAtomic(dir.File("ar.log"), SyntheticLog());
    struct Case {
        std::string args, mention;
    };
    const std::vector<Case> cases = {
        {"analyze " + dir.File("cut.json"), "byte 61"},
        {"analyze " + dir.File("empty.json"), "empty"},
        {"analyze " + dir.File("junk.bin"), "not a trace paralens can read"},
        {"analyze " + dir.File("missing.json"), "missing.json"},
        {"fit " + dir.File("norows.log"), "no nccl-tests result rows"},
        {"fit " + dir.File("ar.log") + " --half sideways", "--half"},
        {"fit " + dir.File("ar.log") + " --algorithm spiral", "--algorithm"},
        {"simulate --model " + dir.File("notfit.json"), "not a paralens fit file"},
        {"simulate --model " + dir.File("nope.json"), "nope.json"},
        {"analyze", "files"},
    };
    for (const Case& c : cases) {
        CliResult r = RunParalens(c.args);
        INFO(c.args << "\nstderr: " << r.err);
        CHECK(r.exitCode == 2);
        CHECK(Lines(r.err) == 1);
        CHECK_THAT(r.err, Catch::Contains(c.mention));
        CHECK(r.out.empty());
    }
    for (const char* sub : {"analyze", "fit"}) {
        CliResult r = RunParalens(std::string(sub) + " --help");
        CHECK(r.exitCode == 0);
        CHECK_THAT(r.out, Catch::Contains("--json"));
    }
}

TEST_CASE("an Nsight Systems export through analyze and convert, runtime calls on request", "[cli][nsys]")
{
    const std::string dir = std::filesystem::temp_directory_path().string() + "/paralens-cli-nsys-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    const std::string file = dir + "/rank-2.sqlite";
    {
        nsystest::Db db(file);
        nsystest::CreateExportTables(db);
        db.Row("StringIds", {int64_t{0}, std::string("ncclDevKernel_AllGather_RING_LL")});
        db.Row("StringIds", {int64_t{1}, std::string("cudaLaunchKernel")});
        const int64_t thread = nsystest::GlobalTid(99, 99);
        for (int64_t i = 0; i < 4; ++i) {
            db.Row("CUPTI_ACTIVITY_KIND_KERNEL", {1000 * i + 100, 1000 * i + 600, int64_t{0}, int64_t{1}, int64_t{7}, i,
                                                  nsystest::GlobalTid(99, 0), int64_t{0}, nullptr, int64_t{1}, nullptr});
            db.Row("CUPTI_ACTIVITY_KIND_RUNTIME", {1000 * i, 1000 * i + 20, int64_t{0}, thread, i, int64_t{1}});
        }
        db.Close();
    }
    const Json a = RunJson("analyze " + file + " --json");
    INFO(a.dump(1));
    CHECK(a.dump().find("nsys") != std::string::npos);
    const Json plain = RunJson("convert " + file + " --out " + dir + "/plain.json --json");
    CHECK(plain["source"] == "nsys");
    CHECK(plain["spans"] == 4);
    CHECK(plain["flows"] == 0);
    const Json api = RunJson("convert " + file + " --api-spans --out " + dir + "/api.json --json");
    CHECK(api["spans"] == 8);
    CHECK(api["flows"] == 4);
    CliResult notSqlite = RunParalens("convert " + dir + "/api.json --out " + dir + "/x.json");
    CHECK(notSqlite.exitCode == 0); // a paralens trace, read back
    std::filesystem::remove_all(dir);
}
