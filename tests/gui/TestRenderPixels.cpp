// GUI tests: `paralens render` draws every scenario and view headless, and the pixels say what the
// lectures say. Runs under a (virtual) X display: ctest starts this executable through xvfb-run;
// without a display every test case says it is skipped and passes.
#include "ScenarioLoader.hpp"

#include "../cli/CliRunner.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stb/stb_image.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

bool HaveDisplay()
{
    const char* d = std::getenv("DISPLAY");
    return d && *d;
}

#define REQUIRE_DISPLAY()                                                                                              \
    if (!HaveDisplay()) {                                                                                              \
        WARN("skipped: no X display (ctest runs this under xvfb-run; install xvfb to run the GUI tests)");             \
        return;                                                                                                        \
    }

struct Image {
    int width = 0, height = 0;
    std::vector<unsigned char> rgb; // 3 bytes per pixel, rows top-down

    const unsigned char* At(int x, int y) const { return rgb.data() + (static_cast<size_t>(y) * width + x) * 3; }
};

Image Load(const std::string& path)
{
    Image img;
    int channels = 0;
    std::unique_ptr<unsigned char, void (*)(void*)> data(stbi_load(path.c_str(), &img.width, &img.height, &channels, 3), stbi_image_free);
    REQUIRE(data);
    img.rgb.assign(data.get(), data.get() + static_cast<size_t>(img.width) * img.height * 3);
    return img;
}

// Renders and returns the --json report; the PNG lands at `png`.
nlohmann::json Render(const std::string& args, const std::string& png)
{
    CliResult r = RunParalens("render " + args + " --out '" + png + "' --json");
    INFO("paralens render " << args << "\n" << r.err);
    REQUIRE(r.exitCode == 0);
    return nlohmann::json::parse(r.out);
}

unsigned Hex(const std::string& text) { return static_cast<unsigned>(std::stoul(text.substr(1), nullptr, 16)); }

bool Near(const unsigned char* p, unsigned rgb, int tolerance)
{
    return std::abs(p[0] - static_cast<int>((rgb >> 16) & 0xFF)) <= tolerance &&
           std::abs(p[1] - static_cast<int>((rgb >> 8) & 0xFF)) <= tolerance && std::abs(p[2] - static_cast<int>(rgb & 0xFF)) <= tolerance;
}

// A picture, not a blank: many colours and no colour covering nearly everything. A view with
// nothing to show for its scenario (no collective for the flow view, say) must still say so in
// words: then some text on a plain background is enough.
void CheckNotBlank(const Image& img, bool content = true)
{
    std::set<unsigned> colours;
    size_t most = 0;
    std::vector<size_t> hist(1 << 15, 0); // 5 bits per channel
    for (int y = 0; y < img.height; ++y)
        for (int x = 0; x < img.width; ++x) {
            const unsigned char* p = img.At(x, y);
            const unsigned key = (p[0] >> 3) << 10 | (p[1] >> 3) << 5 | (p[2] >> 3);
            most = std::max(most, ++hist[key]);
            if (colours.size() < 64) colours.insert(static_cast<unsigned>(p[0]) << 16 | p[1] << 8 | p[2]);
        }
    const double plain = static_cast<double>(most) / (static_cast<double>(img.width) * img.height);
    if (content) {
        CHECK(colours.size() >= 16);
        CHECK(plain < 0.97);
    } else {
        CHECK(colours.size() >= 3);
        CHECK(plain < 0.9995);
    }
}

// Whether the view had data to draw, from render's --json report.
bool HasContent(const nlohmann::json& j)
{
    const std::string view = j.value("view", "");
    if (view == "flow") return j.contains("panels") && !j["panels"].empty();
    if (view == "model") return j.value("curves", 0) > 0;
    if (view == "mfu") return j.value("runs", 0) > 0;
    if (view == "autopar") return j.contains("nodes") && !j["nodes"].empty();
    if (view == "planner") return j.contains("rows") && !j["rows"].empty();
    return true;
}

} // namespace

TEST_CASE("every scenario renders every view into a real picture", "[gui]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    for (const paralens::app::Scenario& s : paralens::app::BuiltinScenarios())
        for (const char* view : {"timeline", "flow", "model", "mfu", "stats", "autopar", "planner", "window"}) {
            INFO(s.name << " / " << view);
            const std::string png = dir.File(s.name + "-" + view + ".png");
            nlohmann::json j = Render("--scenario " + s.name + " --view " + view + " --size 960x540", png);
            const Image img = Load(png);
            CHECK(img.width == 960);
            CHECK(img.height == 540);
            CheckNotBlank(img, HasContent(j));
        }
}

TEST_CASE("GPipe's timeline: bubble-grey pixels inside the step match the bubble fraction", "[gui]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("gpipe.png");
    nlohmann::json j = Render("--scenario gpipe-vs-1f1b --view timeline --size 1600x900", png);
    const Image img = Load(png);
    const unsigned fill = Hex(j["bubbleFill"]), hatch = Hex(j["bubbleHatch"]);
    const auto& section = j["sections"][0];
    const double x0 = section["plotX0"], x1 = section["plotX1"], b = section["windowBeginNs"], e = section["windowEndNs"];
    int rows = 0;
    for (const auto& row : section["rows"]) {
        if (row["run"] != 0 || row["kind"] != "device") continue;
        ++rows;
        const double h = row["y1"].get<double>() - row["y0"].get<double>();
        const double pad = std::max(1.0, std::floor(h * 0.1));
        const int ya = static_cast<int>(std::ceil(row["y0"].get<double>() + pad)) + 1;
        const int yb = static_cast<int>(std::floor(row["y1"].get<double>() - pad)) - 1;
        const int xa = static_cast<int>(std::ceil(x0 + (0 - b) / (e - b) * (x1 - x0))) + 1;
        const int xb = static_cast<int>(std::floor(x0 + (row["windowEndNs"].get<double>() - b) / (e - b) * (x1 - x0))) - 1;
        size_t grey = 0, all = 0;
        for (int y = ya; y <= yb; ++y)
            for (int x = xa; x <= xb; ++x) {
                const unsigned char* p = img.At(x, y);
                const bool neutral = std::abs(p[0] - p[1]) <= 2 && std::abs(p[1] - p[2]) <= 2;
                const int lo = static_cast<int>(hatch & 0xFF) - 3, hi = static_cast<int>(fill & 0xFF) + 3;
                grey += neutral && p[1] >= lo && p[1] <= hi ? 1 : 0;
                ++all;
            }
        INFO("stage " << row["device"] << ": " << grey << " grey of " << all);
        // (D-1)/(D-1+N) = 3/11 for D = 4, N = 8; the simulation has it exactly, the pixels nearly.
        CHECK(static_cast<double>(grey) / static_cast<double>(all) == Approx(3.0 / 11.0).margin(0.03));
        CHECK(row["idleFraction"].get<double>() == Approx(3.0 / 11.0).epsilon(1e-9));
    }
    CHECK(rows == 4);
}

TEST_CASE("too many messages to draw: the note says so on the run's title row, clear of the time axis", "[gui]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("ring256.png");
    nlohmann::json j = Render("--link 'scenario=default&ranks=256' --view timeline --size 1280x720", png);
    const Image img = Load(png);
    const auto& section = j["sections"][0];
    REQUIRE(section.contains("messagesNote")); // 130,560 messages: more than are drawn
    const auto& note = section["messagesNote"];
    const double rulerY1 = section["rulerY1"];
    // Below the ruler (drawn in it, it covered the time labels), above the first rank's row.
    CHECK(note["y0"].get<double>() >= rulerY1);
    CHECK(note["y1"].get<double>() <= section["rows"][0]["y0"].get<double>());
    CHECK(note["x1"].get<double>() <= section["plotX1"].get<double>());
    // Its words are there, and so are the time labels above them.
    auto darkIn = [&](int x0, int x1, int y0, int y1) {
        size_t dark = 0;
        for (int y = std::max(0, y0); y < std::min(img.height, y1); ++y)
            for (int x = std::max(0, x0); x < std::min(img.width, x1); ++x)
                dark += img.At(x, y)[1] < 140 ? 1 : 0;
        return dark;
    };
    const int nx0 = static_cast<int>(note["x0"].get<double>()), nx1 = static_cast<int>(note["x1"].get<double>());
    CHECK(darkIn(nx0, nx1, static_cast<int>(note["y0"].get<double>()), static_cast<int>(note["y1"].get<double>())) > 100);
    CHECK(darkIn(nx0, nx1, 0, static_cast<int>(rulerY1)) > 50);
}

TEST_CASE("coloured by micro-batch, every micro-batch's colour appears in every stage's row", "[gui]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("mb.png");
    nlohmann::json j = Render("--scenario gpipe-vs-1f1b --view timeline --size 1600x900 --color-by micro-batch", png);
    const Image img = Load(png);
    const auto& section = j["sections"][0];
    int rows = 0;
    for (const auto& row : section["rows"]) {
        if (row["kind"] != "device") continue;
        ++rows;
        for (int mb = 0; mb < 8; ++mb) {
            const unsigned colour = Hex(j["forwardColors"][mb]);
            size_t hits = 0;
            for (int y = static_cast<int>(row["y0"].get<double>()); y < static_cast<int>(row["y1"].get<double>()); ++y)
                for (int x = static_cast<int>(section["plotX0"].get<double>()); x < static_cast<int>(section["plotX1"].get<double>()); ++x)
                    hits += Near(img.At(x, y), colour, 1) ? 1 : 0;
            INFO("run " << row["run"] << " stage " << row["device"] << " micro-batch " << mb);
            CHECK(hits > 50);
        }
    }
    CHECK(rows == 8); // GPipe and 1F1B, four stages each
}

TEST_CASE("the auto-parallel view colours the lectures' MLP as the slides do", "[gui][autopar]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("autopar.png");
    const nlohmann::json j = Render("--scenario autopar-mlp --view autopar --size 1400x600", png);
    const Image img = Load(png);
    std::map<std::string, nlohmann::json> nodes;
    for (const auto& n : j["nodes"]) nodes[n["op"].get<std::string>()] = n;
    REQUIRE(nodes.size() == 5); // x, fc1, gelu, fc2 and the output
    auto pixel = [&](const std::string& op) { // inside the node, right of its text
        const auto& r = nodes[op]["rect"];
        return img.At(static_cast<int>(r[0].get<double>() + r[2].get<double>() - 4), static_cast<int>(r[1].get<double>() + r[3].get<double>() * 0.5));
    };
    CHECK(nodes["fc1"]["strategy"] == "split f"); // W1 by columns, W2 by rows: Megatron's split
    CHECK(nodes["fc2"]["layout"] == "P");
    CHECK(Near(pixel("fc1"), 0xDC4437, 12));  // column-partitioned: red
    CHECK(Near(pixel("gelu"), 0xDC4437, 12));
    CHECK(Near(pixel("x"), 0x9E9E9E, 12));    // replicated: grey
    CHECK(Near(pixel("output"), 0x9E9E9E, 12));
    int allreduces = 0;
    for (const auto& label : j["edgeLabels"]) allreduces += label.get<std::string>().find("allreduce") != std::string::npos;
    CHECK(allreduces == 2); // Y forward, dX backward
    REQUIRE(j["bars"].size() == 6);
    CHECK(j["bars"][0]["name"] == "ilp");
    CHECK(j["bars"][0]["shown"] == true);
    for (const auto& b : j["bars"]) CHECK(j["bars"][0]["seconds"].get<double>() <= b["seconds"].get<double>() * (1 + 1e-9));
}

TEST_CASE("render --link draws the state a link describes and names what it skipped", "[gui][link]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("link.png");
    const nlohmann::json j = Render("--link '#scenario=ring-vs-tree&ranks=16&bytes=4MiB&view=flow&theme=dark&colour=blue' --view window", png);
    CheckNotBlank(Load(png));
    CHECK(j["link"] == "scenario=ring-vs-tree&view=flow&theme=dark&bytes=4MiB&ranks=16");
    REQUIRE(j["linkProblems"].size() == 1);
    CHECK_THAT(j["linkProblems"][0].get<std::string>(), Catch::Contains("'colour=blue' skipped"));
    REQUIRE(j["experiments"].size() == 2);
    for (const auto& e : j["experiments"]) CHECK(e["devices"] == 16);
}

TEST_CASE("the auto-parallel scenarios' flow view animates the shown strategy's largest collective", "[gui][autopar]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    for (const char* scenario : {"autopar-mlp", "autopar-transformer"}) {
        INFO(scenario);
        const nlohmann::json j = Render(std::string("--scenario ") + scenario + " --view flow", dir.File("flow.png"));
        REQUIRE(j.contains("panels"));
        REQUIRE(!j["panels"].empty());
        CHECK(j["panels"][0]["ranks"].get<int>() >= 2);
    }
}

TEST_CASE("the planner view ranks, explains the shown row and draws the Pareto front", "[gui][planner]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("planner.png");
    const nlohmann::json j = Render("--scenario plan-llama70b --view planner --size 1600x900", png);
    const Image img = Load(png);
    REQUIRE(j["rows"].size() >= 10);
    for (size_t i = 1; i < j["rows"].size(); ++i)
        CHECK(j["rows"][i - 1]["stepSeconds"].get<double>() <= j["rows"][i]["stepSeconds"].get<double>());
    CHECK(j["shownRow"] == 1);
    // The explanation bar's segments add up to the step and compute is the widest.
    double sum = 0, widest = 0;
    std::string widestLabel;
    for (const auto& s : j["stepBar"]) {
        sum += s["seconds"].get<double>();
        if (s["rect"][2].get<double>() > widest) {
            widest = s["rect"][2].get<double>();
            widestLabel = s["label"];
        }
    }
    CHECK(sum == Approx(j["rows"][0]["stepSeconds"].get<double>()).epsilon(1e-6));
    CHECK(widestLabel == "compute");
    // Beneath it the compute opened up, as long as its segment: GEMMs, attention, memory-bound ops.
    double compute = 0, computeWidth = 0, computeSegment = 0;
    for (const auto& s : j["stepBar"])
        if (s["label"] == "compute") computeSegment = s["rect"][2].get<double>(), compute = s["seconds"].get<double>();
    std::set<std::string> computeLabels;
    double parts = 0;
    for (const auto& s : j["computeBar"]) {
        parts += s["seconds"].get<double>();
        computeWidth += s["rect"][2].get<double>();
        computeLabels.insert(s["label"].get<std::string>());
    }
    CHECK(parts == Approx(compute).epsilon(1e-6));
    CHECK(computeWidth == Approx(computeSegment).margin(1.0));
    CHECK(computeLabels.count("GEMMs") == 1);
    CHECK(computeLabels.count("attention") == 1);
    CHECK(computeLabels.count("memory-bound ops") == 1);
    REQUIRE_FALSE(j["memoryBar"].empty());
    // The compute segment is drawn.
    const auto& first = j["stepBar"][0];
    const unsigned char* px = img.At(static_cast<int>(first["rect"][0].get<double>() + first["rect"][2].get<double>() / 2),
                                     static_cast<int>(first["rect"][1].get<double>() + first["rect"][3].get<double>() / 2));
    const unsigned char* bg = img.At(2, img.height - 3);
    CHECK((px[0] != bg[0] || px[1] != bg[1] || px[2] != bg[2])); // the segment is filled, not background
    REQUIRE(j["front"].size() >= 2);
    CHECK(j["points"].get<int>() >= static_cast<int>(j["front"].size()));
}

TEST_CASE("the planner view plans long sequences with context parallelism, and a fixed cp holds", "[gui][planner]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("planner-cp.png");
    const nlohmann::json j = Render("--scenario plan-long-context --view planner --size 1280x720", png);
    REQUIRE_FALSE(j["rows"].empty());
    CHECK_THAT(j["rows"][0]["config"].get<std::string>(), Catch::Contains(" cp "));
    for (const auto& s : j["stepBar"])
        if (s["label"] == "TP/CP/EP comm") CHECK(s["seconds"].get<double>() >= 0);
}

TEST_CASE("the planner view plans with the GEMM efficiency of a real profile the controls name", "[gui][planner][calibration]")
{
    REQUIRE_DISPLAY();
    const std::string ref = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/kineto/";
    if (!std::filesystem::exists(ref + "sampled_rank-0.json.gz")) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    CliTempDir dir;
    auto scenario = [&](const std::string& name, const std::string& gpu) { // the A100 profile, planned for `gpu`
        const std::string path = dir.File(name + ".json");
        std::ofstream f(path);
        f << R"({"title": "calibrated", "experiments": [{"kind": "plan", "model": "llama3-8b", "gpu": ")" << gpu << R"(", "gpus": 16,
                 "globalBatch": 64, "calibrate": ")" << ref << "sampled_rank-0.json.gz, " << ref << R"(sampled_rank-1.json.gz"}],
                 "view": {"tab": "planner"}})";
        return path;
    };
    const nlohmann::json j = Render("--scenario " + scenario("calibrated", "a100-sxm") + " --view planner --size 1280x720", dir.File("calibrated.png"));
    CHECK_THAT(j["header"].get<std::string>(), Catch::Contains("calibrated efficiency"));
    CHECK_THAT(j["header"].get<std::string>(), !Catch::Contains("the profile ran on"));
    REQUIRE_FALSE(j["rows"].empty());
    // The same profile planned for H100s: the header says whose efficiencies these are.
    const nlohmann::json other = Render("--scenario " + scenario("calibrated-h100", "h100-sxm") + " --view planner --size 1280x720",
                                        dir.File("calibrated-h100.png"));
    CHECK_THAT(other["header"].get<std::string>(), Catch::Contains("the profile ran on a100-sxm, the plan is for h100-sxm"));
}

TEST_CASE("the planner view of a published run marks its own row, listed even below the first 50", "[gui][planner]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const nlohmann::json j = Render("--scenario plan-published --view planner --size 1280x720", dir.File("published.png"));
    CHECK_THAT(j["note"].get<std::string>(), Catch::Contains("published run R029") && Catch::Contains("predicted"));
    REQUIRE(j.contains("publishedRow"));
    CHECK(j["shownRow"] == j["publishedRow"]); // the timeline shows the run's own configuration
    REQUIRE(j.contains("publishedLineY"));      // the published step across the chart of every configuration
    REQUIRE_FALSE(j["front"].empty());
    CHECK(j["publishedLineY"].get<double>() >= j["front"][0][1].get<double>() - 40); // 14 s against the planner's best 13.9 s: near the front's fastest point
    // NeMo's Nemotron-3 22B recipe: far down the planner's choices, its row still in the table, after the first 50.
    const nlohmann::json low = Render("--link 'scenario=plan-published&publishedRun=R041' --view planner --size 1280x720", dir.File("low.png"));
    const int row = low["publishedRow"].get<int>();
    REQUIRE(row > 50);
    REQUIRE(low["rows"].size() == 51);
    CHECK(low["rows"][49]["rank"] == 50);
    CHECK(low["rows"][50]["rank"] == row);
}

TEST_CASE("the planner view names each GPU's GEMM efficiency and flash-attn 2, and plans with them", "[gui][planner]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    auto plan = [&](const char* gpu, bool fa2) {
        const std::string scenario = dir.File(std::string(gpu) + (fa2 ? "-fa2" : "") + ".json");
        std::ofstream(scenario) << R"({"title": "fa2", "experiments": [{"kind": "plan", "model": "llama3-8b", "gpu": ")" << gpu
                                << R"(", "gpus": 8, "globalBatch": 8, "seq": 8192, "flashAttention2": )" << (fa2 ? "true" : "false")
                                << R"(}], "view": {"tab": "planner"}})";
        return Render("--scenario " + scenario + " --view planner --size 1280x720", dir.File("p.png"));
    };
    const nlohmann::json h100 = plan("h100-sxm", false), h100fa2 = plan("h100-sxm", true), a100 = plan("a100-sxm", false);
    CHECK_THAT(h100["header"].get<std::string>(), Catch::Contains("GEMMs at 0.55 of bf16 peak"));
    CHECK_THAT(a100["header"].get<std::string>(), Catch::Contains("GEMMs at 0.60 of bf16 peak")); // A100's measured ceiling
    CHECK_THAT(h100fa2["header"].get<std::string>(), Catch::Contains("attention through flash-attn 2"));
    REQUIRE_FALSE(h100["rows"].empty());
    REQUIRE_FALSE(h100fa2["rows"].empty());
    CHECK(h100fa2["rows"][0]["stepSeconds"].get<double>() > h100["rows"][0]["stepSeconds"].get<double>()); // 8K tokens: attention matters
}

TEST_CASE("the planner view plans a pipeline laid out by hand, as a link fixes it, and names the layout", "[gui][planner]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const nlohmann::json j = Render("--link 'scenario=plan-llama70b&model=llama3-8b&gpus=16&globalBatch=64&pp=4&ppLayout=Et*7|t*8|t*8|t*9L' "
                                    "--view planner --size 1280x720",
                                    dir.File("layout.png"));
    CHECK(j["linkProblems"].empty());
    CHECK_THAT(j["header"].get<std::string>(), Catch::Contains("pipeline layout 'Et*7|t*8|t*8|t*9L' (pp 4, v 1)"));
    REQUIRE_FALSE(j["rows"].empty());
    for (const auto& row : j["rows"]) CHECK_THAT(row["config"].get<std::string>(), Catch::Contains("pp 4") && Catch::Contains("layout Et*7|t*8|t*8|t*9L"));
    // The same layout with a layer too many: refused, naming the key and what is wrong.
    const nlohmann::json bad = Render("--link 'scenario=plan-llama70b&model=llama3-8b&gpus=16&pp=4&ppLayout=Et*7|t*8|t*8|t*10L' --view planner "
                                      "--size 1280x720",
                                      dir.File("bad.png"));
    REQUIRE(bad["linkProblems"].size() == 1);
    CHECK_THAT(bad["linkProblems"][0].get<std::string>(), Catch::Contains("ppLayout") && Catch::Contains("holds 33 transformer layers"));
    CHECK_FALSE(j.contains("balancedLayout")); // laid out already
    // Without a layout, the shown row's layers laid out to balance the output layer, under its step.
    const nlohmann::json even = Render("--link 'scenario=plan-llama70b&model=llama3-8b&gpus=16&globalBatch=16&tp=1&pp=4&cp=1' --view planner "
                                       "--size 1280x720",
                                       dir.File("even.png"));
    REQUIRE(even.contains("balancedLayout"));
    CHECK(even["balancedLayout"]["layout"] == "Et*2|(t|)*30L");
    CHECK(even["balancedLayout"]["stepSeconds"].get<double>() < even["rows"][0]["stepSeconds"].get<double>());
    CHECK_THAT(even["balancedLayout"]["text"].get<std::string>(), Catch::Contains("--pp-layout 'Et*2|(t|)*30L'"));
}

TEST_CASE("the flow view draws one node per rank", "[gui]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("flow.png");
    nlohmann::json j = Render("--scenario default --view flow --size 1280x720 --step 3", png);
    const Image img = Load(png);
    const unsigned node = Hex(j["nodeFill"]);
    REQUIRE(j["panels"].size() == 1);
    const auto& panel = j["panels"][0];
    CHECK(panel["ranks"] == 8);
    REQUIRE(panel["nodes"].size() == 8);
    for (const auto& n : panel["nodes"]) {
        const int x = static_cast<int>(n["x"].get<double>() - 0.65 * n["r"].get<double>());
        CHECK(Near(img.At(x, static_cast<int>(n["y"].get<double>())), node, 2));
    }
    // The node colour forms exactly p blobs.
    std::vector<int> label(static_cast<size_t>(img.width) * img.height, 0);
    int blobs = 0;
    for (int y = 0; y < img.height; ++y)
        for (int x = 0; x < img.width; ++x) {
            const size_t i = static_cast<size_t>(y) * img.width + x;
            if (label[i] || !Near(img.At(x, y), node, 2)) continue;
            ++blobs;
            std::vector<size_t> stack{i};
            label[i] = blobs;
            size_t area = 0;
            while (!stack.empty()) {
                const size_t k = stack.back();
                stack.pop_back();
                ++area;
                const int kx = static_cast<int>(k % img.width), ky = static_cast<int>(k / img.width);
                const int nx[4] = {kx - 1, kx + 1, kx, kx}, ny[4] = {ky, ky, ky - 1, ky + 1};
                for (int d = 0; d < 4; ++d) {
                    if (nx[d] < 0 || ny[d] < 0 || nx[d] >= img.width || ny[d] >= img.height) continue;
                    const size_t m = static_cast<size_t>(ny[d]) * img.width + nx[d];
                    if (!label[m] && Near(img.At(nx[d], ny[d]), node, 2)) {
                        label[m] = blobs;
                        stack.push_back(m);
                    }
                }
            }
            if (area < 30) --blobs; // antialiasing specks are not nodes
        }
    CHECK(blobs == 8);
}

TEST_CASE("themes and frame timing", "[gui]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("dark.png");
    nlohmann::json j = Render("--scenario ring-vs-tree --view model --size 960x540 --dark --presentation --bench-frames 3", png);
    const Image img = Load(png);
    CheckNotBlank(img);
    const unsigned char* corner = img.At(img.width - 3, img.height - 3);
    CHECK(corner[0] < 80); // a dark background
    REQUIRE(j.contains("frameMs"));
    CHECK(j["frameMs"]["frames"] == 3);
    CHECK(j["frameMs"]["buildMedian"].get<double>() > 0.0);
    CHECK(j["crossoverBytes"].get<double>() == Approx(8 * 5e-6 / (4.25 * 1e-11)).epsilon(1e-5));
}

TEST_CASE("render of a live scenario runs it on 4 processes first and says which spans were measured", "[gui][live]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const std::string png = dir.File("live.png");
    nlohmann::json j = Render("--scenario live-ring-processes --view timeline --size 960x540", png);
    REQUIRE(j.contains("experiments"));
    REQUIRE(j["experiments"].size() == 2);
    CHECK(j["experiments"][0]["backend"] == "processes");
    CHECK(j["experiments"][0]["measured"] == true);
    CHECK(j["experiments"][0]["devices"] == 4);
    CHECK(j["experiments"][0]["measuredSpans"].get<int>() > 0);
    CHECK(j["experiments"][1]["measured"] == false);
    CheckNotBlank(Load(png), true);
}

namespace {

// Pixels of a colour in each device row of section 0, run `run`.
std::vector<size_t> ColourPerRow(const Image& img, const nlohmann::json& section, int run, unsigned rgb)
{
    std::vector<size_t> out;
    const int x0 = static_cast<int>(section["plotX0"].get<double>()), x1 = static_cast<int>(section["plotX1"].get<double>());
    for (const auto& row : section["rows"]) {
        if (row["run"] != run || row["kind"] != "device") continue;
        size_t n = 0;
        for (int y = static_cast<int>(row["y0"].get<double>()); y < static_cast<int>(row["y1"].get<double>()); ++y)
            for (int x = x0; x < x1; ++x) n += Near(img.At(x, y), rgb, 12);
        out.push_back(n);
    }
    return out;
}

} // namespace

TEST_CASE("the critical path of GPipe is outlined through every stage, and only when asked", "[gui][whatif]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const nlohmann::json on = Render("--scenario gpipe-vs-1f1b --view timeline --size 1600x900 --critical-path", dir.File("on.png"));
    const nlohmann::json off = Render("--scenario gpipe-vs-1f1b --view timeline --size 1600x900", dir.File("off.png"));
    const unsigned critical = Hex(on["critical"]);
    CHECK(on["criticalSegments"].get<int>() > 0);
    CHECK(off["criticalSegments"].get<int>() == 0);
    const std::vector<size_t> withPath = ColourPerRow(Load(dir.File("on.png")), on["sections"][0], 0, critical);
    const std::vector<size_t> without = ColourPerRow(Load(dir.File("off.png")), off["sections"][0], 0, critical);
    REQUIRE(withPath.size() == 4);
    for (size_t stage = 0; stage < 4; ++stage) {
        INFO("stage " << stage);
        CHECK(withPath[stage] > 100); // F0 and B0 of every stage lie on GPipe's path
        CHECK(without[stage] == 0);
    }
}

TEST_CASE("render --whatif draws the replay under the measured trace, on its time axis", "[gui][whatif]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    REQUIRE(RunParalens("pipeline --schedule gpipe -D 4 -N 8 -o " + dir.File("gpipe.json")).exitCode == 0);
    const nlohmann::json j = Render(dir.File("gpipe.json") + " --whatif backward=0.5 --view window --size 1600x1000", dir.File("w.png"));
    REQUIRE(j["experiments"].size() == 2);
    CHECK(j["experiments"][1]["title"].get<std::string>().find("what-if (backward=0.5)") != std::string::npos);
    REQUIRE(j["sections"].size() == 1); // one time axis for both
    std::set<int> runs;
    for (const auto& row : j["sections"][0]["rows"]) runs.insert(row["run"].get<int>());
    CHECK(runs == std::set<int>{0, 1});
    CHECK(j["criticalSegments"].get<int>() > 0);
    CheckNotBlank(Load(dir.File("w.png")));
    const CliResult scenario = RunParalens("render --scenario gpipe-vs-1f1b --whatif backward=0.5 --out " + dir.File("x.png"));
    CHECK(scenario.exitCode == 2);
    CHECK(scenario.err.find("--whatif") != std::string::npos);
}

TEST_CASE("the model view of a measured log draws its regimes and marks where NCCL switches", "[gui][regimes]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    // allreduce on 8 ranks: the faster of 10 us + n / 4 GB/s and 60 us + n / 200 GB/s (they cross near 200 KiB).
    std::string log = "# Collective test starting: all_reduce_perf\n";
    for (int r = 0; r < 8; ++r) log += "#  Rank  " + std::to_string(r) + " Group  0 Pid 1 on node device  " + std::to_string(r) + " [0x00] GPU\n";
    log += "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
    for (uint64_t n = 8; n <= (uint64_t{1} << 32); n *= 2) {
        const double us = std::min(10.0 + static_cast<double>(n) / 4e3, 60.0 + static_cast<double>(n) / 200e3);
        log += std::to_string(n) + " " + std::to_string(n / 4) + " float sum -1 " + std::to_string(us) + " 1 1 0 " + std::to_string(us) + " 1 1 0\n";
    }
    {
        std::FILE* f = std::fopen(dir.File("ar.log").c_str(), "w");
        REQUIRE(f);
        std::fputs(log.c_str(), f);
        std::fclose(f);
    }
    const nlohmann::json j = Render(dir.File("ar.log") + " --view model --size 1600x900", dir.File("m.png"));
    REQUIRE(j["regimes"] == 2);
    REQUIRE(j["regimeSwitchBytes"].size() == 1);
    CHECK(j["regimeSwitchBytes"][0].get<double>() > 128 * 1024);
    CHECK(j["regimeSwitchBytes"][0].get<double>() < 256 * 1024);
    REQUIRE(j["protocols"] == 2); // the two lines, NCCL switching where they cross: 50 us / (1/4 - 1/200) us per KB
    CHECK(j["protocolSwitchBytes"][0].get<double>() == Approx(50.0 / (1 / 4e3 - 1 / 200e3)).epsilon(0.01));
    const unsigned colour = Hex(j["regimesColour"]);
    auto count = [&](const Image& img) {
        size_t n = 0;
        for (int y = 0; y < img.height; ++y)
            for (int x = 0; x < img.width * 6 / 10; ++x) n += Near(img.At(x, y), colour, 24);
        return n;
    };
    CHECK(count(Load(dir.File("m.png"))) > 2000); // the curve in both plots, the dashed switch, the protocols' names
    const nlohmann::json scenario = Render("--scenario ring-vs-tree --view model --size 1600x900", dir.File("s.png"));
    CHECK(scenario["regimes"] == 0); // no measurements, no regimes
    CHECK(scenario["protocols"] == 0);
    CHECK(count(Load(dir.File("s.png"))) < 50);
}

TEST_CASE("the two-level scenario's model view draws the hierarchical allreduce beside the others", "[gui][twolevel]")
{
    REQUIRE_DISPLAY();
    CliTempDir dir;
    const nlohmann::json j = Render("--scenario two-level-allreduce --view model --size 1600x900", dir.File("m.png"));
    CHECK(j["twoLevel"] == true);
    const auto names = j["algorithms"].get<std::vector<std::string>>();
    CHECK(std::find(names.begin(), names.end(), "hierarchical") != names.end());
    CHECK(std::find(names.begin(), names.end(), "ring") != names.end());
    CheckNotBlank(Load(dir.File("m.png")));
}

TEST_CASE("render draws without any display through EGL: the picture a hidden window gives", "[gui]")
{
#if !PARALENS_HAVE_EGL
    WARN("skipped: this build has no EGL (libegl-dev was missing when it was configured)");
    return;
#endif
    CliTempDir dir;
    const std::string args = "render --scenario gpipe-vs-1f1b --view timeline --size 1280x720 --json --out ";
    // No display at all: auto takes EGL (Mesa's software device here, a GPU driver's on a GPU server).
    const CliResult egl = RunParalens(args + "'" + dir.File("egl.png") + "'", "env -u DISPLAY ");
    INFO(egl.err);
    REQUIRE(egl.exitCode == 0);
    const nlohmann::json j = nlohmann::json::parse(egl.out);
    CHECK(j["gl"]["context"].get<std::string>().rfind("egl ", 0) == 0);
    CHECK_FALSE(j["gl"]["renderer"].get<std::string>().empty());
    // The fonts travel inside the binary: a GPU server without fonts-dejavu draws alpha and beta too.
    CHECK(j["font"] == (PARALENS_FONTS_EMBEDDED ? "DejaVu Sans, compiled in" : "DejaVu Sans, /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"));
    const Image a = Load(dir.File("egl.png"));
    CheckNotBlank(a);
    // A window asked for without a display: the error says what to do instead.
    const CliResult none = RunParalens(args + "'" + dir.File("none.png") + "' --gl window", "env -u DISPLAY ");
    CHECK(none.exitCode != 0);
    CHECK(none.err.find("--gl egl") != std::string::npos);
    REQUIRE_DISPLAY();
    const nlohmann::json w = Render("--scenario gpipe-vs-1f1b --view timeline --size 1280x720 --gl window", dir.File("window.png"));
    CHECK(w["gl"]["context"] == "window (GLFW)");
    const Image b = Load(dir.File("window.png"));
    REQUIRE(a.rgb.size() == b.rgb.size());
    size_t differ = 0;
    for (size_t i = 0; i + 2 < a.rgb.size(); i += 3)
        differ += std::abs(a.rgb[i] - b.rgb[i]) + std::abs(a.rgb[i + 1] - b.rgb[i + 1]) + std::abs(a.rgb[i + 2] - b.rgb[i + 2]) > 12 ? 1 : 0;
    INFO(differ << " of " << a.rgb.size() / 3 << " pixels differ");
    CHECK(differ <= a.rgb.size() / 3 / 1000);
}
