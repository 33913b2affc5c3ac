#include "autopar/OpGraph.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace paralens::core {

namespace {

struct KindFlops {
    std::string_view kind;
    double flopsPerPoint;
};

// FLOPs per point of the loop nest (per multiply-add for contractions, per element otherwise).
constexpr std::array<KindFlops, 11> kKinds{{
    {"matmul", 2.0},
    {"batched-matmul", 2.0},
    {"conv", 2.0},
    {"add", 1.0},
    {"mul", 1.0},
    {"relu", 1.0},
    {"gelu", 8.0},
    {"layernorm", 8.0},
    {"softmax", 5.0},
    {"cross-entropy", 4.0},
    {"embedding", 0.0},
}};

std::vector<std::string> SplitEinsum(const std::string& einsum, const std::string& op, std::string* out)
{
    const size_t arrow = einsum.find("->");
    Require(arrow != std::string::npos, "op '" + op + "': einsum '" + einsum + "' has no '->'");
    *out = einsum.substr(arrow + 2);
    std::vector<std::string> parts;
    std::string cur;
    for (char c : einsum.substr(0, arrow)) {
        if (c == ',') {
            parts.push_back(cur);
            cur.clear();
        } else if (c != ' ') {
            cur.push_back(c);
        }
    }
    parts.push_back(cur);
    return parts;
}

} // namespace

uint64_t GraphTensor::Bytes() const
{
    uint64_t n = static_cast<uint64_t>(elementBytes);
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
}

double GraphOp::ForwardFlops() const
{
    double points = 1.0;
    for (const OpLoop& l : loops) points *= static_cast<double>(l.size);
    return flopsPerPoint * points;
}

bool GraphOp::IsReduction(int loop) const
{
    return std::find(output.loops.begin(), output.loops.end(), loop) == output.loops.end();
}

int GraphOp::LoopIndex(std::string_view n) const
{
    for (size_t i = 0; i < loops.size(); ++i)
        if (loops[i].name == n) return static_cast<int>(i);
    return -1;
}

double OpGraph::ForwardFlops() const
{
    double f = 0.0;
    for (const GraphOp& op : ops) f += op.ForwardFlops();
    return f;
}

uint64_t OpGraph::WeightBytes() const
{
    uint64_t b = 0;
    for (const GraphTensor& t : tensors)
        if (t.kind == TensorKind::Weight) b += t.Bytes();
    return b;
}

int OpGraph::TensorIndex(std::string_view n) const
{
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == n) return static_cast<int>(i);
    return -1;
}

double FlopsPerPointOf(std::string_view kind)
{
    for (const KindFlops& k : kKinds)
        if (k.kind == kind) return k.flopsPerPoint;
    return -1.0;
}

std::string OpKindsList()
{
    std::string s;
    for (const KindFlops& k : kKinds) s += (s.empty() ? "" : ", ") + std::string(k.kind);
    return s;
}

GraphBuilder::GraphBuilder(std::string graphName) { m_graph.name = std::move(graphName); }

int GraphBuilder::Input(std::string name, std::vector<int64_t> shape, int elementBytes)
{
    m_graph.tensors.push_back({std::move(name), std::move(shape), elementBytes, TensorKind::Input, -1, {}});
    return static_cast<int>(m_graph.tensors.size()) - 1;
}

int GraphBuilder::LayerInput(std::string name, std::vector<int64_t> shape, int elementBytes)
{
    m_graph.tensors.push_back({std::move(name), std::move(shape), elementBytes, TensorKind::LayerInput, -1, {}});
    return static_cast<int>(m_graph.tensors.size()) - 1;
}

int GraphBuilder::Weight(std::string name, std::vector<int64_t> shape, int elementBytes)
{
    m_graph.tensors.push_back({std::move(name), std::move(shape), elementBytes, TensorKind::Weight, -1, {}});
    return static_cast<int>(m_graph.tensors.size()) - 1;
}

int GraphBuilder::Op(const OpArgs& a)
{
    const std::string where = "op '" + a.name + "'";
    std::string outLetters;
    const std::vector<std::string> ins = SplitEinsum(a.einsum, a.name, &outLetters);
    Require(ins.size() == a.inputs.size(), where + ": einsum '" + a.einsum + "' has " + std::to_string(ins.size()) +
                                               " operands but " + std::to_string(a.inputs.size()) + " inputs are given");
    GraphOp op;
    op.name = a.name;
    op.kind = a.kind;
    op.flopsPerPoint = a.flopsPerPoint;
    op.layer = m_layer;
    op.megatronLoop = a.megatronLoop;
    op.batchLoop = a.batchLoop;
    auto loopOf = [&](char c, int64_t size, const std::string& tensor) {
        const std::string n(1, c);
        const int i = op.LoopIndex(n);
        if (i >= 0) {
            Require(op.loops[static_cast<size_t>(i)].size == size,
                    where + ": loop '" + n + "' is " + std::to_string(op.loops[static_cast<size_t>(i)].size) + " in one operand but " +
                        std::to_string(size) + " in '" + tensor + "'");
            return i;
        }
        op.loops.push_back({n, size, a.unsplittable.find(c) == std::string::npos});
        return static_cast<int>(op.loops.size()) - 1;
    };
    for (size_t k = 0; k < ins.size(); ++k) {
        const int t = a.inputs[k];
        Require(t >= 0 && t < static_cast<int>(m_graph.tensors.size()), where + ": input " + std::to_string(k) + " names no tensor");
        const GraphTensor& tensor = m_graph.tensors[static_cast<size_t>(t)];
        Require(ins[k].size() == tensor.shape.size(), where + ": operand '" + ins[k] + "' has " + std::to_string(ins[k].size()) +
                                                          " letters but tensor '" + tensor.name + "' has " +
                                                          std::to_string(tensor.shape.size()) + " dimensions");
        OpOperand operand{t, {}};
        for (size_t d = 0; d < ins[k].size(); ++d) operand.loops.push_back(loopOf(ins[k][d], tensor.shape[d], tensor.name));
        op.inputs.push_back(std::move(operand));
    }
    std::vector<int64_t> outShape;
    for (char c : outLetters) {
        const int i = op.LoopIndex(std::string(1, c));
        Require(i >= 0, where + ": output letter '" + std::string(1, c) + "' appears in no input of '" + a.einsum + "'");
        op.output.loops.push_back(i);
        outShape.push_back(op.loops[static_cast<size_t>(i)].size);
    }
    for (const std::string* loopName : {&op.megatronLoop, &op.batchLoop})
        Require(loopName->empty() || op.LoopIndex(*loopName) >= 0, where + ": no loop '" + *loopName + "' in '" + a.einsum + "'");
    const int opIndex = static_cast<int>(m_graph.ops.size());
    m_graph.tensors.push_back({a.name, std::move(outShape), a.elementBytes, TensorKind::Activation, opIndex, {}});
    op.output.tensor = static_cast<int>(m_graph.tensors.size()) - 1;
    for (const OpOperand& in : op.inputs) m_graph.tensors[static_cast<size_t>(in.tensor)].consumers.push_back(opIndex);
    m_graph.ops.push_back(std::move(op));
    return m_graph.ops.back().output.tensor;
}

OpGraph GraphBuilder::Finish(std::vector<int> outputs, int layers)
{
    m_graph.outputs = std::move(outputs);
    m_graph.layers = layers;
    ValidateGraph(m_graph);
    return std::move(m_graph);
}

void ValidateGraph(const OpGraph& g)
{
    Require(!g.ops.empty(), "graph '" + g.name + "' has no ops");
    Require(!g.outputs.empty(), "graph '" + g.name + "' names no output tensor");
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const GraphOp& op = g.ops[i];
        for (const OpOperand& in : op.inputs) {
            const GraphTensor& t = g.tensors[static_cast<size_t>(in.tensor)];
            if (t.producer >= static_cast<int>(i))
                throw Error("op '" + op.name + "' reads '" + t.name + "', which op '" + g.ops[static_cast<size_t>(t.producer)].name +
                            "' produces later");
        }
        for (const OpLoop& l : op.loops) Require(l.size >= 1, "op '" + op.name + "': loop '" + l.name + "' has size " + std::to_string(l.size));
    }
    for (const GraphTensor& t : g.tensors) {
        if (t.kind == TensorKind::Weight)
            Require(t.consumers.size() == 1, "weight '" + t.name + "' is read by " + std::to_string(t.consumers.size()) +
                                                 " ops; each weight must feed exactly one op (give each use its own weight)");
    }
    for (int o : g.outputs)
        Require(o >= 0 && o < static_cast<int>(g.tensors.size()) && g.tensors[static_cast<size_t>(o)].kind == TensorKind::Activation,
                "graph '" + g.name + "': an output must be a tensor some op produces");
}

} // namespace paralens::core
