#include "planner/PublishedSet.hpp"

#include "common/Error.hpp"
#include "planner/PlannerInternal.hpp"
#include "planner/PublishedRuns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

namespace paralens::core {

extern const std::string_view kPublishedSetCsv;

std::string_view PublishedSetCsv() { return kPublishedSetCsv; }

std::vector<std::vector<std::string>> ParseCsv(std::string_view text)
{
    std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') rows.back().back() += '"', ++i;
            else if (c == '"') quoted = false;
            else rows.back().back() += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().emplace_back();
        } else if (c == '\n') {
            rows.emplace_back(1);
        } else if (c != '\r') {
            rows.back().back() += c;
        }
    }
    Require(!quoted, "a quoted field is not closed before the end of the text");
    if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
    return rows;
}

double CsvNumber(const std::string& s)
{
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size() ? v : 0.0;
}

namespace {

// Llama 2 (Touvron et al. 2023, Table 1 and the released configurations), which the NeMo tables run.
TransformerModel Llama2(const std::string& id, int layers, int hidden, int heads, int kvHeads, int ffn)
{
    TransformerModel m;
    m.id = id;
    m.source = "Touvron et al. 2023, Llama 2 (arXiv:2307.09288), Table 1; its released config.json";
    m.layers = layers, m.hidden = hidden, m.heads = heads, m.kvHeads = kvHeads, m.ffn = ffn, m.vocab = 32000, m.seq = 4096;
    m.mlp = MlpKind::SwiGlu;
    m.tiedEmbeddings = false;
    m.dropout = false;
    return m;
}

// NeMo's GPT-3 5B and 20B (Megatron-LM's GPT: multi-head attention, GeLU MLP of 4h, dropout 0.1,
// tied embeddings, the GPT-2 vocabulary of 50257 padded to 128: 50304) and Nemotron-3 8B and 22B
// (squared-ReLU MLP of 4h, multi-head attention, no dropout, untied embeddings, 256K vocabulary):
// NVIDIA/NeMo nemo/collections/llm/gpt/model/base.py (GPTConfig5B, GPTConfig20B) and nemotron.py
// (Nemotron3Config8B, Nemotron3Config22B) @ 8cfedd72.
TransformerModel NeMoModel(const std::string& id, int layers, int hidden, int heads, bool nemotron)
{
    TransformerModel m;
    m.id = id;
    m.source = std::string("NVIDIA/NeMo nemo/collections/llm/gpt/model/") + (nemotron ? "nemotron.py" : "base.py") + " @ 8cfedd72";
    m.layers = layers, m.hidden = hidden, m.heads = m.kvHeads = heads, m.ffn = 4 * hidden, m.seq = nemotron ? 4096 : 2048;
    m.vocab = nemotron ? 256000 : 50304;
    m.mlp = nemotron ? MlpKind::SquaredRelu : MlpKind::Gelu;
    m.tiedEmbeddings = !nemotron;
    m.dropout = !nemotron;
    return m;
}

// MosaicML's MPT (mosaicml/llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml @ 8c8dd48f, with
// MPTConfig's defaults): multi-head attention, GeLU MLP of 4h (expansion_ratio 4), vocabulary
// 50368, tied embeddings, no dropout (its p_drop defaults are 0).
TransformerModel Mpt(const std::string& id, int layers, int hidden, int heads)
{
    TransformerModel m;
    m.id = id;
    m.source = "mosaicml/llm-foundry scripts/train/yamls/pretrain/" + id + ".yaml @ 8c8dd48f";
    m.layers = layers, m.hidden = hidden, m.heads = m.kvHeads = heads, m.ffn = 4 * hidden, m.vocab = 50368, m.seq = 2048;
    m.mlp = MlpKind::Gelu;
    m.tiedEmbeddings = true;
    m.dropout = false;
    return m;
}

// The models the set names that are not presets, by the name its rows print.
std::optional<TransformerModel> SetModel(const std::string& name)
{
    static const std::map<std::string, TransformerModel> models = {
        {"LLAMA2-7B", Llama2("llama2-7b", 32, 4096, 32, 32, 11008)},
        {"LLAMA2-13B", Llama2("llama2-13b", 40, 5120, 40, 40, 13824)},
        {"LLAMA2-70B", Llama2("llama2-70b", 80, 8192, 64, 8, 28672)},
        {"GPT3-5B", NeMoModel("gpt3-5b", 24, 4096, 32, false)},
        {"GPT3-20B", NeMoModel("gpt3-20b", 44, 6144, 48, false)},
        {"Nemotron-8B", NeMoModel("nemotron3-8b", 32, 4096, 32, true)},
        {"Nemotron-22B", NeMoModel("nemotron3-22b", 40, 6144, 48, true)},
        {"MPT-125m", Mpt("mpt-125m", 12, 768, 12)},
        {"MPT-350m", Mpt("mpt-350m", 24, 1024, 16)},
        {"MPT-760m", Mpt("mpt-760m", 24, 1536, 12)},
        {"MPT-1b", Mpt("mpt-1b", 24, 2048, 16)},
        {"MPT-3b", Mpt("mpt-3b", 32, 2560, 20)},
        {"MPT-7b", Mpt("mpt-7b", 32, 4096, 32)},
        {"MPT-13b", Mpt("mpt-13b", 40, 5120, 40)},
        {"MPT-30b", Mpt("mpt-30b", 48, 7168, 56)},
        {"MPT-70b", Mpt("mpt-70b", 80, 8192, 64)},
    };
    if (auto it = models.find(name); it != models.end()) return it->second;
    return std::nullopt;
}

// The model a row names: a preset, one of SetModel's, or a GPT whose shape the row itself gives. Empty id: none.
TransformerModel ModelOf(const std::map<std::string, std::string>& r)
{
    const std::string& name = r.at("model");
    static const std::map<std::string, std::string> presets = {
        {"LLAMA3_8B", "llama3-8b"},       {"LLAMA3-8B", "llama3-8b"},     {"LLAMA3.1_8B", "llama3-8b"},    {"LLAMA3_70B", "llama3-70b"},
        {"LLAMA3-70B", "llama3-70b"},     {"LLAMA3.1_405B", "llama3-405b"}, {"Llama 3 405B", "llama3-405b"},
        {"GPT3-175B", "gpt3-175b"},       {"Nemotron-340B", "nemotron4-340b"}, {"Qwen3_30B_a3B", "qwen3-30b-a3b"},
        {"Qwen3_235B_a22B", "qwen3-235b-a22b"}, {"DeepSeekV3 (w/o MTP)", "deepseek-v3"},
        {"DeepSeekV3 (w/ MTP)", "deepseek-v3"}, {"DeepSeekV3", "deepseek-v3"},
        {"DeepSeek-V3 (671B total, 37B activated)", "deepseek-v3"}, {"GPT OSS 120B", "gpt-oss-120b"}};
    if (auto it = presets.find(name); it != presets.end()) {
        // A vocabulary the row prints is its run's where it is another tokenizer's (MLPerf's Llama
        // 3.1 405B trains with Mixtral's 32,000 tokens, not Llama 3's 128,256); a rounded count
        // (Llama 3's paper: "128K") keeps the preset's exact one.
        TransformerModel m = *FindModelPreset(it->second);
        if (const double vocab = CsvNumber(r.at("vocab")); vocab > 0 && std::abs(vocab - m.vocab) > 0.01 * m.vocab) {
            m.vocab = static_cast<int>(vocab);
            m.id += "*";
        }
        return m;
    }
    if (auto model = SetModel(name)) return *model;
    TransformerModel m;
    m.id.clear();
    if (name.rfind("GPT ", 0) == 0 && CsvNumber(r.at("layers")) > 0 && CsvNumber(r.at("hidden")) > 0 && CsvNumber(r.at("heads")) > 0 &&
        CsvNumber(r.at("vocab")) > 0) { // Megatron-LM's GPT: multi-head attention, GeLU MLP of 4h, tied embeddings
        m.id = "gpt-" + name.substr(4);
        m.source = r.at("source");
        m.layers = static_cast<int>(CsvNumber(r.at("layers")));
        m.hidden = static_cast<int>(CsvNumber(r.at("hidden")));
        m.heads = m.kvHeads = static_cast<int>(CsvNumber(r.at("heads")));
        m.ffn = 4 * m.hidden;
        m.vocab = static_cast<int>(CsvNumber(r.at("vocab")));
        m.mlp = MlpKind::Gelu;
        m.tiedEmbeddings = true;
    }
    return m;
}

std::string GpuOf(const std::string& printed)
{
    if (printed.rfind("A100 80GB", 0) == 0) return "a100-sxm";
    if (printed.rfind("H100", 0) == 0) return "h100-sxm";
    if (printed == "H800") return "h800";
    if (printed == "H200") return "h200";
    if (printed == "B200") return "b200";
    if (printed == "GB200") return "gb200";
    if (printed == "GB300") return "gb300";
    return {};
}

// The row's schedule, recomputation and what its source's software does (ZeRO, sequence
// parallelism, overlaps, gradient type, attention kernel), and the choices its ranking holds.
void SetTechniques(const std::map<std::string, std::string>& r, bool fsdpOnly, PublishedSetRun& run)
{
    PlanRequest& q = run.request;
    const std::string& fsdp = r.at("fsdp");
    const double pp = q.pp.value_or(1);
    // A printed micro-batch whose gradient accumulation, also printed, disagrees with the batch and
    // DP (global batch != DP x micro-batch x accumulation: two of Megatron-Bridge 25.11's rows) is in
    // doubt: it is left to the planner, as an unstated one.
    const double mb = CsvNumber(r.at("micro_batch_size")), accumulation = CsvNumber(r.at("grad_accum"));
    run.microBatchInDoubt = mb > 0 && accumulation > 0 && std::abs(q.dp.value_or(1) * mb * accumulation - q.globalBatch) > 0.5;
    if (mb > 0 && !run.microBatchInDoubt) q.microBatch = static_cast<int>(mb);
    if (const double vp = CsvNumber(r.at("vp")); vp > 1) {
        q.schedule = ScheduleKind::Interleaved;
        q.chunks = static_cast<int>(vp);
    } else if (pp > 1) {
        q.schedule = ScheduleKind::OneFOneB;
        run.scheduleUnstated = r.at("vp").empty(); // "1" is 1F1B as printed; blank: the source does not say
    }
    // A recipe that lays its pipeline out by hand (its notes name the layout: "--pipeline-model-
    // parallel-layout 'Et*4|(t*4|)*14tmL'") is timed by it.
    constexpr std::string_view kLayout = "--pipeline-model-parallel-layout '";
    if (const size_t at = r.at("notes").find(kLayout); at != std::string::npos) {
        const size_t from = at + kLayout.size(), to = r.at("notes").find('\'', from);
        q.layout = std::make_shared<const PipelineLayout>(ParsePipelineLayout(r.at("notes").substr(from, to - from), static_cast<int>(pp)));
    }
    const std::string& rc = r.at("recompute");
    if (rc.rfind("none", 0) == 0) q.recompute = Recompute::None;
    else if (rc.rfind("selective", 0) == 0) q.recompute = Recompute::Selective;
    else if (rc.rfind("activation checkpointing", 0) == 0) q.recompute = Recompute::Full;
    const std::string& source = r.at("source_id");
    // NeMo and Megatron-Bridge (S1 and S11: Megatron-Bridge's 25.11 and 26.08 tables; S10: NVIDIA's
    // MLPerf implementations on NeMo, GPT-3's distributed_fused_adam and Llama 3.1 405B's distributed
    // optimizer, both syncs overlapped, in bf16): the distributed optimizer, SP with TP; FSDP where printed
    if (source == "S1" || source == "S2" || source == "S3" || source == "S10" || source == "S11" || source == "S12") {
        q.zero = CsvNumber(fsdp) > 0 ? 3 : 1;
        q.sequenceParallel = q.tp.value() > 1;
        q.gradReduceFp32 = false; // their performance scripts: grad_reduce_in_fp32 = False
        q.tpCommOverlap = true;   // and TP communication overlap (userbuffers) wherever TP > 1
        q.dpCommOverlap = true;   // overlap_grad_reduce, overlap_param_gather (their recipes' DDP config)
    }
    // Megatron-Core's batch-level EP overlap where the row's recipe sets it (its notes say so, naming
    // the recipe: "sets overlap_moe_expert_parallel_comm").
    q.epCommOverlap = r.at("notes").find("sets overlap_moe_expert_parallel_comm") != std::string::npos;
    // Fine-grained recomputation where the row's recipe sets it (its notes quote it:
    // "recompute_modules=[\"layernorm\", \"moe_act\"]").
    constexpr std::string_view kModules = "recompute_modules=[";
    if (const size_t at = r.at("notes").find(kModules); at != std::string::npos) {
        const size_t from = at + kModules.size(), to = r.at("notes").find(']', from);
        std::string list = r.at("notes").substr(from, to - from);
        list.erase(std::remove(list.begin(), list.end(), '"'), list.end());
        q.recomputeModules = ParseRecomputeModules(list, "published run " + r.at("run_id") + "'s recompute_modules");
    }
    if (source == "S4") { // the README's runs: "--overlap-grad-reduce --overlap-param-gather --tp-comm-overlap"
        q.tpCommOverlap = q.dpCommOverlap = true;
        q.zero = 1; // --overlap-param-gather needs the distributed optimizer; Megatron-LM had no ZeRO-3 in 2024
    }
    if (fsdpOnly) { // FSDP's FULL_SHARD is ZeRO-3, SHARD_GRAD_OP ZeRO-2; it reduce-scatters each
        // wrapped block's gradients as its backward ends (and prefetches the next block's weights);
        // Composer's mixed precision DEFAULT reduces in fp32, PURE in bf16. Attention is Dao's
        // flash-attn 2 (llm-foundry's attn_impl "flash"; scripts/train/benchmarking/submit_benchmarks.py
        // installs flash-attn 2).
        q.flashAttention2 = true;
        q.zero = fsdp == "FULL_SHARD" ? 3 : 2;
        q.sequenceParallel = false;
        q.dpCommOverlap = true;
        q.gradReduceFp32 = r.at("notes").find("MP Mode=PURE") == std::string::npos;
        run.held.tpPp = run.held.cp = true;
    }
    // Meta's FSDP for Llama 3 (Dubey et al. 2024, Sec. 3.3.2): the optimizer states and gradients
    // sharded over DP, the weights gathered once and kept through the backward: ZeRO-2's memory.
    if (r.at("notes").find("optimizer states+grads sharded") != std::string::npos) q.zero = 2;
    // Megatron-LM had no context parallelism before 2023: the 2021 and 2022 papers' runs rank
    // without it; the 2022 paper's runs hold DP at 1 by design (one model replica per run).
    run.held.cp = run.held.cp || source == "S5" || source == "S6";
    run.held.dp = source == "S6";
    // Megatron-LM of 2021 and 2022 had no flash attention: the scores are materialized, their
    // softmax and dropout run through HBM (Korthikanti et al.'s selective recomputation recomputes
    // exactly those; Megatron-LM's --use-flash-attn came in 2023).
    if (source == "S5" || source == "S6") q.flashAttention = false;
    if (source == "S5") { // Narayanan et al. 2021: full recomputation, no distributed optimizer or SP, scores stored
        q.recompute = Recompute::Full;
        q.zero = 0;
        q.sequenceParallel = false;
        q.dpCommExposed = true; // Megatron-LM's local DDP (its default then) all-reduces after the backward
    }
}

// The published step: from tokens/s per GPU, a printed step time, or TFLOP/s per GPU by the
// source's FLOP convention (Narayanan et al.'s counts recomputation). Empty, or why none.
std::string SetPublishedSeconds(const std::map<std::string, std::string>& r, PublishedSetRun& run)
{
    const PlanRequest& q = run.request;
    const double gbs = q.globalBatch, seq = q.seq;
    const double tps = CsvNumber(r.at("tokens_per_sec_per_gpu")), step = CsvNumber(r.at("step_time_s")), tflops = CsvNumber(r.at("model_tflops_per_gpu"));
    if (tps > 0) {
        run.publishedSeconds = gbs * seq / (tps * run.gpus);
        run.publishedFrom = "tokens/s";
    } else if (step > 0) {
        run.publishedSeconds = step;
        run.publishedFrom = "step time";
    } else if (tflops > 0) {
        PublishedRun p;
        p.request = q;
        p.tflopsPerGpu = tflops;
        p.convention = r.at("source_id") == "S5" ? FlopConvention::Megatron96 : FlopConvention::ModelFlops;
        run.publishedSeconds = p.PublishedStepSeconds();
        run.publishedFrom = "TFLOP/s";
    } else {
        return "no throughput or step time is printed";
    }
    return {};
}

// Why the row cannot be modelled (empty: it can), filling the request as far as it gets.
std::string Prepare(const std::map<std::string, std::string>& r, PublishedSetRun& run)
{
    TransformerModel m = ModelOf(r);
    // MTP named in the model (25.11's table) or in the row's notes (26.08's recipes lay an MTP layer
    // out): one module, DeepSeek-V3's depth (its report's D = 1; the recipes' mtp_num_layers 1).
    if (r.at("model").find("w/ MTP") != std::string::npos || r.at("notes").find("With multi-token prediction") != std::string::npos)
        m.mtpLayers = 1;
    if (r.at("model_type") == "MoE" && !m.IsMoe()) return "a mixture of experts the presets do not have";
    if (m.id.empty()) return "the file does not give the model's shape";
    const std::string gpu = GpuOf(r.at("gpu_type"));
    if (gpu.empty()) return "GPU " + r.at("gpu_type") + " is not in the spec table";
    // DeepSeek-V3's DualPipe feeds micro-batches from both ends of the pipeline and hides each
    // chunk's all-to-alls under the other direction's compute: no schedule of core's.
    if (r.at("notes").find("DualPipe") != std::string::npos) return "DualPipe (DeepSeek-V3's two-way pipeline schedule) is not modelled";
    // MosaicML's Composer trains with PyTorch FSDP alone: no TP or PP column, the sharding printed.
    const std::string& fsdp = r.at("fsdp");
    const bool fsdpOnly = (fsdp == "FULL_SHARD" || fsdp == "SHARD_GRAD_OP") && r.at("tp").empty() && r.at("pp").empty();
    const double tp = fsdpOnly ? 1 : CsvNumber(r.at("tp")), pp = fsdpOnly ? 1 : CsvNumber(r.at("pp"));
    const double seq = CsvNumber(r.at("seq_len")), gbs = CsvNumber(r.at("global_batch_size"));
    if (tp <= 0 || pp <= 0) return "TP and PP are not printed (FSDP only)";
    // Megatron-Bridge's GB200/GB300 recipes for Llama 3 70B keep some layers' activations in the
    // Grace CPU's memory (cpu_offloading_num_layers, named in the row's notes).
    if (r.at("notes").find("offloads the activations") != std::string::npos) return "activations offloaded to the CPU's memory are not modelled";
    if (gbs <= 0 || seq <= 0) return "the global batch or sequence is not printed";
    if (r.at("precision").find("FP4") != std::string::npos) return "4-bit GEMMs (NVFP4) are not modelled";
    PlanRequest& q = run.request;
    q.model = m;
    q.cluster.gpu = *FindGpu(gpu);
    const auto& fitted = q.cluster.gpu.attentionFittedOn;
    run.fittedOn = std::find(fitted.begin(), fitted.end(), r.at("run_id")) != fitted.end();
    q.cluster.gpus = run.gpus;
    if (gpu == "a100-sxm") q.cluster.networkGBps = 25; // 200 Gb/s HDR per GPU, as on Selene
    if (gpu == "gb200" || gpu == "gb300") q.cluster.gpusPerNode = 72; // NVL72: one NVLink domain per rack
    if (gpu == "gb300") q.cluster.networkGBps = 100; // a ConnectX-8 (800 Gb/s) per GPU; GB200's ConnectX-7: 400 Gb/s
    q.cluster.fp8 = run.precision.rfind("FP8", 0) == 0 || run.precision == "MXFP8" || run.precision == "amp_fp8";
    q.globalBatch = static_cast<int>(gbs);
    q.seq = static_cast<int>(seq);
    q.tp = static_cast<int>(tp);
    q.pp = static_cast<int>(pp);
    q.cp = std::max(1, static_cast<int>(CsvNumber(r.at("cp"))));
    if (run.gpus % (q.tp.value() * q.pp.value() * q.cp.value()) != 0) return "the GPUs are not a multiple of TP x PP x CP";
    q.dp = run.gpus / (q.tp.value() * q.pp.value() * q.cp.value());
    if (static_cast<int>(gbs) % *q.dp != 0) return "the printed GPUs and degrees leave a DP that does not divide the global batch";
    if (m.IsMoe()) {
        q.ep = std::max(1, static_cast<int>(CsvNumber(r.at("ep"))));
        if (*q.dp % *q.ep != 0) return "experts spread beyond the data-parallel ranks (expert tensor parallelism) are not modelled";
    }
    SetTechniques(r, fsdpOnly, run);
    return SetPublishedSeconds(r, run);
}

// Megatron-LM's two schedules: an unstated one is the faster of them.
constexpr ScheduleKind kMegatronSchedules[] = {ScheduleKind::OneFOneB, ScheduleKind::Interleaved};

// `own`, the run's row, among `around`'s choices: found, or (a configuration the search does not
// offer: a micro-batch it does not try, chunks of unequal layers) added in its place by step time.
void PlaceOwnRow(PublishedRunChoices& around, const PlanRow& own, const std::string& config)
{
    PlanResult& choices = around.choices;
    for (size_t i = 0; i < choices.fitting && !around.row; ++i)
        if (ConfigText(choices.rows[i].config) == config) around.row = i;
    if (around.row) return;
    const auto fitting = choices.rows.begin() + static_cast<std::ptrdiff_t>(choices.fitting);
    const auto at = std::upper_bound(choices.rows.begin(), fitting, own.time.step,
                                     [](double seconds, const PlanRow& r) { return seconds < r.time.step; });
    around.row = static_cast<size_t>(at - choices.rows.begin());
    choices.rows.insert(at, own);
    ++choices.fitting;
    choices.pareto = ParetoFront(choices.rows);
}

// The run's prediction, its rank among the planner's choices with its techniques and, with
// `around`, those choices with its own row (one search serves both).
void Predict(PublishedSetRun& run, PublishedRunChoices* around = nullptr)
{
    try {
        const PlanRequest asRan = AsRecipeSplits(run.request);
        const PlanResult res = run.scheduleUnstated ? FastestOverSchedules(asRan, kMegatronSchedules) : PlanTraining(asRan);
        if (res.rows.empty()) {
            run.rejected = res.notes.empty() ? "no configuration" : res.notes.front();
            return;
        }
        const PlanRow& row = res.rows.front();
        run.fits = res.fitting > 0;
        run.config = ConfigText(row.config);
        run.memoryBytes = row.memory.Total();
        run.hbmBytes = run.request.cluster.gpu.MemoryBytes();
        PlanResult choices = ChoicesWithTechniques(run.request, kMegatronSchedules, run.held);
        if (!run.fits) {
            run.rejected = row.rejected;
            if (around) around->choices = std::move(choices);
            return;
        }
        run.predictedSeconds = row.time.step;
        run.errorPct = (run.predictedSeconds - run.publishedSeconds) / run.publishedSeconds * 100.0;
        const Ranking ranking = RankIn(choices, run.predictedSeconds);
        run.rank = ranking.rank;
        if (ranking.best && ranking.best->time.step < run.predictedSeconds) {
            run.vsBestPct = (run.predictedSeconds / ranking.best->time.step - 1.0) * 100.0;
            run.bestConfig = ConfigText(ranking.best->config);
        } else { // nothing the search tries is faster (the run's micro-batch may be one it does not try)
            run.bestConfig = run.config;
        }
        if (around) {
            around->choices = std::move(choices);
            PlaceOwnRow(*around, row, run.config);
        }
    } catch (const Error& e) {
        run.rejected = e.what();
    }
}

// The rows of `csv` by column name, the header checked.
std::vector<std::map<std::string, std::string>> SetRows(std::string_view csv)
{
    const auto rows = ParseCsv(csv);
    Require(!rows.empty(), "the published set is empty");
    for (const char* column : {"run_id", "source_id", "source", "model", "model_type", "layers", "hidden", "heads", "vocab", "gpu_type",
                               "num_gpus", "precision", "seq_len", "global_batch_size", "micro_batch_size", "tp", "pp", "cp", "vp", "fsdp",
                               "recompute", "tokens_per_sec_per_gpu", "model_tflops_per_gpu", "step_time_s", "notes"})
        Require(std::find(rows[0].begin(), rows[0].end(), column) != rows[0].end(),
                std::string("the published set has no column '") + column + "'");
    std::vector<std::map<std::string, std::string>> out;
    for (size_t i = 1; i < rows.size(); ++i) {
        Require(rows[i].size() == rows[0].size(), "published set row " + std::to_string(i) + ": " + std::to_string(rows[i].size()) +
                                                      " fields, the header has " + std::to_string(rows[0].size()));
        std::map<std::string, std::string>& r = out.emplace_back();
        for (size_t k = 0; k < rows[0].size(); ++k) r[rows[0][k]] = rows[i][k];
    }
    return out;
}

// A row's run, its request built (or why it is not modelled), not yet predicted.
PublishedSetRun Prepared(const std::map<std::string, std::string>& r)
{
    PublishedSetRun run;
    run.id = r.at("run_id");
    run.source = r.at("source_id");
    run.citation = r.at("source");
    run.model = r.at("model");
    run.gpu = r.at("gpu_type");
    run.precision = r.at("precision");
    run.gpus = static_cast<int>(CsvNumber(r.at("num_gpus")));
    run.skipped = Prepare(r, run);
    return run;
}

// The row of `id`, or Error naming it and the set's range.
const std::map<std::string, std::string>& RowById(const std::vector<std::map<std::string, std::string>>& rows, std::string_view id)
{
    for (const auto& r : rows)
        if (r.at("run_id") == id) return r;
    throw Error("no published run '" + std::string(id) + "' in the set" +
                (rows.empty() ? std::string() : " (" + rows.front().at("run_id") + " to " + rows.back().at("run_id") +
                                                    "; `paralens plan --validate` lists them)"));
}

PublishedSetEntry EntryOf(const PublishedSetRun& run)
{
    return {run.id, run.id + " " + run.model + ", " + std::to_string(run.gpus) + " x " + run.gpu + ", " + run.precision + " (" + run.source + ")", run.skipped};
}

} // namespace

std::vector<PublishedSetRun> CheckPublishedSet(std::string_view csv, const std::function<void(size_t done, size_t rows)>& progress)
{
    std::vector<PublishedSetRun> out;
    const auto rows = SetRows(csv);
    for (const auto& r : rows) {
        PublishedSetRun& run = out.emplace_back(Prepared(r));
        if (run.skipped.empty()) Predict(run);
        if (progress) progress(out.size(), rows.size());
    }
    return out;
}

PublishedSetRun PublishedSetRunById(std::string_view csv, std::string_view id, PublishedRunChoices* choices)
{
    PublishedSetRun run = Prepared(RowById(SetRows(csv), id));
    if (choices) Require(run.skipped.empty(), "published run " + run.id + " is not modelled: " + run.skipped);
    if (run.skipped.empty()) Predict(run, choices);
    return run;
}
PublishedSetEntry PublishedSetEntryById(std::string_view csv, std::string_view id)
{
    return EntryOf(Prepared(RowById(SetRows(csv), id)));
}

std::vector<PublishedSetEntry> PublishedSetIndex(std::string_view csv)
{
    std::vector<PublishedSetEntry> out;
    for (const auto& r : SetRows(csv)) out.push_back(EntryOf(Prepared(r)));
    return out;
}

} // namespace paralens::core
