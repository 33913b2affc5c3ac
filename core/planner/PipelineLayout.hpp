// A pipeline's layers placed by hand, as Megatron-Core's --pipeline-model-parallel-layout places
// them (megatron/core/transformer/pipeline_parallel_layer_layout.py): pp x v model chunks separated
// by '|', each a run of E (the embedding), t (a transformer layer), m (a multi-token prediction
// module) and L (the output layer and loss); "x*n" repeats a symbol, "(...)*n" a group, commas are
// cosmetic. Chunk i runs on stage i % pp as its virtual stage i / pp, so "Et*4|(t*4|)*14tmL" on
// pp 2 gives stage 0 the embedding and 32 layers in 8 chunks, stage 1 29 layers, the MTP module
// and the loss. DeepSeek-V3's recipes lay it out so, an uneven split the first and last stage
// layer counts cannot say.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

struct TransformerModel;

struct PipelineLayout {
    struct Part { // what one model chunk, or one stage's chunks together, hold
        int layers = 0, mtp = 0;
        bool embedding = false, loss = false;
    };
    std::string text;           // as given
    int pp = 1, chunks = 1;     // stages, and v model chunks on each
    std::vector<Part> parts;    // pp x v, in Megatron's order (chunk i: stage i % pp)

    Part Stage(int stage) const; // the stage's chunks together
    Part Total() const;          // every chunk together
};

// Throws Error naming --pp-layout: no stages (pp < 1: --pp not given), an unknown symbol, unbalanced parentheses, a repeat without its
// count, a chunk count `pp` does not divide, or Megatron-Core's order broken (the embedding the
// first symbol, the loss the last, no layer after an MTP module).
PipelineLayout ParsePipelineLayout(std::string_view text, int pp);

// The layout text of `parts` (pp x v chunks in Megatron's order), as Megatron-Core reads it: a run
// of equal chunks before the last as "(...|)*n", a symbol repeated as "t*n". Parsed back on `pp`
// stages it gives `parts` again.
std::string PipelineLayoutText(const std::vector<PipelineLayout::Part>& parts);

// Megatron-Core's checks against the model (validate_layer_layout): the embedding and the loss
// once each, as many t as the model's layers and m as its MTP modules. Throws Error naming
// --pp-layout.
void CheckPipelineLayout(const PipelineLayout& layout, const TransformerModel& model);

} // namespace paralens::core
