// Running experiments for the views (app/gui/RunBuilder.hpp): the numbers the views show.
#include "RunBuilder.hpp"
#include "TrainingRuns.hpp"
#include "analysis/Extrapolation.hpp"

#include "common/Error.hpp"

#include "schedule/Schedule.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <numeric>
#include <random>
#include <unistd.h>

using namespace paralens;
using namespace paralens::app;

namespace {

Experiment Collective(core::Algorithm a, int p, uint64_t bytes)
{
    Experiment e;
    e.kind = ExperimentKind::Collective;
    e.collective.algorithm = a;
    e.collective.ranks = p;
    e.collective.bytes = bytes;
    return e;
}

// Nodes of `perNode` GPUs on NVLink (2 us, 300 GB/s) joined by a network (10 us, 25 GB/s).
Experiment TwoLevelCollective(core::Algorithm a, int p, uint64_t bytes, int perNode)
{
    Experiment e = Collective(a, p, bytes);
    e.cluster.alphaUs = 2;
    e.cluster.bandwidthGBps = 300;
    e.cluster.ranksPerNode = perNode;
    e.cluster.netAlphaUs = 10;
    e.cluster.netBandwidthGBps = 25;
    return e;
}

Experiment Pipeline(core::ScheduleKind k, bool recompute = false)
{
    Experiment e;
    e.kind = ExperimentKind::Pipeline;
    e.pipeline.schedule = k;
    e.pipeline.recompute = recompute;
    return e;
}

} // namespace

TEST_CASE("a ring allreduce run: simulated = closed form, and the steps' alpha + n beta add up to it", "[gui]")
{
    auto run = BuildRun(Collective(core::Algorithm::Ring, 8, uint64_t{64} << 20));
    REQUIRE(run);
    CHECK(run->simulatedSeconds == Approx(2 * 7 * 5e-6 + 2 * 7.0 / 8 * (64 << 20) * 1e-11).epsilon(1e-9));
    CHECK(run->predictedSeconds == Approx(run->simulatedSeconds).epsilon(1e-9));
    REQUIRE(run->steps.size() == 14u);
    double total = 0;
    for (const StepInfo& s : run->steps) {
        CHECK(s.transfers == 8);
        CHECK(s.maxBytes == (uint64_t{8} << 20));
        total += s.modelSeconds;
    }
    CHECK(total == Approx(run->predictedSeconds).epsilon(1e-9));
    CHECK(run->steps.back().simulatedEndSeconds == Approx(run->simulatedSeconds).margin(1e-9)); // ns trace
    CHECK(run->usage.size() == 8u);
    CHECK(run->plan);
}

TEST_CASE("the flow view's step costs: each step on its slowest message's link, adding up to the collective's model", "[gui][twolevel]")
{
    Experiment e = Collective(core::Algorithm::Ring, 8, uint64_t{8} << 20);
    e.cluster.alphaUs = 3; // not the defaults: the closed form must follow the cluster
    e.cluster.bandwidthGBps = 40;
    auto flat = BuildRun(e);
    CHECK(flat->collectiveModelSeconds == Approx(2 * 7 * 3e-6 + 2 * 7.0 / 8 * (8 << 20) / 40e9).epsilon(1e-9));
    for (const StepInfo& s : flat->steps) {
        CHECK_FALSE(s.network);
        CHECK(s.alphaSec == Approx(3e-6));
    }
    for (core::Algorithm a : {core::Algorithm::Ring, core::Algorithm::Hierarchical, core::Algorithm::HierarchicalTree}) {
        auto run = BuildRun(TwoLevelCollective(a, 16, uint64_t{16} << 20, 4));
        INFO(core::Name(a));
        double total = 0;
        size_t network = 0;
        for (const StepInfo& s : run->steps) {
            total += s.modelSeconds;
            network += s.network ? 1 : 0;
            if (s.network) CHECK(s.alphaSec == Approx(10e-6));
            else CHECK(s.alphaSec == Approx(2e-6));
        }
        // Ring: all 30 steps paced by the network; rings between 4 nodes: 2 x 3; trees: 2 x 2.
        CHECK(network == (a == core::Algorithm::Ring ? 30u : a == core::Algorithm::Hierarchical ? 6u : 4u));
        CHECK(run->collectiveModelSeconds == Approx(run->predictedSeconds));
        CHECK(total == Approx(run->collectiveModelSeconds).epsilon(1e-9));
        CHECK(total == Approx(run->simulatedSeconds).epsilon(1e-9));
    }
}

TEST_CASE("the controls offer the hierarchical allreduces on nodes of a network, and keep a chosen one", "[gui][twolevel]")
{
    Experiment e = Collective(core::Algorithm::Ring, 16, 1 << 20);
    auto has = [](const std::vector<core::Algorithm>& v, core::Algorithm a) { return std::find(v.begin(), v.end(), a) != v.end(); };
    CHECK_FALSE(has(AlgorithmChoices(e.collective, e.cluster), core::Algorithm::Hierarchical));
    const Experiment two = TwoLevelCollective(core::Algorithm::Ring, 16, 1 << 20, 8);
    const std::vector<core::Algorithm> onNodes = AlgorithmChoices(two.collective, two.cluster);
    CHECK(has(onNodes, core::Algorithm::Ring));
    CHECK(has(onNodes, core::Algorithm::Hierarchical));
    CHECK(has(onNodes, core::Algorithm::HierarchicalTree));
    e.collective.algorithm = core::Algorithm::HierarchicalTree; // from a scenario, on one node: still listed
    CHECK(has(AlgorithmChoices(e.collective, e.cluster), core::Algorithm::HierarchicalTree));
    e.collective.collective = core::Collective::Broadcast;
    e.collective.algorithm = core::Algorithm::Tree;
    CHECK_FALSE(has(AlgorithmChoices(e.collective, two.cluster), core::Algorithm::Hierarchical)); // allreduce only
}

TEST_CASE("the model view's data: curves per algorithm, the ring/tree crossover, a fit recovering alpha and beta", "[gui]")
{
    auto run = BuildRun(Collective(core::Algorithm::Ring, 8, 1 << 20));
    REQUIRE(run->model);
    const ModelData& m = *run->model;
    CHECK(m.curves.size() == core::AlgorithmsFor(core::Collective::AllReduce).size());
    // Ring 14 a + 1.75 n b = tree 6 a + 6 n b  <=>  n = 8 a / (4.25 b) with a = 5 us, b = 1e-11 s/B.
    CHECK(m.crossoverBytes == Approx(8 * 5e-6 / (4.25 * 1e-11)).epsilon(1e-5)); // blocks are whole bytes
    REQUIRE(m.fitted);
    CHECK(m.fitAlphaUs == Approx(5.0).epsilon(1e-6));
    CHECK(m.fitBandwidthGBps == Approx(100.0).epsilon(1e-6));
    CHECK(m.busBwFactor == Approx(2 * 7.0 / 8));
}

// The model view's curve of one algorithm (fails the test when it is not drawn).
static const ModelCurve& CurveOf(const ModelData& m, core::Algorithm a)
{
    for (const ModelCurve& c : m.curves)
        if (c.algorithm == a) return c;
    FAIL("no curve for " << core::Name(a));
    return m.curves.front();
}

TEST_CASE("two levels: the hierarchical curves join, each curve's network share, the run's model = simulation", "[gui][twolevel]")
{
    Experiment e = TwoLevelCollective(core::Algorithm::Hierarchical, 16, 256 << 20, 8);
    auto run = BuildRun(e);
    REQUIRE(run->model);
    const ModelData& m = *run->model;
    CHECK(m.twoLevel);
    CHECK(m.ranksPerNode == 8);
    REQUIRE(m.curves.size() == core::AlgorithmsFor(core::Collective::AllReduce).size() +
                                   core::TwoLevelAlgorithmsFor(core::Collective::AllReduce).size());
    CHECK(run->predictedSeconds == Approx(run->simulatedSeconds).epsilon(1e-9));
    for (const ModelCurve& c : m.curves) {
        REQUIRE(c.netSeconds.size() == m.sizes.size());
        for (size_t i = 0; i < m.sizes.size(); ++i) CHECK(c.netSeconds[i] <= c.seconds[i] * (1 + 1e-12));
        if (c.algorithm == core::Algorithm::Ring) CHECK(c.netSeconds.back() == Approx(c.seconds.back())); // paced by the network
    }
    const ModelCurve& ring = m.curves.front();
    const ModelCurve& hier = CurveOf(m, core::Algorithm::Hierarchical);
    const ModelCurve& tree = CurveOf(m, core::Algorithm::HierarchicalTree);
    CHECK(hier.seconds.back() < ring.seconds.back() / 4);
    CHECK(hier.netSeconds.back() < hier.seconds.back());
    CHECK(hier.netSeconds.back() > 0);
    // Two nodes: the tree sends the whole shard up and back, the rings half of it each way.
    CHECK(tree.netSeconds.back() > hier.netSeconds.back());
    CHECK(tree.seconds.back() - tree.netSeconds.back() == Approx(hier.seconds.back() - hier.netSeconds.back()));
    e.cluster.netBandwidthGBps = 0; // one level: no hierarchical curve, no shares
    auto flat = BuildRun(e);
    CHECK_FALSE(flat->model->twoLevel);
    CHECK(flat->model->curves.size() == core::AlgorithmsFor(core::Collective::AllReduce).size());
    CHECK(flat->model->curves.front().netSeconds.empty());
}

TEST_CASE("pipeline runs: bubbles as the lectures say, 1F1B holds D - s activations, MFU = 3/4 HFU with recomputation", "[gui]")
{
    auto gpipe = BuildRun(Pipeline(core::ScheduleKind::GPipe));
    CHECK(gpipe->bubbleFraction == Approx(3.0 / 11.0).epsilon(1e-6));
    CHECK(gpipe->bubbleFormula == Approx(3.0 / 11.0));
    CHECK(gpipe->peakActivations == std::vector<int>{8, 8, 8, 8});
    auto onefoneb = BuildRun(Pipeline(core::ScheduleKind::OneFOneB));
    CHECK(onefoneb->peakActivations == std::vector<int>{4, 3, 2, 1});
    CHECK(onefoneb->peakActivationsFormula == std::vector<int>{4, 3, 2, 1});
    // Idle time from the device usage is the bubble the timeline hatches.
    int64_t idle = 0, window = 0;
    for (const auto& u : gpipe->usage) {
        idle += u.idleNs;
        window += u.windowNs;
    }
    CHECK(static_cast<double>(idle) / static_cast<double>(window) == Approx(3.0 / 11.0).epsilon(1e-6));

    REQUIRE(onefoneb->mfu.available);
    CHECK(onefoneb->mfu.report.mfu == Approx(0.6 * 8.0 / 11.0).epsilon(1e-6)); // efficiency x (1 - bubble)
    auto recompute = BuildRun(Pipeline(core::ScheduleKind::OneFOneB, true));
    REQUIRE(recompute->mfu.available);
    CHECK(recompute->mfu.report.mfu == Approx(0.75 * recompute->mfu.report.hfu).epsilon(1e-9));
    CHECK(recompute->mfu.report.mfu < onefoneb->mfu.report.mfu);
    CHECK(recompute->mfu.mfuPerDevice.size() == 4u);
}

TEST_CASE("a snapshot reuses the runs whose experiment did not change", "[gui]")
{
    std::vector<Experiment> list{Collective(core::Algorithm::Ring, 4, 1 << 20), Pipeline(core::ScheduleKind::GPipe)};
    auto first = BuildSnapshot(list, nullptr);
    list[1].pipeline.microBatches = 12;
    auto second = BuildSnapshot(list, first.get());
    CHECK(second->runs[0] == first->runs[0]);
    CHECK(second->runs[1] != first->runs[1]);
    CHECK(second->runs[1]->bubbleFraction == Approx(3.0 / 15.0).epsilon(1e-6));
}

TEST_CASE("a bad parameter names the experiment and the problem", "[gui]")
{
    std::vector<Experiment> list{Pipeline(core::ScheduleKind::Interleaved)};
    list[0].label = "mine";
    list[0].pipeline.microBatches = 6; // not a multiple of D = 4
    CHECK_THROWS_WITH(BuildSnapshot(list, nullptr), Catch::Contains("mine: ") && Catch::Contains("multiple of"));
}

TEST_CASE("a collective's trace file gets its Plan back for the flow and model views", "[gui]")
{
    auto simulated = BuildRun(Collective(core::Algorithm::Ring, 8, uint64_t{1} << 20));
    const std::string path = (std::filesystem::temp_directory_path() / ("paralens-gui-ring-" + std::to_string(::getpid()) + ".json")).string();
    core::WriteTraceFile(*simulated->trace, path);
    Experiment e;
    e.kind = ExperimentKind::File;
    e.files = {path};
    auto loaded = BuildRun(e);
    std::filesystem::remove(path);
    REQUIRE(loaded->plan);
    REQUIRE(loaded->holdings);
    CHECK(loaded->holdings->Steps() == 14);
    CHECK(loaded->steps.size() == 14u);
    CHECK(loaded->steps.back().simulatedEndSeconds == Approx(simulated->simulatedSeconds).margin(1e-9));
    REQUIRE(loaded->model);
    CHECK(loaded->model->fitted);
    CHECK(loaded->formula == simulated->formula);
}

TEST_CASE("the pipeline model: the bubble against N from the formula and the simulator agree for 1F1B", "[gui]")
{
    auto run = BuildRun(Pipeline(core::ScheduleKind::OneFOneB));
    REQUIRE(run->pipelineModel);
    const PipelineModelData& m = *run->pipelineModel;
    REQUIRE(m.n.size() == m.formula.size());
    REQUIRE(m.n.size() >= 64u);
    CHECK(m.formula[7] == Approx(3.0 / 11.0)); // N = 8, D = 4
    REQUIRE(m.pointN.size() == 7u);           // 1, 2, 4, ..., 64
    for (size_t i = 0; i < m.pointN.size(); ++i) {
        INFO("N = " << m.pointN[i]);
        CHECK(m.simulated[i] == Approx(3.0 / (3.0 + m.pointN[i])).epsilon(1e-6));
    }
    CHECK(m.currentN == 8.0);
    CHECK(m.currentBubble == Approx(3.0 / 11.0).epsilon(1e-6));
    auto interleaved = BuildRun([] {
        Experiment e = Pipeline(core::ScheduleKind::Interleaved);
        e.pipeline.chunks = 2;
        return e;
    }());
    REQUIRE(interleaved->pipelineModel);
    CHECK(interleaved->pipelineModel->n.front() == 4.0); // N must be a multiple of D
    CHECK(interleaved->pipelineModel->formula.front() == Approx(3.0 / (3.0 + 2 * 4)));
    // zb-h1: ZB-H1's closed form from N = D on, which the simulator's circles meet there.
    auto zb = BuildRun(Pipeline(core::ScheduleKind::ZeroBubbleH1));
    REQUIRE(zb->pipelineModel);
    const PipelineModelData& z = *zb->pipelineModel;
    REQUIRE(!z.n.empty());
    CHECK(z.n.front() == 4.0);
    CHECK(z.formula.front() == Approx(3.0 / (3.0 + 3 * 4)));
    for (size_t i = 0; i < z.pointN.size(); ++i)
        if (z.pointN[i] >= 4) CHECK(z.simulated[i] == Approx(3.0 / (3.0 + 3 * z.pointN[i])).epsilon(1e-6));
    CHECK(BuildRun(Pipeline(core::ScheduleKind::PipeDream))->pipelineModel->formula.empty());
}

TEST_CASE("random parameters from the controls either run or say what is wrong", "[gui]")
{
    std::mt19937 rng(5);
    auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1)); };
    int ran = 0, refused = 0;
    for (int i = 0; i < 300; ++i) {
        Experiment e;
        e.kind = static_cast<ExperimentKind>(pick(0, 2));
        const auto collectives = core::AllCollectives();
        e.collective.collective = collectives[static_cast<size_t>(pick(0, static_cast<int>(collectives.size()) - 1))];
        const auto algorithms = core::AlgorithmsFor(e.collective.collective);
        e.collective.algorithm = algorithms[static_cast<size_t>(pick(0, static_cast<int>(algorithms.size()) - 1))];
        e.collective.ranks = pick(1, 64);
        e.collective.bytes = uint64_t{1} << pick(0, 24);
        e.collective.root = pick(0, e.collective.ranks - 1);
        e.pipeline.schedule = core::AllScheduleKinds()[static_cast<size_t>(pick(0, static_cast<int>(core::AllScheduleKinds().size()) - 1))];
        e.pipeline.stages = pick(1, 16);
        e.pipeline.microBatches = pick(1, 64);
        e.pipeline.chunks = pick(1, 4);
        e.pipeline.recompute = pick(0, 1) == 1;
        e.pipeline.communicate = pick(0, 1) == 1;
        e.training.workload = TrainingWorkloadNames()[static_cast<size_t>(pick(0, 5))];
        e.training.devices = pick(1, 32);
        e.training.layers = pick(1, 8);
        e.training.iterations = pick(1, 3);
        e.training.consistency = pick(0, 2) == 0 ? "bsp" : pick(0, 1) ? "ssp" : "async";
        e.training.experts = pick(1, 64);
        e.training.tokens = pick(256, 4096);
        e.training.hidden = pick(256, 4096);
        e.cluster.stragglerRank = pick(-1, 4);
        e.cluster.gammaGBps = pick(0, 1) ? 0.0 : 200.0;
        if (pick(0, 2) == 0) { // two levels, sometimes with the hierarchical allreduce (refused unless nodes are whole)
            e.cluster.ranksPerNode = pick(1, 8);
            e.cluster.netBandwidthGBps = 25;
            if (e.collective.collective == core::Collective::AllReduce && pick(0, 1)) e.collective.algorithm = core::Algorithm::Hierarchical;
        }
        INFO("experiment " << i << ": " << Describe(e));
        try {
            auto run = BuildRun(e);
            REQUIRE(run);
            CHECK(run->trace->Devices().size() == run->usage.size());
            ++ran;
        } catch (const Error& err) {
            CHECK(std::string(err.what()).size() > 10);
            ++refused;
        }
    }
    CHECK(ran > 150);
    INFO("refused " << refused);
}

TEST_CASE("renaming an experiment keeps its run (no re-simulation) under the new title", "[gui]")
{
    std::vector<Experiment> list{Pipeline(core::ScheduleKind::GPipe)};
    list[0].label = "before";
    auto first = BuildSnapshot(list, nullptr);
    list[0].label = "after";
    auto second = BuildSnapshot(list, first.get());
    CHECK(second->runs[0]->trace == first->runs[0]->trace); // the same simulation
    CHECK(second->runs[0]->title.rfind("after: ", 0) == 0);
    CHECK(second->runs[0]->experiment.label == "after");
}

namespace {

std::string ReferenceData(const std::string& relative)
{
    const std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/" + relative;
    return std::filesystem::exists(path) ? path : std::string();
}

} // namespace

TEST_CASE("an nccl-tests log opens with its measurements on the model view, alpha and beta fitted to them", "[gui]")
{
    const std::string log = ReferenceData("nccl-tests/h100x8_nvlink_allreduce_ring.log");
    if (log.empty()) {
        WARN("skipped: ../shared/reference-data is not here");
        return;
    }
    const std::vector<Experiment> list = FileExperiments({log});
    REQUIRE(list.size() == 1u);
    auto run = BuildRun(list[0]);
    REQUIRE(run->model);
    const ModelData& m = *run->model;
    CHECK(m.collective == core::Collective::AllReduce);
    CHECK(m.ranks == 8);
    CHECK(m.measuredBytes.size() >= 20u);
    REQUIRE(m.fitted);
    CHECK(m.fittedToMeasurements);
    CHECK(m.fitBandwidthGBps > 50.0); // NVLink: hundreds of GB/s
    CHECK(m.fitAlphaUs > 0.5);
    CHECK(m.params.betaSecPerByte == Approx(1e-9 / m.fitBandwidthGBps)); // the curves use the fit
    REQUIRE(run->report);
    CHECK(!run->report->collectives.empty());
}

TEST_CASE("a log measured on two nodes: its fit prices the network, the model view splits the levels", "[gui][twolevel]")
{
    // allreduce on 2 hosts of 4 H100s: a ring paced by a 20 GB/s network, alpha 8 us per step.
    std::string log = "# Collective test starting: all_reduce_perf\n";
    for (int r = 0; r < 8; ++r)
        log += "#  Rank  " + std::to_string(r) + " Group  0 Pid 1 on host" + std::to_string(r / 4) + " device  " + std::to_string(r % 4) +
               " [0x00] NVIDIA H100 80GB HBM3\n";
    log += "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
    for (uint64_t n = 1024; n <= (uint64_t{1} << 28); n *= 4) {
        const double us = 14 * (8.0 + static_cast<double>(n) / 8 / 20e3);
        log += std::to_string(n) + " " + std::to_string(n / 4) + " float sum -1 " + std::to_string(us) + " 1 1 0 " + std::to_string(us) + " 1 1 0\n";
    }
    char path[] = "/tmp/paralens-two-nodes-XXXXXX.log";
    const int fd = mkstemps(path, 4);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, log.data(), log.size()) == static_cast<ssize_t>(log.size()));
    close(fd);
    auto run = BuildRun(FileExperiments({path}).at(0));
    std::filesystem::remove(path);
    REQUIRE(run->model);
    const ModelData& m = *run->model;
    CHECK(m.twoLevel);
    CHECK(m.ranksPerNode == 4);
    CHECK(m.netBandwidthGBps == Approx(20).epsilon(1e-3));
    CHECK_THAT(m.twoLevelNote, Catch::Contains("NVLink") && Catch::Contains("assumed"));
    const ModelCurve& ring = m.curves.front();
    CHECK(ring.netSeconds.back() == Approx(ring.seconds.back()));
    CHECK(CurveOf(m, core::Algorithm::Hierarchical).seconds.back() < ring.seconds.back()); // NVLink inside: faster at 1 GiB
    // The others run on the network per NIC as NCCL ran the log (a tree on two nodes: each of a node's 4 NICs
    // carried n/4 at NCCL's tree efficiency of 256 MiB), as plan --network-fit and extrapolate read it.
    const double perNicGBps = 20.0 / 1.75 / 4 / core::NcclTreeEfficiency(uint64_t{1} << 28);
    CHECK(m.nicBandwidthGBps == Approx(perNicGBps).epsilon(0.02));
    CHECK_THAT(m.twoLevelNote, Catch::Contains("per NIC"));
    const ModelCurve& hier = CurveOf(m, core::Algorithm::Hierarchical);
    const double n = m.sizes.back(); // the inter-node phase: an allreduce of n/4 on two nodes, each NIC its own
    CHECK(hier.netSeconds.back() == Approx(n / 4 / (perNicGBps * 1e9)).epsilon(0.05));
}

TEST_CASE("profiler traces of several ranks open as one job, other files each on their own", "[gui]")
{
    const std::string r0 = ReferenceData("kineto/sampled_rank-0.json.gz"), r1 = ReferenceData("kineto/sampled_rank-1.json.gz");
    const std::string log = ReferenceData("nccl-tests/h100x8_nvlink_allreduce_ring.log");
    if (r0.empty() || r1.empty() || log.empty()) {
        WARN("skipped: ../shared/reference-data is not here");
        return;
    }
    const std::vector<Experiment> list = FileExperiments({r0, log, r1});
    REQUIRE(list.size() == 2u);
    CHECK(list[0].files == std::vector<std::string>{r0, r1});
    CHECK(list[1].files == std::vector<std::string>{log});
    auto job = BuildRun(list[0]);
    int gpus = 0;
    for (const auto& d : job->trace->Devices()) gpus += d.kind == core::DeviceKind::Gpu ? 1 : 0;
    CHECK(gpus == 2);
    REQUIRE(job->report);
    CHECK(!job->report->collectives.empty());
    CHECK_THROWS_WITH(FileExperiments({r0 + ".missing"}), Catch::Contains(".missing"));
}

TEST_CASE("training steps give the flow view their collective: the dp allreduce, the parameter server's star", "[gui]")
{
    Experiment e;
    e.kind = ExperimentKind::Training;
    e.training.workload = "dp";
    e.training.devices = 4;
    e.training.algorithm = core::Algorithm::Ring;
    auto dp = BuildRun(e);
    REQUIRE(dp->plan);
    REQUIRE(dp->holdings);
    CHECK(dp->plan->spec.collective == core::Collective::AllReduce);
    CHECK(dp->plan->spec.algorithm == core::Algorithm::Ring);
    CHECK(dp->plan->spec.ranks == 4);
    CHECK(dp->plan->spec.bytes == e.training.gradBytes);
    CHECK(dp->steps.size() == dp->plan->steps.size());
    CHECK(dp->predictedSeconds > 0);
    e.training.workload = "ps";
    auto ps = BuildRun(e);
    REQUIRE(ps->plan);
    CHECK(ps->plan->spec.algorithm == core::Algorithm::Naive);
    CHECK(ps->layout->kind == FlowLayoutKind::Star);
    e.training.workload = "moe";
    CHECK_FALSE(BuildRun(e)->plan); // no single collective to show
}

TEST_CASE("an H100 capture of virtual pipeline stages opens with MFU against the stages' share of the GPU", "[gui]")
{
    // Four virtual stages in green contexts of one H100 (traces/h100): each stage's peak is a
    // quarter of the GPU's, as the run reported MFU; the spec's whole-GPU peak per stage showed 4x less.
    Experiment e;
    e.kind = ExperimentKind::File;
    e.files = {PARALENS_SOURCE_DIR "/traces/h100/pipeline-1f1b-4x8-virtual.json.gz"};
    auto r = BuildRun(e);
    REQUIRE(r->mfu.available);
    CHECK(r->mfu.peakFlops == Approx(989e12 / 4));
    CHECK(r->mfu.report.mfu > 0.4); // the timed iterations alone: 0.49, as `paralens run` reported
    CHECK(r->mfu.report.mfu < 0.5);
    CHECK(r->peakActivations == std::vector<int>{4, 3, 2, 1});
    CHECK(r->bubbleFormula == Approx(3.0 / 11.0)); // (D-1)/(D-1+N), from the run's schedule
    CHECK(r->bubbleModel == Approx(r->bubbleFormula).margin(0.01)); // the model at the measured op times: 0.276
}

TEST_CASE("a zb-h1 capture opens with its model and ZB-H1's formula beside its bubble", "[gui]")
{
    Experiment e;
    e.kind = ExperimentKind::File;
    e.files = {PARALENS_SOURCE_DIR "/traces/h200/schedules/pipeline-zb-h1-4x8-virtual-2048tokens.json.gz"};
    auto r = BuildRun(e);
    CHECK(r->bubbleFormula == Approx(3.0 / 27)); // (D-1)/(D-1+3N): the run's schedule at its equal nominal times
    CHECK(r->bubbleFraction == Approx(0.107).margin(0.003));
    CHECK(r->bubbleModel == Approx(0.112).margin(0.003)); // its order at F 6.9, B 7.0, W 7.7 ms
    // A simulated schedule is its own model: none is computed.
    Experiment sim;
    sim.kind = ExperimentKind::Pipeline;
    CHECK(BuildRun(sim)->bubbleModel < 0);
}

TEST_CASE("a Plan run on a GPU of one size gets its Plan back for the flow view, a sweep does not", "[gui]")
{
    // What `paralens run --workload plan` writes: 8 virtual ranks, the workload's collective,
    // algorithm and ranks, and n only when one size ran.
    for (const bool oneSize : {true, false}) {
        core::TraceBuilder b;
        b.Meta().source = core::TraceSource::Cupti;
        b.Meta().workload.Set("workload", std::string("plan"));
        b.Meta().workload.Set("collective", std::string("allreduce"));
        b.Meta().workload.Set("algorithm", std::string("ring"));
        b.Meta().workload.Set("ranks", int64_t{8});
        if (oneSize) b.Meta().workload.Set("bytes", int64_t{64} << 20);
        b.Meta().model.Set("alphaUs", 5.0);
        b.Meta().model.Set("bandwidthGBps", 1675.0);
        for (int r = 0; r < 8; ++r) {
            const uint32_t d = b.AddDevice("virtual rank " + std::to_string(r), core::DeviceKind::VirtualGpu, r);
            core::Span s;
            s.startNs = 1000 * r;
            s.endNs = s.startNs + 500;
            s.category = core::SpanCategory::Send;
            b.AddSpan(b.AddTrack(d, "send"), s);
        }
        const std::string path = (std::filesystem::temp_directory_path() /
                                  ("paralens-gui-gpu-plan-" + std::to_string(::getpid()) + ".json")).string();
        core::WriteTraceFile(std::move(b).Finish(), path);
        Experiment e;
        e.kind = ExperimentKind::File;
        e.files = {path};
        auto loaded = BuildRun(e);
        std::filesystem::remove(path);
        INFO(oneSize);
        CHECK(static_cast<bool>(loaded->holdings) == oneSize);
        if (oneSize) CHECK(loaded->steps.size() == 14u); // 2(p-1), timed by the model
    }
}

TEST_CASE("a Plan run on one GPU's virtual ranks is predicted by the shared-memory model, step by step", "[gui]")
{
    // The H100 capture of a ring allreduce of 64 MiB on 8 virtual ranks: the window's prediction
    // is the one `paralens run` reported (its log: traces/h100/logs), each step alpha plus the
    // bytes it reads and writes over the GPU's memory bandwidth, not the lectures' alpha-beta links.
    Experiment e;
    e.kind = ExperimentKind::File;
    e.files = {PARALENS_SOURCE_DIR "/traces/h100/plan-allreduce-ring-8vranks-64MiB.json.gz"};
    auto r = BuildRun(e);
    REQUIRE(r->steps.size() == 14u);
    CHECK(r->sharedMemoryGBps == Approx(3350));
    double sum = 0;
    for (const StepInfo& s : r->steps) {
        // 8 ranks each send 64 MiB / 8: copied (2 bytes of traffic a byte) or reduced (3)
        CHECK((s.sharedMemoryBytes == 8u * (8u << 20) * 2 || s.sharedMemoryBytes == 8u * (8u << 20) * 3));
        sum += s.sharedMemorySeconds;
    }
    CHECK(r->predictedSeconds == Approx(sum));
    CHECK(r->predictedSeconds == Approx(14 * 5e-6 + (7 * 3 + 7 * 2) * 8.0 * (8 << 20) / 3350e9));
    CHECK(r->predictedSeconds > 2 * r->collectiveModelSeconds); // the alpha-beta links' closed form, for comparison
}
