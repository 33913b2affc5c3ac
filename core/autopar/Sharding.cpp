#include "autopar/Sharding.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace paralens::core {

std::string DeviceMesh::Text() const { return std::to_string(rows) + "x" + std::to_string(cols); }

DeviceMesh ParseMeshShape(const std::string& text, const std::string& option)
{
    DeviceMesh m;
    const std::string bad = option + " must be P (a 1-D mesh) or RxC (R rows of C devices), such as 8 or 2x4; got '" + text + "'";
    const size_t x = text.find('x');
    try {
        size_t used = 0;
        if (x == std::string::npos) {
            m.cols = std::stoi(text, &used);
            Require(used == text.size(), bad);
        } else {
            m.rows = std::stoi(text.substr(0, x), &used);
            Require(used == x, bad);
            m.cols = std::stoi(text.substr(x + 1), &used);
            Require(used == text.size() - x - 1, bad);
        }
    } catch (const std::logic_error&) {
        throw Error(bad);
    }
    Require(m.rows >= 1 && m.cols >= 1 && m.Devices() <= 4096, option + " must have 1 to 4096 devices; got '" + text + "'");
    return m;
}

std::string LayoutText(const Layout& l, const DeviceMesh& mesh)
{
    auto one = [](int8_t a) {
        if (a == kReplicated) return std::string("R");
        if (a == kPartial) return std::string("P");
        std::string s = "S"; // appended, not "S" + to_string: GCC 12 warns falsely (-Wrestrict) on the latter
        s += std::to_string(a);
        return s;
    };
    if (mesh.rows == 1) return one(l.axis[1]);
    if (mesh.cols == 1) return one(l.axis[0]);
    return one(l.axis[0]) + "x" + one(l.axis[1]);
}

std::string StrategyText(const GraphOp& op, const OpStrategy& s, const DeviceMesh& mesh)
{
    auto one = [&](int8_t loop) { return loop < 0 ? std::string("-") : op.loops[static_cast<size_t>(loop)].name; };
    if (s.loop[0] < 0 && s.loop[1] < 0) return "replicated";
    if (mesh.rows == 1) return "split " + one(s.loop[1]);
    if (mesh.cols == 1) return "split " + one(s.loop[0]);
    return "split " + one(s.loop[0]) + " x " + one(s.loop[1]);
}

double CollectiveSeconds(Collective c, int ranks, uint64_t bytes, const CostParams& link, Algorithm* chosen)
{
    double best = std::numeric_limits<double>::infinity();
    for (Algorithm a : AlgorithmsFor(c)) {
        const double t = PredictSeconds(CollectiveSpec{c, a, ranks, bytes, 0, 1}, link).seconds;
        if (t < best) {
            best = t;
            if (chosen) *chosen = a;
        }
    }
    return best;
}

double ConvertSeconds(const Layout& from, const Layout& to, uint64_t bytes, const DeviceMesh& mesh, std::vector<CommItem>* items)
{
    Layout cur = from;
    double total = 0.0;
    for (int a = 0; a < 2; ++a) {
        const int8_t f = cur.axis[a];
        const int8_t t = to.axis[a];
        const int m = mesh.AxisSize(a);
        cur.axis[a] = t;
        if (f == t || m == 1 || t == kPartial || f == kReplicated) continue; // same, trivial, or a free slice
        const int other = 1 - a;
        const uint64_t shardsOther = cur.axis[other] >= 0 ? static_cast<uint64_t>(mesh.AxisSize(other)) : 1;
        uint64_t n = bytes / shardsOther; // the group's whole vector
        Collective c = Collective::AllGather;
        if (f == kPartial) {
            c = t == kReplicated ? Collective::AllReduce : Collective::ReduceScatter;
        } else if (t != kReplicated) {
            c = Collective::AllToAll;
            n /= static_cast<uint64_t>(m); // pairwise: each rank's own vector
        }
        CommItem item;
        item.collective = c;
        item.axis = a;
        item.ranks = m;
        item.bytes = n;
        item.seconds = CollectiveSeconds(c, m, n, mesh.AxisLink(a), &item.algorithm);
        total += item.seconds;
        if (items) items->push_back(item);
    }
    return total;
}

namespace {

int8_t DimOf(const OpOperand& operand, int8_t loop)
{
    for (size_t d = 0; d < operand.loops.size(); ++d)
        if (operand.loops[d] == loop) return static_cast<int8_t>(d);
    return -1;
}

OpStrategy MakeStrategy(const GraphOp& op, std::array<int8_t, 2> loops, const DeviceMesh& mesh)
{
    OpStrategy s;
    s.loop = loops;
    double split = 1.0;
    for (int a = 0; a < 2; ++a)
        if (loops[a] >= 0) split *= mesh.AxisSize(a);
    for (const OpOperand& in : op.inputs) {
        Layout l, g;
        for (int a = 0; a < 2; ++a) {
            if (loops[a] < 0) continue;
            const int8_t d = DimOf(in, loops[a]);
            l.axis[a] = d >= 0 ? d : kReplicated;
            g.axis[a] = d >= 0 ? d : kPartial; // a replicated input's gradient sums over the split loop
        }
        s.inputs.push_back(l);
        s.inputGrads.push_back(g);
    }
    for (int a = 0; a < 2; ++a) {
        if (loops[a] < 0) continue;
        const int8_t d = DimOf(op.output, loops[a]);
        s.output.axis[a] = d >= 0 ? d : kPartial;
    }
    s.computeSeconds = ComputeSecondsOf(op, split, mesh);
    return s;
}

} // namespace

double ComputeSecondsOf(const GraphOp& op, double split, const DeviceMesh& mesh)
{
    const double flops = 3.0 * op.ForwardFlops() / split; // forward + backward (2x)
    return mesh.peakFlops > 0 && mesh.efficiency > 0 ? flops / (mesh.peakFlops * mesh.efficiency) : 0.0;
}

std::vector<OpStrategy> EnumerateStrategies(const GraphOp& op, const OpGraph& /*g*/, const DeviceMesh& mesh)
{
    std::vector<OpStrategy> out;
    auto choices = [&](int axis) {
        std::vector<int8_t> c{-1};
        const int m = mesh.AxisSize(axis);
        if (m == 1) return c;
        for (size_t l = 0; l < op.loops.size(); ++l)
            if (op.loops[l].splittable && op.loops[l].size % m == 0) c.push_back(static_cast<int8_t>(l));
        return c;
    };
    for (int8_t l0 : choices(0)) {
        for (int8_t l1 : choices(1)) {
            if (l0 >= 0 && l0 == l1 && op.loops[static_cast<size_t>(l0)].size % mesh.Devices() != 0) continue;
            out.push_back(MakeStrategy(op, {l0, l1}, mesh));
        }
    }
    return out;
}

} // namespace paralens::core
