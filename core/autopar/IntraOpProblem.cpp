// The cost tables of an intra-op search (see Sharding.hpp) and an assignment's execution steps.
#include "autopar/Sharding.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace paralens::core {

namespace {


uint32_t Key(const Layout& a, const Layout& b)
{
    auto u = [](int8_t v) { return static_cast<uint32_t>(static_cast<uint8_t>(v)); };
    return u(a.axis[0]) | u(a.axis[1]) << 8 | u(b.axis[0]) << 16 | u(b.axis[1]) << 24;
}

// Conversion costs of one tensor, memoised by (from, to): an edge's matrix holds few distinct pairs.
class TensorConversions {
public:
    TensorConversions(uint64_t bytes, const DeviceMesh& mesh) : m_bytes(bytes), m_mesh(mesh) {}
    double operator()(const Layout& from, const Layout& to)
    {
        if (from == to) return 0.0;
        const auto [it, added] = m_memo.try_emplace(Key(from, to), 0.0);
        if (added) it->second = ConvertSeconds(from, to, m_bytes, m_mesh);
        return it->second;
    }

private:
    uint64_t m_bytes;
    const DeviceMesh& m_mesh;
    std::unordered_map<uint32_t, double> m_memo;
};

const Layout* Find(const std::vector<std::pair<int, Layout>>& v, int tensor)
{
    for (const auto& [t, l] : v)
        if (t == tensor) return &l;
    return nullptr;
}

const Layout kReplicatedLayout{};

// The layout a tensor without a producer arrives in: the boundary's, replicated for a layer
// input; none (free) for data inputs and weights.
const Layout* ArrivalLayout(const IntraOpProblem& p, int tensor)
{
    if (const Layout* fixed = Find(p.boundary.inputs, tensor)) return fixed;
    return p.graph->tensors[static_cast<size_t>(tensor)].kind == TensorKind::LayerInput ? &kReplicatedLayout : nullptr;
}

// The layouts a graph output may leave in: replicated, or (when the graph allows) any layout
// without partial sums reachable from `out`.
std::vector<Layout> LeaveTargets(const OpGraph& g, int tensor, const Layout& out)
{
    if (g.outputReplicated) return {Layout{}};
    std::vector<Layout> targets{out.Resolved()};
    const int dims = static_cast<int>(g.tensors[static_cast<size_t>(tensor)].shape.size());
    for (int a = 0; a < 2; ++a) {
        if (out.axis[a] != kPartial) continue;
        for (int d = 0; d < dims; ++d) {
            Layout l = out.Resolved();
            l.axis[a] = static_cast<int8_t>(d);
            targets.push_back(l);
        }
    }
    return targets;
}

double ConvertBothWays(const Layout& out, const Layout& t, uint64_t bytes, const DeviceMesh& mesh)
{
    return ConvertSeconds(out, t, bytes, mesh) + ConvertSeconds(t, out.Resolved(), bytes, mesh);
}

bool IsGraphOutput(const OpGraph& g, int tensor) { return std::find(g.outputs.begin(), g.outputs.end(), tensor) != g.outputs.end(); }

bool IsOpen(const IntraOpProblem& p, int tensor)
{
    return std::find(p.boundary.open.begin(), p.boundary.open.end(), tensor) != p.boundary.open.end();
}

// Whether the output of a tensor pays to leave (a fixed boundary layout, or a graph output that is
// not open), and what it converts to.
bool Leaves(const IntraOpProblem& p, int tensor) { return Find(p.boundary.outputs, tensor) || (IsGraphOutput(*p.graph, tensor) && !IsOpen(p, tensor)); }

// Output conversion forward plus its gradient's conversion back; the cheapest target.
double OutputCost(const IntraOpProblem& p, int tensor, const Layout& out, Layout* chosen)
{
    if (const Layout* fixed = Find(p.boundary.outputs, tensor)) {
        if (chosen) *chosen = *fixed;
        return ConvertBothWays(out, *fixed, p.graph->tensors[static_cast<size_t>(tensor)].Bytes(), p.mesh);
    }
    if (!Leaves(p, tensor)) return 0.0;
    return LeaveSeconds(*p.graph, tensor, out, p.mesh, chosen);
}

double NodeCost(const IntraOpProblem& p, int opIndex, const OpStrategy& s)
{
    const OpGraph& g = *p.graph;
    const GraphOp& op = g.ops[static_cast<size_t>(opIndex)];
    double c = s.computeSeconds;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
        const GraphTensor& t = g.tensors[static_cast<size_t>(op.inputs[k].tensor)];
        if (t.kind == TensorKind::Weight) {
            c += ConvertSeconds(s.inputGrads[k], s.inputs[k], t.Bytes(), p.mesh);
        } else if (const Layout* fixed = ArrivalLayout(p, op.inputs[k].tensor)) {
            c += ConvertSeconds(*fixed, s.inputs[k], t.Bytes(), p.mesh) + ConvertSeconds(s.inputGrads[k], fixed->Resolved(), t.Bytes(), p.mesh);
        }
    }
    return c + OutputCost(p, op.output.tensor, s.output, nullptr);
}

void AddEdges(IntraOpProblem& p)
{
    const OpGraph& g = *p.graph;
    for (size_t c = 0; c < g.ops.size(); ++c) {
        const GraphOp& op = g.ops[c];
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            const GraphTensor& t = g.tensors[static_cast<size_t>(op.inputs[k].tensor)];
            if (t.producer < 0) continue; // inputs and weights: node costs
            EdgeCosts e{t.producer, static_cast<int>(c), static_cast<int>(k), {}};
            const auto& ps = p.strategies[static_cast<size_t>(t.producer)];
            const auto& cs = p.strategies[c];
            e.cost.resize(ps.size() * cs.size());
            TensorConversions convert(t.Bytes(), p.mesh);
            for (size_t i = 0; i < ps.size(); ++i)
                for (size_t j = 0; j < cs.size(); ++j)
                    e.cost[i * cs.size() + j] = convert(ps[i].output, cs[j].inputs[k]) + convert(cs[j].inputGrads[k], ps[i].output.Resolved());
            p.edges.push_back(std::move(e));
        }
    }
}

} // namespace

double LeaveSeconds(const OpGraph& g, int tensor, const Layout& out, const DeviceMesh& mesh, Layout* chosen)
{
    double best = 0.0;
    bool any = false;
    const uint64_t bytes = g.tensors[static_cast<size_t>(tensor)].Bytes();
    for (const Layout& t : LeaveTargets(g, tensor, out)) {
        const double c = ConvertBothWays(out, t, bytes, mesh);
        if (!any || c < best) {
            best = c;
            if (chosen) *chosen = t;
            any = true;
        }
    }
    return best;
}

IntraOpProblem BuildIntraOpProblem(const OpGraph& graph, const DeviceMesh& mesh, const Boundary& boundary)
{
    IntraOpProblem p;
    p.graph = &graph;
    p.mesh = mesh;
    p.boundary = boundary;
    for (size_t i = 0; i < graph.ops.size(); ++i) {
        p.strategies.push_back(EnumerateStrategies(graph.ops[i], graph, mesh));
        std::vector<double> costs;
        for (const OpStrategy& s : p.strategies.back()) costs.push_back(NodeCost(p, static_cast<int>(i), s));
        p.nodeCost.push_back(std::move(costs));
    }
    AddEdges(p);
    return p;
}

double IntraOpProblem::Cost(const std::vector<int>& choice) const
{
    double c = 0.0;
    for (size_t i = 0; i < nodeCost.size(); ++i) c += nodeCost[i][static_cast<size_t>(choice[i])];
    for (const EdgeCosts& e : edges) {
        const size_t nc = strategies[static_cast<size_t>(e.consumer)].size();
        c += e.cost[static_cast<size_t>(choice[static_cast<size_t>(e.producer)]) * nc + static_cast<size_t>(choice[static_cast<size_t>(e.consumer)])];
    }
    return c;
}

namespace {

void PushConversion(std::vector<ExecStep>& steps, const Layout& from, const Layout& to, int tensor, int op, CommPhase phase, bool weight,
                    const IntraOpProblem& p)
{
    std::vector<CommItem> items;
    ConvertSeconds(from, to, p.graph->tensors[static_cast<size_t>(tensor)].Bytes(), p.mesh, &items);
    for (CommItem& c : items) {
        c.op = op;
        c.tensor = tensor;
        c.phase = phase;
        const bool reduces = c.collective == Collective::AllReduce || c.collective == Collective::ReduceScatter;
        c.kind = weight ? CommKind::GradientSync : reduces ? CommKind::PartialSum : CommKind::Repartition;
        steps.push_back(ExecStep{op, phase, false, c.seconds, c});
    }
}

// The layout tensor `t` has when op `consumer` reads it: its producer's output, or the boundary's.
const Layout* SourceLayout(const IntraOpProblem& p, const std::vector<int>& choice, int t)
{
    const GraphTensor& tensor = p.graph->tensors[static_cast<size_t>(t)];
    if (tensor.producer >= 0) {
        const size_t prod = static_cast<size_t>(tensor.producer);
        return &p.strategies[prod][static_cast<size_t>(choice[prod])].output;
    }
    return ArrivalLayout(p, t);
}

} // namespace

std::vector<ExecStep> IntraOpProblem::Steps(const std::vector<int>& choice) const
{
    const OpGraph& g = *graph;
    std::vector<ExecStep> steps;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const GraphOp& op = g.ops[i];
        const OpStrategy& s = strategies[i][static_cast<size_t>(choice[i])];
        for (size_t k = 0; k < op.inputs.size(); ++k)
            if (const Layout* from = SourceLayout(*this, choice, op.inputs[k].tensor))
                PushConversion(steps, *from, s.inputs[k], op.inputs[k].tensor, static_cast<int>(i), CommPhase::Forward, false, *this);
        steps.push_back(ExecStep{static_cast<int>(i), CommPhase::Forward, true, s.computeSeconds / 3.0, {}});
        Layout target;
        if (Leaves(*this, op.output.tensor)) {
            OutputCost(*this, op.output.tensor, s.output, &target);
            PushConversion(steps, s.output, target, op.output.tensor, static_cast<int>(i), CommPhase::Forward, false, *this);
        }
    }
    for (size_t i = g.ops.size(); i-- > 0;) {
        const GraphOp& op = g.ops[i];
        const OpStrategy& s = strategies[i][static_cast<size_t>(choice[i])];
        Layout target;
        if (Leaves(*this, op.output.tensor)) {
            OutputCost(*this, op.output.tensor, s.output, &target);
            PushConversion(steps, target, s.output.Resolved(), op.output.tensor, static_cast<int>(i), CommPhase::Backward, false, *this);
        }
        steps.push_back(ExecStep{static_cast<int>(i), CommPhase::Backward, true, s.computeSeconds * 2.0 / 3.0, {}});
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            const int t = op.inputs[k].tensor;
            const bool weight = g.tensors[static_cast<size_t>(t)].kind == TensorKind::Weight;
            if (weight) {
                PushConversion(steps, s.inputGrads[k], s.inputs[k], t, static_cast<int>(i), CommPhase::Backward, true, *this);
            } else if (const Layout* from = SourceLayout(*this, choice, t)) {
                PushConversion(steps, s.inputGrads[k], from->Resolved(), t, static_cast<int>(i), CommPhase::Backward, false, *this);
            }
        }
    }
    return steps;
}

std::vector<CommItem> IntraOpProblem::Comms(const std::vector<int>& choice) const
{
    std::vector<CommItem> out;
    for (const ExecStep& s : Steps(choice))
        if (!s.compute) out.push_back(s.comm);
    return out;
}

CostBreakdown Breakdown(const IntraOpProblem& p, const std::vector<int>& choice)
{
    CostBreakdown b;
    for (const ExecStep& s : p.Steps(choice)) {
        if (s.compute) {
            b.computeSeconds += s.seconds;
        } else if (s.comm.kind == CommKind::PartialSum) {
            b.partialSumSeconds += s.seconds;
        } else if (s.comm.kind == CommKind::GradientSync) {
            b.gradientSyncSeconds += s.seconds;
        } else {
            b.repartitionSeconds += s.seconds;
        }
    }
    return b;
}

} // namespace paralens::core
