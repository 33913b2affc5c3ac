#include "FlowReplay.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <queue>

namespace paralens::app {

int FlowCell::Count() const { return std::popcount(contributors); }
int FlowCell::Origin() const { return contributors ? std::countr_zero(contributors) : -1; }

namespace {

// The cells of a rank's buffer as byte ranges: the p blocks, then (for 2n buffers) p output cells.
std::vector<uint64_t> CellOffsets(const core::Plan& plan, bool outputRow)
{
    std::vector<uint64_t> offsets = plan.blockOffsets;
    if (outputRow) {
        const uint64_t n = plan.spec.bytes;
        for (int i = 1; i <= plan.Ranks(); ++i) offsets.push_back(n + plan.blockOffsets[static_cast<size_t>(i)]);
    }
    return offsets;
}

// The cell holding byte `offset` (offsets: cell boundaries, last = buffer end).
int CellAt(const std::vector<uint64_t>& offsets, uint64_t offset)
{
    auto it = std::upper_bound(offsets.begin(), offsets.end(), offset);
    int cell = static_cast<int>(it - offsets.begin()) - 1;
    return std::clamp(cell, 0, static_cast<int>(offsets.size()) - 2);
}

void InitialState(const core::Plan& plan, int cells, FlowCell* state)
{
    const int p = plan.Ranks();
    const int root = plan.spec.root;
    for (int r = 0; r < p; ++r)
        for (int b = 0; b < cells; ++b) {
            FlowCell& c = state[static_cast<size_t>(r) * cells + b];
            bool holds = false;
            switch (plan.spec.collective) {
            case core::Collective::Broadcast:
            case core::Collective::Scatter: holds = r == root && b < p; break;
            case core::Collective::Gather:
            case core::Collective::AllGather: holds = b == r; break;
            default: holds = b < p; break; // reductions, all-to-all and send/recv inputs
            }
            if (holds) {
                c.contributors = uint64_t{1} << r;
                c.block = b;
            }
        }
}

} // namespace

FlowHoldings ReplayHoldings(const core::Plan& plan)
{
    const int p = plan.Ranks();
    Require(p <= kFlowMaxRanks, "the flow view draws up to " + std::to_string(kFlowMaxRanks) + " ranks (this plan has " +
                                    std::to_string(p) + ")");
    FlowHoldings h;
    h.m_ranks = p;
    h.m_outputRow = plan.bufferBytes > plan.spec.bytes && plan.spec.bytes > 0;
    h.m_cells = h.m_outputRow ? 2 * p : p;
    h.m_steps = static_cast<int>(plan.steps.size());
    const size_t perStep = static_cast<size_t>(p) * h.m_cells;
    h.m_state.resize(perStep * (plan.steps.size() + 1));
    InitialState(plan, h.m_cells, h.m_state.data());
    const std::vector<uint64_t> offsets = CellOffsets(plan, h.m_outputRow);
    for (size_t k = 0; k < plan.steps.size(); ++k) {
        const FlowCell* before = h.m_state.data() + perStep * k;
        FlowCell* after = h.m_state.data() + perStep * (k + 1);
        std::copy(before, before + perStep, after);
        for (const core::Transfer& t : plan.TransfersOf(plan.steps[k])) {
            for (const core::Segment& s : plan.SegmentsOf(t)) {
                if (s.bytes == 0) continue;
                // Every destination cell the segment touches takes the source cell at the same
                // relative position.
                const int first = CellAt(offsets, s.dstOffset), last = CellAt(offsets, s.dstOffset + s.bytes - 1);
                for (int cell = first; cell <= last; ++cell) {
                    const uint64_t dstStart = std::max(offsets[static_cast<size_t>(cell)], s.dstOffset);
                    const int srcCell = CellAt(offsets, s.srcOffset + (dstStart - s.dstOffset));
                    const FlowCell& src = before[static_cast<size_t>(t.src) * h.m_cells + srcCell];
                    FlowCell& dst = after[static_cast<size_t>(t.dst) * h.m_cells + cell];
                    if (t.op == core::TransferOp::Reduce) {
                        dst.contributors |= src.contributors;
                        if (dst.block < 0) dst.block = src.block;
                    } else {
                        dst = src;
                    }
                }
            }
        }
    }
    return h;
}

namespace {

std::vector<std::pair<int, int>> Edges(const core::Plan& plan)
{
    std::vector<std::pair<int, int>> edges;
    for (const core::Transfer& t : plan.transfers)
        if (t.src != t.dst) edges.emplace_back(std::min(t.src, t.dst), std::max(t.src, t.dst));
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    return edges;
}

void Circle(FlowLayout& l, int p, int skip = -1)
{
    const int onCircle = skip >= 0 ? p - 1 : p;
    int i = 0;
    for (int r = 0; r < p; ++r) {
        if (r == skip) {
            l.pos[static_cast<size_t>(r)] = {0.5f, 0.5f};
            continue;
        }
        const double a = 2 * std::numbers::pi * i++ / std::max(onCircle, 1);
        l.pos[static_cast<size_t>(r)] = {static_cast<float>(0.5 + 0.5 * std::sin(a)), static_cast<float>(0.5 - 0.5 * std::cos(a))};
    }
}

// The circle with a gap of kNodeGap rank spacings after each node of g consecutive ranks. Two
// nodes of a hierarchical algorithm face each other instead, node 0 on the right and node 1 its
// mirror image on the left, so that the rails (GPU j of both nodes) are level with each other.
void CircleOfNodes(FlowLayout& l, int p, int g, bool mirrorTwo)
{
    constexpr double kNodeGap = 0.8;
    const int nodes = p / g;
    auto put = [&](int r, double a, bool left) {
        const double x = 0.5 * std::sin(a);
        l.pos[static_cast<size_t>(r)] = {static_cast<float>(0.5 + (left ? -x : x)), static_cast<float>(0.5 - 0.5 * std::cos(a))};
    };
    if (mirrorTwo && nodes == 2) {
        constexpr double kFacingGap = 1.6; // between node 0's first rank and its mirror (and last and last)
        for (int r = 0; r < p; ++r) put(r, std::numbers::pi * (r % g + kFacingGap / 2) / (g - 1 + kFacingGap), r >= g);
        l.facing = true;
    } else {
        const double slots = p + kNodeGap * nodes;
        for (int r = 0; r < p; ++r) put(r, 2 * std::numbers::pi * (r + kNodeGap * (r / g)) / slots, false); // rank 0 on top
    }
    l.ranksPerNode = g;
}

// Breadth-first from the root over the Plan's edges: depth = level, x = leaf order (parents
// centred over their children).
void Tree(FlowLayout& l, int p, int root)
{
    std::vector<std::vector<int>> adj(static_cast<size_t>(p)), children(static_cast<size_t>(p));
    for (auto [a, b] : l.edges) {
        adj[static_cast<size_t>(a)].push_back(b);
        adj[static_cast<size_t>(b)].push_back(a);
    }
    std::vector<int> depth(static_cast<size_t>(p), -1);
    std::queue<int> q;
    depth[static_cast<size_t>(root)] = 0;
    q.push(root);
    int maxDepth = 0;
    while (!q.empty()) {
        const int u = q.front();
        q.pop();
        for (int v : adj[static_cast<size_t>(u)])
            if (depth[static_cast<size_t>(v)] < 0) {
                depth[static_cast<size_t>(v)] = depth[static_cast<size_t>(u)] + 1;
                maxDepth = std::max(maxDepth, depth[static_cast<size_t>(v)]);
                children[static_cast<size_t>(u)].push_back(v);
                q.push(v);
            }
    }
    std::vector<float> x(static_cast<size_t>(p), 0.0f);
    float nextLeaf = 0;
    auto place = [&](auto&& self, int u) -> void {
        auto& kids = children[static_cast<size_t>(u)];
        std::sort(kids.begin(), kids.end());
        if (kids.empty()) {
            x[static_cast<size_t>(u)] = nextLeaf++;
            return;
        }
        for (int v : kids) self(self, v);
        x[static_cast<size_t>(u)] = (x[static_cast<size_t>(kids.front())] + x[static_cast<size_t>(kids.back())]) / 2;
    };
    place(place, root);
    // Ranks the Plan never connects to the root (none in a valid tree plan) go on a last level.
    bool unreached = false;
    for (int r = 0; r < p; ++r)
        if (depth[static_cast<size_t>(r)] < 0) {
            depth[static_cast<size_t>(r)] = maxDepth + 1;
            x[static_cast<size_t>(r)] = nextLeaf++;
            unreached = true;
        }
    const int levels = maxDepth + (unreached ? 1 : 0);
    const float leaves = std::max(nextLeaf - 1, 1.0f);
    for (int r = 0; r < p; ++r)
        l.pos[static_cast<size_t>(r)] = {x[static_cast<size_t>(r)] / leaves,
                                         levels > 0 ? static_cast<float>(depth[static_cast<size_t>(r)]) / levels : 0.5f};
    l.width = 1.6f;
}

// Bit k of the rank moves it along one axis of a (projected) hypercube.
void Hypercube(FlowLayout& l, int p)
{
    const FlowPoint axes[4] = {{1.0f, 0.0f}, {0.0f, 1.0f}, {0.45f, 0.32f}, {2.0f, 0.0f}};
    float maxX = 0, maxY = 0;
    for (int r = 0; r < p; ++r) {
        FlowPoint pt;
        for (int k = 0; k < 4; ++k)
            if (r & (1 << k)) {
                pt.x += axes[k].x;
                pt.y += axes[k].y;
            }
        l.pos[static_cast<size_t>(r)] = pt;
        maxX = std::max(maxX, pt.x);
        maxY = std::max(maxY, pt.y);
    }
    for (FlowPoint& pt : l.pos) {
        pt.x = maxX > 0 ? pt.x / maxX : 0.5f;
        pt.y = maxY > 0 ? pt.y / maxY : 0.5f;
    }
    l.width = std::max(maxX, 0.5f);
    l.height = std::max(maxY, 0.5f);
}

} // namespace

FlowLayout LayoutRanks(const core::Plan& plan)
{
    const int p = plan.Ranks();
    FlowLayout l;
    l.pos.resize(static_cast<size_t>(p));
    l.edges = Edges(plan);
    if (p == 1) {
        l.kind = FlowLayoutKind::Single;
        l.pos[0] = {0.5f, 0.5f};
        return l;
    }
    switch (plan.spec.algorithm) {
    case core::Algorithm::Tree:
        l.kind = FlowLayoutKind::Tree;
        Tree(l, p, plan.spec.root);
        return l;
    case core::Algorithm::HalvingDoubling:
    case core::Algorithm::RecursiveDoubling:
        if (std::has_single_bit(static_cast<unsigned>(p)) && p <= 16) {
            l.kind = FlowLayoutKind::Hypercube;
            Hypercube(l, p);
            return l;
        }
        break;
    case core::Algorithm::Naive:
        l.kind = FlowLayoutKind::Star;
        Circle(l, p, plan.spec.root);
        return l;
    default: break;
    }
    l.kind = FlowLayoutKind::Ring;
    const int g = plan.spec.ranksPerNode;
    const bool hierarchical = plan.spec.algorithm == core::Algorithm::Hierarchical || plan.spec.algorithm == core::Algorithm::HierarchicalTree;
    if (g > 0 && g < p && p % g == 0) CircleOfNodes(l, p, g, hierarchical);
    else Circle(l, p);
    return l;
}

} // namespace paralens::app
