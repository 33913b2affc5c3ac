#include "autopar/InterOp.hpp"

#include "autopar/IntraOpSolvers.hpp"
#include "common/Error.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>

namespace paralens::core {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool IsPowerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }

std::string Letters(const GraphOp& op, const std::vector<int>& loops)
{
    std::string s;
    for (int l : loops) s += op.loops[static_cast<size_t>(l)].name;
    return s;
}

GraphBuilder::OpArgs ArgsOf(const GraphOp& op, std::vector<int> inputs)
{
    GraphBuilder::OpArgs a;
    a.name = op.name;
    a.kind = op.kind;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
        if (k) a.einsum += ',';
        a.einsum += Letters(op, op.inputs[k].loops);
    }
    a.einsum += "->";
    a.einsum += Letters(op, op.output.loops);
    a.inputs = std::move(inputs);
    a.flopsPerPoint = op.flopsPerPoint;
    for (const OpLoop& l : op.loops)
        if (!l.splittable) a.unsplittable += l.name;
    a.megatronLoop = op.megatronLoop;
    a.batchLoop = op.batchLoop;
    return a;
}

// A layer's signature: equal signatures have equal cost tables (names aside).
std::string Signature(const OpGraph& g)
{
    std::string s;
    for (const GraphOp& op : g.ops) {
        s += op.kind + ":" + ArgsOf(op, {}).einsum + ":" + std::to_string(op.flopsPerPoint) + "|";
        for (const OpLoop& l : op.loops) s += std::to_string(l.size) + (l.splittable ? "," : "!,");
    }
    for (const GraphTensor& t : g.tensors) s += std::to_string(t.elementBytes) + static_cast<char>('0' + static_cast<int>(t.kind));
    return s;
}

// Non-partial layouts of a tensor of `shape` on `mesh`: per axis replicated or any dimension it divides.
std::vector<Layout> BoundaryLayouts(const std::vector<int64_t>& shape, const DeviceMesh& mesh)
{
    auto choices = [&](int axis) {
        std::vector<int8_t> c{kReplicated};
        const int m = mesh.AxisSize(axis);
        for (size_t d = 0; m > 1 && d < shape.size(); ++d)
            if (shape[d] % m == 0) c.push_back(static_cast<int8_t>(d));
        return c;
    };
    std::vector<Layout> out;
    for (int8_t a0 : choices(0))
        for (int8_t a1 : choices(1)) {
            if (a0 >= 0 && a0 == a1 && shape[static_cast<size_t>(a0)] % mesh.Devices() != 0) continue;
            out.push_back(Layout{{a0, a1}});
        }
    return out;
}

} // namespace

std::vector<SubMesh> SubMeshShapes(const DeviceMesh& mesh)
{
    std::vector<SubMesh> shapes;
    for (int c = 1; c < mesh.cols; ++c) {
        const bool ok = mesh.rows == 1 ? mesh.cols % c == 0 : IsPowerOfTwo(c) && IsPowerOfTwo(mesh.cols);
        if (ok) shapes.push_back({1, c});
    }
    for (int r = 1; r <= mesh.rows; ++r) shapes.push_back({r, mesh.cols});
    return shapes;
}

LayerGraph ExtractLayer(const OpGraph& stack, int layer)
{
    const std::string where = "graph '" + stack.name + "', layer " + std::to_string(layer);
    std::vector<int> remap(stack.tensors.size(), -1);
    GraphBuilder gb(stack.name + "/layer" + std::to_string(layer));
    LayerGraph lg;
    std::string inputName;
    for (const GraphOp& op : stack.ops) {
        if (op.layer != layer) continue;
        std::vector<int> inputs;
        for (const OpOperand& in : op.inputs) {
            const GraphTensor& t = stack.tensors[static_cast<size_t>(in.tensor)];
            int& id = remap[static_cast<size_t>(in.tensor)];
            if (id < 0) {
                const bool inside = t.producer >= 0 && stack.ops[static_cast<size_t>(t.producer)].layer == layer;
                Require(!inside, where + ": op '" + op.name + "' reads '" + t.name + "' before it is produced");
                if (t.kind == TensorKind::Weight) {
                    id = gb.Weight(t.name, t.shape, t.elementBytes);
                } else {
                    Require(lg.input < 0, where + " reads two activations from outside ('" + inputName + "' and '" + t.name +
                                              "'); inter-op needs layers joined by one tensor");
                    id = gb.LayerInput(t.name, t.shape, t.elementBytes);
                    lg.input = id;
                    inputName = t.name;
                }
            }
            inputs.push_back(id);
        }
        remap[static_cast<size_t>(op.output.tensor)] = gb.Op(ArgsOf(op, std::move(inputs)));
    }
    Require(lg.input >= 0, where + " has no ops, or reads no activation");
    int output = -1;
    for (size_t t = 0; t < stack.tensors.size(); ++t) {
        const GraphTensor& tensor = stack.tensors[t];
        if (tensor.producer < 0 || stack.ops[static_cast<size_t>(tensor.producer)].layer != layer) continue;
        const bool leaves = std::any_of(tensor.consumers.begin(), tensor.consumers.end(),
                                        [&](int c) { return stack.ops[static_cast<size_t>(c)].layer != layer; }) ||
                            std::find(stack.outputs.begin(), stack.outputs.end(), static_cast<int>(t)) != stack.outputs.end();
        if (!leaves) continue;
        Require(output < 0, where + " hands two tensors to later layers; inter-op needs layers joined by one tensor");
        output = remap[t];
    }
    Require(output >= 0, where + " hands nothing to the next layer");
    lg.graph = gb.Finish({output});
    lg.graph.outputReplicated = stack.outputReplicated;
    lg.output = output;
    return lg;
}

namespace {

// The distinct layouts the op producing `tensor` can leave it in on `mesh`, replicated first.
std::vector<Layout> ProducedLayouts(const OpGraph& g, int tensor, const DeviceMesh& mesh)
{
    const GraphOp& op = g.ops[static_cast<size_t>(g.tensors[static_cast<size_t>(tensor)].producer)];
    std::vector<Layout> out{Layout{}};
    for (const OpStrategy& s : EnumerateStrategies(op, g, mesh))
        if (std::find(out.begin(), out.end(), s.output) == out.end()) out.push_back(s.output);
    return out;
}

// One layer's costs on one sub-mesh: its input arriving in ins[a], its output left in outs[b] by
// its producer, everything between at the optimum (the DP, with the producer eliminated last).
struct LayerTable {
    std::vector<Layout> ins, outs;
    std::vector<double> cost; // [a * outs + b]
};

LayerTable SolveLayerTable(const LayerGraph& lg, std::vector<Layout> ins, const DeviceMesh& sub, int* solves)
{
    LayerTable t{std::move(ins), ProducedLayouts(lg.graph, lg.output, sub), {}};
    t.cost.assign(t.ins.size() * t.outs.size(), kInf);
    const int producer = lg.graph.tensors[static_cast<size_t>(lg.output)].producer;
    for (size_t a = 0; a < t.ins.size(); ++a) {
        const IntraOpProblem p = BuildIntraOpProblem(lg.graph, sub, Boundary{{{lg.input, t.ins[a]}}, {}, {lg.output}});
        const std::vector<IntraOpSolution> best = SolveDpForEachStrategy(p, producer);
        ++*solves;
        for (size_t s = 0; s < best.size(); ++s) {
            const Layout& out = p.strategies[static_cast<size_t>(producer)][s].output;
            const size_t b = static_cast<size_t>(std::find(t.outs.begin(), t.outs.end(), out) - t.outs.begin());
            t.cost[a * t.outs.size() + b] = std::min(t.cost[a * t.outs.size() + b], best[s].costSeconds);
        }
    }
    return t;
}

std::string LayoutsKey(const std::vector<Layout>& ls)
{
    std::string k;
    for (const Layout& l : ls) k += std::to_string(l.axis[0]) + "," + std::to_string(l.axis[1]) + ";";
    return k;
}

} // namespace

StageCosts::StageCosts(const OpGraph& g, const DeviceMesh& mesh) : m_layers(g.layers), m_shapes(SubMeshShapes(mesh))
{
    Require(g.layers >= 1, "graph '" + g.name + "' is not a stack of layers (its ops carry no layer numbers); inter-op needs one");
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<LayerGraph> layers;
    for (int l = 0; l < m_layers; ++l) layers.push_back(ExtractLayer(g, l));
    const size_t stride = static_cast<size_t>(m_layers) + 1;
    for (const SubMesh& shape : m_shapes) {
        DeviceMesh sub = mesh;
        sub.rows = shape.rows;
        sub.cols = shape.cols;
        std::map<std::string, LayerTable> tables; // by layer signature and input layouts
        std::vector<const LayerTable*> perLayer;
        std::vector<Layout> ins = BoundaryLayouts(layers[0].graph.tensors[static_cast<size_t>(layers[0].input)].shape, sub);
        for (const LayerGraph& lg : layers) {
            auto [it, added] = tables.try_emplace(Signature(lg.graph) + "|" + LayoutsKey(ins));
            if (added) it->second = SolveLayerTable(lg, ins, sub, &m_solves);
            perLayer.push_back(&it->second);
            ins = it->second.outs;
        }
        std::vector<double> t(stride * stride, kInf);
        for (int first = 0; first < m_layers; ++first) {
            const LayerTable& head = *perLayer[static_cast<size_t>(first)];
            std::vector<double> v(head.ins.size(), kInf); // the stage's input arrives in any layout without partial sums
            for (size_t a = 0; a < v.size(); ++a)
                if (!head.ins[a].HasPartial()) v[a] = 0.0;
            for (int count = 1; first + count <= m_layers; ++count) {
                const LayerTable& m = *perLayer[static_cast<size_t>(first + count - 1)];
                std::vector<double> w(m.outs.size(), kInf);
                for (size_t a = 0; a < m.ins.size(); ++a)
                    for (size_t b = 0; b < m.outs.size(); ++b) w[b] = std::min(w[b], v[a] + m.cost[a * m.outs.size() + b]);
                v = w;
                const LayerGraph& lg = layers[static_cast<size_t>(first + count - 1)];
                double end = kInf;
                for (size_t b = 0; b < v.size(); ++b) {
                    if (first + count == m_layers) { // the stack's output leaves as the graph asks
                        end = std::min(end, v[b] + LeaveSeconds(lg.graph, lg.output, m.outs[b], sub));
                    } else if (!m.outs[b].HasPartial()) { // sent on to the next stage as it is
                        end = std::min(end, v[b]);
                    }
                }
                t[static_cast<size_t>(first) * stride + static_cast<size_t>(count)] = end;
            }
        }
        m_t.push_back(std::move(t));
    }
    m_solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double StageCosts::Seconds(size_t s, int first, int count) const
{
    return m_t[s][static_cast<size_t>(first) * (static_cast<size_t>(m_layers) + 1) + static_cast<size_t>(count)];
}

namespace {

void Evaluate(InterOpResult& r)
{
    double sum = 0.0, mx = 0.0;
    for (const PipelineStagePlan& s : r.stages) {
        sum += s.seconds;
        mx = std::max(mx, s.seconds);
    }
    r.maxStageSeconds = mx;
    r.stepSeconds = sum + (r.microBatches - 1) * mx;
}

} // namespace

InterOpResult SolveInterOp(const StageCosts& c, int devices, int microBatches)
{
    const auto t0 = std::chrono::steady_clock::now();
    const int L = c.Layers();
    std::vector<double> bounds;
    for (size_t s = 0; s < c.Shapes().size(); ++s)
        for (int i = 0; i < L; ++i)
            for (int n = 1; i + n <= L; ++n) bounds.push_back(c.Seconds(s, i, n));
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());

    struct Cell {
        double sum = kInf;
        int prevLayer = -1, prevDevices = -1, shape = -1;
    };
    const size_t D = static_cast<size_t>(devices);
    InterOpResult best;
    best.microBatches = microBatches;
    best.stepSeconds = kInf;
    std::vector<Cell> f((static_cast<size_t>(L) + 1) * (D + 1));
    auto at = [&](int l, int d) -> Cell& { return f[static_cast<size_t>(l) * (D + 1) + static_cast<size_t>(d)]; };
    for (double bound : bounds) {
        if ((microBatches - 1) * bound > best.stepSeconds) break; // no later bound can win
        std::fill(f.begin(), f.end(), Cell{});
        at(0, 0).sum = 0.0;
        for (int l = 0; l < L; ++l)
            for (int d = 0; d < devices; ++d) {
                if (at(l, d).sum == kInf) continue;
                for (size_t s = 0; s < c.Shapes().size(); ++s) {
                    const int nd = d + c.Shapes()[s].Devices();
                    if (nd > devices) continue;
                    for (int n = 1; l + n <= L; ++n) {
                        const double t = c.Seconds(s, l, n);
                        if (t > bound || at(l, d).sum + t >= at(l + n, nd).sum) continue;
                        at(l + n, nd) = Cell{at(l, d).sum + t, l, d, static_cast<int>(s)};
                    }
                }
            }
        if (at(L, devices).sum == kInf) continue;
        InterOpResult r;
        r.microBatches = microBatches;
        for (int l = L, d = devices; l > 0;) {
            const Cell& cell = at(l, d);
            r.stages.insert(r.stages.begin(), PipelineStagePlan{cell.prevLayer, l - cell.prevLayer, c.Shapes()[static_cast<size_t>(cell.shape)],
                                                                 c.Seconds(static_cast<size_t>(cell.shape), cell.prevLayer, l - cell.prevLayer)});
            l = cell.prevLayer;
            d = cell.prevDevices;
        }
        Evaluate(r);
        if (r.stepSeconds < best.stepSeconds) best = std::move(r);
    }
    Require(!best.stages.empty(), "no cut of the layers into stages uses all " + std::to_string(devices) + " devices");
    best.solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return best;
}

InterOpResult EnumerateInterOp(const StageCosts& c, int devices, int microBatches)
{
    const auto t0 = std::chrono::steady_clock::now();
    InterOpResult best;
    best.stepSeconds = kInf;
    InterOpResult cur;
    cur.microBatches = microBatches;
    std::function<void(int, int)> go = [&](int l, int d) {
        if (l == c.Layers()) {
            if (d != devices) return;
            Evaluate(cur);
            if (cur.stepSeconds < best.stepSeconds) best = cur;
            return;
        }
        for (size_t s = 0; s < c.Shapes().size(); ++s) {
            if (d + c.Shapes()[s].Devices() > devices) continue;
            for (int n = 1; l + n <= c.Layers(); ++n) {
                cur.stages.push_back(PipelineStagePlan{l, n, c.Shapes()[s], c.Seconds(s, l, n)});
                go(l + n, d + c.Shapes()[s].Devices());
                cur.stages.pop_back();
            }
        }
    };
    go(0, 0);
    Require(!best.stages.empty(), "no cut of the layers into stages uses all " + std::to_string(devices) + " devices");
    best.solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return best;
}

PipelineSimResult SimulateInterOp(const InterOpResult& r, const DeviceMesh& mesh, uint64_t activationBytes, double forwardFlopsPerLayer, bool buildTrace)
{
    PipelineSpec spec;
    spec.kind = ScheduleKind::OneFOneB;
    spec.stages = static_cast<int>(r.stages.size());
    spec.microBatches = r.microBatches;
    spec.forwardSec = r.maxStageSeconds / 3.0;
    spec.activationBytes = activationBytes;
    double layers = 0;
    for (const PipelineStagePlan& s : r.stages) {
        spec.stageSlowdown.push_back(r.maxStageSeconds > 0 ? s.seconds / r.maxStageSeconds : 1.0);
        layers += s.layers;
    }
    spec.forwardFlops = forwardFlopsPerLayer * layers / static_cast<double>(spec.stages);
    const CostParams& link = mesh.rows > 1 ? mesh.slow : mesh.fast;
    ClusterModel cluster;
    cluster.alphaSec = link.alphaSec;
    cluster.betaSecPerByte = link.betaSecPerByte;
    return SimulatePipeline(BuildSchedule(spec), cluster, buildTrace);
}

} // namespace paralens::core
