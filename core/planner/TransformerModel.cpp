#include "planner/TransformerModel.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace paralens::core {

double TransformerModel::QueryWidth() const { return static_cast<double>(heads) * (HeadDim() + (IsMla() ? ropeDim : 0)); }

double TransformerModel::KeyWidth() const { return IsMla() ? QueryWidth() : static_cast<double>(kvHeads) * HeadDim(); }

double TransformerModel::ValueWidth() const
{
    return IsMla() ? static_cast<double>(heads) * vHeadDim : static_cast<double>(kvHeads) * HeadDim();
}

double TransformerModel::OutputWidth() const { return IsMla() ? ValueWidth() : QueryWidth(); }

double TransformerModel::AttentionParams() const
{
    const double h = hidden, out = OutputWidth() * h;
    if (!IsMla()) return h * (QueryWidth() + KeyWidth() + ValueWidth()) + out;
    const double query = qLoraRank > 0 ? h * qLoraRank + MlaQueryUpParams() : h * QueryWidth();
    const double keyValue = h * (kvLoraRank + ropeDim) + MlaKeyValueUpParams();
    return query + keyValue + out;
}

std::string_view Name(MlpKind k)
{
    switch (k) {
    case MlpKind::SwiGlu: return "swiglu";
    case MlpKind::SquaredRelu: return "relu2";
    default: return "gelu";
    }
}

std::optional<MlpKind> ParseMlpKind(std::string_view name)
{
    if (name == "gelu") return MlpKind::Gelu;
    if (name == "swiglu") return MlpKind::SwiGlu;
    if (name == "relu2" || name == "squared-relu") return MlpKind::SquaredRelu;
    return std::nullopt;
}

double TransformerModel::MlpParamsOf(int width) const { return (Gated() ? 3.0 : 2.0) * hidden * static_cast<double>(width); }

double TransformerModel::LayerExpertParams() const
{
    return IsMoe() ? experts * MlpParams() + static_cast<double>(hidden) * experts : 0.0;
}

double TransformerModel::LayerParams() const
{
    return AttentionParams() + (IsMoe() ? LayerExpertParams() + sharedExperts * MlpParams() : MlpParams());
}

double TransformerModel::LayerActiveParams() const
{
    return AttentionParams() + MlpsPerToken() * MlpParams() + (IsMoe() ? static_cast<double>(hidden) * experts : 0.0);
}

namespace {

// A mixture of experts' dense first layers: attention and one MLP of denseFfn.
double DenseLayerParams(const TransformerModel& m) { return m.AttentionParams() + m.MlpParamsOf(m.denseFfn); }

} // namespace

double TransformerModel::EmbeddingParams() const
{
    return static_cast<double>(vocab) * hidden * (tiedEmbeddings ? 1.0 : 2.0);
}

double TransformerModel::TotalParams() const
{
    const int dense = DenseLayers();
    return (layers - dense) * LayerParams() + dense * DenseLayerParams(*this) + EmbeddingParams() + mtpLayers * MtpLayerParams();
}

double TransformerModel::ActiveParams() const
{
    const int dense = DenseLayers();
    return (layers - dense) * LayerActiveParams() + dense * DenseLayerParams(*this) + EmbeddingParams() +
           mtpLayers * (LayerActiveParams() + MtpProjectionParams());
}

int TransformerModel::WindowedLayers() const
{
    if (!IsWindowed()) return 0;
    return fullAttentionEvery > 0 ? layers - layers / fullAttentionEvery : layers;
}

double TransformerModel::AttentionKeys(int s) const
{
    const double windowed = WindowedLayers(), band = std::min(static_cast<double>(s), 2.0 * window);
    return ((layers - windowed) * s + windowed * band) / layers;
}

double TransformerModel::AttentionScoreFlopsPerToken(int s) const
{
    return 2.0 * AttentionKeys(s) * (QueryWidth() + OutputWidth()) * layers;
}

double TransformerModel::ForwardFlopsPerToken(int s) const
{
    // The input embedding is a lookup, not a matmul: only the output head counts.
    const double head = static_cast<double>(vocab) * hidden * (1 + mtpLayers);
    return 2.0 * (ActiveParams() - EmbeddingParams() + head) + AttentionScoreFlopsPerToken(s) * (1.0 + static_cast<double>(mtpLayers) / layers);
}

namespace {

TransformerModel Make(std::string id, std::string source, int layers, int hidden, int heads, int kvHeads, int ffn,
                      int vocab, int seq, MlpKind mlp, int experts = 0, int topK = 0)
{
    TransformerModel m;
    m.id = std::move(id);
    m.source = std::move(source);
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kvHeads = kvHeads;
    m.ffn = ffn;
    m.vocab = vocab;
    m.seq = seq;
    m.mlp = mlp;
    m.experts = experts;
    m.topK = topK;
    // GPT-3, Megatron-LM and BLOOM share the input and output embedding and are trained with
    // Megatron-LM's dropout; Llama, Mixtral and Nemotron-4 do neither (their released configurations
    // and NeMo / Megatron-Bridge recipes set hidden and attention dropout to 0).
    m.tiedEmbeddings = mlp == MlpKind::Gelu;
    m.dropout = mlp == MlpKind::Gelu;
    return m;
}

constexpr MlpKind kGelu = MlpKind::Gelu, kSwiGlu = MlpKind::SwiGlu, kRelu2 = MlpKind::SquaredRelu;

// Qwen3's mixtures of experts: 128 experts, 8 a token, heads 128 wide whatever the hidden size.
TransformerModel Qwen3Moe(std::string id, int layers, int hidden, int heads, int expertFfn)
{
    TransformerModel m = Make(std::move(id), "Qwen3 Technical Report (arXiv:2505.09388), Table 2; config.json of Qwen/" +
                                                 std::string(layers == 48 ? "Qwen3-30B-A3B" : "Qwen3-235B-A22B") + " (head_dim 128)",
                              layers, hidden, heads, 4, expertFfn, 151936, 4096, MlpKind::SwiGlu, 128, 8);
    m.headDim = 128;
    return m;
}

// DeepSeek-V3: 61 layers, the first 3 dense; 256 routed experts (8 a token) and 1 shared, each
// 2048 wide; multi-head latent attention with 128 heads.
TransformerModel DeepSeekV3()
{
    TransformerModel m = Make("deepseek-v3", "DeepSeek-AI 2024, DeepSeek-V3 Technical Report (arXiv:2412.19437), section 4.2; "
                                             "config.json of deepseek-ai/DeepSeek-V3 (the main model, without its MTP module)",
                              61, 7168, 128, 128, 2048, 129280, 4096, MlpKind::SwiGlu, 256, 8);
    m.sharedExperts = 1;
    m.denseLayers = 3, m.denseFfn = 18432;
    m.headDim = 128; // qk_nope_head_dim
    m.qLoraRank = 1536, m.kvLoraRank = 512, m.ropeDim = 64, m.vHeadDim = 128;
    return m;
}

// GPT-OSS: 64 query heads and 8 KV heads 64 wide (4096 and 512, against a hidden size of 2880);
// 4 of `experts` SwiGLU experts 2880 wide a token; a 128-token window on every other layer (the
// first windowed, as Megatron-Bridge's window_attn_skip_freq 2); output layer untied, no dropout.
// Biases, attention sinks and the activation's clamp are below 0.1% of its FLOPs.
TransformerModel GptOss(std::string id, int layers, int experts)
{
    TransformerModel m = Make(std::move(id), "OpenAI 2025, gpt-oss-120b & gpt-oss-20b Model Card (arXiv:2508.10925), Table 1; "
                                             "Megatron-Bridge GPTOSSProvider (v0.2.0, src/megatron/bridge/models/gpt_oss/gpt_oss_provider.py)",
                              layers, 2880, 64, 8, 2880, 201088, 4096, MlpKind::SwiGlu, experts, 4);
    m.headDim = 64;
    m.window = 128;
    m.fullAttentionEvery = 2;
    return m;
}

const std::array<TransformerModel, 15>& Presets()
{
    static const std::array<TransformerModel, 15> presets = {
        Make("gpt3-175b", "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1", 96, 12288, 96, 96, 49152,
             51200, 2048, kGelu),
        Make("llama3-8b", "Llama 3 Herd of Models (Dubey et al. 2024, the Llama 3.1 models), Table 3", 32, 4096, 32, 8, 14336,
             128256, 8192, kSwiGlu),
        Make("llama3-70b", "Llama 3 Herd of Models (Dubey et al. 2024, the Llama 3.1 models), Table 3", 80, 8192, 64, 8, 28672,
             128256, 8192, kSwiGlu),
        Make("llama3-405b", "Llama 3 Herd of Models (Dubey et al. 2024, the Llama 3.1 models), Table 3", 126, 16384, 128, 8,
             53248, 128256, 8192, kSwiGlu),
        Make("nemotron4-15b", "Parmar et al. 2024, Nemotron-4 15B Technical Report (arXiv:2402.16819), Table 1; MLP 4 x hidden",
             32, 6144, 48, 8, 24576, 256000, 4096, kRelu2),
        Make("nemotron4-340b", "NVIDIA 2024, Nemotron-4 340B Technical Report (arXiv:2406.11704), Table 1", 96, 18432, 96, 8,
             73728, 256000, 4096, kRelu2),
        Make("mixtral-8x7b", "Jiang et al. 2024, Mixtral of Experts, Table 1", 32, 4096, 32, 8, 14336, 32000, 4096, kSwiGlu, 8,
             2),
        Make("mixtral-8x22b", "Mistral AI 2024, Mixtral-8x22B-v0.1 config.json (Hugging Face mistralai/Mixtral-8x22B-v0.1)", 56,
             6144, 48, 8, 16384, 32768, 4096, kSwiGlu, 8, 2),
        Make("megatron-1t", "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters, Table 1",
             128, 25600, 160, 160, 102400, 51200, 2048, kGelu),
        Make("bloom-176b", "BigScience 2022, BLOOM (arXiv:2211.05100), Table 3", 70, 14336, 112, 112, 57344, 250880, 2048, kGelu),
        Qwen3Moe("qwen3-30b-a3b", 48, 2048, 32, 768),
        Qwen3Moe("qwen3-235b-a22b", 94, 4096, 64, 1536),
        DeepSeekV3(),
        GptOss("gpt-oss-20b", 24, 32),
        GptOss("gpt-oss-120b", 36, 128),
    };
    return presets;
}

} // namespace

std::span<const TransformerModel> ModelPresets() { return Presets(); }

const TransformerModel* FindModelPreset(std::string_view id)
{
    if (id.substr(0, 8) == "llama3.1") return FindModelPreset(std::string("llama3") + std::string(id.substr(8)));
    for (const TransformerModel& m : Presets())
        if (m.id == id) return &m;
    return nullptr;
}

std::string ModelPresetList()
{
    std::string out;
    for (const TransformerModel& m : Presets()) out += (out.empty() ? "" : ", ") + m.id;
    return out;
}

namespace {

// Sets `field` from `given`; else records what the preset (or the neutral model) gave.
void Take(int& field, const std::optional<int>& given, const char* name, std::vector<std::string>& from)
{
    if (given) field = *given;
    else from.push_back(std::string(name) + " " + std::to_string(field));
}

} // namespace

ResolvedModel ResolveModel(const ModelInput& in)
{
    ResolvedModel r;
    TransformerModel& m = r.model;
    const bool byHand = in.preset.empty() || in.preset == "custom";
    if (byHand) {
        std::string missing;
        for (const auto& [v, flag] : {std::pair{in.layers, "--layers"}, {in.hidden, "--hidden"}, {in.heads, "--heads"}, {in.vocab, "--vocab"}})
            if (!v) missing += (missing.empty() ? "" : ", ") + std::string(flag);
        Require(missing.empty(), "a model described by hand needs --layers, --hidden, --heads and --vocab (missing: " + missing +
                                     "); or start from a preset with --model (" + ModelPresetList() + ")");
        m.id = "custom";
        m.source = "given by hand";
        m.layers = *in.layers;
        m.hidden = *in.hidden;
        m.heads = *in.heads;
        m.vocab = *in.vocab;
        m.kvHeads = in.kvHeads.value_or(m.heads);
        m.headDim = in.headDim.value_or(0);
        m.ffn = in.ffn.value_or(4 * m.hidden);
        m.mlp = in.mlp.value_or(MlpKind::Gelu);
        m.experts = in.experts.value_or(0);
        m.topK = in.topK.value_or(m.experts > 0 ? 2 : 0);
        m.seq = in.seq.value_or(2048);
        m.window = in.window.value_or(0);
        m.fullAttentionEvery = in.fullAttentionEvery.value_or(0);
        m.mtpLayers = in.mtpLayers.value_or(0);
        m.tiedEmbeddings = true; // Megatron-LM's default (untie_embeddings_and_output_weights off)
        m.dropout = in.dropout.value_or(true); // Megatron-LM's default hidden and attention dropout 0.1
        if (!in.kvHeads) r.defaulted.push_back("kv-heads = heads " + std::to_string(m.kvHeads) + " (multi-head attention)");
        if (!in.ffn) r.defaulted.push_back("ffn 4 x hidden = " + std::to_string(m.ffn));
        if (!in.mlp) r.defaulted.push_back("mlp gelu");
        if (!in.seq) r.defaulted.push_back("seq 2048");
        r.defaulted.push_back("embeddings tied to the output head");
        if (!in.dropout) r.defaulted.push_back("dropout (its masks stored)");
        CheckModel(m);
        return r;
    }
    const TransformerModel* preset = FindModelPreset(in.preset);
    Require(preset != nullptr, "--model: unknown model '" + in.preset + "' (one of " + ModelPresetList() +
                                   ", or custom with --layers, --hidden, --heads and --vocab)");
    m = *preset;
    if (in.preset != m.id) m.id = in.preset; // an alias such as llama3.1-70b keeps the name given
    std::vector<std::string>& from = r.fromPreset;
    Take(m.layers, in.layers, "layers", from);
    Take(m.hidden, in.hidden, "hidden", from);
    Take(m.heads, in.heads, "heads", from);
    // Heads given without KV heads: multi-head attention unless the preset's KV heads still divide them.
    if (in.heads && !in.kvHeads && m.heads % m.kvHeads != 0) m.kvHeads = m.heads;
    Take(m.kvHeads, in.kvHeads, "kv-heads", from);
    if (in.headDim) m.headDim = *in.headDim;
    else if (m.headDim > 0) from.push_back("head-dim " + std::to_string(m.headDim));
    Take(m.ffn, in.ffn, "ffn", from);
    Take(m.vocab, in.vocab, "vocab", from);
    Take(m.seq, in.seq, "seq", from);
    if (in.mlp) m.mlp = *in.mlp;
    else from.push_back("mlp " + std::string(Name(m.mlp)));
    if (in.experts) m.experts = *in.experts;
    else if (m.IsMoe()) from.push_back("experts " + std::to_string(m.experts));
    if (m.IsMoe()) {
        if (!in.topK && m.topK == 0) m.topK = 2;
        Take(m.topK, in.topK, "top-k", from);
        if (m.sharedExperts > 0) from.push_back("shared experts " + std::to_string(m.sharedExperts));
        if (m.DenseLayers() > 0)
            from.push_back("first " + std::to_string(m.denseLayers) + " layers dense (ffn " + std::to_string(m.denseFfn) + ")");
    }
    if (in.window) m.window = *in.window;
    if (in.fullAttentionEvery) m.fullAttentionEvery = *in.fullAttentionEvery;
    if (m.IsWindowed() && (!in.window || !in.fullAttentionEvery))
        from.push_back("window " + std::to_string(m.window) + " on " + std::to_string(m.WindowedLayers()) + " of " +
                       std::to_string(m.layers) + " layers" +
                       (m.fullAttentionEvery > 0 ? " (1 in " + std::to_string(m.fullAttentionEvery) + " attends to the whole sequence)" : ""));
    Require(!in.fullAttentionEvery || *in.fullAttentionEvery == 0 || m.IsWindowed(),
            "--full-attention-every needs a sliding window: give --window (the model '" + m.id + "' has none)");
    if (m.IsMla())
        from.push_back("multi-head latent attention (q rank " + std::to_string(m.qLoraRank) + ", kv rank " + std::to_string(m.kvLoraRank) +
                       ", rope " + std::to_string(m.ropeDim) + ", value head " + std::to_string(m.vHeadDim) + ")");
    if (in.mtpLayers) m.mtpLayers = *in.mtpLayers;
    from.push_back(m.tiedEmbeddings ? "embeddings tied to the output head" : "embeddings apart from the output head");
    if (in.dropout) m.dropout = *in.dropout;
    else from.push_back(m.dropout ? "dropout (its masks stored)" : "no dropout");
    if (in.AnyArchitecture()) m.id += "*";
    CheckModel(m);
    return r;
}

void CheckModel(const TransformerModel& m)
{
    auto positive = [](int v, const char* flag) {
        Require(v > 0, std::string(flag) + " must be positive (got " + std::to_string(v) + ")");
    };
    positive(m.layers, "--layers");
    positive(m.hidden, "--hidden");
    positive(m.heads, "--heads");
    positive(m.kvHeads, "--kv-heads");
    positive(m.ffn, "--ffn");
    positive(m.vocab, "--vocab");
    positive(m.seq, "--seq");
    Require(m.headDim >= 0, "--head-dim must not be negative");
    Require(m.headDim > 0 || m.hidden % m.heads == 0,
            "--heads " + std::to_string(m.heads) + " must divide --hidden " + std::to_string(m.hidden) + " (or give --head-dim)");
    Require(m.heads % m.kvHeads == 0,
            "--kv-heads " + std::to_string(m.kvHeads) + " must divide --heads " + std::to_string(m.heads));
    Require(m.experts >= 0, "--experts must not be negative");
    Require(m.window >= 0, "--window must not be negative (0: no sliding window)");
    Require(m.fullAttentionEvery >= 0, "--full-attention-every must not be negative (0: every layer windowed)");
    Require(m.mtpLayers >= 0, "--mtp-layers must not be negative (0: no multi-token prediction)");
    Require(m.DenseLayers() < m.layers, "--layers " + std::to_string(m.layers) + " must exceed the model's " +
                                            std::to_string(m.denseLayers) + " dense first layers");
    if (m.IsMoe())
        Require(m.topK >= 1 && m.topK <= m.experts, "--top-k must be between 1 and --experts " + std::to_string(m.experts) +
                                                        " (got " + std::to_string(m.topK) + ")");
}

} // namespace paralens::core
