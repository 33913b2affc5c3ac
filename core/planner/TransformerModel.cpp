#include "planner/TransformerModel.hpp"

#include "common/Error.hpp"

#include <array>

namespace paralens::core {

double TransformerModel::AttentionParams() const
{
    const double h = hidden, kv = static_cast<double>(kvHeads) * HeadDim();
    return 2.0 * h * h + 2.0 * h * kv;
}

double TransformerModel::MlpParams() const { return (gatedMlp ? 3.0 : 2.0) * hidden * static_cast<double>(ffn); }

double TransformerModel::LayerExpertParams() const
{
    return IsMoe() ? experts * MlpParams() + static_cast<double>(hidden) * experts : 0.0;
}

double TransformerModel::LayerParams() const { return AttentionParams() + (IsMoe() ? LayerExpertParams() : MlpParams()); }

double TransformerModel::LayerActiveParams() const
{
    return AttentionParams() + (IsMoe() ? topK * MlpParams() + static_cast<double>(hidden) * experts : MlpParams());
}

double TransformerModel::EmbeddingParams() const
{
    return static_cast<double>(vocab) * hidden * (tiedEmbeddings ? 1.0 : 2.0);
}

double TransformerModel::TotalParams() const { return layers * LayerParams() + EmbeddingParams(); }

double TransformerModel::ActiveParams() const { return layers * LayerActiveParams() + EmbeddingParams(); }

double TransformerModel::AttentionScoreFlopsPerToken(int s) const { return 4.0 * s * static_cast<double>(hidden) * layers; }

double TransformerModel::ForwardFlopsPerToken(int s) const
{
    // The input embedding is a lookup, not a matmul: only the output head counts.
    const double head = static_cast<double>(vocab) * hidden;
    return 2.0 * (layers * LayerActiveParams() + head) + AttentionScoreFlopsPerToken(s);
}

namespace {

TransformerModel Make(std::string id, std::string source, int layers, int hidden, int heads, int kvHeads, int ffn,
                      int vocab, int seq, bool gated, int experts = 0, int topK = 0)
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
    m.gatedMlp = gated;
    m.experts = experts;
    m.topK = topK;
    m.tiedEmbeddings = !gated; // GPT-3, Megatron-LM and BLOOM share the input and output embedding; Llama and Mixtral do not
    return m;
}

const std::array<TransformerModel, 7>& Presets()
{
    static const std::array<TransformerModel, 7> presets = {
        Make("gpt3-175b", "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1", 96, 12288, 96, 96, 49152,
             51200, 2048, false),
        Make("llama3-8b", "Llama 3 Herd of Models (Dubey et al. 2024), Table 3", 32, 4096, 32, 8, 14336, 128256, 8192, true),
        Make("llama3-70b", "Llama 3 Herd of Models (Dubey et al. 2024), Table 3", 80, 8192, 64, 8, 28672, 128256, 8192, true),
        Make("llama3-405b", "Llama 3 Herd of Models (Dubey et al. 2024), Table 3", 126, 16384, 128, 8, 53248, 128256, 8192,
             true),
        Make("mixtral-8x7b", "Jiang et al. 2024, Mixtral of Experts, Table 1", 32, 4096, 32, 8, 14336, 32000, 4096, true, 8, 2),
        Make("megatron-1t", "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters, Table 1",
             128, 25600, 160, 160, 102400, 51200, 2048, false),
        Make("bloom-176b", "BigScience 2022, BLOOM (arXiv:2211.05100), Table 3", 70, 14336, 112, 112, 57344, 250880, 2048, false),
    };
    return presets;
}

} // namespace

std::span<const TransformerModel> ModelPresets() { return Presets(); }

const TransformerModel* FindModelPreset(std::string_view id)
{
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
    Require(m.hidden % m.heads == 0, "--heads " + std::to_string(m.heads) + " must divide --hidden " + std::to_string(m.hidden));
    Require(m.heads % m.kvHeads == 0,
            "--kv-heads " + std::to_string(m.kvHeads) + " must divide --heads " + std::to_string(m.heads));
    Require(m.experts >= 0, "--experts must not be negative");
    if (m.IsMoe())
        Require(m.topK >= 1 && m.topK <= m.experts, "--top-k must be between 1 and --experts " + std::to_string(m.experts) +
                                                        " (got " + std::to_string(m.topK) + ")");
}

} // namespace paralens::core
