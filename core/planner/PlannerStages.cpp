// How a pipeline's layers fall on its stages: an even split, the first and last stages' counts
// fixed (the others sharing the rest), or a layout placing each chunk's layers by hand; the layer
// count the standard flags' equal model chunks divide; and what each stage's and chunk's ops weigh.
#include "planner/PlannerInternal.hpp"

#include <algorithm>
#include <numeric>

namespace paralens::core {

int StageLayers(int layers, const TrainingConfig& c, int stage)
{
    if (c.layout) return c.layout->Stage(stage).layers;
    if (!c.Uneven()) return (layers + c.pp - 1) / c.pp;
    if (stage == 0 && c.firstStageLayers > 0) return c.firstStageLayers;
    if (stage == c.pp - 1 && c.lastStageLayers > 0) return c.lastStageLayers;
    const int others = c.pp - (c.firstStageLayers > 0) - (c.lastStageLayers > 0);
    const int rest = layers - c.firstStageLayers - c.lastStageLayers;
    return others > 0 ? (rest + others - 1) / others : 0;
}

PipelineLayout::Part StageContent(const TransformerModel& m, const TrainingConfig& c, int stage)
{
    if (c.layout) return c.layout->Stage(stage);
    const bool last = stage == c.pp - 1;
    return PipelineLayout::Part{StageLayers(m.layers, c, stage), last ? m.mtpLayers : 0, stage == 0, last};
}

bool EndsCountedAsLayers(int layers, const TrainingConfig& c)
{
    const int pp = c.pp;
    return !c.layout && c.firstStageLayers > 0 && c.firstStageLayers == c.lastStageLayers && (layers + 2) % pp == 0 &&
           c.firstStageLayers + 1 == (layers + 2) / pp;
}

int ChunkableLayers(int layers, const TrainingConfig& c)
{
    if (c.layout) return 0; // its chunks are as laid out
    const int pp = c.pp;
    if (!c.Uneven()) return layers % pp == 0 ? layers / pp : 0;
    const int first = c.firstStageLayers, last = c.lastStageLayers;
    if (EndsCountedAsLayers(layers, c)) return (layers + 2) / pp;
    const int middles = pp - (first > 0) - (last > 0), rest = layers - first - last;
    if (middles > 0 && rest % middles != 0) return 0;
    return std::gcd(std::gcd(first, last), middles > 0 ? rest / middles : 0);
}

namespace {

// Forward FLOPs a token of `layers` transformer layers, `mtp` MTP modules (a layer, its 2h x h
// projection and the output layer each) and the output layer where the loss is.
double ContentFlops(const TransformerModel& m, int seq, double layers, double mtp, bool loss)
{
    const double layerFlops = 2.0 * m.LayerActiveParams() + m.AttentionScoreFlopsPerToken(seq) / m.layers;
    const double outputFlops = 2.0 * static_cast<double>(m.vocab) * m.hidden;
    return (layers + mtp) * layerFlops + ((loss ? 1.0 : 0.0) + mtp) * outputFlops + mtp * 2.0 * m.MtpProjectionParams();
}

} // namespace

double PartFlops(const TransformerModel& m, int seq, const PipelineLayout::Part& part)
{
    return ContentFlops(m, seq, part.layers, part.mtp, part.loss);
}

std::vector<double> OpShares(const PlanRequest& r, const TrainingConfig& c)
{
    if (c.pp <= 1) return {};
    const TransformerModel& m = r.model;
    const int pp = c.pp, v = c.chunks;
    // Megatron-Core's split counting the embedding and the loss as a layer each: every chunk u
    // units, the first chunk of the first stage and the last of the last one layer fewer.
    const int units = EndsCountedAsLayers(m.layers, c) && (m.layers + 2) / pp % v == 0 ? (m.layers + 2) / (pp * v) : 0;
    // Chunks Megatron-Core's flags cannot cut equal need a layout, and which one ran is not known:
    // each such stage's work is taken as balanced over its chunks.
    const int chunkable = ChunkableLayers(m.layers, c);
    const bool flags = v == 1 || (chunkable > 0 && chunkable % v == 0);
    std::vector<double> share(static_cast<size_t>(pp * v));
    double bound = 0.0;
    for (int s = 0; s < pp; ++s) {
        const bool last = s == pp - 1;
        const int layers = StageLayers(m.layers, c, s);
        double stage = 0.0;
        for (int k = 0; k < v; ++k) {
            double& x = share[static_cast<size_t>(s * v + k)];
            const bool end = last && k == v - 1; // where Megatron-Core builds the output layer and the MTP modules
            if (c.layout) x = PartFlops(m, r.Seq(), c.layout->parts[static_cast<size_t>(k * pp + s)]); // chunk i on stage i % pp
            else if (units > 0) x = ContentFlops(m, r.Seq(), units - (s == 0 && k == 0) - (end ? 1 : 0), end ? m.mtpLayers : 0, end);
            else if (flags) x = ContentFlops(m, r.Seq(), static_cast<double>(layers) / v, end ? m.mtpLayers : 0, end); // equal chunks
            else x = ContentFlops(m, r.Seq(), layers, last ? m.mtpLayers : 0, last) / v;
            stage += x;
        }
        bound = std::max(bound, stage);
    }
    for (double& x : share) x /= bound;
    return share;
}

} // namespace paralens::core
