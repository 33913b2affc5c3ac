// End-to-end: `paralens autopar`, the lectures' auto-parallelization scenarios from the command line.
#include "CliRunner.hpp"

#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

using Json = nlohmann::json;

namespace {

Json RunJson(const std::string& args) { return RunParalensJson(args); }

const Json& Strategy(const Json& doc, const std::string& name)
{
    for (const Json& s : doc["strategies"])
        if (s["name"] == name) return s;
    FAIL("no strategy " << name);
    return doc;
}

} // namespace

TEST_CASE("autopar: the lectures' MLP on 2 and 4 devices splits column then row", "[cli][autopar]")
{
    for (const char* mesh : {"2", "4"}) {
        const Json j = RunJson(std::string("autopar --graph mlp --mesh ") + mesh + " --json");
        INFO("mesh " << mesh);
        const Json& ilp = Strategy(j, "ilp");
        CHECK(ilp["optimal"] == true);
        REQUIRE(ilp["ops"].size() == 3);
        for (const Json& op : ilp["ops"]) CHECK(op["strategy"] == "split f");
        REQUIRE(ilp["collectives"].size() == 2); // one allreduce forward, one backward
        for (const Json& c : ilp["collectives"]) CHECK(c["collective"] == "allreduce");
        CHECK(ilp["collectives"][0]["phase"] == "forward");
        CHECK(ilp["collectives"][1]["phase"] == "backward");
        for (const char* other : {"dp", "greedy", "random", "data-parallel", "megatron"})
            CHECK(ilp["costSeconds"].get<double>() <= Strategy(j, other)["costSeconds"].get<double>() * (1 + 1e-9));
        CHECK(ilp["costSeconds"].get<double>() < Strategy(j, "data-parallel")["costSeconds"].get<double>());
    }
}

TEST_CASE("autopar: 24 layers on a 2 x 4 mesh pipeline across the slow links", "[cli][autopar]")
{
    CliTempDir dir;
    const Json j = RunJson("autopar --graph transformer --layers 24 --mesh 2x4 --solvers dp,megatron --micro-batches 8 --json --pipeline-trace " +
                           dir.File("pipe.json") + " --trace " + dir.File("intra.json") + " --trace-solver dp");
    const Json& inter = j["interOp"];
    REQUIRE(inter["stages"].size() >= 2);
    int layers = 0;
    for (const Json& s : inter["stages"]) {
        CHECK(s["subMesh"].get<std::string>().rfind("1x", 0) == 0); // each stage inside a fast row
        layers += s["layers"].get<int>();
    }
    CHECK(layers == 24);
    CHECK(inter["stepSeconds"].get<double>() < Strategy(j, "dp")["costSeconds"].get<double>());
    CHECK(inter["simulatedSeconds"].get<double>() >= inter["stepSeconds"].get<double>()); // the sends come on top
    const paralens::core::Trace pipe = paralens::core::ReadTraceFile(dir.File("pipe.json"));
    CHECK(pipe.Devices().size() == inter["stages"].size());
    const paralens::core::Trace intra = paralens::core::ReadTraceFile(dir.File("intra.json"));
    CHECK(intra.Devices().size() == 8);
    CHECK(intra.Meta().results.GetNumber("predictedSeconds") == Approx(Strategy(j, "dp")["costSeconds"].get<double>()).epsilon(1e-9));
}

TEST_CASE("autopar: bad options and graph files give one line naming them", "[cli][autopar]")
{
    CliTempDir dir;
    std::ofstream(dir.File("bad.json")) << R"({"name": "g", "tensors": [{"name": "x", "shape": [4, 4], "kind": "layer-input"}],
        "ops": [{"name": "mm", "kind": "matmul", "einsum": "ij,jk->ik", "inputs": ["x", "w"]}], "outputs": ["mm"]})";
    for (const auto& [args, mention] : {std::pair<std::string, std::string>{"autopar --mesh 2y4", "--mesh"},
                                        {"autopar --graph resnet", "--graph"},
                                        {"autopar --solvers ilp,magic", "--solvers"},
                                        {"autopar --graph transformer --batch 8 --micro-batches 3", "--micro-batches"},
                                        {"autopar --graph mlp --micro-batches 2", "stack of layers"},
                                        {"autopar --graph " + dir.File("bad.json"), "op 'mm'"},
                                        {"autopar --graph " + dir.File("missing.json"), "missing.json"}}) {
        const CliResult r = RunParalens(args);
        INFO(args << "\nstderr: " << r.err);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains(mention));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.out.empty());
    }
}
