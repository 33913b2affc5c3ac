#include "schedule/ModelParallel.hpp"

#include "common/Error.hpp"
#include "model/Flops.hpp"

#include <cmath>

namespace paralens::core {

namespace {

void CheckSpeed(const DeviceSpeed& s)
{
    Require(s.peakFlops > 0 && std::isfinite(s.peakFlops), "the peak FLOPS must be > 0");
    Require(s.efficiency > 0 && s.efficiency <= 1, "--efficiency must be in (0, 1]");
    Require(s.dtypeBytes >= 1, "the element size must be at least 1 byte");
}

ComputeTask Gemm(int device, double flops, const DeviceSpeed& s, SpanCategory cat, TaskTags tags)
{
    return ComputeTask{device, ComputeSeconds(flops, s.peakFlops, s.efficiency), flops, false, cat, tags};
}

std::vector<int> AllDevices(int n)
{
    std::vector<int> d(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) d[static_cast<size_t>(i)] = i;
    return d;
}

uint64_t ActivationBytes(double tokens, double hidden, int dtype)
{
    return static_cast<uint64_t>(std::llround(tokens * hidden)) * static_cast<uint64_t>(dtype);
}

} // namespace

Workload BuildInterOp(const TwoMatmulSpec& s)
{
    CheckSpeed(s.speed);
    Require(s.devices == 2, "inter-op parallelism puts W1 on device 0 and W2 on device 1: --devices must be 2");
    Require(s.inputs >= 1, "--inputs must be at least 1");
    Workload w(2, {"device 1 (W1)", "device 2 (W2)"});
    const uint16_t w1 = w.Name("X.W1"), send = w.Name("Z = X.W1"), w2 = w.Name("Z.W2");
    const double flops = MatmulFlops(s.tokens, s.hidden, s.hidden);
    for (int k = 0; k < s.inputs; ++k) {
        TaskTags tags{w1, k, 0, 0};
        const TaskId a = w.Add(Gemm(0, flops, s.speed, SpanCategory::Forward, tags));
        tags.name = send;
        const TaskId m = w.Add(MessageTask{0, 1, ActivationBytes(s.tokens, s.hidden, s.speed.dtypeBytes), tags}, {a});
        tags.name = w2;
        tags.chunk = 1;
        w.Add(Gemm(1, flops, s.speed, SpanCategory::Forward, tags), {m});
    }
    return w;
}

Workload BuildIntraOp(const TwoMatmulSpec& s)
{
    CheckSpeed(s.speed);
    Require(s.devices >= 1, "--devices must be at least 1");
    const int D = s.devices;
    std::vector<std::string> names;
    for (int d = 0; d < D; ++d) names.push_back("device " + std::to_string(d + 1));
    Workload w(D, names);
    const uint16_t w1 = w.Name("X.W1 (columns)"), w2 = w.Name("Z.W2 (rows)"), sum = w.Name("allreduce Y");
    std::vector<TaskId> partial;
    for (int d = 0; d < D; ++d) {
        const TaskId a = w.Add(Gemm(d, MatmulFlops(s.tokens, s.hidden / D, s.hidden), s.speed, SpanCategory::Forward,
                                    TaskTags{w1, kNone, 0, 0}));
        partial.push_back(w.Add(Gemm(d, MatmulFlops(s.tokens, s.hidden, s.hidden / D), s.speed, SpanCategory::Forward,
                                     TaskTags{w2, kNone, 1, 0}), {a}));
    }
    CollectiveSpec spec{Collective::AllReduce, s.algorithm, D, ActivationBytes(s.tokens, s.hidden, s.speed.dtypeBytes), 0,
                        static_cast<uint64_t>(s.speed.dtypeBytes)};
    w.Add(CollectiveTask{spec, AllDevices(D), TaskTags{sum}}, partial);
    return w;
}

Workload BuildMegatronMlp(const MegatronMlpSpec& s)
{
    CheckSpeed(s.speed);
    Require(s.devices >= 1 && s.layers >= 1, "--devices and --layers must be at least 1");
    const int D = s.devices;
    const double ffn = s.ffnMultiplier * s.hidden;
    std::vector<std::string> names;
    for (int d = 0; d < D; ++d) names.push_back("GPU " + std::to_string(d));
    Workload w(D, names);
    const uint16_t a = w.Name("X.A (column split)"), b = w.Name("Y.B (row split)"), g = w.Name("allreduce g"),
                   ba = w.Name("A backward"), bb = w.Name("B backward"), f = w.Name("allreduce f");
    const double gemm1 = MatmulFlops(s.tokens, ffn / D, s.hidden), gemm2 = MatmulFlops(s.tokens, s.hidden, ffn / D);
    CollectiveSpec spec{Collective::AllReduce, s.algorithm, D, ActivationBytes(s.tokens, s.hidden, s.speed.dtypeBytes), 0,
                        static_cast<uint64_t>(s.speed.dtypeBytes)};
    const std::vector<int> all = AllDevices(D);
    TaskId last = 0;
    bool haveLast = false;
    auto layerPass = [&](int layer, bool forward) {
        std::vector<TaskId> outs;
        for (int d = 0; d < D; ++d) {
            std::vector<TaskId> deps;
            if (haveLast) deps.push_back(last);
            TaskTags tags{forward ? a : bb, kNone, layer, 0};
            const SpanCategory cat = forward ? SpanCategory::Forward : SpanCategory::Backward;
            // Backward runs the two GEMMs in reverse, each twice (input and weight gradients).
            const TaskId first = w.Add(Gemm(d, forward ? gemm1 : 2 * gemm2, s.speed, cat, tags), deps);
            tags.name = forward ? b : ba;
            outs.push_back(w.Add(Gemm(d, forward ? gemm2 : 2 * gemm1, s.speed, cat, tags), {first}));
        }
        last = w.Add(CollectiveTask{spec, all, TaskTags{forward ? g : f, kNone, layer, 0}}, outs);
        haveLast = true;
    };
    for (int l = 0; l < s.layers; ++l) layerPass(l, true);
    if (s.backward)
        for (int l = s.layers - 1; l >= 0; --l) layerPass(l, false);
    return w;
}

} // namespace paralens::core
