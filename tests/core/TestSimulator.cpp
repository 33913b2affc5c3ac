// The simulator against the closed forms, and the shape of the Trace it produces.
#include "common/Error.hpp"
#include "model/CostModel.hpp"
#include "plan/Plan.hpp"
#include "sim/Simulator.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <memory>

using namespace paralens;
using namespace paralens::core;

namespace {

double Rel(double x, double y) { return std::fabs(x - y) / std::max(std::fabs(y), 1e-300); }

double SimSeconds(const CollectiveSpec& s, const ClusterModel& m) { return Simulate(BuildPlan(s), m, {false}).seconds; }

std::string Label(const CollectiveSpec& s)
{
    return std::string(Name(s.collective)) + "/" + std::string(Name(s.algorithm)) + " p=" + std::to_string(s.ranks) +
           " n=" + std::to_string(s.bytes) + " root=" + std::to_string(s.root);
}

} // namespace

TEST_CASE("simulated time equals the lectures' formula for p in {2,4,8,16,64}", "[sim]")
{
    const ClusterModel models[] = {ClusterModel::FromUnits(5, 100, 0), ClusterModel::FromUnits(2, 25, 40),
                                   ClusterModel::FromUnits(0, 400, 0), ClusterModel::FromUnits(50, 10, 5)};
    for (const ClusterModel& m : models) {
        const CostParams k{m.alphaSec, m.betaSecPerByte, m.gammaSecPerByte};
        for (int p : {2, 4, 8, 16, 64}) {
            for (Collective c : AllCollectives()) {
                for (Algorithm a : AlgorithmsFor(c)) {
                    const uint64_t n = static_cast<uint64_t>(p) * 65536;
                    CollectiveSpec s{c, a, p, n, HasRoot(c) ? p / 2 : 0, 1};
                    INFO(Label(s));
                    CHECK(Rel(SimSeconds(s, m), LectureSeconds(c, a, p, static_cast<double>(n), k)) < 1e-9);
                }
            }
        }
    }
}

TEST_CASE("simulated time equals the generalised formula for any p and uneven n", "[sim]")
{
    const ClusterModel models[] = {ClusterModel::FromUnits(3, 7, 11), ClusterModel::FromUnits(0.01, 100, 0),
                                   ClusterModel::FromUnits(100, 1, 0)};
    int exactCases = 0;
    for (const ClusterModel& m : models) {
        const CostParams k{m.alphaSec, m.betaSecPerByte, m.gammaSecPerByte};
        for (Collective c : AllCollectives()) {
            for (Algorithm a : AlgorithmsFor(c)) {
                for (int p = 1; p <= 17; ++p) {
                    for (uint64_t n : {static_cast<uint64_t>(p), uint64_t{1000}, uint64_t{4099}, uint64_t{1} << 20}) {
                        for (int root : {0, p - 1}) {
                            if (!HasRoot(c) && root) continue;
                            CollectiveSpec s{c, a, p, n, root, 1};
                            Prediction pr = PredictSeconds(s, k);
                            if (!pr.exact) continue;
                            ++exactCases;
                            INFO(Label(s));
                            CHECK(Rel(SimSeconds(s, m), pr.seconds) < 1e-9);
                        }
                    }
                }
            }
        }
    }
    CHECK(exactCases > 5000);
}

TEST_CASE("the foundation example: 8-rank ring allreduce of 64 MiB", "[sim]")
{
    ClusterModel m = ClusterModel::FromUnits(5, 100, 0);
    CollectiveSpec s{Collective::AllReduce, Algorithm::Ring, 8, 64ull << 20, 0, 1};
    const double expected = 2 * 7 * 5e-6 + 2 * (7.0 / 8) * 67108864 / 1e11;
    const double sim = SimSeconds(s, m);
    CHECK(Rel(sim, expected) < 1e-14);
    CHECK(Rel(PredictSeconds(s, {m.alphaSec, m.betaSecPerByte, 0}).seconds, expected) < 1e-14);
}

TEST_CASE("the trace holds one span per transfer end and reduction, one flow per message", "[sim]")
{
    ClusterModel m = ClusterModel::FromUnits(5, 100, 50);
    Plan plan = BuildPlan({Collective::AllReduce, Algorithm::Ring, 4, 4096, 0, 1});
    SimResult r = Simulate(plan, m);
    REQUIRE(r.trace);
    const Trace& t = *r.trace;
    CHECK(t.Devices().size() == 4);
    CHECK(t.Tracks().size() == 12); // send, recv, reduce per rank
    CHECK(t.Flows().size() == plan.transfers.size());
    size_t sends = 0, recvs = 0, reductions = 0;
    for (const Track& tr : t.Tracks()) {
        CHECK(tr.DepthCount() <= 1); // single port: spans on one lane never overlap
        for (const Span& s : tr.spans) {
            if (s.category == SpanCategory::Send) ++sends;
            if (s.category == SpanCategory::Recv) ++recvs;
            if (s.category == SpanCategory::Compute) ++reductions;
            CHECK(s.predictedNs >= 0);
        }
    }
    CHECK(sends == plan.transfers.size());
    CHECK(recvs == plan.transfers.size());
    CHECK(reductions == 3 * 4); // the reduce-scatter half: p-1 steps x p ranks
    CHECK(t.EndNs() == std::llround(r.seconds * 1e9));
    CHECK(t.Meta().workload.GetString("collective") == "allreduce");
    CHECK(t.Meta().results.GetNumber("predictedSeconds") == Approx(r.seconds).epsilon(1e-12));
    for (const Flow& f : t.Flows()) CHECK(f.dstNs > f.srcNs);
}

TEST_CASE("stragglers slow the collective down, and link overrides apply per direction", "[sim]")
{
    CollectiveSpec s{Collective::AllReduce, Algorithm::Ring, 4, 1 << 20, 0, 1};
    ClusterModel base = ClusterModel::FromUnits(5, 100, 0);
    const double t0 = SimSeconds(s, base);

    ClusterModel slowAll = base;
    for (int r = 0; r < 4; ++r) slowAll.stragglers.push_back({r, 3.0});
    CHECK(Rel(SimSeconds(s, slowAll), 3 * t0) < 1e-12);

    ClusterModel oneSlow = base;
    oneSlow.stragglers.push_back({2, 2.0});
    const double t1 = SimSeconds(s, oneSlow);
    CHECK(t1 > t0);
    CHECK(t1 <= 2 * t0 * (1 + 1e-12));

    ClusterModel same = base; // an override equal to the default changes nothing
    same.links.push_back({0, 1, base.alphaSec, base.betaSecPerByte});
    CHECK(SimSeconds(s, same) == t0);
    ClusterModel unused = base; // the ring never sends 0 -> 2
    unused.links.push_back({0, 2, 1e-3, 1e-8});
    CHECK(SimSeconds(s, unused) == t0);
    ClusterModel slowLink = base;
    slowLink.links.push_back({0, 1, base.alphaSec, 4 * base.betaSecPerByte});
    CHECK(SimSeconds(s, slowLink) > t0);

    ClusterModel bad = base;
    bad.stragglers.push_back({9, 2.0});
    CHECK_THROWS_WITH(Simulate(BuildPlan(s), bad), Catch::Contains("straggler rank 9"));
}

TEST_CASE("one rank simulates to zero time", "[sim]")
{
    for (Collective c : AllCollectives())
        CHECK(SimSeconds({c, AlgorithmsFor(c).front(), 1, 4096, 0, 1}, ClusterModel{}) == 0.0);
}

TEST_CASE("a large ring's trace stores no per-transfer dependency: they are derived from its plan when asked", "[sim]")
{
    // Stored per transfer, the dependencies were most of a 1024-rank trace's time and memory (the
    // speed issue's regression); they are derived when a consumer first asks, equal to a recording.
    const ClusterModel m = ClusterModel::FromUnits(5, 100, 50);
    const auto plan = std::make_shared<const Plan>(BuildPlan({Collective::AllReduce, Algorithm::Ring, 256, 64ull << 20, 0, 8}));
    SimResult r = Simulate(plan, m);
    REQUIRE(r.trace);
    const Trace& t = *r.trace;
    CHECK(t.DerivesDependencies());
    CHECK(t.StoredDependencyCount() == 0);
    const Trace copy = t; // copies share what is derived
    const auto deps = copy.Dependencies();
    CHECK(deps.size() >= plan->transfers.size()); // every transfer after the first step waits for data
    CHECK(t.StoredDependencyCount() == deps.size());
    CHECK(t.Dependencies().data() == deps.data());
    // Each names spans that exist, on the tracks the trace drew, and from ends before to starts.
    size_t checked = 0;
    for (size_t i = 0; i < deps.size(); i += 997, ++checked) {
        const Dependency& d = deps[i];
        CHECK(d.from.endNs <= d.to.startNs);
        for (const SpanRef& ref : {d.from, d.to}) {
            REQUIRE(ref.track < t.Tracks().size());
            const auto& spans = t.Tracks()[ref.track].spans;
            CHECK(std::any_of(spans.begin(), spans.end(), [&](const Span& s) { return s.startNs == ref.startNs && s.endNs == ref.endNs; }));
        }
    }
    CHECK(checked > 100);
    // The same again from a second simulation: deriving is deterministic.
    const SimResult second = Simulate(plan, m);
    const auto again = second.trace->Dependencies();
    REQUIRE(again.size() == deps.size());
    CHECK(std::equal(deps.begin(), deps.end(), again.begin(), [](const Dependency& a, const Dependency& b) {
        return a.from.track == b.from.track && a.from.startNs == b.from.startNs && a.to.track == b.to.track && a.to.endNs == b.to.endNs;
    }));
}

TEST_CASE("a large collective's trace, written on every core, holds each transfer once in plan order", "[sim]")
{
    // Past 65,536 transfers the recorder notes the run's times and writes the spans afterwards,
    // a thread per part of the ranks and one for the flows: each rank's send, receive and reduce
    // lanes must hold its own transfers, each once, in the plan's order, and each flow its ends.
    const ClusterModel m = ClusterModel::FromUnits(5, 100, 50);
    const auto plan = std::make_shared<const Plan>(BuildPlan({Collective::AllReduce, Algorithm::Ring, 192, 48ull << 20, 0, 8}));
    REQUIRE(plan->transfers.size() > 65536);
    const SimResult r = Simulate(plan, m);
    REQUIRE(r.trace);
    const Trace& t = *r.trace;
    const int p = plan->spec.ranks;
    std::vector<std::vector<int>> sendSteps(static_cast<size_t>(p)), recvSteps(static_cast<size_t>(p));
    for (size_t k = 0; k < plan->steps.size(); ++k)
        for (uint32_t i = 0; i < plan->steps[k].transferCount; ++i) {
            const Transfer& tr = plan->transfers[plan->steps[k].firstTransfer + i];
            if (tr.src == tr.dst) continue;
            sendSteps[static_cast<size_t>(tr.src)].push_back(static_cast<int>(k));
            recvSteps[static_cast<size_t>(tr.dst)].push_back(static_cast<int>(k));
        }
    REQUIRE(t.Devices().size() == static_cast<size_t>(p));
    auto steps = [&](uint32_t track) {
        std::vector<int> out;
        for (const Span& s : t.Tracks()[track].spans) out.push_back(s.step);
        return out;
    };
    for (int rank = 0; rank < p; ++rank) {
        const Device& d = t.Devices()[static_cast<size_t>(rank)];
        REQUIRE(d.tracks.size() == 3); // send, recv, reduce
        INFO("rank " << rank);
        CHECK(steps(d.tracks[0]) == sendSteps[static_cast<size_t>(rank)]); // time order is step order on a ring
        CHECK(steps(d.tracks[1]) == recvSteps[static_cast<size_t>(rank)]);
        CHECK(t.Tracks()[d.tracks[2]].spans.size() == recvSteps[static_cast<size_t>(rank)].size() / 2); // the reduce-scatter half
        for (const Span& s : t.Tracks()[d.tracks[0]].spans) CHECK(s.category == SpanCategory::Send);
        for (const Span& s : t.Tracks()[d.tracks[1]].spans) CHECK(s.category == SpanCategory::Recv);
    }
    REQUIRE(t.Flows().size() == r.transfers);
    for (size_t i = 0; i < t.Flows().size(); i += 101) {
        const Flow& f = t.Flows()[i];
        const auto& sends = t.Tracks()[f.srcTrack].spans;
        const auto& recvs = t.Tracks()[f.dstTrack].spans;
        CHECK(std::any_of(sends.begin(), sends.end(), [&](const Span& s) { return s.startNs == f.srcNs && s.step == f.step; }));
        CHECK(std::any_of(recvs.begin(), recvs.end(), [&](const Span& s) { return s.endNs == f.dstNs && s.step == f.step; }));
    }
}
