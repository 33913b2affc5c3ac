// End-to-end: the paralens command line as a user and a script see it.
#include "CliRunner.hpp"

#include "model/CostModel.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

using Json = nlohmann::json;

namespace {

Json RunJson(const std::string& args) { return RunParalensJson(args); }

int Lines(const std::string& s)
{
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

struct UsageCase {
    const char* args;
    const char* mention; // the option or file the one-line error must name
};

void CheckUsageErrors(std::initializer_list<UsageCase> cases)
{
    for (const UsageCase& c : cases) {
        CliResult r = RunParalens(c.args);
        INFO(c.args << "\nstderr: " << r.err);
        CHECK(r.exitCode == 2);
        CHECK(Lines(r.err) == 1);
        CHECK_THAT(r.err, Catch::Contains(c.mention));
        CHECK(r.out.empty());
    }
}

} // namespace

TEST_CASE("simulate reports the ring allreduce of the foundation issue exactly", "[cli]")
{
    Json j = RunJson("simulate --collective allreduce --algorithm ring --ranks 8 --bytes 64MiB --alpha-us 5 "
                     "--bandwidth-GBps 100 --json");
    const double expected = 2 * 7 * 5e-6 + 2 * (7.0 / 8) * 67108864 / 1e11;
    CHECK(j["simulatedSeconds"].get<double>() == j["predictedSeconds"].get<double>());
    CHECK(std::fabs(j["simulatedSeconds"].get<double>() - expected) <= 1e-15);
    CHECK(j["predictionExact"] == true);
    CHECK(j["collective"] == "allreduce");
    CHECK(j["algorithm"] == "ring");
    CHECK(j["ranks"] == 8);
    CHECK(j["bytes"] == 67108864);
    CHECK(j["transfers"] == 2 * 7 * 8);
    CHECK(j["algbwGBps"].get<double>() == Approx(67108864 / expected / 1e9));
    CHECK(j["busbwGBps"].get<double>() == Approx(67108864 / expected / 1e9 * 2 * 7 / 8));
}

TEST_CASE("simulate covers every collective and prints a readable summary", "[cli]")
{
    for (const char* c : {"broadcast", "reduce", "scatter", "gather", "allgather", "reduce-scatter", "allreduce",
                          "alltoall", "sendrecv"}) {
        Json j = RunJson(std::string("simulate --collective ") + c + " --ranks 6 --bytes 1MB --json");
        CHECK(j["simulatedSeconds"].get<double>() > 0);
        CHECK(j["collective"] == c);
    }
    CliResult r = RunParalens("simulate -c allgather -a tree -p 16 -n 1GiB --gamma-GBps 50");
    CHECK(r.exitCode == 0);
    CHECK_THAT(r.out, Catch::Contains("simulated") && Catch::Contains("model") && Catch::Contains("busbw"));
}

TEST_CASE("simulate on two levels: the network's share, the hierarchical allreduce against the ring", "[cli][twolevel]")
{
    const std::string cluster = " -p 16 -n 1GiB --ranks-per-node 8 --alpha-us 2 --bandwidth-GBps 300 --net-alpha-us 10 "
                                "--net-bandwidth-GBps 25 --json";
    const Json ring = RunJson("simulate -c allreduce -a ring" + cluster);
    const Json hier = RunJson("simulate -c allreduce -a hierarchical" + cluster);
    const double n = 1073741824.0;
    // The ring: 30 steps, each paced by a message between nodes of n/16 bytes.
    CHECK(ring["twoLevel"]["interNodeSeconds"].get<double>() == Approx(30 * (10e-6 + n / 16 / 25e9)));
    CHECK(ring["twoLevel"]["intraNodeSeconds"] == 0.0);
    CHECK(ring["simulatedSeconds"].get<double>() == Approx(ring["predictedSeconds"].get<double>()).epsilon(1e-9));
    // Hierarchical: 2 x 7 steps of n/8 within nodes, 2 x 1 of n/16 between them.
    const Json& t = hier["twoLevel"];
    CHECK(t["ranksPerNode"] == 8);
    CHECK(t["nodes"] == 2);
    CHECK(t["fromFormula"] == true);
    CHECK(t["exact"] == true);
    CHECK(t["intraNodeSeconds"].get<double>() == Approx(14 * (2e-6 + n / 8 / 300e9)));
    CHECK(t["interNodeSeconds"].get<double>() == Approx(2 * (10e-6 + n / 16 / 25e9)));
    CHECK(hier["simulatedSeconds"].get<double>() == Approx(t["predictedSeconds"].get<double>()).epsilon(1e-9));
    CHECK(hier["simulatedSeconds"].get<double>() < ring["simulatedSeconds"].get<double>() / 4);
    const Json tree = RunJson("simulate -c allreduce -a tree" + cluster); // no formula on two levels: step by step
    CHECK(tree["twoLevel"]["fromFormula"] == false);
    CHECK(tree["twoLevel"]["interNodeSeconds"].get<double>() > 0);
    CliResult text = RunParalens("simulate -c allreduce -a hierarchical -p 16 -n 64MiB --ranks-per-node 8 --net-bandwidth-GBps 25");
    REQUIRE(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("on 2 nodes of 8") && Catch::Contains("between nodes") && Catch::Contains("within nodes"));
    CheckUsageErrors({{"simulate -c allreduce -p 16 --net-bandwidth-GBps 25", "--ranks-per-node"},
                      {"simulate -c allreduce -a hierarchical -p 10 --ranks-per-node 4", "4 per node"},
                      {"simulate -c allreduce -p 16 --ranks-per-node 8 --net-bandwidth-GBps -1", "--net-bandwidth-GBps"},
                      {"simulate -c allgather -a hierarchical -p 16 --ranks-per-node 8", "hierarchical"}});
}

TEST_CASE("bad input prints one line naming the argument and exits 2", "[cli]")
{
    CheckUsageErrors({
        {"simulate --collective allreduse", "--collective"},
        {"simulate --collective alltoall --algorithm ring", "--algorithm"},
        {"simulate --ranks 0", "--ranks"},
        {"simulate --ranks abc", "--ranks"},
        {"simulate --bytes 12XB", "--bytes"},
        {"simulate --bandwidth-GBps 0", "--bandwidth-GBps"},
        {"simulate --straggler 3", "--straggler"},
        {"simulate --collective broadcast --root 9 --ranks 4", "--root"},
        {"simulate --out /nonexistent-folder/t.json", "--out"},
        {"sweep --factor 1", "--factor"},
        {"sweep --dtype complex", "--dtype"},
        {"sweep --min-bytes 1GiB --max-bytes 8", "--min-bytes"},
        {"convert /nonexistent.json --out x.json", "nonexistent.json"},
        {"frobnicate", "frobnicate"},
    });
}

TEST_CASE("a failed write leaves nothing behind", "[cli]")
{
    CliTempDir dir;
    std::filesystem::create_directories(dir.File("ro"));
    std::filesystem::permissions(dir.File("ro"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    CliResult r = RunParalens("simulate --out " + dir.File("ro/t.json"));
    if (::geteuid() != 0) { // root can write anywhere
        CHECK(r.exitCode == 2);
        CHECK(std::filesystem::is_empty(dir.File("ro")));
    }
    std::filesystem::permissions(dir.File("ro"), std::filesystem::perms::owner_all);
}

TEST_CASE("every subcommand has --help", "[cli]")
{
    for (const char* sub : {"simulate", "sweep", "convert", "pipeline", "workload", "autopar", "fit", "extrapolate"}) {
        CliResult r = RunParalens(std::string(sub) + " --help");
        INFO(sub);
        CHECK(r.exitCode == 0);
        CHECK_THAT(r.out, Catch::Contains("--json"));
    }
    CliResult top = RunParalens("--help");
    CHECK(top.exitCode == 0);
    CHECK_THAT(top.out, Catch::Contains("simulate") && Catch::Contains("sweep") && Catch::Contains("convert"));
}

TEST_CASE("sweep prints nccl-tests-like rows with every algorithm's model time", "[cli]")
{
    CliResult r = RunParalens("sweep --collective allreduce --ranks 8 --min-bytes 8 --max-bytes 1MiB --factor 4");
    REQUIRE(r.exitCode == 0);
    CHECK_THAT(r.out, Catch::Contains("size") && Catch::Contains("count") && Catch::Contains("algbw") &&
                          Catch::Contains("busbw") && Catch::Contains("halving-doubling") && Catch::Contains("fastest"));
    Json j = RunJson("sweep --collective allreduce --algorithm all --ranks 8 --min-bytes 8 --max-bytes 1GiB --json");
    REQUIRE(j["rows"].size() == 28);
    const Json& first = j["rows"][0];
    CHECK(first["bytes"] == 8);
    CHECK(first["count"] == 2);
    CHECK(first["type"] == "float");
    CHECK(first["fastest"] == "recursive-doubling"); // latency-bound: log(p) full-vector steps win
    CHECK(first["algorithms"]["tree"]["simulatedSeconds"].get<double>() <
          first["algorithms"]["ring"]["simulatedSeconds"].get<double>());
    const Json& last = j["rows"].back();
    CHECK(last["bytes"] == 1073741824);
    CHECK((last["fastest"] == "ring" || last["fastest"] == "halving-doubling"));
    for (const auto& [name, a] : last["algorithms"].items()) {
        INFO(name);
        CHECK(a["simulatedSeconds"].get<double>() == Approx(a["predictedSeconds"].get<double>()).epsilon(1e-9));
    }
}

TEST_CASE("simulate writes a trace that convert and the reader accept", "[cli][io]")
{
    CliTempDir dir;
    std::string json = dir.File("ring.json"), gz = dir.File("ring.json.gz");
    Json s = RunJson("simulate -c allreduce -a ring -p 4 -n 4096 --gamma-GBps 10 --out " + json + " --json");
    CHECK(s["out"] == json);
    Json c = RunJson("convert " + json + " --out " + gz + " --json");
    paralens::core::Trace a = paralens::core::ReadTraceFile(json);
    paralens::core::Trace b = paralens::core::ReadTraceFile(gz);
    CHECK(c["spans"] == a.SpanCount());
    CHECK(a.SpanCount() == b.SpanCount());
    CHECK(a.Flows().size() == 2 * 3 * 4u);
    CHECK(a.Meta().results.GetNumber("simulatedSeconds") == Approx(s["simulatedSeconds"].get<double>()).epsilon(1e-12));
    CliResult bad = RunParalens("convert " + json + " --out " + dir.File("x.txt"));
    CHECK(bad.exitCode == 2);
    CHECK_THAT(bad.err, Catch::Contains(".json"));
}

TEST_CASE("paralens with no display prints a useful headless summary", "[cli]")
{
    CliResult r = RunParalens("", "DISPLAY= WAYLAND_DISPLAY=");
    CHECK(r.exitCode == 0);
    CHECK_THAT(r.out, Catch::Contains("ring") && Catch::Contains("tree") && Catch::Contains("paralens simulate"));
    CHECK_THAT(r.out, Catch::Contains("paralens render"));
    CliTempDir dir;
    RunJson("simulate -p 4 -n 1MiB --out " + dir.File("t.json") + " --json");
    CliResult withFile = RunParalens(dir.File("t.json"), "DISPLAY= WAYLAND_DISPLAY=");
    CHECK(withFile.exitCode == 0);
    CHECK_THAT(withFile.out, Catch::Contains("4 devices"));
}

TEST_CASE("paralens --link without a display says what the link opens and how to draw it", "[cli]")
{
    CliResult r = RunParalens("--link 'https://example.org/paralens/#scenario=ring-vs-tree&ranks=16&colour=blue'", "DISPLAY= WAYLAND_DISPLAY=");
    CHECK(r.exitCode == 0);
    CHECK_THAT(r.out, Catch::Contains("The link opens the scenario \"ring-vs-tree\""));
    CHECK_THAT(r.out, Catch::Contains("16 ranks") || Catch::Contains("p = 16") || Catch::Contains("16"));
    CHECK_THAT(r.out, Catch::Contains("'colour=blue' skipped"));
    CHECK_THAT(r.out, Catch::Contains("paralens render --link 'scenario=ring-vs-tree&ranks=16' --view window"));
}

TEST_CASE("pipeline reports the lectures' GPipe bubble", "[cli]")
{
    Json j = RunJson("pipeline --schedule gpipe --stages 4 --microbatches 8 --json");
    CHECK(j["bubbleFraction"].get<double>() == Approx(3.0 / 11).epsilon(1e-12));
    CHECK(j["bubbleFractionFormula"].get<double>() == Approx(3.0 / 11).epsilon(1e-12));
    CHECK(j["schedule"] == "gpipe");
    CHECK(j["stages"] == 4);
    CHECK(j["microbatches"] == 8);
    CHECK(j["makespanSeconds"].get<double>() == Approx(0.033));
    CHECK(j["peakActivations"] == Json::array({8, 8, 8, 8}));
    // FLOPs as the window assumes them (the forward's time at 60% of the peak): MFU = 0.6 x (1 - bubble).
    CHECK(j["mfu"]["mfu"].get<double>() == Approx(0.6 * 8 / 11).epsilon(1e-9));
    Json onef = RunJson("pipeline --schedule 1f1b --stages 4 --microbatches 8 --json");
    CHECK(onef["peakActivations"] == Json::array({4, 3, 2, 1}));
    Json inter = RunJson("pipeline --schedule interleaved --stages 4 --microbatches 8 --chunks 2 --json");
    CHECK(inter["bubbleFraction"].get<double>() == Approx(3.0 / 19).epsilon(1e-12));
    Json zb = RunJson("pipeline --schedule zb-h1 --stages 4 --microbatches 8 --json");
    CHECK(zb["bubbleFraction"].get<double>() < onef["bubbleFraction"].get<double>());
    CHECK(zb["bubbleFractionFormula"].get<double>() == Approx(3.0 / 27).epsilon(1e-12)); // ZB-H1 at equal F, B, W
    CHECK(zb["bubbleFraction"].get<double>() == Approx(3.0 / 27).epsilon(1e-9));
    CHECK_THAT(RunParalens("pipeline --schedule zb-h1 --stages 4 --microbatches 8").out, Catch::Contains("0.1111 by ZB-H1's closed form"));
    CHECK_THAT(RunParalens("pipeline --schedule zb-h1 --stages 4 --microbatches 2").out, Catch::Contains("holds from N = D"));
    Json mfu = RunJson("pipeline --schedule 1f1b --stages 4 --microbatches 8 --forward-tflop 0.5 --recompute --json");
    CHECK(mfu["mfu"]["mfu"].get<double>() / mfu["mfu"]["hfu"].get<double>() == Approx(0.75));
    CliResult human = RunParalens("pipeline --schedule 1f1b --stages 4 --microbatches 8");
    CHECK(human.exitCode == 0);
    CHECK_THAT(human.out, Catch::Contains("stage 3 |") && Catch::Contains("0.2727"));
}

TEST_CASE("pipeline and workload reject bad parameters in one line", "[cli]")
{
    CheckUsageErrors({
        {"pipeline --stages 0", "--stages"},
        {"pipeline --schedule interleaved --stages 4 --microbatches 6 --chunks 2", "multiple of --stages"},
        {"pipeline --schedule 2f2b", "--schedule"},
        {"pipeline --stage-slowdown 1,x", "--stage-slowdown"},
        {"workload --kind zz", "--kind"},
        {"workload --kind dp --experts 4", "--experts"},
        {"workload --kind ps --consistency eventually", "--consistency"},
        {"workload --kind interop --devices 3", "--devices must be 2"},
        {"workload --kind moe --experts 6 --devices 4", "--experts"},
    });
}

TEST_CASE("workload runs every training-step kind", "[cli]")
{
    for (const char* kind : {"dp", "ps", "tp", "interop", "intraop", "moe"}) {
        Json j = RunJson(std::string("workload --kind ") + kind + " --json");
        INFO(kind);
        CHECK(j["kind"] == kind);
        CHECK(j["makespanSeconds"].get<double>() > 0);
        CHECK(j["usage"].size() == j["devices"].get<size_t>());
    }
    Json inter = RunJson("workload --kind interop --json");
    Json intra = RunJson("workload --kind intraop --json");
    CHECK(inter["wireBytes"].get<double>() < intra["wireBytes"].get<double>());
    CHECK(inter["idleFraction"].get<double>() > intra["idleFraction"].get<double>());
    CHECK(inter["comparison"]["interop"]["wireBytes"] == inter["wireBytes"]);
    CHECK(inter["comparison"]["intraop"]["wireBytes"] == intra["wireBytes"]);
    Json ps = RunJson("workload --kind ps --consistency async --straggler 3:3 --iterations 6 --json");
    CHECK(ps["maxStaleness"].get<int>() > 0);
    CliTempDir dir;
    Json dp = RunJson("workload --kind dp --out " + dir.File("dp.json.gz") + " --json");
    CHECK(paralens::core::ReadTraceFile(dir.File("dp.json.gz")).Devices().size() == 4);
}

TEST_CASE("render checks its options before it needs a display", "[cli]")
{
    CliTempDir dir;
    const std::string out = " --out " + dir.File("x.png");
    CliResult view = RunParalens("render --scenario default --view gantt" + out);
    CHECK(view.exitCode == 2);
    CHECK_THAT(view.err, Catch::Contains("--view") && Catch::Contains("timeline, flow, model, mfu"));
    CliResult both = RunParalens("render " + dir.File("t.json") + " --scenario default" + out);
    CHECK(both.exitCode == 2);
    CHECK_THAT(both.err, Catch::Contains("one of trace FILEs, --scenario NAME or --link LINK"));
    CliResult linkToo = RunParalens("render --scenario default --link scenario=default" + out);
    CHECK(linkToo.exitCode == 2);
    CHECK_THAT(linkToo.err, Catch::Contains("--link"));
    CliResult size = RunParalens("render --scenario default --size 12x12" + out);
    CHECK(size.exitCode == 2);
    CHECK_THAT(size.err, Catch::Contains("--size"));
    CliResult scenario = RunParalens("render --scenario no-such-thing" + out, "DISPLAY= WAYLAND_DISPLAY=");
    CHECK(scenario.exitCode == 2);
    CHECK_THAT(scenario.err, Catch::Contains("no scenario named 'no-such-thing'") && Catch::Contains("default"));
}
