// How a pipeline's layers fall on its stages: an even split, the first and last stages' counts
// fixed (the others sharing the rest), or a layout placing each chunk's layers by hand; the layer
// count the standard flags' equal model chunks divide; and what each stage's and chunk's ops weigh.
#include "planner/PlannerInternal.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
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

double HeadInLayers(const PlanRequest& r)
{
    return PartFlops(r.model, r.Seq(), PipelineLayout::Part{0, r.model.mtpLayers, false, true}) /
           PartFlops(r.model, r.Seq(), PipelineLayout::Part{1, 0, false, false});
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

std::shared_ptr<const PipelineLayout> BalancedLayout(const PlanRequest& r, int pp, int v)
{
    const TransformerModel& m = r.model;
    const int chunks = pp * v, L = m.layers;
    if (pp < 2 || L < chunks - 1) return nullptr;
    const double extra = HeadInLayers(r);
    const int last = std::clamp(static_cast<int>(std::lround((L + extra) / chunks - extra)), 0, L - (chunks - 1));
    std::vector<PipelineLayout::Part> parts(static_cast<size_t>(chunks));
    const int rest = L - last, others = chunks - 1;
    for (int i = 0; i < others; ++i) parts[static_cast<size_t>(i)].layers = rest / others;
    // The layers left over, one each: the stages before the last first, spread over the stages.
    std::vector<int> order;
    for (int k = 0; k < v; ++k)
        for (int s = 0; s < pp - 1; ++s) order.push_back(k * pp + s);
    for (int k = 0; k + 1 < v; ++k) order.push_back(k * pp + pp - 1);
    for (int j = 0; j < rest % others; ++j) ++parts[static_cast<size_t>(order[static_cast<size_t>(j)])].layers;
    parts.front().embedding = true;
    parts.back().layers = last, parts.back().mtp = m.mtpLayers, parts.back().loss = true;
    auto layout = std::make_shared<PipelineLayout>(ParsePipelineLayout(PipelineLayoutText(parts), pp));
    CheckPipelineLayout(*layout, m);
    return layout;
}

std::optional<PlanRow> BalancedLayoutRow(const PlanRequest& r, const PlanRow& row)
{
    const TrainingConfig& c = row.config;
    if (c.pp < 2 || c.layout || !row.timed) return std::nullopt;
    TrainingConfig laid = c;
    laid.layout = BalancedLayout(r, c.pp, c.chunks);
    if (!laid.layout) return std::nullopt;
    laid.firstStageLayers = laid.lastStageLayers = 0;
    PlanRow out = Evaluate(r, laid);
    if (!out.fits || out.time.step > row.time.step * (1.0 - 0.005)) return std::nullopt;
    return out;
}

} // namespace paralens::core
