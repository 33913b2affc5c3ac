// A decoder-only transformer as the training planner sees it: its shape (layers, hidden, heads,
// KV heads, FFN width, vocabulary, sequence; experts and top-k for a mixture of experts), the
// parameter counts and the model FLOPs per token that follow from it, and presets from public
// model configurations. Counts are exact for the shapes; what they leave out (biases, norms,
// rotary tables) is below 0.1% of any preset.
#pragma once

#include <optional>
#include <span>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

// The MLP's form: GeLU and squared ReLU (Nemotron-4) have two matrices, SwiGLU three.
enum class MlpKind : uint8_t { Gelu, SwiGlu, SquaredRelu };
std::string_view Name(MlpKind k);                        // "gelu", "swiglu", "relu2"
std::optional<MlpKind> ParseMlpKind(std::string_view name); // also "squared-relu"

struct TransformerModel {
    std::string id;           // "llama3-70b"; "custom" when given by hand
    std::string source;       // where the shape comes from
    int layers = 32;
    int hidden = 4096;
    int heads = 32;
    int kvHeads = 32;         // grouped-query attention: fewer K/V heads than heads
    int headDim = 0;          // each head's width; 0: hidden / heads (Qwen3 and GPT-OSS set their own)
    int ffn = 16384;          // the MLP's inner width (each expert's, for a mixture of experts)
    int vocab = 51200;
    int seq = 2048;           // default training sequence length
    MlpKind mlp = MlpKind::Gelu;
    bool tiedEmbeddings = false;
    // Dropout after attention and after the MLP (Megatron-LM's GPT default, 0.1): training keeps
    // each mask, 1 byte an element. Llama, Mixtral and Nemotron-4 train without, and PyTorch's
    // dropout at p = 0 stores nothing.
    bool dropout = true;
    int experts = 0;          // 0: dense MLP; else every layer's MLP is `experts` experts
    int topK = 0;             // experts each token visits
    int sharedExperts = 0;    // experts every token visits besides its top-k (DeepSeek), ffn wide each
    // The first layers keep a dense MLP of denseFfn (DeepSeek-V3: 3 of 18432 = 9 x 2048, the FLOPs of
    // its top-8 and shared expert); the planner times every layer as a MoE layer and counts the
    // stages' weights so, an upper bound for the first stage.
    int denseLayers = 0, denseFfn = 0;
    // Multi-head latent attention (DeepSeek-V2/V3): queries through a rank-qLoraRank bottleneck (0:
    // none), keys and values from one kvLoraRank latent plus a shared ropeDim-wide rotary key; each
    // head's query and key are headDim + ropeDim wide, its value vHeadDim. 0: standard attention.
    int qLoraRank = 0, kvLoraRank = 0, ropeDim = 0, vHeadDim = 0;
    // Sliding-window attention (GPT-OSS, Mistral 7B): a windowed layer's queries attend to their
    // `window` predecessors only; every fullAttentionEvery-th layer (counting from 1) attends to the
    // whole sequence (GPT-OSS: 2, windowed and full layers alternating; 0: every layer windowed).
    // window 0: no window.
    int window = 0, fullAttentionEvery = 0;
    // Multi-token prediction (DeepSeek-V3, Megatron-Core's --mtp-num-layers): after the last layer,
    // each of mtpLayers modules joins the hidden state with the next token's embedding (two norms,
    // a 2h x h projection), runs one more transformer layer of the model's kind and the shared
    // output layer and loss again. 0: none (the presets' default: a training choice).
    int mtpLayers = 0;

    bool IsMoe() const { return experts > 0; }
    bool IsMla() const { return kvLoraRank > 0; }
    bool IsWindowed() const { return window > 0; }
    // The layers with the window: all, or all but every fullAttentionEvery-th.
    int WindowedLayers() const;
    // Keys per query a layer's scores count, averaged over the layers at sequence `seq`: a full
    // layer's whole sequence (the full square, as Megatron-LM counts it: twice the causal half),
    // a windowed layer's band counted the same way, min(seq, 2 window).
    double AttentionKeys(int seq) const;
    bool Gated() const { return mlp == MlpKind::SwiGlu; } // three matrices
    int HeadDim() const { return headDim > 0 ? headDim : hidden / heads; }
    // Per token, the widths attention works with: queries (and keys) heads x their head width,
    // hidden unless headDim says otherwise; keys and values kvHeads x headDim (MLA: every head's,
    // decompressed); the attention output the out-projection reads (heads x the value width).
    double QueryWidth() const;
    double KeyWidth() const;
    double ValueWidth() const;
    double OutputWidth() const;
    // Q, K, V and O projections: h x each width (MLA: the two down-projections, the up-projections
    // from their latents, and O).
    double AttentionParams() const;
    // MLA's up-projections (0 without MLA): the query latent to the heads' query width (0 without
    // a query latent), the key-value latent to each head's key and value.
    double MlaQueryUpParams() const { return IsMla() && qLoraRank > 0 ? static_cast<double>(qLoraRank) * QueryWidth() : 0.0; }
    double MlaKeyValueUpParams() const { return IsMla() ? static_cast<double>(kvLoraRank) * heads * (HeadDim() + vHeadDim) : 0.0; }
    // One MLP (one expert) of width ffn; MlpParamsOf another width (a dense first layer's).
    double MlpParams() const { return MlpParamsOf(ffn); }
    double MlpParamsOf(int width) const;
    // Per layer: attention + MLP (+ all experts, the shared ones and the router for a mixture of experts).
    double LayerParams() const;
    // Per layer, what one token uses: attention + one MLP, or topK and the shared experts and the router.
    double LayerActiveParams() const;
    // The routed experts' share of a layer and the router (0 for dense models).
    double LayerExpertParams() const;
    // The experts' MLPs one token runs per layer: topK + the shared ones (1 for a dense model).
    double MlpsPerToken() const { return IsMoe() ? static_cast<double>(topK) + sharedExperts : 1.0; }
    // Layers with the dense MLP of denseFfn (a mixture of experts' first ones; 0 otherwise).
    int DenseLayers() const { return IsMoe() ? denseLayers : 0; }
    // Input embedding, plus the output head unless tied.
    double EmbeddingParams() const;
    // One multi-token prediction module: a layer (LayerParams) and its 2h x h projection (the
    // embedding and output layer are the model's).
    double MtpProjectionParams() const { return 2.0 * hidden * hidden; }
    double MtpLayerParams() const { return LayerParams() + MtpProjectionParams(); }
    double TotalParams() const;
    double ActiveParams() const;
    // Model FLOPs of one token's forward at sequence length `seq`: 2 x active matmul parameters
    // (output head included) + attention scores and values 4 x seq x heads x headDim per layer (the
    // full square, as Megatron-LM counts it; a windowed layer's band in place of seq); with
    // multi-token prediction each module's layer, projection and output layer too (Megatron-LM's
    // num_floating_point_operations counts them so). Training is 3x this (Flops.hpp).
    double ForwardFlopsPerToken(int seq) const;
    // The attention-score part of it (2 x AttentionKeys(seq) x (query + output width) x layers,
    // 4 x seq x heads x headDim x layers for standard attention): what selective recomputation re-runs.
    double AttentionScoreFlopsPerToken(int seq) const;
};

// The presets, each naming its source: gpt3-175b, llama3-8b, llama3-70b, llama3-405b (also as
// llama3.1-8b/70b/405b: the Llama 3.1 models the paper describes), nemotron4-15b, nemotron4-340b,
// mixtral-8x7b, mixtral-8x22b, megatron-1t, bloom-176b, qwen3-30b-a3b, qwen3-235b-a22b, deepseek-v3,
// gpt-oss-20b, gpt-oss-120b.
std::span<const TransformerModel> ModelPresets();
// nullptr when `id` names none.
const TransformerModel* FindModelPreset(std::string_view id);

// A model described on the command line or in the window: a preset changed by the fields given,
// or, without a preset, a neutral model (multi-head attention, a GeLU MLP of 4 x hidden, no
// experts, sequence 2048, embeddings tied to the output head and dropout as Megatron-LM's defaults) that needs
// at least layers, hidden, heads and vocab.
struct ModelInput {
    std::string preset; // empty: none named
    std::optional<int> layers, hidden, heads, kvHeads, headDim, ffn, vocab, experts, topK, seq, window, fullAttentionEvery, mtpLayers;
    std::optional<MlpKind> mlp;
    std::optional<bool> dropout;
    bool AnyArchitecture() const
    {
        return layers || hidden || heads || kvHeads || headDim || ffn || vocab || experts || topK || mlp || dropout || window ||
               fullAttentionEvery || mtpLayers;
    }
};
struct ResolvedModel {
    TransformerModel model;               // id "preset*" when changed, "custom" without a preset
    std::vector<std::string> fromPreset;  // each field the preset gave that was not given ("kv-heads 8", "mlp swiglu", ...)
    std::vector<std::string> defaulted;   // a neutral model's fields not given ("ffn 4 x hidden = 16384", ...)
};
// Throws Error naming the option (`--model`, `--vocab`, ...) for an unknown preset, a missing field
// of a model by hand, or a model CheckModel refuses.
ResolvedModel ResolveModel(const ModelInput& in);
// "gpt3-175b, llama3-8b, ..." for errors and --help.
std::string ModelPresetList();

// Throws Error naming the field (as `--layers`, ...) when a dimension is not positive or heads do
// not divide hidden or kvHeads do not divide heads, or topK is outside 1..experts, or the window or
// fullAttentionEvery or mtpLayers is negative.
void CheckModel(const TransformerModel& m);

} // namespace paralens::core
