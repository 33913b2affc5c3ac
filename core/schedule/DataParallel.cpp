#include "schedule/DataParallel.hpp"

#include "common/Error.hpp"

#include <algorithm>

namespace paralens::core {

std::string_view Name(Consistency c)
{
    switch (c) {
    case Consistency::Bsp: return "bsp";
    case Consistency::Ssp: return "ssp";
    case Consistency::Async: return "async";
    }
    return "?";
}

namespace {

void Check(const DataParallelSpec& s)
{
    Require(s.workers >= 1, "--workers must be at least 1");
    Require(s.layers >= 1, "--layers must be at least 1");
    Require(s.iterations >= 1, "--iterations must be at least 1");
    Require(s.forwardSecPerLayer >= 0 && s.BackwardSecPerLayer() >= 0, "layer times must be >= 0");
    Require(s.servers >= 1, "--servers must be at least 1");
    Require(s.staleness >= 0, "--staleness must be >= 0");
    Require(s.sync == GradientSync::ParameterServer || s.consistency == Consistency::Bsp,
            "--consistency ssp/async needs --sync ps: an allreduce is synchronous by nature");
    Require(s.sync == GradientSync::ParameterServer || Supports(Collective::AllReduce, s.algorithm),
            "--algorithm must be one of " + AlgorithmNamesList(Collective::AllReduce));
}

struct Names {
    uint16_t forward, backward, optimizer, allreduce, push, pull;
};

// Forward then backward over the layers; returns the backward task of every layer.
std::vector<TaskId> ForwardBackward(Workload& w, const DataParallelSpec& s, const Names& n, int worker, int iter)
{
    std::vector<TaskId> back(static_cast<size_t>(s.layers));
    for (int l = 0; l < s.layers; ++l)
        w.Add(ComputeTask{worker, s.forwardSecPerLayer, s.forwardFlopsPerLayer, false, SpanCategory::Forward,
                          TaskTags{n.forward, kNone, l, iter}});
    for (int l = s.layers - 1; l >= 0; --l)
        back[static_cast<size_t>(l)] = w.Add(ComputeTask{worker, s.BackwardSecPerLayer(), 2 * s.forwardFlopsPerLayer, false,
                                                         SpanCategory::Backward, TaskTags{n.backward, kNone, l, iter}});
    return back;
}

// Buckets of layers, last layer first (the order gradients become ready); each lists its layers.
std::vector<std::vector<int>> Buckets(const DataParallelSpec& s)
{
    std::vector<std::vector<int>> buckets;
    uint64_t filled = 0;
    for (int l = s.layers - 1; l >= 0; --l) {
        if (buckets.empty() || filled >= std::max<uint64_t>(s.bucketBytes, 1)) {
            buckets.emplace_back();
            filled = 0;
        }
        buckets.back().push_back(l);
        filled += s.gradBytesPerLayer;
    }
    return buckets;
}

void AllReduceIteration(DataParallelWorkload& out, const Names& n, int iter)
{
    const DataParallelSpec& s = out.spec;
    Workload& w = out.workload;
    std::vector<std::vector<TaskId>> back;
    for (int k = 0; k < s.workers; ++k) back.push_back(ForwardBackward(w, s, n, k, iter));
    std::vector<int> all(static_cast<size_t>(s.workers));
    for (int k = 0; k < s.workers; ++k) all[static_cast<size_t>(k)] = k;
    std::vector<TaskId> collectives;
    for (const auto& bucket : Buckets(s)) {
        std::vector<TaskId> deps; // each worker's backward of the bucket's earliest layer (or of layer 0)
        const int layer = s.overlap ? bucket.back() : 0;
        for (int k = 0; k < s.workers; ++k) deps.push_back(back[static_cast<size_t>(k)][static_cast<size_t>(layer)]);
        CollectiveSpec spec{Collective::AllReduce, s.algorithm, s.workers, s.gradBytesPerLayer * bucket.size(), 0, 1};
        collectives.push_back(w.Add(CollectiveTask{spec, all, TaskTags{n.allreduce, kNone, bucket.front(), iter}}, deps));
    }
    for (int k = 0; k < s.workers; ++k)
        out.iterationEnd[static_cast<size_t>(k)].push_back(
            w.Add(ComputeTask{k, s.optimizerSec, 0.0, false, SpanCategory::Compute, TaskTags{n.optimizer, kNone, kNone, iter}},
                  collectives));
}

void ParameterServerIteration(DataParallelWorkload& out, const Names& n, int iter)
{
    const DataParallelSpec& s = out.spec;
    Workload& w = out.workload;
    const uint64_t total = s.gradBytesPerLayer * static_cast<uint64_t>(s.layers);
    auto shard = [&](int server) {
        return total / static_cast<uint64_t>(s.servers) + (server == s.servers - 1 ? total % static_cast<uint64_t>(s.servers) : 0);
    };
    for (int k = 0; k < s.workers; ++k) {
        const TaskId lastBackward = ForwardBackward(w, s, n, k, iter).front();
        auto& pushes = out.pushes[static_cast<size_t>(k)].emplace_back();
        for (int sv = 0; sv < s.servers; ++sv)
            pushes.push_back(w.Add(MessageTask{k, s.workers + sv, shard(sv), TaskTags{n.push, kNone, sv, iter}, true}, {lastBackward}));
    }
    // The parameters a worker pulls must hold every worker's update up to iteration iter - staleness.
    const int lag = s.consistency == Consistency::Bsp ? 0 : s.staleness;
    for (int k = 0; k < s.workers; ++k) {
        auto& pulls = out.pulls[static_cast<size_t>(k)].emplace_back();
        for (int sv = 0; sv < s.servers; ++sv) {
            std::vector<TaskId> deps{out.pushes[static_cast<size_t>(k)][static_cast<size_t>(iter)][static_cast<size_t>(sv)]};
            if (s.consistency != Consistency::Async && iter - lag >= 0)
                for (int v = 0; v < s.workers; ++v)
                    if (v != k) deps.push_back(out.pushes[static_cast<size_t>(v)][static_cast<size_t>(iter - lag)][static_cast<size_t>(sv)]);
            pulls.push_back(w.Add(MessageTask{s.workers + sv, k, shard(sv), TaskTags{n.pull, kNone, sv, iter}}, deps));
        }
        out.iterationEnd[static_cast<size_t>(k)].push_back(
            w.Add(ComputeTask{k, s.optimizerSec, 0.0, false, SpanCategory::Compute, TaskTags{n.optimizer, kNone, kNone, iter}}, pulls));
    }
}

} // namespace

DataParallelWorkload BuildDataParallel(const DataParallelSpec& s)
{
    Check(s);
    const bool ps = s.sync == GradientSync::ParameterServer;
    std::vector<std::string> names;
    for (int k = 0; k < s.workers; ++k) names.push_back("worker " + std::to_string(k));
    for (int sv = 0; ps && sv < s.servers; ++sv) names.push_back(s.servers == 1 ? "server" : "server " + std::to_string(sv));
    DataParallelWorkload out;
    out.spec = s;
    out.workload = Workload(static_cast<int>(names.size()), names);
    Workload& w = out.workload;
    const Names n{w.Name("forward"), w.Name("backward"), w.Name("optimizer"), w.Name("allreduce gradients"),
                  w.Name("push gradients"), w.Name("pull parameters")};
    out.iterationEnd.resize(static_cast<size_t>(s.workers));
    out.pushes.resize(static_cast<size_t>(s.workers));
    out.pulls.resize(static_cast<size_t>(s.workers));
    for (int iter = 0; iter < s.iterations; ++iter) {
        if (ps) ParameterServerIteration(out, n, iter);
        else AllReduceIteration(out, n, iter);
    }
    return out;
}

} // namespace paralens::core
