// tests/data/published-runs.csv: published training runs (sources in tests/data/published-runs.md),
// the planner issue's validation set. The file must stay readable and consistent, and the runs
// the planner already checks (core/planner/PublishedRuns.cpp) must say what the file says.
#include "planner/PublishedRuns.hpp"
#include "planner/PublishedSet.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace paralens::core;

namespace {

std::vector<std::vector<std::string>> ReadCsv(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return ParseCsv(text);
}

} // namespace

TEST_CASE("published runs: the validation set is complete, consistent and agrees with the planner's checked runs", "[core][planner]")
{
    const auto rows = ReadCsv(std::string(PARALENS_SOURCE_DIR) + "/tests/data/published-runs.csv");
    REQUIRE(rows.size() > 1);
    std::map<std::string, size_t> col;
    for (size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
    for (const char* name : {"run_id", "source_id", "source", "model", "gpu_type", "num_gpus", "precision", "seq_len", "tp", "pp", "cp",
                             "dp", "global_batch_size", "tokens_per_sec_per_gpu", "model_tflops_per_gpu", "mfu", "step_time_s"})
        REQUIRE(col.count(name));
    auto at = [&](const std::vector<std::string>& r, const char* name) { return r[col.at(name)]; };
    std::set<std::string> ids, sources, gpus;
    size_t figures = 0;
    for (size_t i = 1; i < rows.size(); ++i) {
        const auto& r = rows[i];
        INFO("row " << i << ": " << (r.empty() ? std::string() : r[0]));
        REQUIRE(r.size() == rows[0].size());
        CHECK(ids.insert(at(r, "run_id")).second);
        CHECK_FALSE(at(r, "source").empty());
        sources.insert(at(r, "source_id"));
        gpus.insert(at(r, "gpu_type").substr(0, 4));
        CHECK(CsvNumber(at(r, "num_gpus")) > 0);
        const bool figure = !at(r, "tokens_per_sec_per_gpu").empty() || !at(r, "model_tflops_per_gpu").empty() ||
                            !at(r, "mfu").empty() || !at(r, "step_time_s").empty() || !at(r, "other_published_figure").empty();
        CHECK(figure);
        figures += figure;
        // Where every degree is printed they multiply to the GPUs, except where the source itself does
        // not (kept as printed, see published-runs.md): Llama 3's Table 4 prints DP 4 for 16,384 GPUs
        // (R087), NeMo's B200 context-parallel table a DP a quarter of the GPUs' (R045-R052).
        const double tp = CsvNumber(at(r, "tp")), pp = CsvNumber(at(r, "pp")), cp = CsvNumber(at(r, "cp")), dp = CsvNumber(at(r, "dp"));
        const std::string id = at(r, "run_id");
        const bool printedOff = id == "R087" || (id >= "R045" && id <= "R052");
        if (tp > 0 && pp > 0 && cp > 0 && dp > 0) {
            if (printedOff) CHECK(tp * pp * cp * dp != CsvNumber(at(r, "num_gpus")));
            else CHECK(tp * pp * cp * dp == CsvNumber(at(r, "num_gpus")));
        }
    }
    CHECK(rows.size() - 1 >= 30);   // the issue: at least 30 runs
    CHECK(sources.size() >= 3);     // from at least three sources
    CHECK(gpus.count("A100"));      // A100, H100 and newer
    CHECK(gpus.count("H100"));
    CHECK(gpus.count("B200"));
    CHECK(figures == rows.size() - 1);

    // The runs `paralens plan --validate` checks already: the same GPUs and TFLOP/s per GPU.
    size_t matched = 0;
    for (const PublishedRun& run : PublishedRuns()) {
        INFO(run.id);
        for (size_t i = 1; i < rows.size(); ++i) {
            const auto& r = rows[i];
            const bool megatron = at(r, "source_id") == "S5" && run.id.rfind("megatron-", 0) == 0;
            const bool llama = at(r, "source_id") == "S7" && run.id.rfind("llama3-405b", 0) == 0 && CsvNumber(at(r, "cp")) == 1;
            if ((!megatron && !llama) || CsvNumber(at(r, "num_gpus")) != run.request.cluster.gpus) continue;
            CHECK(CsvNumber(at(r, "model_tflops_per_gpu")) == run.tflopsPerGpu);
            CHECK(CsvNumber(at(r, "tp")) == *run.request.tp);
            CHECK(CsvNumber(at(r, "pp")) == *run.request.pp);
            if (llama) { // the set's reading of the row (its FSDP, no recomputation) is the built-in run's
                const PublishedSetRun row = PublishedSetRunById(PublishedSetCsv(), at(r, "run_id"));
                CHECK(row.request.zero == run.request.zero);
                CHECK(row.request.recompute == run.request.recompute);
                CHECK(row.request.globalBatch == run.request.globalBatch);
            }
            ++matched;
        }
    }
    CHECK(matched == PublishedRuns().size());
    std::ifstream file(std::string(PARALENS_SOURCE_DIR) + "/tests/data/published-runs.csv", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    CHECK(std::string(PublishedSetCsv()) == text); // the library's copy is the file's
}

TEST_CASE("published runs: the planner predicts every run it can model, and says why not for the others", "[core][planner]")
{
    const std::vector<PublishedSetRun> set = CheckPublishedSet(PublishedSetCsv());
    const std::set<std::string> reasons = {"a mixture of experts the presets do not have", "the file does not give the model's shape",
                                           "the global batch or sequence is not printed",
                                           "the printed GPUs and degrees leave a DP that does not divide the global batch",
                                           "experts spread beyond the data-parallel ranks (expert tensor parallelism) are not modelled",
                                           "activations offloaded to the CPU's memory are not modelled",
                                           "DualPipe (DeepSeek-V3's two-way pipeline schedule) is not modelled",
                                           "4-bit GEMMs (NVFP4) are not modelled",
                                           "GPU B300 is not in the spec table"}; // MLPerf v5.1's B300 submissions
    size_t modelled = 0, fitting = 0;
    for (const PublishedSetRun& r : set) {
        INFO(r.id << " " << r.model << ": " << r.skipped << r.rejected);
        if (!r.skipped.empty()) {
            CHECK(reasons.count(r.skipped));
            continue;
        }
        ++modelled;
        CHECK(r.publishedSeconds > 0);
        if (!r.fits) continue;
        ++fitting;
        CHECK(r.predictedSeconds > 0);
        CHECK(std::isfinite(r.errorPct));
        CHECK(r.errorPct == Approx((r.predictedSeconds / r.publishedSeconds - 1) * 100));
        CHECK(r.rank >= 1); // among the planner's own choices with the run's techniques
        CHECK(std::isfinite(r.vsBestPct));
        CHECK_FALSE(r.bestConfig.empty());
        if (r.rank == 1) CHECK(r.vsBestPct <= 1e-6); // the fastest is the best (or beats a search without its v)
    }
    CHECK(modelled >= 30);
    CHECK(fitting == modelled); // every published configuration fits the planner's memory model
    // Two rows print a gradient accumulation that disagrees with their batch, DP and micro-batch:
    // their micro-batch is left to the planner; every other row's is held as printed.
    std::set<std::string> inDoubt;
    for (const PublishedSetRun& r : set) {
        if (r.microBatchInDoubt) inDoubt.insert(r.id);
        else if (r.skipped.empty() && r.request.microBatch) CHECK(r.config.find(" mb " + std::to_string(*r.request.microBatch) + " ") != std::string::npos);
    }
    CHECK(inDoubt == std::set<std::string>{"R009", "R030"});
    for (const char* id : {"R009", "R030"}) {
        const PublishedSetRun& r = *std::find_if(set.begin(), set.end(), [&](const PublishedSetRun& x) { return x.id == id; });
        CHECK_FALSE(r.request.microBatch.has_value());
    }
    // The rows whose recipe sets Megatron-Core's batch-level EP overlap (their notes name it): 25.11's
    // Qwen3 on B200 and H100, 26.08's DeepSeek-V3, GPT-OSS and Qwen3 in MXFP8; no other row has it.
    std::set<std::string> epOverlap;
    for (const PublishedSetRun& r : set)
        if (r.request.epCommOverlap) epOverlap.insert(r.id);
    CHECK(epOverlap == std::set<std::string>{"R026", "R031", "R159", "R160", "R163", "R164", "R165", "R166", "R167", "R168"});
    // The rows whose recipe lays the pipeline out by hand (their notes name the layout): DeepSeek-V3
    // with its MTP module (25.11's on B200, 26.08's), the module and the loss in the last chunk.
    std::set<std::string> laidOut;
    for (const PublishedSetRun& r : set)
        if (r.request.layout) {
            laidOut.insert(r.id);
            CHECK(r.request.layout->text == "Et*4|(t*4|)*14tmL");
            CHECK(r.config.find(" layout Et*4|(t*4|)*14tmL ") != std::string::npos);
        }
    CHECK(laidOut == std::set<std::string>{"R023", "R159", "R160"});
    // The rows whose recipe recomputes modules (their notes quote recompute_modules=[...]): only
    // those whose recipe file's degrees are the row's; DeepSeek-V3's on GB200 fits without full
    // recomputation only so.
    std::set<std::string> modules;
    for (const PublishedSetRun& r : set)
        if (r.request.recomputeModules.Any()) modules.insert(r.id + " " + RecomputeModulesText(r.request.recomputeModules));
    CHECK(modules == std::set<std::string>{"R014 mla_up_proj", "R023 mla_up_proj", "R030 layernorm, moe_act", "R160 mla_up_proj"});
    for (const PublishedSetRun& r : set)
        if (r.id == "R014") {
            CHECK(r.fits);
            CHECK(r.config.find("recompute none") != std::string::npos);
        }
    // The same conversion as the runs plan --validate checks: Narayanan et al.'s FLOPs with recomputation.
    for (const PublishedSetRun& r : set)
        for (const PublishedRun& run : PublishedRuns())
            if (r.source == "S5" && run.id.rfind("megatron-", 0) == 0 && run.request.cluster.gpus == r.gpus) {
                INFO(r.id);
                CHECK(r.publishedSeconds == Approx(run.PublishedStepSeconds()).epsilon(1e-3)); // the paper's rounded shapes
            }
    // The 2021 and 2022 papers' runs rank without context parallelism, which Megatron-LM did not
    // have yet; the 2022 paper's keep DP at 1 as it measured them. NeMo's rows reduce bf16 gradients.
    for (const PublishedSetRun& r : set) {
        if (!r.skipped.empty() || !r.fits) continue;
        INFO(r.id);
        const bool composer = r.source == "S9"; // MosaicML's: PyTorch FSDP alone
        CHECK(r.held.cp == (r.source == "S5" || r.source == "S6" || composer));
        CHECK(r.held.dp == (r.source == "S6"));
        CHECK(r.held.tpPp == composer);
        if (r.held.cp) CHECK(r.bestConfig.find(" cp ") == std::string::npos);
        if (r.held.dp) CHECK(r.bestConfig.rfind("dp 1 ", 0) == 0);
        if (r.held.tpPp) CHECK(r.bestConfig.find("tp 1 pp 1 ") != std::string::npos);
        const bool nemo = r.source == "S1" || r.source == "S2" || r.source == "S3" || r.source == "S10" || r.source == "S11" ||
                          r.source == "S12"; // S10, S12: MLPerf runs of NVIDIA's NeMo implementation (NVIDIA's and other submitters' clusters)
        if (!composer) CHECK(r.request.gradReduceFp32 == !nemo);
        CHECK(r.request.tpCommOverlap == (nemo || r.source == "S4"));
        CHECK(r.request.dpCommExposed == (r.source == "S5")); // Megatron-LM's local DDP of 2021
    }
    // The runs a number was fitted on (B200's attention rate) are marked, and only those.
    std::vector<std::string> fitted;
    for (const PublishedSetRun& r : set)
        if (r.fittedOn) fitted.push_back(r.id);
    CHECK(fitted == std::vector<std::string>{"R049", "R050"});
    CHECK(FindGpu("b200")->attentionFittedOn == fitted);
    // A row the source runs with FSDP is planned with ZeRO-3.
    const auto fsdp = std::find_if(set.begin(), set.end(), [](const PublishedSetRun& r) { return r.id == "R027"; });
    REQUIRE(fsdp != set.end());
    CHECK(fsdp->config.find("zero3") != std::string::npos);
    // MosaicML's FSDP rows: FULL_SHARD is ZeRO-3, SHARD_GRAD_OP ZeRO-2, no TP or PP; mixed precision
    // PURE reduces bf16 gradients, DEFAULT fp32. The micro-batch is the printed one, even where
    // the search's sizes do not include it (then nothing searched beats it: rank 1, 0%).
    const auto csv = ReadCsv(PARALENS_SOURCE_DIR "/tests/data/published-runs.csv");
    std::map<std::string, std::map<std::string, std::string>> byId;
    for (size_t i = 1; i < csv.size(); ++i)
        for (size_t k = 0; k < csv[0].size(); ++k) byId[csv[i][0]][csv[0][k]] = csv[i][k];
    size_t composerRuns = 0;
    for (const PublishedSetRun& r : set) {
        if (r.source != "S9") continue;
        INFO(r.id << " " << r.model << ": " << r.skipped);
        REQUIRE(r.skipped.empty());
        ++composerRuns;
        const auto& row = byId.at(r.id);
        CHECK(r.request.zero == (row.at("fsdp") == "FULL_SHARD" ? 3 : 2));
        CHECK(r.request.tp == 1);
        CHECK(r.request.pp == 1);
        CHECK(r.request.dp == r.gpus);
        CHECK(r.request.microBatch == static_cast<int>(CsvNumber(row.at("micro_batch_size"))));
        CHECK(r.request.gradReduceFp32 == (row.at("notes").find("MP Mode=PURE") == std::string::npos));
        CHECK(r.request.cluster.fp8 == (row.at("precision") == "amp_fp8"));
        // The shape from llm-foundry's yamls: the printed parameter count is the planner's plus a
        // learned position embedding of the run's sequence length (MPTConfig's learned_pos_emb)
        // and what the planner leaves out, biases and norms (under 0.2%).
        const double printed = CsvNumber(row.at("params"));
        REQUIRE(printed > 0);
        const double positions = CsvNumber(row.at("seq_len")) * r.request.model.hidden;
        CHECK(r.request.model.TotalParams() + positions <= printed);
        CHECK(r.request.model.TotalParams() + positions >= printed * 0.998);
    }
    CHECK(composerRuns == 36);
    // MLPerf Training's runs (S10: GPT-3 175B and Llama 3.1 405B): the log's degrees, micro-batch
    // and schedule as the configuration, FP8 GEMMs, no recomputation, the published step the logs'
    // step time itself; the NVFP4 ones named as not modelled.
    size_t mlperfRuns = 0, nvfp4 = 0;
    for (const PublishedSetRun& r : set) {
        if (r.source != "S10") continue;
        const auto& row = byId.at(r.id);
        INFO(r.id << ": " << r.skipped);
        if (row.at("precision") == "NVFP4") {
            CHECK(r.skipped == "4-bit GEMMs (NVFP4) are not modelled");
            ++nvfp4;
            continue;
        }
        REQUIRE(r.skipped.empty());
        ++mlperfRuns;
        CHECK(r.request.model.id == (row.at("model") == "GPT3-175B" ? "gpt3-175b" : "llama3-405b*"));
        // MLPerf's Llama 3.1 405B trains with Mixtral's tokenizer: the row's 32,000 tokens, not the preset's 128,256.
        if (row.at("model") == "LLAMA3.1_405B") CHECK(r.request.model.vocab == 32000);
        CHECK(r.request.cluster.fp8);
        CHECK(r.request.recompute == Recompute::None);
        CHECK(r.request.schedule == ScheduleKind::Interleaved);
        CHECK(r.request.chunks == static_cast<int>(CsvNumber(row.at("vp"))));
        CHECK(r.request.microBatch == static_cast<int>(CsvNumber(row.at("micro_batch_size"))));
        CHECK(r.request.tp == static_cast<int>(CsvNumber(row.at("tp"))));
        CHECK(r.request.cp == static_cast<int>(CsvNumber(row.at("cp"))));
        CHECK(r.request.dp.value() * r.request.tp.value() * r.request.pp.value() * r.request.cp.value() == r.gpus);
        CHECK(r.publishedFrom == "step time");
        CHECK(r.publishedSeconds == CsvNumber(row.at("step_time_s")));
        CHECK(r.config.find("zero1 sp") != std::string::npos);
    }
    CHECK(mlperfRuns == 32);
    CHECK(nvfp4 == 4);
    for (const char* id : {"R033", "R034", "R040", "R041"}) { // NeMo's GPT-3 5B/20B, Nemotron-3 8B/22B
        const auto run = std::find_if(set.begin(), set.end(), [&](const PublishedSetRun& r) { return r.id == id; });
        REQUIRE(run != set.end());
        INFO(id << ": " << run->skipped);
        CHECK(run->skipped.empty());
        CHECK(run->fits);
    }
    // A row with context parallelism is planned with it (R058: Llama 2 7B, 128K tokens, TP 4, CP 4 on 128 H100s).
    const auto cp = std::find_if(set.begin(), set.end(), [](const PublishedSetRun& r) { return r.id == "R058"; });
    REQUIRE(cp != set.end());
    CHECK(cp->skipped.empty());
    CHECK(cp->config.find("tp 4 pp 1 cp 4") != std::string::npos);
}

TEST_CASE("published runs: one run by its id is predicted as in the whole set, and the planner's choices hold its row at its rank", "[core][planner]")
{
    for (const char* id : {"R041", "R091"}) { // NeMo's Nemotron-3 22B (a pipeline, ranked low); MosaicML's MPT-70B (FSDP, ranked first)
        INFO(id);
        PublishedRunChoices c;
        const PublishedSetRun run = PublishedSetRunById(PublishedSetCsv(), id, &c);
        REQUIRE(run.skipped.empty());
        REQUIRE(run.fits);
        CHECK(run.id == id);
        CHECK_FALSE(run.citation.empty());
        const PublishedSetRun alone = PublishedSetRunById(PublishedSetCsv(), id); // the same prediction without the choices
        CHECK(alone.rank == run.rank);
        CHECK(alone.predictedSeconds == run.predictedSeconds);
        REQUIRE(c.row.has_value());
        REQUIRE(*c.row < c.choices.fitting);
        const PlanRow& own = c.choices.rows[*c.row];
        CHECK(ConfigText(own.config) == run.config);
        CHECK(own.time.step == Approx(run.predictedSeconds).epsilon(1e-9));
        CHECK(*c.row + 1 >= run.rank);     // ties share a rank
        CHECK(c.choices.rows.front().time.step <= own.time.step);
        for (size_t i = 0; i < c.choices.fitting; ++i) { // Megatron-LM's two schedules only, fastest first
            const TrainingConfig& k = c.choices.rows[i].config;
            if (k.pp > 1) CHECK((k.schedule == ScheduleKind::OneFOneB || k.schedule == ScheduleKind::Interleaved));
            if (i > 0) CHECK(c.choices.rows[i - 1].time.step <= c.choices.rows[i].time.step * (1 + 1e-12));
        }
        REQUIRE_FALSE(c.choices.pareto.empty());
        CHECK(c.choices.pareto.front() == 0);
    }
    // A configuration the search does not offer is added in its place: MosaicML's micro-batch of 3
    // (MPT-3B at 32K tokens), DeepSeek-V3's 61 layers in 2 stages of 4 chunks.
    for (const char* id : {"R107", "R005"}) {
        INFO(id);
        PublishedRunChoices c;
        const PublishedSetRun run = PublishedSetRunById(PublishedSetCsv(), id, &c);
        REQUIRE(c.row.has_value());
        CHECK(ConfigText(c.choices.rows[*c.row].config) == run.config);
        CHECK(c.choices.rows[*c.row].time.step == Approx(run.predictedSeconds).epsilon(1e-9));
        CHECK(*c.row + 1 >= run.rank);
        for (size_t i = 1; i < c.choices.fitting; ++i) CHECK(c.choices.rows[i - 1].time.step <= c.choices.rows[i].time.step * (1 + 1e-12));
        CHECK(c.choices.fitting == ChoicesWithTechniques(run.request, std::array{ScheduleKind::OneFOneB, ScheduleKind::Interleaved}, run.held).fitting + 1);
    }
    // MosaicML's FSDP run keeps TP and PP at 1 among its choices.
    PublishedRunChoices mpt;
    (void)PublishedSetRunById(PublishedSetCsv(), "R091", &mpt);
    for (size_t i = 0; i < mpt.choices.fitting; ++i) CHECK((mpt.choices.rows[i].config.tp == 1 && mpt.choices.rows[i].config.pp == 1));
    CHECK_THROWS_WITH(PublishedSetRunById(PublishedSetCsv(), "R999"), Catch::Contains("'R999'") && Catch::Contains("R001 to R210"));
    const PublishedSetRun unmodelled = PublishedSetRunById(PublishedSetCsv(), "R051");
    CHECK_FALSE(unmodelled.skipped.empty());
    PublishedRunChoices none;
    CHECK_THROWS_WITH(PublishedSetRunById(PublishedSetCsv(), "R051", &none), Catch::Contains("R051 is not modelled"));
    CHECK(PublishedSetEntryById(PublishedSetCsv(), "R051").skipped == unmodelled.skipped);
    CHECK_THROWS_WITH(PublishedSetEntryById(PublishedSetCsv(), "R999"), Catch::Contains("'R999'"));
    const std::vector<PublishedSetEntry> index = PublishedSetIndex(PublishedSetCsv());
    REQUIRE(index.size() == 210);
    CHECK(index.front().id == "R001");
    CHECK_THAT(index[90].label, Catch::Contains("MPT-70b") && Catch::Contains("128") && Catch::Contains("(S9)"));
    CHECK(std::count_if(index.begin(), index.end(), [](const PublishedSetEntry& e) { return e.skipped.empty(); }) == 175);
    // Llama 3's Table 4 (S7): the batch its Batch size/DP x DP prints, its FSDP's ZeRO-2 memory
    // (optimizer states and gradients sharded), no activation checkpointing (Sec. 3.3.2); it fits.
    const PublishedSetRun llama = PublishedSetRunById(PublishedSetCsv(), "R086");
    REQUIRE(llama.skipped.empty());
    CHECK(llama.request.globalBatch == 2048);
    CHECK(llama.request.zero == 2);
    CHECK(llama.request.recompute == Recompute::None);
    CHECK(llama.fits);
    // Its "128K" vocabulary is Llama 3's 128,256 rounded: the preset's exact count stays.
    CHECK(llama.request.model.vocab == 128256);
    CHECK(llama.request.model.id == "llama3-405b");
}

TEST_CASE("published runs: Megatron-Bridge 26.08's rows: MXFP8 is FP8, and DeepSeek-V3 with its MTP layer is modelled with it", "[core][planner]")
{
    const std::vector<PublishedSetRun> set = CheckPublishedSet(PublishedSetCsv());
    auto byId = [&](const char* id) -> const PublishedSetRun& {
        return *std::find_if(set.begin(), set.end(), [&](const PublishedSetRun& r) { return r.id == id; });
    };
    for (const char* id : {"R163", "R164", "R165", "R166", "R167", "R168"}) {
        INFO(id);
        const PublishedSetRun& r = byId(id);
        CHECK(r.source == "S11");
        CHECK(r.skipped.empty());
        CHECK(r.precision == "MXFP8");
        CHECK(r.request.cluster.fp8);
        CHECK(r.request.zero == 1); // the distributed optimizer, as Megatron-Bridge's recipes
    }
    // DeepSeek-V3's rows with multi-token prediction (25.11's "w/ MTP", 26.08's recipes' layouts) carry
    // one MTP module; the rows without keep none.
    for (const char* id : {"R023", "R159", "R160"}) {
        INFO(id);
        CHECK(byId(id).skipped.empty());
        CHECK(byId(id).request.model.mtpLayers == 1);
    }
    for (const char* id : {"R005", "R006", "R014", "R015"}) CHECK(byId(id).request.model.mtpLayers == 0);
    CHECK_THAT(byId("R172").skipped, Catch::Contains("NVFP4") || Catch::Contains("presets do not have"));
}
