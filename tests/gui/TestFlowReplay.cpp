// The flow view's model (app/gui/FlowReplay.hpp): holdings replayed from Plans and rank layouts.
#include "FlowReplay.hpp"

#include "plan/Plan.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace paralens;
using namespace paralens::app;

namespace {

core::Plan MakePlan(core::Collective c, core::Algorithm a, int p, uint64_t bytes = 1 << 16, int root = 0)
{
    return core::BuildPlan({c, a, p, bytes, root, 1});
}

uint64_t All(int p) { return p == 64 ? ~uint64_t{0} : (uint64_t{1} << p) - 1; }

} // namespace

TEST_CASE("ring allreduce: reduce-scatter leaves one full block per rank, allgather spreads them", "[gui]")
{
    const int p = 8;
    const core::Plan plan = MakePlan(core::Collective::AllReduce, core::Algorithm::Ring, p);
    const FlowHoldings h = ReplayHoldings(plan);
    REQUIRE(h.Steps() == 2 * (p - 1));
    REQUIRE(h.CellsPerRank() == p);
    // Before: every rank holds its own contribution to every block.
    for (int r = 0; r < p; ++r)
        for (int b = 0; b < p; ++b) CHECK(h.At(0, r, b).contributors == (uint64_t{1} << r));
    // After p-1 steps each rank holds exactly one fully reduced block, and the blocks differ.
    uint64_t fullBlocks = 0;
    for (int r = 0; r < p; ++r) {
        int full = 0;
        for (int b = 0; b < p; ++b)
            if (h.At(p - 1, r, b).contributors == All(p)) {
                ++full;
                fullBlocks |= uint64_t{1} << b;
            }
        CHECK(full == 1);
    }
    CHECK(fullBlocks == All(p));
    // After the last step every rank holds the sum of all ranks in every block.
    for (int r = 0; r < p; ++r)
        for (int b = 0; b < p; ++b) {
            CHECK(h.At(h.Steps(), r, b).contributors == All(p));
            CHECK(h.At(h.Steps(), r, b).block == b);
        }
}

TEST_CASE("rooted and gathering collectives end as the lectures' after-figures", "[gui]")
{
    const int p = 4;
    SECTION("broadcast: every rank holds the root's vector")
    {
        const FlowHoldings h = ReplayHoldings(MakePlan(core::Collective::Broadcast, core::Algorithm::Tree, p, 1 << 12, 2));
        for (int r = 0; r < p; ++r)
            for (int b = 0; b < p; ++b) {
                CHECK(h.At(0, r, b).Holds() == (r == 2));
                CHECK(h.At(h.Steps(), r, b).contributors == (uint64_t{1} << 2));
            }
    }
    SECTION("allgather: every rank holds block b from rank b")
    {
        const FlowHoldings h = ReplayHoldings(MakePlan(core::Collective::AllGather, core::Algorithm::Ring, p));
        for (int r = 0; r < p; ++r)
            for (int b = 0; b < p; ++b) CHECK(h.At(h.Steps(), r, b).contributors == (uint64_t{1} << b));
    }
    SECTION("reduce-scatter: rank r holds the full sum of block r")
    {
        const FlowHoldings h = ReplayHoldings(MakePlan(core::Collective::ReduceScatter, core::Algorithm::Ring, p));
        for (int r = 0; r < p; ++r) CHECK(h.At(h.Steps(), r, r).contributors == All(p));
    }
    SECTION("all-to-all: output cell i of rank j comes from rank i")
    {
        const FlowHoldings h = ReplayHoldings(MakePlan(core::Collective::AllToAll, core::Algorithm::Pairwise, p));
        REQUIRE(h.HasOutputRow());
        for (int j = 0; j < p; ++j)
            for (int i = 0; i < p; ++i) CHECK(h.At(h.Steps(), j, p + i).Origin() == i);
    }
}

TEST_CASE("layouts follow the plan: ring on a circle, tree from the root down, hypercube, star", "[gui]")
{
    const FlowLayout ring = LayoutRanks(MakePlan(core::Collective::AllReduce, core::Algorithm::Ring, 8));
    CHECK(ring.kind == FlowLayoutKind::Ring);
    CHECK(ring.pos[0].y == Approx(0.0f).margin(1e-6)); // rank 0 on top
    CHECK(ring.pos[2].x == Approx(1.0f).margin(1e-6)); // a quarter turn clockwise
    CHECK(ring.edges.size() == 8u);                     // the ring's neighbours only

    const FlowLayout tree = LayoutRanks(MakePlan(core::Collective::Broadcast, core::Algorithm::Tree, 8, 1 << 12, 3));
    CHECK(tree.kind == FlowLayoutKind::Tree);
    CHECK(tree.pos[3].y == Approx(0.0f));    // the root on top
    CHECK(tree.edges.size() == 7u);          // a spanning tree
    int levels[4] = {0, 0, 0, 0};
    for (const FlowPoint& pt : tree.pos) ++levels[static_cast<int>(pt.y * 3.0f + 0.5f)];
    // A binomial tree of 8 has C(3, k) ranks at depth k.
    CHECK(levels[0] == 1);
    CHECK(levels[1] == 3);
    CHECK(levels[2] == 3);
    CHECK(levels[3] == 1);

    const FlowLayout cube = LayoutRanks(MakePlan(core::Collective::AllReduce, core::Algorithm::HalvingDoubling, 8));
    CHECK(cube.kind == FlowLayoutKind::Hypercube);
    CHECK(cube.edges.size() == 12u);         // the edges of a cube

    const FlowLayout star = LayoutRanks(MakePlan(core::Collective::AllReduce, core::Algorithm::Naive, 6));
    CHECK(star.kind == FlowLayoutKind::Star);
    CHECK(star.pos[0].x == Approx(0.5f));
    CHECK(star.pos[0].y == Approx(0.5f));
}

TEST_CASE("ranks on nodes: each node's ranks together on the circle, a gap between nodes", "[gui][twolevel]")
{
    for (core::Algorithm a : {core::Algorithm::Hierarchical, core::Algorithm::HierarchicalTree, core::Algorithm::Ring}) {
        core::CollectiveSpec spec{core::Collective::AllReduce, a, 16, 1 << 16, 0, 1};
        spec.ranksPerNode = 4;
        const FlowLayout l = LayoutRanks(core::BuildPlan(spec));
        INFO(core::Name(a));
        CHECK(l.kind == FlowLayoutKind::Ring);
        CHECK(l.ranksPerNode == 4);
        CHECK_FALSE(l.facing); // four nodes: around the circle
        CHECK(l.pos[0].y == Approx(0.0f).margin(1e-6)); // rank 0 on top
        auto gap = [&](int r) { return std::hypot(l.pos[static_cast<size_t>(r + 1)].x - l.pos[static_cast<size_t>(r)].x,
                                                  l.pos[static_cast<size_t>(r + 1)].y - l.pos[static_cast<size_t>(r)].y); };
        for (int r = 0; r + 1 < 16; ++r) {
            if ((r + 1) % 4 == 0) CHECK(gap(r) > 1.5 * gap(0)); // the last rank of a node to the first of the next
            else CHECK(gap(r) == Approx(gap(0)).epsilon(1e-4));
        }
    }
    // Two nodes of a hierarchical algorithm: mirror images, GPU j of each level with the other.
    core::CollectiveSpec two{core::Collective::AllReduce, core::Algorithm::Hierarchical, 16, 1 << 16, 0, 1};
    two.ranksPerNode = 8;
    const FlowLayout facing = LayoutRanks(core::BuildPlan(two));
    CHECK(facing.ranksPerNode == 8);
    CHECK(facing.facing);
    for (int j = 0; j < 8; ++j) {
        const FlowPoint a = facing.pos[static_cast<size_t>(j)], b = facing.pos[static_cast<size_t>(8 + j)];
        CHECK(a.y == Approx(b.y));
        CHECK(a.x + b.x == Approx(1.0f));
        CHECK(a.x > 0.5f);
        if (j > 0) CHECK(a.y > facing.pos[static_cast<size_t>(j - 1)].y); // top to bottom
    }
    core::CollectiveSpec uneven{core::Collective::AllReduce, core::Algorithm::Ring, 6, 1 << 12, 0, 1};
    uneven.ranksPerNode = 4; // not whole nodes: the plain circle
    CHECK(LayoutRanks(core::BuildPlan(uneven)).ranksPerNode == 0);
    uneven.ranksPerNode = 6; // one node
    CHECK(LayoutRanks(core::BuildPlan(uneven)).ranksPerNode == 0);
}

TEST_CASE("more ranks than the flow view draws is an error naming the limit", "[gui]")
{
    CHECK_THROWS_WITH(ReplayHoldings(MakePlan(core::Collective::AllReduce, core::Algorithm::Ring, 65)),
                      Catch::Contains("up to 64 ranks"));
}
