#include "schedule/ScheduleGreedy.hpp"

#include "schedule/ScheduleDeps.hpp"

#include <deque>
#include <limits>

namespace paralens::core {

namespace {

struct Device {
    std::vector<PipeOp> base; // 1F1B order of F and B
    size_t next = 0;
    double clock = 0.0;
    std::deque<int> pendingW; // micro-batches whose B is done and W is not
    std::vector<PipeOp> out;
    bool Finished() const { return next >= base.size() && pendingW.empty(); }
};

} // namespace

std::vector<std::vector<PipeOp>> ZeroBubbleOrder(const PipelineSpec& spec)
{
    const int D = spec.stages, N = spec.TotalMicroBatches();
    std::vector<Device> dev(static_cast<size_t>(D));
    for (int d = 0; d < D; ++d) {
        const int warmup = std::min(D - d - 1, N);
        auto& base = dev[static_cast<size_t>(d)].base;
        for (int i = 0; i < warmup; ++i) base.push_back({PipeOpKind::Forward, i, 0});
        for (int i = 0; i < N - warmup; ++i) {
            base.push_back({PipeOpKind::Forward, warmup + i, 0});
            base.push_back({PipeOpKind::Backward, i, 0});
        }
        for (int i = N - warmup; i < N; ++i) base.push_back({PipeOpKind::Backward, i, 0});
    }
    OpTable endNs(N, D); // end times, in ns, of scheduled F and B ops (-1: not yet)
    auto toNs = [](double s) { return static_cast<int64_t>(s * 1e9 + 0.5); };
    std::array<OpKey, 2> deps{};
    for (;;) {
        int bestDevice = -1;
        double bestTime = std::numeric_limits<double>::infinity();
        bool bestIsW = false;
        for (int d = 0; d < D; ++d) {
            Device& x = dev[static_cast<size_t>(d)];
            if (x.Finished()) continue;
            double when = std::numeric_limits<double>::infinity();
            bool isW = false;
            if (x.next < x.base.size()) {
                const OpKey key = KeyOf(x.base[x.next], d, D);
                const int n = DependenciesOf(key, D, deps);
                double ready = 0.0;
                bool known = true;
                for (int j = 0; j < n; ++j) {
                    const int64_t e = endNs[deps[j]];
                    if (e < 0) known = false;
                    else ready = std::max(ready, static_cast<double>(e) * 1e-9);
                }
                if (known && (ready <= x.clock || x.pendingW.empty())) when = std::max(ready, x.clock);
                else if (!x.pendingW.empty()) { when = x.clock; isW = true; }
            } else {
                when = x.clock;
                isW = true;
            }
            if (when < bestTime) {
                bestTime = when;
                bestDevice = d;
                bestIsW = isW;
            }
        }
        if (bestDevice < 0) break; // all finished (a 1F1B order cannot deadlock)
        Device& x = dev[static_cast<size_t>(bestDevice)];
        const double slow = spec.Slowdown(bestDevice);
        if (bestIsW) {
            x.out.push_back({PipeOpKind::WeightGrad, x.pendingW.front(), 0});
            x.pendingW.pop_front();
            x.clock = bestTime + spec.WeightSec() * slow;
            continue;
        }
        const PipeOp op = x.base[x.next++];
        const double t = op.kind == PipeOpKind::Forward ? spec.forwardSec : spec.BackwardSec() - spec.WeightSec();
        x.clock = bestTime + t * slow;
        endNs[KeyOf(op, bestDevice, D)] = toNs(x.clock);
        if (op.kind == PipeOpKind::Backward) x.pendingW.push_back(op.microBatch);
        x.out.push_back(op);
    }
    std::vector<std::vector<PipeOp>> out;
    for (Device& x : dev) out.push_back(std::move(x.out));
    return out;
}

} // namespace paralens::core
