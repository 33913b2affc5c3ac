#include "schedule/ExpertParallel.hpp"

#include "common/Error.hpp"
#include "model/Flops.hpp"

#include <cmath>

namespace paralens::core {

std::vector<double> ExpertShares(int experts, double imbalance)
{
    std::vector<double> share(static_cast<size_t>(experts));
    double sum = 0;
    for (int e = 0; e < experts; ++e) sum += share[static_cast<size_t>(e)] = 1.0 / std::pow(e + 1.0, imbalance);
    for (double& x : share) x /= sum;
    return share;
}

MoeWorkload BuildMoe(const MoeSpec& s)
{
    Require(s.devices >= 1, "--devices must be at least 1");
    Require(s.experts >= s.devices && s.experts % s.devices == 0, "--experts must be a multiple of --devices");
    Require(s.topK >= 1 && s.topK <= s.experts, "--top-k must be between 1 and --experts");
    Require(s.imbalance >= 0 && std::isfinite(s.imbalance), "--imbalance must be >= 0");
    Require(s.speed.peakFlops > 0 && s.speed.efficiency > 0 && s.speed.efficiency <= 1, "bad device speed");
    const int D = s.devices, perDevice = s.experts / D;
    const std::vector<double> share = ExpertShares(s.experts, s.imbalance);
    // Tokens one device sends to the experts of device j (every device routes alike).
    std::vector<double> toDevice(static_cast<size_t>(D), 0.0);
    for (int e = 0; e < s.experts; ++e) toDevice[static_cast<size_t>(e / perDevice)] += s.tokensPerDevice * s.topK * share[static_cast<size_t>(e)];

    std::vector<std::string> names;
    for (int d = 0; d < D; ++d) names.push_back("GPU " + std::to_string(d));
    MoeWorkload out;
    out.workload = Workload(D, names);
    Workload& w = out.workload;
    const uint16_t gate = w.Name("router"), dispatch = w.Name("dispatch"), ffn = w.Name("experts"),
                   combine = w.Name("combine"), merge = w.Name("combine outputs");
    auto bytesOf = [&](double tokens) {
        return static_cast<uint64_t>(std::llround(tokens * s.hidden)) * static_cast<uint64_t>(s.speed.dtypeBytes);
    };
    std::vector<TaskId> gates;
    for (int d = 0; d < D; ++d)
        gates.push_back(w.Add(ComputeTask{d, ComputeSeconds(MatmulFlops(s.tokensPerDevice, s.experts, s.hidden), s.speed.peakFlops, s.speed.efficiency),
                                          MatmulFlops(s.tokensPerDevice, s.experts, s.hidden), false, SpanCategory::Forward, TaskTags{gate}}));
    // Pairwise all-to-all (step k: d -> d + k) with per-pair sizes.
    std::vector<std::vector<TaskId>> arriving(static_cast<size_t>(D));
    for (int k = 1; k < D; ++k)
        for (int d = 0; d < D; ++d) {
            const int j = (d + k) % D;
            const uint64_t bytes = bytesOf(toDevice[static_cast<size_t>(j)]);
            out.allToAllBytes += 2 * bytes;
            arriving[static_cast<size_t>(j)].push_back(w.Add(MessageTask{d, j, bytes, TaskTags{dispatch, kNone, k, 0}}, {gates[static_cast<size_t>(d)]}));
        }
    std::vector<TaskId> experts;
    for (int j = 0; j < D; ++j) {
        const double tokens = D * toDevice[static_cast<size_t>(j)];
        out.tokensPerExpertDevice.push_back(tokens);
        const double flops = 2 * MatmulFlops(tokens, s.ffnHidden, s.hidden);
        auto deps = arriving[static_cast<size_t>(j)];
        deps.push_back(gates[static_cast<size_t>(j)]);
        experts.push_back(w.Add(ComputeTask{j, ComputeSeconds(flops, s.speed.peakFlops, s.speed.efficiency), flops, false,
                                            SpanCategory::Forward, TaskTags{ffn, kNone, j, 0}}, deps));
    }
    std::vector<std::vector<TaskId>> back(static_cast<size_t>(D));
    for (int k = 1; k < D; ++k)
        for (int j = 0; j < D; ++j) {
            const int d = (j + k) % D; // expert device j returns the tokens of device d
            back[static_cast<size_t>(d)].push_back(w.Add(MessageTask{j, d, bytesOf(toDevice[static_cast<size_t>(j)]), TaskTags{combine, kNone, k, 0}},
                                                         {experts[static_cast<size_t>(j)]}));
        }
    for (int d = 0; d < D; ++d) {
        auto deps = back[static_cast<size_t>(d)];
        deps.push_back(experts[static_cast<size_t>(d)]);
        w.Add(ComputeTask{d, 0.0, 0.0, false, SpanCategory::Compute, TaskTags{merge}}, deps);
    }
    return out;
}

} // namespace paralens::core
