// Links (app/gui/Link.hpp): the scenario and every parameter changed from it, read back to the
// same state; what a link cannot apply is named and skipped. The web page and `paralens --link`
// both go through these.
#include "Link.hpp"
#include "ScenarioLoader.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::app;

namespace {

bool Mentions(const std::vector<std::string>& lines, const std::string& what)
{
    for (const std::string& l : lines)
        if (l.find(what) != std::string::npos) return true;
    return false;
}

} // namespace

TEST_CASE("every scenario's experiments are written as the scenario format reads them back", "[gui]")
{
    for (const Scenario& s : BuiltinScenarios()) {
        for (size_t i = 0; i < s.experiments.size(); ++i) {
            INFO(s.name << " experiment " << i);
            CHECK(ParseExperiment(ExperimentJson(s.experiments[i]), "written") == s.experiments[i]);
        }
        CHECK(ParseView(ViewJson(s.view), "written") == s.view);
    }
}

TEST_CASE("a scenario's own link names only the scenario and opens it unchanged", "[gui]")
{
    for (const Scenario& s : BuiltinScenarios()) {
        INFO(s.name);
        LinkState state{s.name, s.experiments, s.view, false, false, {}};
        const std::string link = MakeLink(state);
        CHECK(link == "scenario=" + s.name);
        const LinkState back = ParseLink(link);
        CHECK(back.problems.empty());
        CHECK(back.experiments == s.experiments);
        CHECK(back.view == s.view);
    }
}

TEST_CASE("a lecturer's link: ring vs tree at 16 ranks and 4 MiB on the flow tab", "[gui]")
{
    const LinkState state = ParseLink("https://example.org/paralens/#scenario=ring-vs-tree&ranks=16&bytes=4MiB&view=flow");
    CHECK(state.problems.empty());
    CHECK(state.scenario == "ring-vs-tree");
    REQUIRE(state.experiments.size() == 2u);
    for (const Experiment& e : state.experiments) { // a key without a prefix: every experiment that has it
        CHECK(e.collective.ranks == 16);
        CHECK(e.collective.bytes == (uint64_t{4} << 20));
    }
    CHECK(state.experiments[0].collective.algorithm == core::Algorithm::Ring);
    CHECK(state.experiments[1].collective.algorithm == core::Algorithm::Tree);
    CHECK(state.view.tab == ViewTab::Flow);
    // Written back: the scenario, the view, then the experiments' keys in alphabetical order.
    CHECK(MakeLink(state) == "scenario=ring-vs-tree&view=flow&bytes=4MiB&ranks=16");
    // The scenario's own tab is no change.
    CHECK(MakeLink(ParseLink("scenario=ring-vs-tree&view=model")) == "scenario=ring-vs-tree");
}

TEST_CASE("a change to one experiment is written with its index and a new kind starts afresh", "[gui]")
{
    const Scenario& s = *FindScenario("default");
    LinkState state{s.name, s.experiments, s.view, true, true, {}};
    state.experiments[2].pipeline.microBatches = 16;           // 1F1B only
    state.experiments[0].cluster.stragglerRank = 3;            // a nested key
    state.experiments.push_back(Experiment{});                  // added: a default collective...
    state.experiments.back().kind = ExperimentKind::Plan;       // ...made a plan
    state.experiments.back().plan.gpus = 512;
    state.experiments.back().plan.recomputeModules.layernorm = true; // a list of names
    state.view.flowStep = 5;
    const std::string link = MakeLink(state);
    CHECK(link.find("experiments=4") != std::string::npos);
    CHECK(link.find("e3.kind=plan") != std::string::npos);
    CHECK(link.find("recomputeModules=layernorm") != std::string::npos); // only the plan has the key
    CHECK(link.find("e2.microBatches=16") != std::string::npos);
    CHECK(link.find("straggler.rank=3") != std::string::npos);
    CHECK(link.find("theme=dark") != std::string::npos);
    CHECK(link.find("presentation=1") != std::string::npos);
    const LinkState back = ParseLink(link);
    CHECK(back.problems.empty());
    CHECK(back.experiments == state.experiments);
    CHECK(back.view == state.view);
    CHECK(back.dark);
    CHECK(back.presentation);
}

TEST_CASE("a collective and an algorithm that only go together apply in either order", "[gui]")
{
    // tree does not do allgather and ring does not do... the pair applies whichever comes first.
    for (const char* link : {"scenario=ring-vs-tree&e0.collective=broadcast&e0.algorithm=tree",
                             "scenario=ring-vs-tree&e0.algorithm=tree&e0.collective=broadcast"}) {
        INFO(link);
        const LinkState state = ParseLink(link);
        CHECK(state.problems.empty());
        CHECK(state.experiments[0].collective.collective == core::Collective::Broadcast);
        CHECK(state.experiments[0].collective.algorithm == core::Algorithm::Tree);
    }
}

TEST_CASE("what a link cannot apply is named and skipped and the rest applies", "[gui]")
{
    const LinkState state =
        ParseLink("#scenario=ring-vs-tree&colour=blue&ranks=abc&bytes=4MiB&e7.ranks=3&algorithm=nonsense&view=charts&theme=pink");
    CHECK(state.scenario == "ring-vs-tree");
    CHECK(state.experiments[0].collective.bytes == (uint64_t{4} << 20)); // applied
    CHECK(state.experiments[0].collective.ranks == 8);                   // skipped: kept the scenario's
    CHECK(state.view.tab == ViewTab::Model);                             // the scenario's own
    REQUIRE(state.problems.size() == 6u);
    CHECK(Mentions(state.problems, "'colour=blue' skipped: not a parameter"));
    CHECK(Mentions(state.problems, "'ranks=abc' skipped: expected a whole number"));
    CHECK(Mentions(state.problems, "'e7.ranks=3' skipped: there are 2 experiments"));
    CHECK(Mentions(state.problems, "'algorithm=nonsense' skipped"));
    CHECK(Mentions(state.problems, "'view=charts' skipped"));
    CHECK(Mentions(state.problems, "'theme=pink' skipped: expected dark or light"));
}

TEST_CASE("an unknown scenario falls back to the default one and says so", "[gui]")
{
    const LinkState state = ParseLink("scenario=ring-vs-trees&ranks=4");
    CHECK(state.scenario == "default");
    CHECK(Mentions(state.problems, "'scenario=ring-vs-trees' skipped: no built-in scenario"));
    CHECK(state.experiments[0].collective.ranks == 4);
    CHECK(ParseLink("").scenario == "default");
    CHECK(ParseLink("https://example.org/paralens/").problems.empty());
}

TEST_CASE("values are percent-encoded as encodeURIComponent does and decoded back", "[gui]")
{
    CHECK(PercentEncode("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9");
    CHECK(PercentDecode("a%20b%26c%3Dd%2F%C3%A9") == "a b&c=d/é");
    CHECK(PercentDecode("100%") == "100%"); // a lone % is kept
    const Scenario& s = *FindScenario("default");
    LinkState state{s.name, s.experiments, s.view, false, false, {}};
    state.experiments[0].label = "ring & tree = 50%";
    const LinkState back = ParseLink(MakeLink(state));
    CHECK(back.experiments[0].label == "ring & tree = 50%");
}

TEST_CASE("files opened are left out of a link", "[gui]")
{
    const Scenario& s = *FindScenario("default");
    LinkState state{s.name, s.experiments, s.view, false, false, {}};
    Experiment file;
    file.kind = ExperimentKind::File;
    file.files = {"/home/someone/rank0.json"};
    state.experiments.insert(state.experiments.begin(), file);
    int omitted = 0;
    const std::string link = MakeLink(state, &omitted);
    CHECK(omitted == 1);
    CHECK(link.find("rank0") == std::string::npos);
    CHECK(ParseLink(link).experiments == s.experiments);
}
