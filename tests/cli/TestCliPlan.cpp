// End-to-end: `paralens plan`, the training-configuration planner from the command line.
#include "CliRunner.hpp"

#include "model/Fit.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

using Json = nlohmann::json;

TEST_CASE("plan: ranked rows with the documented fields, best first, and a Pareto front", "[cli][plan]")
{
    const Json j = RunParalensJson("plan --model llama3-70b --gpus 64 --gpu h100-sxm --global-batch 128 --seq 4096 --top 5 --json");
    REQUIRE(j["rows"].size() == 5);
    CHECK(j["fitting"].get<int>() >= 5);
    double previous = 0;
    for (const Json& row : j["rows"]) {
        for (const char* key : {"dp", "tp", "pp", "microBatch", "schedule", "recompute", "stepSeconds", "tokensPerSecond", "mfu",
                                "memoryBytesPerGpu", "fits"})
            CHECK(row.contains(key));
        CHECK(row["fits"] == true);
        CHECK(row["dp"].get<int>() * row["tp"].get<int>() * row["pp"].get<int>() * row["cp"].get<int>() == 64);
        CHECK(row["stepSeconds"].get<double>() >= previous);
        previous = row["stepSeconds"].get<double>();
        CHECK(row["memoryBytesPerGpu"].get<double>() <= 80 * 1073741824.0 * 0.95); // 80 GiB, less the allowance
        CHECK(row["tokensPerSecond"].get<double>() == Approx(128.0 * 4096 / row["stepSeconds"].get<double>()).epsilon(1e-9));
    }
    REQUIRE_FALSE(j["pareto"].empty());
    CHECK(j["pareto"][0]["stepSeconds"] == j["rows"][0]["stepSeconds"]);
}

TEST_CASE("plan: fixing every choice evaluates that one configuration", "[cli][plan]")
{
    const Json j = RunParalensJson("plan --model gpt3-175b --gpu a100-sxm --gpus 1024 --global-batch 1536 --dp 8 --tp 8 --pp 16 "
                                   "--micro-batch 1 --schedule interleaved --chunks 2 --recompute full --zero 1 --sp on --json");
    REQUIRE(j["candidates"] == 1);
    REQUIRE(j["rows"].size() == 1);
    const Json& row = j["rows"][0];
    CHECK(row["schedule"] == "interleaved");
    CHECK(row["chunks"] == 2);
    CHECK(row["recompute"] == "full");
    CHECK(row["microBatches"] == 192);
    CHECK(row["time"]["bubble"].get<double>() > 0);
    // The compute by what it runs: the four parts sum to it, and full recomputation is among them.
    const Json& parts = row["computeParts"];
    double sum = 0;
    for (const char* key : {"gemms", "attention", "memoryBound", "recompute"}) {
        CHECK(parts[key].get<double>() > 0);
        sum += parts[key].get<double>();
    }
    CHECK(sum == Approx(row["time"]["compute"].get<double>()).epsilon(1e-9));
    const CliResult text = RunParalens("plan --model gpt3-175b --gpu a100-sxm --gpus 1024 --global-batch 1536 --dp 8 --tp 8 --pp 16 "
                                       "--micro-batch 1 --schedule interleaved --chunks 2 --recompute full --zero 1 --sp on");
    CHECK_THAT(text.out, Catch::Contains("# #1's compute, ") && Catch::Contains("GEMMs ") && Catch::Contains("recomputation "));
}

TEST_CASE("plan: --pp-layout places the layers as Megatron-Core's layout string says", "[cli][plan]")
{
    const std::string args = "plan --model deepseek-v3 --mtp-layers 1 --gpu gb300 --gpus 256 --gpus-per-node 72 --global-batch 2048 "
                             "--seq 4096 --fp8 --pp 2 --pp-layout 'Et*4|(t*4|)*14tmL' --ep 32 --top 3";
    const Json j = RunParalensJson(args + " --json");
    CHECK(j["ppLayout"] == "Et*4|(t*4|)*14tmL");
    REQUIRE_FALSE(j["rows"].empty());
    for (const Json& row : j["rows"]) {
        CHECK(row["pp"] == 2);
        CHECK(row["chunks"] == 8);
        CHECK(row["schedule"] == "interleaved");
        CHECK(row["layout"] == "Et*4|(t*4|)*14tmL");
    }
    const CliResult text = RunParalens(args);
    CHECK_THAT(text.out, Catch::Contains("    2 layout   "));
    CHECK_THAT(text.out, Catch::Contains("# pipeline layout 'Et*4|(t*4|)*14tmL' (pp 2, v 8): stage 0 the embedding, 32 layers; "
                                         "stage 1 29 layers, 1 MTP module, the output layer and loss"));
    CHECK(j["balancedLayout"].is_null()); // laid out already
    // Without a layout, the first row's layers laid out to balance the output layer, where faster.
    const std::string eight = "plan --model llama3-8b --gpus 16 --global-batch 16 --tp 1 --pp 4 --cp 1 --schedule interleaved --chunks 8 --top 1";
    const Json balanced = RunParalensJson(eight + " --json");
    REQUIRE(balanced["balancedLayout"].is_object());
    CHECK(balanced["balancedLayout"]["layout"] == "Et*2|(t|)*30L");
    CHECK(balanced["balancedLayout"]["vsRowPct"].get<double>() < -0.5);
    CHECK(balanced["balancedLayout"]["row"]["layout"] == "Et*2|(t|)*30L");
    CHECK_THAT(RunParalens(eight).out, Catch::Contains("# #1 with its layers laid out by hand to balance the output layer: "
                                                       "--pp-layout 'Et*2|(t|)*30L', "));
    // Megatron-Bridge 26.08's DeepSeek-V3 runs are timed with their recipes' layout.
    const Json published = RunParalensJson("plan --published R159 --top 1 --json");
    CHECK_THAT(published["published"]["config"].get<std::string>(), Catch::Contains("layout Et*4|(t*4|)*14tmL"));
}

TEST_CASE("plan: impossible requests are one line naming the constraint", "[cli][plan]")
{
    struct Case { const char* args; const char* message; };
    const Case cases[] = {
        {"plan --model llama3-70b --gpus 100 --tp 8", "--gpus 100 is not divisible by --tp 8"},
        {"plan --model llama3-70b --gpus 96 --tp 3", "--heads 64 is not divisible by --tp 3"},
        {"plan --model llama3-405b --gpus 8 --global-batch 8", "nothing fits in 81 GB per GPU"},
        {"plan --model nope", "--model: unknown model 'nope'"},
        {"plan --gpu tpu", "--gpu: unknown GPU 'tpu'"},
        {"plan --schedule pipedream", "--schedule must be gpipe, 1f1b, interleaved or zb-h1"},
        {"plan --recompute some", "--recompute must be none, selective or full"},
        {"plan --model custom --layers 4 --hidden 1000 --heads 3 --vocab 1000", "--heads 3 must divide --hidden 1000"},
        {"plan --model deepseek-v3 --mtp-layers 1 --pp-layout 'Et*4|(t*4|)*14tmL'", "--pp-layout needs --pp"},
        {"plan --model deepseek-v3 --mtp-layers 1 --gpus 256 --pp 2 --pp-layout 'Et*4|(t*4|)*14tmQ'", "unknown symbol 'Q'"},
        {"plan --model deepseek-v3 --gpus 256 --pp 2 --pp-layout 'Et*4|(t*4|)*14tmL'", "holds 1 multi-token prediction modules (m), the model 0"},
        // A fixed choice given as 0 is refused, not taken for "search it".
        {"plan --model llama3-8b --gpus 8 --tp 0", "--tp must be at least 1 (got 0)"},
        {"plan --model llama3-8b --gpus 8 --pp 0", "--pp must be at least 1 (got 0)"},
        {"plan --model llama3-8b --gpus 8 --micro-batch 0", "--micro-batch must be at least 1 (got 0)"},
        {"plan --model llama3-8b --gpus 8 --chunks 0", "--chunks must be at least 1 (got 0)"},
        {"plan --model mixtral-8x7b --gpus 8 --ep 0", "--ep must be at least 1 (got 0)"},
        {"plan --model llama3-8b --gpus 8 --zero -1", "--zero must be 0, 1, 2 or 3 (got -1)"},
        {"plan --model llama3-8b --gpus 8 --seq 0", "--seq must be positive (got 0)"},
        {"plan --model llama3-8b --gpus 8 --top 0", "--top must be at least 1 (got 0)"},
        {"plan --model llama3-8b --gpus 8 --network-GBps 0", "--network-GBps must be positive (got 0)"},
        {"plan --model llama3-8b --gpus 8 --nvlink-GBps -3", "--nvlink-GBps must be positive (got -3)"},
        {"plan --model llama3-8b --gpus 8 --nvlink-alpha-us -1", "--nvlink-alpha-us must not be negative (got -1)"},
        {"plan --model llama3-8b --gpus 8 --gemm-tflops -5", "--gemm-tflops must be positive (got -5)"},
    };
    for (const Case& c : cases) {
        const CliResult r = RunParalens(c.args);
        INFO(c.args << "\n" << r.err);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains(c.message));
    }
}

TEST_CASE("plan: --trace writes the best row's simulated step, one lane per TP rank of each stage", "[cli][plan]")
{
    CliTempDir dir;
    const std::string out = dir.File("plan.json.gz");
    const CliResult r = RunParalens("plan --model llama3-8b --gpus 16 --global-batch 32 --seq 2048 --tp 2 --pp 4 --trace " + out);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK_THAT(r.err, Catch::Contains("row 1 simulated"));
    const paralens::core::Trace t = paralens::core::ReadTraceFile(out);
    CHECK(t.Devices().size() == 8);
    CHECK(t.Meta().workload.GetString("kind") == "plan");
    const double predicted = t.Meta().results.GetNumber("predictedSeconds"), simulated = t.Meta().results.GetNumber("simulatedSeconds");
    CHECK(simulated == Approx(predicted).epsilon(0.01));
    const CliResult a = RunParalens("analyze " + out + " --json");
    CHECK(a.exitCode == 0);
}

TEST_CASE("plan: --network-fit prices the network with a fitted alpha and bandwidth", "[cli][plan]")
{
    CliTempDir dir;
    paralens::core::FitFile file;
    paralens::core::FitResult fit;
    fit.collective = paralens::core::Collective::AllReduce;
    fit.ranks = 8;
    fit.params = paralens::core::CostParams{7e-6, 1.0 / 2e9, 0.0};
    file.fits.push_back(fit);
    file.sources.push_back("synthetic");
    paralens::core::WriteFileAtomic(dir.File("fit.json"), paralens::core::FitFileToJson(file));
    const std::string common = "plan --model llama3-8b --gpus 32 --global-batch 64 --seq 4096 --top 3 --json ";
    const Json fitted = RunParalensJson(common + "--network-fit " + dir.File("fit.json"));
    const Json direct = RunParalensJson(common + "--network-alpha-us 7 --network-GBps 2");
    const Json fast = RunParalensJson(common + "--network-alpha-us 7 --network-GBps 400");
    CHECK(fitted["rows"][0]["stepSeconds"].get<double>() == Approx(direct["rows"][0]["stepSeconds"].get<double>()).epsilon(1e-9));
    CHECK(fast["rows"][0]["stepSeconds"].get<double>() < direct["rows"][0]["stepSeconds"].get<double>());
    const CliResult bad = RunParalens("plan --network-fit " + dir.File("missing.json"));
    CHECK(bad.exitCode == 2);
    CHECK_THAT(bad.err, Catch::Contains("missing.json"));

    // A fit of a log whose ranks all ran on one host measured NVLink, not the network (and one
    // across hosts the network, not NVLink): each is refused at the other level, saying so.
    file.fits[0].nodes = 1;
    file.fits[0].source = "N1.log";
    paralens::core::WriteFileAtomic(dir.File("node.json"), paralens::core::FitFileToJson(file));
    const CliResult oneHost = RunParalens("plan --network-fit " + dir.File("node.json"));
    CHECK(oneHost.exitCode == 2);
    CHECK_THAT(oneHost.err, Catch::Contains("--network-fit: ") && Catch::Contains("N1.log") && Catch::Contains("on one host") &&
                                Catch::Contains("--nvlink-fit"));
    CHECK(RunParalens(common + "--nvlink-fit " + dir.File("node.json")).exitCode == 0);
    file.fits[0].nodes = 2;
    paralens::core::WriteFileAtomic(dir.File("net.json"), paralens::core::FitFileToJson(file));
    const CliResult twoHosts = RunParalens("plan --nvlink-fit " + dir.File("net.json"));
    CHECK(twoHosts.exitCode == 2);
    CHECK_THAT(twoHosts.err, Catch::Contains("--nvlink-fit: ") && Catch::Contains("on 2 hosts") && Catch::Contains("--network-fit"));
}

TEST_CASE("plan: the defaults give an answer", "[cli][plan]")
{
    const Json j = RunParalensJson("plan --json");
    CHECK(j["fitting"].get<int>() > 0);
    CHECK(j["gpus"] == 64);
}

TEST_CASE("plan: --validate compares the published runs", "[cli][plan]")
{
    const Json j = RunParalensJson("plan --validate --json");
    REQUIRE(j["runs"].size() >= 10);
    for (const Json& run : j["runs"]) {
        CHECK_FALSE(run["source"].get<std::string>().empty());
        CHECK(run["publishedStepSeconds"].get<double>() > 0);
        CHECK(run["rank"].get<int>() >= 1);
    }
    // The validation set of tests/data/published-runs.csv: every run, predicted or said why not.
    REQUIRE(j["publishedSet"].size() == 210);
    size_t predicted = 0;
    for (const Json& run : j["publishedSet"]) {
        CHECK((run.contains("errorPct") || run.contains("notModelled") || run.contains("doesNotFit")));
        if (run.contains("errorPct")) {
            ++predicted;
            CHECK(run["predictedStepSeconds"].get<double>() > 0);
            CHECK_FALSE(run["config"].get<std::string>().empty());
            CHECK(run["rank"].get<int>() >= 1);
            CHECK(run.contains("vsBestPct"));
            CHECK(run["fittedOn"] == (run["id"] == "R049" || run["id"] == "R050")); // B200's attention rate
        }
    }
    CHECK(predicted >= 30);
    // --json's summary: each group counted from the rows themselves (held out: not fitted on).
    size_t heldOut = 0, heldWithin = 0;
    for (const Json& run : j["publishedSet"])
        if (run.contains("errorPct") && !run["fittedOn"].get<bool>()) {
            ++heldOut;
            heldWithin += std::abs(run["errorPct"].get<double>()) <= 15;
        }
    std::map<std::string, Json> summary;
    for (const Json& g : j["publishedSetSummary"]) summary[g["group"].get<std::string>()] = g;
    REQUIRE(summary.count("held out"));
    CHECK(summary["held out"]["by"] == "held out");
    CHECK(summary["held out"]["runs"] == heldOut);
    CHECK(summary["held out"]["within15"] == heldWithin);
    CHECK(summary["held out"]["medianAbsErrorPct"].get<double>() > 0);
    CHECK(summary["S10"]["by"] == "source");
    CHECK(summary["dense"]["runs"].get<size_t>() + summary["mixture of experts"]["runs"].get<size_t>() == heldOut);
    const CliResult text = RunParalens("plan --validate");
    CHECK_THAT(text.out, Catch::Contains("# the published set") && Catch::Contains("# per source") && Catch::Contains("# not modelled") &&
                             Catch::Contains("near the best") && Catch::Contains("%*"));
    // Its progress on stderr (a line a tenth where stderr is no terminal), never in the output.
    CHECK_THAT(text.err, Catch::Contains("paralens: --validate: planning the published set,  50 %\n") && Catch::Contains(" 100 %\n"));
    CHECK(text.out.find("planning the published set") == std::string::npos);
    // The summary's groups: held out, then by kind and by GPU, each adding up to the held-out runs.
    std::map<std::string, int> runs;
    std::istringstream lines(text.out);
    for (std::string line; std::getline(lines, line);) {
        const size_t at = line.find(" runs  median ");
        if (line.rfind("  ", 0) != 0 || at == std::string::npos) continue;
        const size_t count = line.find_last_of(' ', at - 1);
        std::string group = line.substr(2, count - 2);
        group.erase(group.find_last_not_of(' ') + 1);
        runs[group] = std::stoi(line.substr(count + 1, at - count - 1));
    }
    CHECK(runs["held out"] == 173);
    CHECK(runs["all"] == 175);
    CHECK(runs["S7"] == 3); // Llama 3 405B's Table 4, its batch from Batch size/DP x DP
    CHECK(runs["dense"] + runs["mixture of experts"] == runs["held out"]);
    CHECK(runs["mixture of experts"] > 0);
    CHECK(runs["a100-sxm"] + runs["h100-sxm"] + runs["h200"] + runs["b200"] + runs["gb200"] + runs["gb300"] == runs["held out"]);
    CHECK(runs["h200"] == 3); // Nebius' and HPE's MLPerf runs
    CHECK(runs["S10"] == 32);
    CHECK(runs["S12"] == 17); // MLPerf v5.1's Llama 3.1 8B in FP8 on GPUs of the spec table
}

TEST_CASE("plan: a model by hand inherits nothing, and a changed preset lists what it kept", "[cli][plan]")
{
    // The issue's user: GPT-3's shape by hand used to become Llama 3 70B's 8 KV heads and SwiGLU.
    const Json hand = RunParalensJson("plan --layers 96 --hidden 12288 --heads 96 --vocab 51200 --gpu a100-sxm --gpus 1024 "
                                      "--global-batch 1536 --top 1 --json");
    CHECK(hand["model"] == "custom");
    CHECK(hand["mlp"] == "gelu");
    CHECK(hand["fromPreset"].empty());
    CHECK(hand["assumed"].size() == 6);
    CHECK(hand["parameters"].get<double>() == Approx(174.6e9).epsilon(0.002));
    const CliResult missing = RunParalens("plan --layers 96 --hidden 12288 --heads 96");
    CHECK(missing.exitCode != 0);
    CHECK_THAT(missing.err, Catch::Contains("--vocab") && Catch::Contains("--model"));
    const Json changed = RunParalensJson("plan --model llama3-70b --layers 40 --top 1 --json");
    CHECK(changed["model"] == "llama3-70b*");
    const auto kept = changed["fromPreset"].get<std::vector<std::string>>();
    CHECK(std::find(kept.begin(), kept.end(), "kv-heads 8") != kept.end());
    CHECK(std::find(kept.begin(), kept.end(), "mlp swiglu") != kept.end());
    const CliResult text = RunParalens("plan --model llama3-70b --layers 40 --top 1");
    CHECK_THAT(text.out, Catch::Contains("# from the preset (Llama 3 Herd of Models") && Catch::Contains("kv-heads 8, ffn 28672"));
    const Json nemotron = RunParalensJson("plan --model nemotron4-15b --gpus 64 --top 1 --json");
    CHECK(nemotron["mlp"] == "relu2");
    CHECK(nemotron["modelSource"].get<std::string>().find("Nemotron-4 15B") != std::string::npos);
}

TEST_CASE("plan: GPT-OSS's sliding window is in its header, and --window changes it", "[cli][plan]")
{
    const char* fixed = " --gpu b200 --gpus 64 --global-batch 512 --seq 4096 --dp 64 --tp 1 --pp 1 --ep 64 --micro-batch 2 --zero 1 "
                        "--recompute none --top 1 --json";
    const Json oss = RunParalensJson(std::string("plan --model gpt-oss-120b") + fixed);
    CHECK(oss["window"] == 128);
    CHECK(oss["windowedLayers"] == 18);
    // Every layer attending to the whole sequence: the same model, slower.
    const Json full = RunParalensJson(std::string("plan --model gpt-oss-120b --window 0") + fixed);
    CHECK(full["model"] == "gpt-oss-120b*");
    CHECK(full["windowedLayers"] == 0);
    CHECK(full["rows"][0]["stepSeconds"].get<double>() > oss["rows"][0]["stepSeconds"].get<double>());
    // Every layer windowed: faster still.
    const Json all = RunParalensJson(std::string("plan --model gpt-oss-120b --full-attention-every 0") + fixed);
    CHECK(all["windowedLayers"] == 36);
    CHECK(all["rows"][0]["stepSeconds"].get<double>() < oss["rows"][0]["stepSeconds"].get<double>());
    const CliResult text = RunParalens("plan --model gpt-oss-120b --gpu b200 --gpus 64 --global-batch 512 --top 1");
    CHECK_THAT(text.out, Catch::Contains("a 128-token window on 18 of 36 layers") && Catch::Contains("128 experts top-4"));
    // Every value given goes to the model: -1 too (once taken for "not given"), and 0 layers.
    for (const char* value : {"-5", "-1"}) {
        const CliResult bad = RunParalens(std::string("plan --model gpt-oss-120b --window ") + value);
        CHECK(bad.exitCode != 0);
        CHECK_THAT(bad.err, Catch::Contains("--window must not be negative"));
    }
    CHECK_THAT(RunParalens("plan --model gpt-oss-120b --layers 0").err, Catch::Contains("--layers must be positive"));
}

TEST_CASE("plan: --mtp-layers adds DeepSeek-V3's multi-token prediction module, said in the header", "[cli][plan]")
{
    const char* fixed = " --gpu gb200 --gpus 256 --global-batch 4096 --seq 4096 --dp 64 --tp 1 --pp 4 --ep 64 --micro-batch 1 "
                        "--schedule interleaved --chunks 4 --zero 1 --recompute none --recompute-modules mla_up_proj --top 1 --json";
    const Json plain = RunParalensJson(std::string("plan --model deepseek-v3") + fixed);
    const Json mtp = RunParalensJson(std::string("plan --model deepseek-v3 --mtp-layers 1") + fixed);
    CHECK(plain["mtpLayers"] == 0);
    CHECK(mtp["mtpLayers"] == 1);
    CHECK(mtp["model"] == "deepseek-v3*");
    CHECK(mtp["parameters"].get<double>() > plain["parameters"].get<double>());
    CHECK(mtp["rows"][0]["stepSeconds"].get<double>() > plain["rows"][0]["stepSeconds"].get<double>());
    const CliResult text = RunParalens("plan --model deepseek-v3 --mtp-layers 1 --gpu gb200 --gpus 256 --global-batch 4096 --top 1");
    CHECK_THAT(text.out, Catch::Contains("multi-token prediction 1 module"));
    // A published run trained with it says so beside its preset's source.
    CHECK_THAT(RunParalens("plan --published R160 --top 1").out,
               Catch::Contains("multi-token prediction 1 module") && Catch::Contains("its multi-token prediction as the run trains it"));
    const CliResult bad = RunParalens("plan --model deepseek-v3 --mtp-layers -2");
    CHECK(bad.exitCode != 0);
    CHECK_THAT(bad.err, Catch::Contains("--mtp-layers must not be negative"));
}

TEST_CASE("plan: --recompute-modules frees its modules' activations, said in the header and --json", "[cli][plan]")
{
    const std::string fixed = "plan --model deepseek-v3 --gpu gb200 --gpus 256 --global-batch 4096 --seq 4096 --dp 64 --tp 1 --pp 4 --ep 64 "
                              "--micro-batch 1 --schedule interleaved --chunks 4 --zero 1 --recompute none --top 1";
    // DeepSeek-V3 as Megatron-Bridge runs it on 256 GB200s fits only with MLA's up-projections recomputed, as its recipe does.
    const CliResult without = RunParalens(fixed + " --json");
    CHECK(without.exitCode != 0);
    CHECK_THAT(without.err, Catch::Contains("nothing fits"));
    const Json with = RunParalensJson(fixed + " --recompute-modules mla_up_proj,moe_act --json");
    CHECK(with["recomputeModules"] == "moe_act, mla_up_proj");
    CHECK(with["rows"][0]["recompute"] == "none");
    const CliResult text = RunParalens(fixed + " --recompute-modules mla_up_proj");
    CHECK_THAT(text.out, Catch::Contains("# recomputed in the backward, without full recomputation: mla_up_proj (Megatron-Core's --recompute-modules)"));
    const CliResult bad = RunParalens(fixed + " --recompute-modules core_attn");
    CHECK(bad.exitCode != 0);
    CHECK_THAT(bad.err, Catch::Contains("--recompute-modules: 'core_attn'") && Catch::Contains("layernorm, moe_act or mla_up_proj"));
}

TEST_CASE("plan: --fp8 says where it applies, and a GPU without fp8 is refused with those that have it", "[cli][plan]")
{
    const Json j = RunParalensJson("plan --model llama3-8b --gpus 8 --global-batch 16 --fp8 --top 1 --json");
    CHECK(j["fp8"] == true);
    CHECK(j["mfuPeakTflops"].get<double>() == Approx(989));
    const Json plain = RunParalensJson("plan --model llama3-8b --gpus 8 --global-batch 16 --top 1 --json");
    CHECK(j["rows"][0]["stepSeconds"].get<double>() < plain["rows"][0]["stepSeconds"].get<double>());
    const CliResult text = RunParalens("plan --model llama3-8b --gpus 8 --global-batch 16 --fp8 --top 1");
    CHECK_THAT(text.out, Catch::Contains("# FP8: the layers' linear GEMMs at 1979 TFLOPS fp8"));
    const CliResult a100 = RunParalens("plan --model llama3-8b --gpu a100-sxm --gpus 8 --global-batch 16 --fp8");
    CHECK(a100.exitCode == 2);
    CHECK_THAT(a100.err, Catch::Contains("--fp8: a100-sxm has no fp8 peak") && Catch::Contains("h100-sxm"));
}

TEST_CASE("plan: --cp fixes context parallelism, its ring time is in the breakdown, and --dropout and --tp-comm-overlap change the model", "[cli][plan]")
{
    const Json j = RunParalensJson("plan --model llama3-8b --gpus 16 --seq 65536 --global-batch 16 --cp 4 --json");
    REQUIRE_FALSE(j["rows"].empty());
    for (const Json& row : j["rows"]) {
        CHECK(row["cp"] == 4);
        CHECK(row["dp"].get<int>() * row["tp"].get<int>() * row["pp"].get<int>() * 4 == 16);
        CHECK(row["time"].contains("cpComm"));
    }
    CHECK(j["dropout"] == false); // Llama trains without
    CHECK(std::find(j["fromPreset"].begin(), j["fromPreset"].end(), "no dropout") != j["fromPreset"].end());
    const CliResult text = RunParalens("plan --model llama3-8b --gpus 16 --seq 65536 --global-batch 16 --cp 4 --top 1");
    CHECK_THAT(text.out, Catch::Contains(" cp ") && Catch::Contains("cp 4"));
    const Json on = RunParalensJson("plan --model llama3-8b --gpus 16 --seq 65536 --global-batch 16 --cp 4 --dropout on --json");
    CHECK(on["dropout"] == true);
    CHECK(on["rows"][0]["memoryBytesPerGpu"].get<double>() >= j["rows"][0]["memoryBytesPerGpu"].get<double>());
    const Json overlap = RunParalensJson("plan --model gpt3-175b --gpus 64 --global-batch 64 --tp 8 --pp 8 --tp-comm-overlap --json");
    CHECK(overlap["tpCommOverlap"] == true);
    const Json plain = RunParalensJson("plan --model gpt3-175b --gpus 64 --global-batch 64 --tp 8 --pp 8 --json");
    CHECK(overlap["rows"][0]["time"]["tpComm"].get<double>() < plain["rows"][0]["time"]["tpComm"].get<double>());
    // --ep-comm-overlap: a mixture of experts' all-to-alls under the other micro-batch's compute.
    const std::string moe = "plan --model qwen3-30b-a3b --gpu gb300 --gpus 8 --global-batch 512 --seq 4096 --ep 8 --pp 1 --micro-batch 8 --recompute none";
    const Json epOn = RunParalensJson(moe + " --ep-comm-overlap --json"), epOff = RunParalensJson(moe + " --json");
    CHECK(epOn["epCommOverlap"] == true);
    CHECK(epOff["epCommOverlap"] == false);
    CHECK(epOn["rows"][0]["time"]["epComm"].get<double>() < epOff["rows"][0]["time"]["epComm"].get<double>());
    CHECK(epOn["rows"][0]["time"]["compute"].get<double>() == Approx(epOff["rows"][0]["time"]["compute"].get<double>()));
    CHECK_THAT(RunParalens(moe + " --ep-comm-overlap --top 1").out, Catch::Contains("# EP overlap: "));
    // --dp-comm-overlap: the same sync, less of it shown (DP 2 over the 25 GB/s network).
    const std::string dp2 = "plan --model gpt3-175b --gpus 128 --global-batch 64 --tp 8 --pp 8 --network-GBps 25 --micro-batch 1 --schedule 1f1b --json";
    const Json dpOn = RunParalensJson(dp2 + " --dp-comm-overlap"), dpOff = RunParalensJson(dp2);
    CHECK(dpOn["dpCommOverlap"] == true);
    CHECK(dpOff["dpCommOverlap"] == false);
    CHECK(dpOn["rows"][0]["time"]["dpSync"].get<double>() == Approx(dpOff["rows"][0]["time"]["dpSync"].get<double>()));
    CHECK(dpOn["rows"][0]["time"]["dpExposed"].get<double>() < dpOff["rows"][0]["time"]["dpExposed"].get<double>());
    // --flash-attention-2: attention on an H100 at 35/75 of the Hopper kernels' rate; an A100's unchanged.
    const std::string fixed = "plan --model llama3-8b --gpus 8 --global-batch 8 --tp 1 --pp 1 --micro-batch 1 --recompute none --zero 1 --json";
    const Json fa3 = RunParalensJson(fixed), fa2 = RunParalensJson(fixed + " --flash-attention-2");
    CHECK(fa2["flashAttention2"] == true);
    CHECK(fa3["flashAttention2"] == false);
    CHECK(fa2["rows"][0]["time"]["compute"].get<double>() > fa3["rows"][0]["time"]["compute"].get<double>());
    const Json a100 = RunParalensJson(fixed + " --gpu a100-sxm"), a100fa2 = RunParalensJson(fixed + " --gpu a100-sxm --flash-attention-2");
    // Each GPU's GEMMs at --efficiency x its measured matmul ceiling over an H100's BF16 one.
    CHECK(fa3["gemmEfficiency"].get<double>() == Approx(0.55).epsilon(1e-12));
    CHECK(fa3["fp8GemmEfficiency"].is_null());
    CHECK(a100["gemmEfficiency"].get<double>() == Approx(0.55 * (271.2 / 312) / (794.5 / 989)).epsilon(1e-9));
    const Json fp8 = RunParalensJson(fixed + " --fp8 --efficiency 0.6");
    CHECK(fp8["fp8GemmEfficiency"].get<double>() == Approx(0.6 * (1402.6 / 1979) / (794.5 / 989)).epsilon(1e-9));
    CHECK(a100fa2["rows"][0]["stepSeconds"].get<double>() == Approx(a100["rows"][0]["stepSeconds"].get<double>()).epsilon(1e-12));
    const Json bf16 = RunParalensJson("plan --model gpt3-175b --gpus 64 --global-batch 64 --tp 8 --pp 8 --grad-reduce bf16 --json");
    CHECK(bf16["gradReduce"] == "bf16");
    CHECK(plain["gradReduce"] == "fp32");
    CHECK(bf16["rows"][0]["memory"]["gradients"].get<double>() == Approx(plain["rows"][0]["memory"]["gradients"].get<double>() / 2));
    const CliResult badGrad = RunParalens("plan --model gpt3-175b --grad-reduce fp16");
    CHECK(badGrad.exitCode == 2);
    CHECK_THAT(badGrad.err, Catch::Contains("--grad-reduce must be fp32 or bf16 (got 'fp16')"));
    const CliResult bad = RunParalens("plan --model llama3-8b --gpus 16 --seq 6004 --cp 4");
    CHECK(bad.exitCode == 2);
    CHECK_THAT(bad.err, Catch::Contains("2 x --cp 4"));
}

TEST_CASE("plan: --first-stage-layers and --last-stage-layers fix uneven stages, and a split that cannot be is one line", "[cli][plan]")
{
    const Json j = RunParalensJson("plan --model llama3-405b --gpus 1024 --global-batch 512 --tp 8 --pp 8 --cp 2 --fp8 "
                                   "--first-stage-layers 15 --last-stage-layers 15 --json");
    REQUIRE_FALSE(j["rows"].empty());
    for (const Json& row : j["rows"]) {
        CHECK(row["firstStageLayers"] == 15);
        CHECK(row["lastStageLayers"] == 15);
    }
    const CliResult text = RunParalens("plan --model llama3-405b --gpus 1024 --global-batch 512 --tp 8 --pp 8 --cp 2 --fp8 "
                                       "--first-stage-layers 15 --last-stage-layers 15 --top 1");
    CHECK_THAT(text.out, Catch::Contains("layers 15+..+15"));
    CHECK_THAT(text.out, Catch::Contains("  pp split  ")); // the table's column: each row's split
    CHECK_THAT(text.out, Catch::Contains("    8 15+..+15 "));
    const CliResult bad = RunParalens("plan --model llama3-8b --gpus 8 --pp 4 --first-stage-layers 31");
    CHECK(bad.exitCode == 2);
    CHECK_THAT(bad.err, Catch::Contains("--first/--last-stage-layers"));
}

TEST_CASE("plan: --calibrate reads a profile's GEMMs and plans with their efficiency by size", "[cli][plan][calibration]")
{
    CliTempDir dir;
    const std::string step = dir.File("step.json");
    { // one matmul op, its launch and its GEMM kernel, on an H100, at 40% of the bf16 peak
        const double flops = 2.0 * 8192 * 8192 * 8192, seconds = flops / (989e12 * 0.4);
        std::string events;
        for (int i = 0; i < 4; ++i) {
            const long base = 1000 + i * 100000, corr = 10 + i;
            events += (i ? "," : "") + std::string(R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":)") +
                      std::to_string(base) + R"(,"dur":50,"args":{"Input Dims":[[8192,8192],[8192,8192]],"Input type":["c10::BFloat16","c10::BFloat16"]}},)" +
                      R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + std::to_string(base + 10) +
                      R"(,"dur":5,"args":{"correlation":)" + std::to_string(corr) + "}}," +
                      R"({"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n","pid":0,"tid":7,"ts":)" +
                      std::to_string(base + 100) + R"(,"dur":)" + std::to_string(seconds * 1e6) + R"(,"args":{"correlation":)" +
                      std::to_string(corr) + "}}";
        }
        // Attention (FlashAttention's forward: 4 b h s sk d FLOPs) at 50% of the bf16 peak, and an
        // in-place add of two bf16 1024 x 1024 tensors (6 MiB moved) at 50% of H100's 3350 GB/s.
        const double attentionUs = 4.0 * 32 * 4096 * 4096 * 128 / (989e12 * 0.5) * 1e6, addUs = 3 * 2097152 / (3350e9 * 0.5) * 1e6;
        events += R"(,{"ph":"X","cat":"cpu_op","name":"aten::_scaled_dot_product_flash_attention","pid":1,"tid":1,"ts":900000,"dur":50,)"
                  R"("args":{"Input Dims":[[1,32,4096,128],[1,32,4096,128],[1,32,4096,128]],"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16"]}},)"
                  R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":900010,"dur":5,"args":{"correlation":90}},)"
                  R"({"ph":"X","cat":"kernel","name":"flash_fwd_kernel","pid":0,"tid":7,"ts":900100,"dur":)" +
                  std::to_string(attentionUs) + R"(,"args":{"correlation":90}},)"
                  R"({"ph":"X","cat":"cpu_op","name":"aten::add_","pid":1,"tid":1,"ts":950000,"dur":50,)"
                  R"("args":{"Input Dims":[[1024,1024],[1024,1024],[]],"Input type":["c10::BFloat16","c10::BFloat16","Scalar"]}},)"
                  R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":950010,"dur":5,"args":{"correlation":91}},)"
                  R"({"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4>","pid":0,"tid":7,"ts":950100,"dur":)" +
                  std::to_string(addUs) + R"(,"args":{"correlation":91}})";
        FILE* f = std::fopen(step.c_str(), "w");
        REQUIRE(f);
        std::fprintf(f, R"({"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[%s]})", events.c_str());
        std::fclose(f);
    }
    const Json j = RunParalensJson("plan --model llama3-8b --gpus 8 --global-batch 32 --calibrate " + step + " --json");
    REQUIRE(j["calibration"].is_object());
    CHECK(j["calibration"]["gpu"] == "h100-sxm");
    CHECK(j["calibration"]["gemmKernelsWithFlops"] == 4);
    CHECK(j["calibration"]["efficiency"].get<double>() == Approx(0.4).epsilon(1e-3));
    CHECK(j["calibration"]["collectives"].empty()); // none in this step
    CHECK(j["calibration"]["measuresNetwork"] == false);
    CHECK(j["calibration"]["attentionEfficiency"].get<double>() == Approx(0.5).epsilon(1e-3));
    CHECK(j["calibration"]["memoryKernelsWithBytes"] == 1);
    CHECK(j["calibration"]["hbmEfficiency"].get<double>() == Approx(0.5).epsilon(1e-3));
    const Json plain = RunParalensJson("plan --model llama3-8b --gpus 8 --global-batch 32 --json");
    CHECK(j["rows"][0]["stepSeconds"].get<double>() > plain["rows"][0]["stepSeconds"].get<double>()); // 0.4 < the default 0.55
    const CliResult text = RunParalens("plan --model llama3-8b --gpus 8 --global-batch 32 --calibrate " + step + " --top 1");
    CHECK_THAT(text.out, Catch::Contains("# calibrated: 4 of 4 GEMM kernels") && Catch::Contains("calibrated efficiency"));
    CHECK_THAT(text.out, Catch::Contains("(attention 0.50, calibrated)") &&
                             Catch::Contains("memory-bound ops at the calibrated share of h100-sxm's 3350 GB/s HBM bandwidth for their size (50% for the largest)"));
    CHECK_THAT(text.out, !Catch::Contains("the profile ran on")); // planned on the GPU it ran on
    // Planned for another GPU than the profile's: the header and --json say whose efficiencies these are.
    const CliResult a100 = RunParalens("plan --model llama3-8b --gpus 8 --gpu a100-sxm --global-batch 32 --calibrate " + step + " --top 1");
    CHECK_THAT(a100.out, Catch::Contains("# note: the profile ran on h100-sxm, the plan is for a100-sxm") && Catch::Contains("--gpu h100-sxm"));
    const Json a100j = RunParalensJson("plan --model llama3-8b --gpus 8 --gpu a100-sxm --global-batch 32 --calibrate " + step + " --json");
    CHECK_THAT(a100j["calibration"]["notes"].dump(), Catch::Contains("the profile ran on h100-sxm"));
    const CliResult none = RunParalens("plan --calibrate " + dir.File("missing.json"));
    CHECK(none.exitCode != 0);
    CHECK_THAT(none.err, Catch::Contains("missing.json"));
}

TEST_CASE("plan: --dp-comm-exposed shows the whole gradient sync, and excludes --dp-comm-overlap", "[cli][plan]")
{
    const std::string fixed = "plan --model llama3-8b --gpus 32 --global-batch 64 --dp 32 --tp 1 --pp 1 --micro-batch 2 --zero 1 --json";
    const Json hidden = RunParalensJson(fixed), exposed = RunParalensJson(fixed + " --dp-comm-exposed");
    CHECK(exposed["dpCommExposed"] == true);
    CHECK(hidden["dpCommExposed"] == false);
    const Json& h = hidden["rows"][0]["time"];
    const Json& e = exposed["rows"][0]["time"];
    CHECK(e["dpExposed"].get<double>() == Approx(e["dpSync"].get<double>()));
    CHECK(h["dpExposed"].get<double>() < e["dpExposed"].get<double>());
    CHECK(exposed["rows"][0]["stepSeconds"].get<double>() ==
          Approx(hidden["rows"][0]["stepSeconds"].get<double>() - h["dpExposed"].get<double>() + e["dpExposed"].get<double>()));
    const CliResult both = RunParalens("plan --model llama3-8b --gpus 32 --dp-comm-exposed --dp-comm-overlap");
    CHECK(both.exitCode == 2);
    CHECK_THAT(both.err, Catch::Contains("exclude each other"));
}

TEST_CASE("plan: --published plans a run of the published set, its own row among the planner's choices", "[cli][plan]")
{
    const Json j = RunParalensJson("plan --published R041 --top 3 --json");
    const Json& p = j["published"];
    CHECK(p["id"] == "R041");
    CHECK(p["gpus"] == 64);
    CHECK(j["gpus"] == 64);
    CHECK(p["publishedStepSeconds"].get<double>() > 0);
    CHECK(p["predictedStepSeconds"].get<double>() > 0);
    CHECK(p["errorPct"].get<double>() == Approx((p["predictedStepSeconds"].get<double>() / p["publishedStepSeconds"].get<double>() - 1) * 100));
    REQUIRE(p["row"].is_number());
    CHECK(p["row"].get<int>() >= p["rank"].get<int>());
    CHECK(p["row"].get<int>() <= j["fitting"].get<int>());
    REQUIRE(j["rows"].size() == 3);
    CHECK(j["rows"][0]["stepSeconds"].get<double>() <= p["predictedStepSeconds"].get<double>());
    const CliResult text = RunParalens("plan --published R041 --top 3");
    REQUIRE(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("# published run R041 (S2)") && Catch::Contains("predicted") &&
                             Catch::Contains("# the published configuration, row " + std::to_string(p["row"].get<int>())));
    // Errors a user can fix: one line naming the run or the option.
    const CliResult unknown = RunParalens("plan --published R999");
    CHECK(unknown.exitCode == 2);
    CHECK_THAT(unknown.err, Catch::Contains("'R999'") && Catch::Contains("R001 to R210"));
    const CliResult mixed = RunParalens("plan --published R041 --gpus 8");
    CHECK(mixed.exitCode == 2);
    CHECK_THAT(mixed.err, Catch::Contains("drop --gpus"));
    const CliResult skipped = RunParalens("plan --published R051");
    CHECK(skipped.exitCode == 2);
    CHECK_THAT(skipped.err, Catch::Contains("not modelled"));
}
