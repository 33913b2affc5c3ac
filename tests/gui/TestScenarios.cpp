// Lecture scenarios (assets/scenarios/*.json): they parse, they run, and bad files say what is wrong.
#include "PlanRuns.hpp"
#include "RunBuilder.hpp"
#include "ScenarioLoader.hpp"

#include "common/Error.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::app;

TEST_CASE("every built-in scenario parses and runs", "[gui]")
{
    const auto& list = BuiltinScenarios();
    REQUIRE(list.size() >= 6u);
    CHECK(list.front().name == "default");
    for (const Scenario& s : list) {
        INFO(s.name);
        CHECK(!s.title.empty());
        CHECK(!s.description.empty());
        auto snap = BuildSnapshot(s.experiments, nullptr);
        REQUIRE(snap);
        REQUIRE(snap->runs.size() == s.experiments.size());
        for (const auto& run : snap->runs) {
            REQUIRE(run->trace);
            CHECK(run->trace->SpanCount() > 0);
        }
    }
}

TEST_CASE("the default scenario is an 8-rank ring allreduce next to GPipe and 1F1B", "[gui]")
{
    const Scenario* s = FindScenario("default");
    REQUIRE(s);
    REQUIRE(s->experiments.size() == 3u);
    CHECK(s->experiments[0].kind == ExperimentKind::Collective);
    CHECK(s->experiments[0].collective.algorithm == core::Algorithm::Ring);
    CHECK(s->experiments[0].collective.ranks == 8);
    CHECK(s->experiments[1].pipeline.schedule == core::ScheduleKind::GPipe);
    CHECK(s->experiments[2].pipeline.schedule == core::ScheduleKind::OneFOneB);
}

TEST_CASE("a bad scenario names the file, the place and what was expected", "[gui]")
{
    CHECK_THROWS_WITH(ParseScenario("{\"experiments\": [{\"kind\": \"collective\", \"rnaks\": 4}]}", "x.json"),
                      Catch::Contains("x.json") && Catch::Contains("experiments[0]") && Catch::Contains("unknown key \"rnaks\""));
    CHECK_THROWS_WITH(ParseScenario("{\"experiments\": [{\"collective\": \"allreduce\", \"algorithm\": \"pairwise\"}]}", "y.json"),
                      Catch::Contains("does not apply to allreduce"));
    CHECK_THROWS_WITH(ParseScenario("{\"experiments\": [{\"bytes\": \"12 parsecs\"}]}", "z.json"), Catch::Contains("\"bytes\""));
    CHECK_THROWS_WITH(ParseScenario("{\"experiments\": []}", "e.json"), Catch::Contains("non-empty array"));
    CHECK_THROWS_WITH(ParseScenario("{\"experiments\": [{}], ", "t.json"), Catch::Contains("t.json: not valid JSON at byte"));
    CHECK_THROWS_WITH(ParseScenario("{\"experiments\": [{}], \"view\": {\"tab\": \"gantt\"}}", "v.json"),
                      Catch::Contains("expected flow, model, mfu, stats, autopar or planner"));
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "autopar", "mesh": "2y4"}]})", "a.json"),
                      Catch::Contains("a.json") && Catch::Contains("key \"mesh\"") && Catch::Contains("2y4"));
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "autopar", "solvers": "ilp,magic"}]})", "a.json"),
                      Catch::Contains("key \"solvers\"") && Catch::Contains("magic"));
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "plan", "model": "gpt5"}]})", "p.json"),
                      Catch::Contains("p.json") && Catch::Contains("key \"model\"") && Catch::Contains("gpt5"));
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "plan", "gpu": "tpu-v5"}]})", "p.json"),
                      Catch::Contains("key \"gpu\"") && Catch::Contains("tpu-v5"));
    CHECK_THROWS_WITH(ResolveScenario("no-such-scenario"), Catch::Contains("built in: default"));
}

TEST_CASE("a scenario names each experiment's backend and its run's iterations", "[gui]")
{
    const Scenario* s = FindScenario("live-1f1b-processes");
    REQUIRE(s);
    CHECK(s->experiments[0].backend == Backend::Processes);
    CHECK(s->experiments[0].live.iterations == 2);
    CHECK(s->experiments[1].backend == Backend::Simulated);
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "collective", "backend": "cloud"}]})", "x.json"),
                      Catch::Contains("backend") && Catch::Contains("simulated, processes or gpu"));
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "collective", "iterations": 0}]})", "x.json"),
                      Catch::Contains("iterations"));
}

TEST_CASE("a plan experiment carries TP and EP overlap, MTP and bf16 gradients to the planner, and writes them back", "[gui]")
{
    const Scenario s = ParseScenario(R"({"experiments": [{"kind": "plan", "model": "deepseek-v3", "gpus": 64,
                                          "tpCommOverlap": true, "dpCommOverlap": true, "bf16Gradients": true,
                                          "flashAttention2": true, "epCommOverlap": true, "mtpLayers": 1}]})", "p.json");
    const PlanParams& p = s.experiments.front().plan;
    CHECK(p.tpCommOverlap);
    CHECK(p.dpCommOverlap);
    CHECK(p.ToRequest().dpCommOverlap);
    CHECK_FALSE(PlanParams{}.ToRequest().dpCommOverlap);
    CHECK(p.ToRequest().epCommOverlap);
    CHECK_FALSE(PlanParams{}.ToRequest().epCommOverlap);
    CHECK(p.ToRequest().model.mtpLayers == 1);
    CHECK(p.ToRequest().model.id == "deepseek-v3*");
    CHECK(p.bf16Gradients);
    const core::PlanRequest r = p.ToRequest();
    CHECK(r.tpCommOverlap);
    CHECK_FALSE(r.gradReduceFp32);
    CHECK(PlanParams{}.ToRequest().gradReduceFp32); // fp32 buffers unless asked
    CHECK(r.flashAttention2);
    CHECK_FALSE(PlanParams{}.ToRequest().flashAttention2);
    const Experiment again = ParseExperiment(ExperimentJson(s.experiments.front()), "again");
    CHECK(again.plan == p);
}

TEST_CASE("a plan experiment carries fine-grained recomputation to the planner, names a bad module's key, and writes it back", "[gui]")
{
    const Scenario s = ParseScenario(R"({"experiments": [{"kind": "plan", "model": "deepseek-v3", "gpus": 256, "tp": 1, "pp": 4,
                                          "recomputeModules": "mla_up_proj, layernorm"}]})", "p.json");
    const PlanParams& p = s.experiments.front().plan;
    CHECK(p.recomputeModules.mlaUpProj);
    CHECK(p.recomputeModules.layernorm);
    CHECK_FALSE(p.recomputeModules.moeAct);
    const core::PlanRequest r = p.ToRequest();
    CHECK(r.recomputeModules == p.recomputeModules);
    CHECK_FALSE(PlanParams{}.ToRequest().recomputeModules.Any()); // none unless asked
    const Experiment again = ParseExperiment(ExperimentJson(s.experiments.front()), "again");
    CHECK(again.plan == p);
    CHECK(ExperimentJson(s.experiments.front()).at("recomputeModules") == "layernorm, mla_up_proj");
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "plan", "recomputeModules": "layernorm, mlp"}]})", "x.json"),
                      Catch::Contains("recomputeModules") && Catch::Contains("'mlp'") && Catch::Contains("mla_up_proj"));
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "plan", "model": "llama3-70b", "recomputeModules": "moe_act"}]})", "x.json"),
                      Catch::Contains("key \"recomputeModules\"") && Catch::Contains("not a mixture of experts"));
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "plan", "recomputeModules": true}]})", "x.json"),
                      Catch::Contains("recomputeModules") && Catch::Contains("wrong type"));
}

TEST_CASE("a plan experiment fixes TP, PP, the end stages' layers or a pipeline layout, names a bad one's key, and writes them back", "[gui]")
{
    const Scenario s = ParseScenario(R"({"experiments": [{"kind": "plan", "model": "llama3-8b", "gpus": 16, "tp": 2, "pp": 2,
                                          "ppLayout": "Et*6|t*10|t*10|t*6L"}]})", "p.json");
    const PlanParams& p = s.experiments.front().plan;
    const core::PlanRequest r = p.ToRequest();
    CHECK(r.tp == 2);
    CHECK(r.pp == 2);
    REQUIRE(r.layout);
    CHECK(r.layout->pp == 2);
    CHECK(r.layout->chunks == 2);
    CHECK_FALSE(PlanParams{}.ToRequest().tp.has_value()); // 0: searched
    CHECK_FALSE(PlanParams{}.ToRequest().layout);
    const Experiment again = ParseExperiment(ExperimentJson(s.experiments.front()), "again");
    CHECK(again.plan == p);
    const auto run = BuildTrainingPlan(s.experiments.front());
    REQUIRE(run->trainingPlan);
    REQUIRE_FALSE(run->trainingPlan->rows.empty());
    for (const core::PlanRow& row : run->trainingPlan->rows) {
        CHECK(row.config.tp == 2);
        CHECK(row.config.pp == 2);
        REQUIRE(row.config.layout);
        CHECK(row.config.layout->text == "Et*6|t*10|t*10|t*6L");
    }
    const Scenario ends = ParseScenario(R"({"experiments": [{"kind": "plan", "model": "llama3-8b", "gpus": 16, "pp": 4,
                                             "firstStageLayers": 6, "lastStageLayers": 7}]})", "e.json");
    const auto split = BuildTrainingPlan(ends.experiments.front());
    REQUIRE_FALSE(split->trainingPlan->rows.empty());
    CHECK(split->trainingPlan->rows.front().config.firstStageLayers == 6);
    CHECK(split->trainingPlan->rows.front().config.lastStageLayers == 7);
    const auto fails = [](const char* fields) {
        return ParseScenario(std::string(R"({"experiments": [{"kind": "plan", "model": "llama3-8b", "gpus": 16, )") + fields + "}]}", "bad.json");
    };
    CHECK_THROWS_WITH(fails(R"("ppLayout": "Et*16|t*16L")"), Catch::Contains("key \"ppLayout\"") && Catch::Contains("needs --pp"));
    CHECK_THROWS_WITH(fails(R"("pp": 2, "ppLayout": "Et*16|t*15L")"), Catch::Contains("key \"ppLayout\"") && Catch::Contains("31"));
    CHECK_THROWS_WITH(fails(R"("pp": 2, "ppLayout": "Et*16|t*16L", "firstStageLayers": 4)"),
                      Catch::Contains("key \"ppLayout\"") && Catch::Contains("leave out --first-stage-layers"));
    CHECK_THROWS_WITH(fails(R"("tp": 3)"), Catch::Contains("key \"tp\"") && Catch::Contains("not divisible by --tp 3"));
    CHECK_THROWS_WITH(fails(R"("pp": 64)"), Catch::Contains("key \"pp\"") && Catch::Contains("not divisible by --pp 64"));
    CHECK_THROWS_WITH(fails(R"("lastStageLayers": 32)"), Catch::Contains("key \"lastStageLayers\"") && Catch::Contains("between 1 and"));
}

TEST_CASE("a plan experiment's hidden size scales the heads, their own width kept", "[gui]")
{
    PlanParams p;
    p.model = "llama3-70b"; // 64 heads of 128 over 8192
    p.hidden = 4096;
    CHECK(p.ToRequest().model.heads == 32);
    p.model = "gpt-oss-120b"; // 64 heads of 64 against a hidden of 2880: they scale with it
    p.hidden = 2880 * 2;
    const core::PlanRequest r = p.ToRequest();
    CHECK(r.model.heads == 128);
    CHECK(r.model.HeadDim() == 64);
    CHECK(r.model.heads % r.model.kvHeads == 0);
    CHECK(r.model.id == "gpt-oss-120b*");
}

TEST_CASE("a plan experiment of a published run shows its own row among the planner's choices, and writes it back", "[gui]")
{
    const Scenario s = ParseScenario(R"({"experiments": [{"kind": "plan", "publishedRun": "R091"}]})", "p.json");
    const PlanParams& p = s.experiments.front().plan;
    CHECK(p.published == "R091");
    CHECK(p.row == 0); // unless the scenario says: the run's own configuration
    const Experiment again = ParseExperiment(ExperimentJson(s.experiments.front()), "again");
    CHECK(again.plan == p);
    const auto run = BuildTrainingPlan(s.experiments.front());
    REQUIRE(run->trainingPlan);
    CHECK(run->trainingPlanPublished >= 0);
    CHECK(run->trainingPlanShown == run->trainingPlanPublished);
    CHECK(run->trainingPlanRequest->cluster.gpus == 128);
    CHECK_THAT(run->trainingPlanNote, Catch::Contains("published run R091") && Catch::Contains("predicted"));
    Experiment best = s.experiments.front();
    best.plan.row = 1;
    CHECK(BuildTrainingPlan(best)->trainingPlanShown == 0);
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "plan", "publishedRun": "R999"}]})", "p.json"),
                      Catch::Contains("publishedRun") && Catch::Contains("'R999'"));
    CHECK_THROWS_WITH(ParseScenario(R"({"experiments": [{"kind": "plan", "publishedRun": "R051"}]})", "p.json"),
                      Catch::Contains("publishedRun") && Catch::Contains("not modelled"));
}
