// Every collective x algorithm executed on the CPU on real arrays, against its definition.
#include "common/Error.hpp"
#include "plan/Plan.hpp"
#include "plan/Reference.hpp"
#include "plan/SharedMemoryCost.hpp"

#include <catch2/catch.hpp>

using namespace paralens;
using namespace paralens::core;

namespace {

std::string Label(const CollectiveSpec& s)
{
    return std::string(Name(s.collective)) + "/" + std::string(Name(s.algorithm)) + " p=" + std::to_string(s.ranks) +
           " n=" + std::to_string(s.bytes) + " root=" + std::to_string(s.root) + " align=" + std::to_string(s.alignBytes);
}

} // namespace

TEST_CASE("every plan computes its collective on the CPU, p = 1..17, several sizes and roots", "[core][plan]")
{
    int checked = 0;
    for (Collective c : AllCollectives()) {
        for (Algorithm a : AlgorithmsFor(c)) {
            for (int p = 1; p <= 17; ++p) {
                for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{7}, static_cast<uint64_t>(p) - 1, uint64_t{64},
                                   uint64_t{1000}, uint64_t{4099}}) {
                    for (int root : {0, p / 2, p - 1}) {
                        if (!HasRoot(c) && root != 0) continue;
                        CollectiveSpec spec{c, a, p, n, root, 1};
                        Plan plan = BuildPlan(spec);
                        ReferenceResult r = CheckPlanOnCpu(plan, 1234 + static_cast<uint64_t>(p));
                        INFO(Label(spec));
                        REQUIRE(r.ok);
                        ++checked;
                    }
                }
            }
        }
    }
    CHECK(checked > 4000);
}

TEST_CASE("plans split on element boundaries", "[core][plan]")
{
    for (Collective c : AllCollectives()) {
        for (Algorithm a : AlgorithmsFor(c)) {
            CollectiveSpec spec{c, a, 6, 4 * 1001, 0, 4};
            Plan plan = BuildPlan(spec);
            for (const Segment& s : plan.segments) {
                CHECK(s.srcOffset % 4 == 0);
                CHECK(s.dstOffset % 4 == 0);
                CHECK(s.bytes % 4 == 0);
            }
            INFO(Label(spec));
            CHECK(CheckPlanOnCpu(plan, 7).ok);
        }
    }
}

TEST_CASE("the reference check catches a broken plan", "[core][plan]")
{
    Plan plan = BuildPlan({Collective::AllReduce, Algorithm::Ring, 5, 1000, 0, 1});
    REQUIRE(CheckPlanOnCpu(plan).ok);

    Plan dropped = plan; // lose one message of the last step
    dropped.steps.back().transferCount -= 1;
    ReferenceResult r = CheckPlanOnCpu(dropped);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.message, Catch::Contains("allreduce") && Catch::Contains("expected"));

    Plan doubled = plan; // a reduce applied twice
    doubled.transfers[0].op = TransferOp::Reduce;
    doubled.steps.push_back(doubled.steps.front());
    CHECK_FALSE(CheckPlanOnCpu(doubled).ok);
}

TEST_CASE("plans have the lectures' step and message counts", "[core][plan]")
{
    const int p = 8;
    auto steps = [&](Collective c, Algorithm a) { return BuildPlan({c, a, p, 1 << 20, 0, 1}).steps.size(); };
    auto messages = [&](Collective c, Algorithm a) { return BuildPlan({c, a, p, 1 << 20, 0, 1}).transfers.size(); };
    CHECK(steps(Collective::AllReduce, Algorithm::Ring) == 2 * (p - 1));
    CHECK(messages(Collective::AllReduce, Algorithm::Ring) == static_cast<size_t>(2 * (p - 1) * p));
    CHECK(steps(Collective::Broadcast, Algorithm::Tree) == 3);
    CHECK(messages(Collective::Broadcast, Algorithm::Tree) == static_cast<size_t>(p - 1));
    CHECK(steps(Collective::AllReduce, Algorithm::HalvingDoubling) == 6);
    CHECK(steps(Collective::AllReduce, Algorithm::RecursiveDoubling) == 3);
    CHECK(messages(Collective::AllReduce, Algorithm::Naive) == static_cast<size_t>(2 * (p - 1)));
    CHECK(steps(Collective::AllToAll, Algorithm::Pairwise) == static_cast<size_t>(p)); // local copy + p-1 exchanges
    // Ring allreduce puts 2(p-1)/p of the vector on the wire per rank.
    Plan ring = BuildPlan({Collective::AllReduce, Algorithm::Ring, p, 1 << 20, 0, 1});
    CHECK(ring.WireBytes() == static_cast<uint64_t>(2 * (p - 1)) * (1 << 20));
    // Non-power-of-two halving-doubling folds the extra ranks in and out.
    Plan hd = BuildPlan({Collective::AllReduce, Algorithm::HalvingDoubling, 6, 600, 0, 1});
    CHECK(hd.phases.front() == "fold-in");
    CHECK(hd.steps.size() == 2 + 2 * 2);
}

TEST_CASE("blocks split like MPI: the first n % p blocks one element larger", "[core][plan]")
{
    auto off = SplitIntoBlocks(10, 4, 1);
    CHECK(off == std::vector<uint64_t>{0, 3, 6, 8, 10});
    auto off4 = SplitIntoBlocks(40, 3, 4);
    CHECK(off4 == std::vector<uint64_t>{0, 16, 28, 40});
}

TEST_CASE("bad plan requests are refused with what is accepted", "[core][plan]")
{
    CHECK_THROWS_WITH(BuildPlan({Collective::AllReduce, Algorithm::Ring, 0, 8, 0, 1}), Catch::Contains("at least 1"));
    CHECK_THROWS_WITH(BuildPlan({Collective::AllToAll, Algorithm::Ring, 4, 8, 0, 1}), Catch::Contains("pairwise"));
    CHECK_THROWS_WITH(BuildPlan({Collective::Broadcast, Algorithm::Tree, 4, 8, 4, 1}), Catch::Contains("root"));
    CHECK_THROWS_WITH(BuildPlan({Collective::AllReduce, Algorithm::Ring, 4, 10, 0, 4}), Catch::Contains("4-byte"));
}

TEST_CASE("expected regions state each collective's result for other executors", "[core][plan]")
{
    Plan ag = BuildPlan({Collective::AllGather, Algorithm::Ring, 3, 30, 0, 1});
    auto regions = ExpectedRegions(ag, 1);
    REQUIRE(regions.size() == 3);
    CHECK(regions[2].kind == ExpectedRegion::Kind::CopyOf);
    CHECK(regions[2].sourceRank == 2);
    CHECK(regions[2].offset == 20);
    CHECK(ExpectedValue(regions[2], 4, 3, 9) == ReferenceValue(9, 2, 24));
    Plan ar = BuildPlan({Collective::AllReduce, Algorithm::Tree, 3, 30, 0, 1});
    auto sum = ExpectedRegions(ar, 0).at(0);
    CHECK(sum.kind == ExpectedRegion::Kind::SumOfAll);
    CHECK(ExpectedValue(sum, 7, 3, 9) == ReferenceValue(9, 0, 7) + ReferenceValue(9, 1, 7) + ReferenceValue(9, 2, 7));
    CHECK(ExpectedRegions(BuildPlan({Collective::Reduce, Algorithm::Tree, 3, 30, 2, 1}), 0).empty()); // only the root
}

TEST_CASE("virtual ranks share one memory: a step costs alpha plus its bytes read and written", "[core][plan]")
{
    // Ring allreduce, p = 4, n = 4 MiB: 3 reduce-scatter steps of 4 reductions of n/4 (3 bytes of
    // traffic each: two operands read, the sum written), then 3 allgather steps of 4 copies of n/4
    // (2 bytes each): 15 n bytes through memory, and 6 alphas.
    const uint64_t n = 4 << 20;
    const Plan ring = BuildPlan({Collective::AllReduce, Algorithm::Ring, 4, n, 0, 1});
    const SharedMemoryCost c = SharedMemoryPlanCost(ring, 1e-5, 1e12);
    CHECK(c.memoryBytes == 15 * n);
    CHECK(c.seconds == Approx(6 * 1e-5 + 15.0 * static_cast<double>(n) / 1e12));
    // A binomial-tree broadcast moves the whole vector p-1 times, one step per level, whatever
    // the number of copies a step holds: the steps differ in bytes, not in time per byte.
    const Plan tree = BuildPlan({Collective::Broadcast, Algorithm::Tree, 8, n, 0, 1});
    const SharedMemoryCost t = SharedMemoryPlanCost(tree, 0.0, 1e12);
    CHECK(t.memoryBytes == 7 * 2 * n);
    // All-to-all's local copy costs nothing, as in the alpha-beta model.
    const Plan a2a = BuildPlan({Collective::AllToAll, Algorithm::Pairwise, 4, n, 0, 1});
    CHECK(SharedMemoryPlanCost(a2a, 0.0, 1e12).memoryBytes == 3 * 4 * (n / 4) * 2);
    CHECK(SharedMemoryPlanCost(ring, 1e-5, 0.0).seconds == Approx(6 * 1e-5));
}
