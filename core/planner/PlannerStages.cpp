// How a pipeline's layers fall on its stages: an even split, the first and last stages' counts
// fixed (the others sharing the rest), or a layout placing each chunk's layers by hand; and the
// layer count the standard flags' equal model chunks divide.
#include "planner/Planner.hpp"

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

int ChunkableLayers(int layers, const TrainingConfig& c)
{
    if (c.layout) return 0; // its chunks are as laid out
    const int pp = c.pp;
    if (!c.Uneven()) return layers % pp == 0 ? layers / pp : 0;
    const int first = c.firstStageLayers, last = c.lastStageLayers;
    if (first == last && (layers + 2) % pp == 0 && first + 1 == (layers + 2) / pp) return (layers + 2) / pp;
    const int middles = pp - (first > 0) - (last > 0), rest = layers - first - last;
    if (middles > 0 && rest % middles != 0) return 0;
    return std::gcd(std::gcd(first, last), middles > 0 ? rest / middles : 0);
}

} // namespace paralens::core
