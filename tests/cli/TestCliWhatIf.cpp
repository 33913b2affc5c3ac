// End-to-end: `paralens whatif` (critical path, what-if replay) and `paralens diff`.
#include "CliRunner.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

using Json = nlohmann::json;

namespace {

std::string Ref(const std::string& rel)
{
    std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/" + rel;
    return std::filesystem::exists(path) ? path : "";
}

} // namespace

TEST_CASE("whatif replays a trace unchanged and gives the GPipe step's critical path", "[cli][whatif]")
{
    CliTempDir dir;
    REQUIRE(RunParalens("pipeline --schedule gpipe -D 4 -N 8 -o " + dir.File("gpipe.json")).exitCode == 0);
    const Json w = RunParalensJson("whatif " + dir.File("gpipe.json") + " --json");
    REQUIRE(w["steps"].size() == 1);
    const Json& step = w["steps"][0];
    CHECK(step["measuredSeconds"].get<double>() == Approx(0.033)); // (D - 1 + N) x (F + B) = 11 x 3 ms
    CHECK(step["whatIfSeconds"].get<double>() == step["measuredSeconds"].get<double>());
    CHECK(step["measuredPath"]["byCategorySeconds"]["compute"].get<double>() == Approx(0.033));
    CHECK(step["measuredPath"]["byCategorySeconds"]["idle"].get<double>() == 0.0);
    CHECK(w["dependencies"]["recorded"].get<int>() > 0);
    CHECK_FALSE(w["changed"].get<bool>());

    const CliResult text = RunParalens("whatif " + dir.File("gpipe.json"));
    REQUIRE(text.exitCode == 0);
    CHECK(text.out.find("critical path of whole trace") != std::string::npos);
    CHECK(text.out.find("the replay reproduces the measured steps") != std::string::npos);
}

TEST_CASE("whatif --bandwidth-x 2 on a simulated allreduce equals simulating at twice the bandwidth", "[cli][whatif]")
{
    CliTempDir dir;
    REQUIRE(RunParalens("simulate --ranks 8 --bytes 64MiB --bandwidth-GBps 50 -o " + dir.File("slow.json")).exitCode == 0);
    const Json fast = RunParalensJson("simulate --ranks 8 --bytes 64MiB --bandwidth-GBps 100 --json");
    const Json w = RunParalensJson("whatif " + dir.File("slow.json") + " --bandwidth-x 2 --json --out " + dir.File("fast.json"));
    CHECK(w["changed"].get<bool>());
    CHECK(std::fabs(w["steps"][0]["whatIfSeconds"].get<double>() - fast["simulatedSeconds"].get<double>()) < 20e-9);
    CHECK(w["network"].get<std::string>().find("the trace's own model") != std::string::npos);
    // The replayed trace is a trace like any other.
    const Json a = RunParalensJson("analyze " + dir.File("fast.json") + " --json");
    CHECK(a.is_object());

    // A scale rule on the sends, by category: the same as halving the bandwidth's part.
    const Json s = RunParalensJson("whatif " + dir.File("slow.json") + " --scale send=0.5 --json");
    CHECK(s["steps"][0]["whatIfSeconds"].get<double>() < s["steps"][0]["measuredSeconds"].get<double>());
    CHECK(s["changedOps"].get<int>() > 0);
}

TEST_CASE("whatif refuses what it cannot do, naming the option", "[cli][whatif]")
{
    CliTempDir dir;
    REQUIRE(RunParalens("pipeline --schedule 1f1b -D 2 -N 2 -o " + dir.File("p.json")).exitCode == 0);
    CliResult r = RunParalens("whatif " + dir.File("p.json") + " --scale compute");
    CHECK(r.exitCode == 2);
    CHECK(r.err.find("--scale") != std::string::npos);
    r = RunParalens("whatif " + dir.File("p.json") + " --skew x:1");
    CHECK(r.exitCode == 2);
    CHECK(r.err.find("--skew") != std::string::npos);
    r = RunParalens("whatif " + dir.File("missing.json"));
    CHECK(r.exitCode == 2);
    CHECK(r.err.find("missing.json") != std::string::npos);

    const std::string ref = Ref("kineto/alexnet_1gpu.json.gz");
    if (ref.empty()) return;
    r = RunParalens("whatif " + ref + " --bandwidth-x 2");
    CHECK(r.exitCode == 2);
    CHECK(r.err.find("--model") != std::string::npos);
}

TEST_CASE("diff of a run with itself is empty, and a slower backward is the top regression", "[cli][whatif]")
{
    CliTempDir dir;
    REQUIRE(RunParalens("pipeline --schedule 1f1b -D 4 -N 8 -o " + dir.File("a.json")).exitCode == 0);
    REQUIRE(RunParalens("pipeline --schedule 1f1b -D 4 -N 8 --t-backward-ms 3 -o " + dir.File("b.json")).exitCode == 0);
    const Json same = RunParalensJson("diff " + dir.File("a.json") + " " + dir.File("a.json") + " --json");
    CHECK(same["empty"].get<bool>());
    CHECK(same["paired"].get<int>() == 4 * 2 * 8); // D stages x (F + B) x N micro-batches (free links: no sends)
    const Json d = RunParalensJson("diff " + dir.File("a.json") + " " + dir.File("b.json") + " --json");
    CHECK_FALSE(d["empty"].get<bool>());
    REQUIRE(!d["ops"].empty());
    CHECK(d["ops"][0]["name"] == "B");
    CHECK(d["ops"][0]["deltaSeconds"].get<double>() == Approx(32 * 1e-3));
    CHECK(d["steps"][0]["secondSeconds"].get<double>() > d["steps"][0]["firstSeconds"].get<double>());

    const CliResult one = RunParalens("diff " + dir.File("a.json"));
    CHECK(one.exitCode == 2);
    CHECK(one.err.find("two trace files") != std::string::npos);
}

TEST_CASE("whatif on a real two-rank profiler trace: each step replayed, collectives matched", "[cli][whatif]")
{
    const std::string r0 = Ref("kineto/sampled_rank-0.json.gz"), r1 = Ref("kineto/sampled_rank-1.json.gz");
    if (r0.empty()) {
        WARN("../shared/reference-data is absent: skipped");
        return;
    }
    const Json w = RunParalensJson("whatif " + r0 + " " + r1 + " --json --scale 'nccl*=0.5'");
    REQUIRE(w["steps"].size() == 2);
    CHECK(w["steps"][0]["label"] == "ProfilerStep#551");
    CHECK(w["collectives"].get<int>() > 0);
    CHECK(w["cyclesBroken"].get<int>() == 0);
    CHECK(w["steps"][0]["whatIfSeconds"].get<double>() <= w["steps"][0]["measuredSeconds"].get<double>());
}
