// Operator graphs for auto-parallelization (the lectures' last part): ops as loop nests in einsum
// form, tensors with shapes and bytes. Every op is `out[...] += f(in0[...], in1[...])` over named
// loops; a loop that indexes no dimension of the output is a reduction loop (splitting it leaves
// partial sums), a loop marked unsplittable (a softmax's or layernorm's normalised axis, a conv's
// stencil) cannot be split. FLOPs are exact for the documented count: flopsPerPoint x the product
// of all loop sizes (matmul 2 per multiply-add, elementwise 1, gelu 8, layernorm 8, softmax 5,
// cross-entropy 4, embedding 0: a gather). Plain data; thread-safe to read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

struct OpLoop {
    std::string name;       // one letter in the einsum ("b", "s", "h", ...)
    int64_t size = 1;
    bool splittable = true;
};

enum class TensorKind : uint8_t {
    Input,      // data fed to the graph: placed in any layout for free, no gradient
    LayerInput, // a previous layer's output: arrives replicated, its gradient goes back replicated
    Weight,     // a parameter: laid out as its one consumer wants; its gradient must match that layout
    Activation, // produced by an op
};

struct GraphTensor {
    std::string name;
    std::vector<int64_t> shape;
    int elementBytes = 2;
    TensorKind kind = TensorKind::Activation;
    int producer = -1;          // op index, -1 for inputs and weights
    std::vector<int> consumers; // op indices, in graph order

    uint64_t Bytes() const;
};

struct OpOperand {
    int tensor = -1;
    std::vector<int> loops; // loop index (into Op::loops) of each tensor dimension
};

struct GraphOp {
    std::string name;
    std::string kind;            // "matmul", "batched-matmul", "add", "gelu", "layernorm", ...
    std::vector<OpLoop> loops;
    std::vector<OpOperand> inputs;
    OpOperand output;
    double flopsPerPoint = 0.0;  // FLOPs per point of the loop nest
    int layer = -1;              // which layer of a stack it belongs to (-1: none)
    std::string megatronLoop;    // the loop Megatron-LM splits on the tensor-parallel axis ("": replicated)
    std::string batchLoop;       // the loop data parallelism splits ("": none)

    double ForwardFlops() const;
    bool IsReduction(int loop) const; // the loop indexes no output dimension
    int LoopIndex(std::string_view name) const; // -1 when absent
};

struct OpGraph {
    std::string name;
    std::vector<GraphTensor> tensors;
    std::vector<GraphOp> ops;    // in a topological order (every input produced earlier)
    std::vector<int> outputs;    // tensors the graph returns
    bool outputReplicated = true; // outputs must end replicated on every device (the lectures' Y)
    int layers = 0;              // layers of a stack (0: not a stack)

    double ForwardFlops() const;
    uint64_t WeightBytes() const;
    int TensorIndex(std::string_view name) const; // -1 when absent
};

// Builds graphs one einsum at a time. Shapes are checked as ops are added: a loop whose sizes
// disagree between operands, a letter missing from the inputs, or an unknown tensor throws Error
// naming the op.
class GraphBuilder {
public:
    explicit GraphBuilder(std::string graphName);

    int Input(std::string name, std::vector<int64_t> shape, int elementBytes = 2);
    int LayerInput(std::string name, std::vector<int64_t> shape, int elementBytes = 2);
    int Weight(std::string name, std::vector<int64_t> shape, int elementBytes = 2);

    struct OpArgs {
        std::string name;
        std::string kind;
        std::string einsum;            // "bsh,hf->bsf"
        std::vector<int> inputs;       // tensor ids, one per operand of the einsum
        double flopsPerPoint = 0.0;
        std::string unsplittable;      // loop letters that cannot be split ("t" for a softmax over t)
        std::string megatronLoop;
        std::string batchLoop;
        int elementBytes = 2;          // of the output
    };
    // Returns the output tensor's id (named after the op).
    int Op(const OpArgs& args);

    void SetLayer(int layer) { m_layer = layer; }
    OpGraph Finish(std::vector<int> outputs, int layers = 0);

private:
    OpGraph m_graph;
    int m_layer = -1;
};

// FLOPs per point of a built-in op kind (matmul 2, add 1, ...); -1 for an unknown kind.
double FlopsPerPointOf(std::string_view kind);
// "matmul, batched-matmul, conv, add, ..." for errors and --help.
std::string OpKindsList();

// ---- Built-in graphs (the lectures' examples) ----

struct TransformerDims {
    int64_t batch = 8;     // b (sequences per micro-batch)
    int64_t seq = 1024;    // s
    int64_t hidden = 4096; // h
    int64_t heads = 32;    // n (head dim d = h / n)
    int64_t ffn = 16384;   // f
    int elementBytes = 2;  // bf16
};

// The lectures' Y = X W1 W2 with a GELU between (Megatron-LM's MLP): X [tokens, h], W1 [h, f],
// W2 [f, h]; tokens = batch x seq. X is a layer input (replicated, as in the lectures' picture).
OpGraph BuildMlpGraph(const TransformerDims& d);
// `layers` Megatron transformer layers (pre-LN attention + MLP, residuals), 14 ops each.
OpGraph BuildTransformerGraph(const TransformerDims& d, int layers);
// A small conv net: two 3x3 conv + relu layers on 32x32 images, then a fully connected classifier.
OpGraph BuildConvNetGraph(int64_t batch, int64_t channels = 64, int64_t classes = 1000);

// Throws Error when the graph is malformed (an op reading a tensor produced later, a weight with
// more than one consumer, an empty graph, no outputs), naming the op or tensor.
void ValidateGraph(const OpGraph& g);

} // namespace paralens::core
