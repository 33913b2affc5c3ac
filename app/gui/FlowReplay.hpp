// What the flow view draws, computed from a Plan without re-deriving the algorithm: where each
// rank sits (a ring, a tree, a hypercube or a star, read off the Plan's transfers) and what each
// rank holds after every step (replaying the Plan's transfers on block-sized cells, like
// core/plan/Reference.cpp does on bytes). ImGui-free; pure functions; thread-safe.
#pragma once

#include "plan/Plan.hpp"

#include <cstdint>
#include <vector>

namespace paralens::app {

inline constexpr int kFlowMaxRanks = 64; // contributor sets are 64-bit masks

// One cell of a rank's buffer: a block of the vector (or of the all-to-all/send-recv output).
struct FlowCell {
    uint64_t contributors = 0; // ranks whose data is summed (or copied) into it; 0: nothing useful
    int32_t block = -1;        // the vector block it holds (-1: none)

    bool Holds() const { return contributors != 0; }
    int Count() const;         // number of contributors
    int Origin() const;        // lowest contributor (-1: none)
};

// The holdings after each step: Step(0) is before the first step, Step(k) after step k.
class FlowHoldings {
public:
    int Ranks() const { return m_ranks; }
    int CellsPerRank() const { return m_cells; }
    bool HasOutputRow() const { return m_outputRow; } // all-to-all, send/recv: cells [p, 2p) are the output
    int Steps() const { return m_steps; }
    const FlowCell& At(int step, int rank, int cell) const
    {
        return m_state[(static_cast<size_t>(step) * m_ranks + rank) * m_cells + cell];
    }

private:
    friend FlowHoldings ReplayHoldings(const core::Plan& plan);
    int m_ranks = 0;
    int m_cells = 0;
    int m_steps = 0;
    bool m_outputRow = false;
    std::vector<FlowCell> m_state; // (steps + 1) x ranks x cells
};

// Throws Error when the plan has more than kFlowMaxRanks ranks.
FlowHoldings ReplayHoldings(const core::Plan& plan);

enum class FlowLayoutKind { Single, Ring, Tree, Hypercube, Star };

struct FlowPoint {
    float x = 0;
    float y = 0;
};

struct FlowLayout {
    FlowLayoutKind kind = FlowLayoutKind::Ring;
    std::vector<FlowPoint> pos;             // per rank, in [0, 1] x [0, 1] (aspect kept: see width/height)
    float width = 1.0f;                     // extent of the layout, for isotropic scaling
    float height = 1.0f;
    std::vector<std::pair<int, int>> edges; // every pair of ranks the Plan ever connects (a < b)
    int ranksPerNode = 0; // > 0: the ranks sit in nodes of this many consecutive ranks, apart on the circle
    bool facing = false;  // two nodes facing each other (node 1 the mirror image of node 0)
};

// Ring and pairwise/direct plans on a circle (rank 0 on top, clockwise); tree plans as the tree
// their transfers form, rooted at the root; halving-doubling and recursive doubling on a
// hypercube (p a power of two up to 16, else a circle); naive plans as a star around the root.
// On a circle, a spec placed on several nodes (ranksPerNode dividing p) keeps each node's ranks
// together with a gap between nodes (layout.ranksPerNode set: the view draws the nodes); the two
// nodes of a hierarchical algorithm face each other, their rails level.
FlowLayout LayoutRanks(const core::Plan& plan);

} // namespace paralens::app
