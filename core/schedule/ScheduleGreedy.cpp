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
    // When device d could start its next op (F/B in 1F1B order, or a deferred W when it would
    // otherwise wait), and whether that op is a W. Infinity when finished or blocked with no W.
    auto nextOf = [&](int d) {
        Device& x = dev[static_cast<size_t>(d)];
        std::array<OpKey, 2> deps{};
        if (x.Finished()) return std::pair{std::numeric_limits<double>::infinity(), false};
        if (x.next >= x.base.size()) return std::pair{x.clock, true};
        const OpKey key = KeyOf(x.base[x.next], d, D);
        const int n = DependenciesOf(key, D, deps);
        double ready = 0.0;
        bool known = true;
        for (int j = 0; j < n; ++j) {
            const int64_t e = endNs[deps[static_cast<size_t>(j)]];
            if (e < 0) known = false;
            else ready = std::max(ready, static_cast<double>(e) * 1e-9);
        }
        if (known && (ready <= x.clock || x.pendingW.empty())) return std::pair{std::max(ready, x.clock), false};
        if (!x.pendingW.empty()) return std::pair{x.clock, true};
        return std::pair{std::numeric_limits<double>::infinity(), false};
    };
    // The earliest device first, the lowest index among equals: a tournament tree over the
    // devices' next times (each inner node the winner of its two halves), so a device's new time
    // is one walk to the root. A device's next op depends only on its own state and its
    // neighbours' F and B, so only those are re-evaluated after a step.
    const double never = std::numeric_limits<double>::infinity();
    size_t leaves = 1;
    while (leaves < static_cast<size_t>(D)) leaves <<= 1;
    std::vector<double> at(leaves, never); // each device's next start (never: finished or blocked)
    std::vector<bool> isW(leaves, false);
    std::vector<int> winner(2 * leaves);
    for (size_t i = 0; i < leaves; ++i) winner[leaves + i] = static_cast<int>(i);
    auto earlier = [&](int a, int b) { return at[static_cast<size_t>(a)] < at[static_cast<size_t>(b)] || (at[static_cast<size_t>(a)] == at[static_cast<size_t>(b)] && a < b); };
    auto play = [&](size_t node) {
        const int a = winner[2 * node], b = winner[2 * node + 1];
        winner[node] = earlier(b, a) ? b : a;
    };
    for (size_t node = leaves - 1; node >= 1; --node) play(node);
    auto refresh = [&](int d) {
        if (d < 0 || d >= D) return;
        const auto [time, w] = nextOf(d);
        at[static_cast<size_t>(d)] = time;
        isW[static_cast<size_t>(d)] = w;
        for (size_t node = (leaves + static_cast<size_t>(d)) / 2; node >= 1; node /= 2) {
            const int before = winner[node];
            play(node);
            if (winner[node] == before && before != d) break; // the same winner at the same time: nothing above changes
        }
    };
    for (int d = 0; d < D; ++d) refresh(d);
    while (at[static_cast<size_t>(winner[1])] < never) {
        const int bestDevice = winner[1];
        const double bestTime = at[static_cast<size_t>(bestDevice)];
        const bool bestIsW = isW[static_cast<size_t>(bestDevice)];
        Device& x = dev[static_cast<size_t>(bestDevice)];
        const double slow = spec.Slowdown(bestDevice);
        if (bestIsW) {
            x.out.push_back({PipeOpKind::WeightGrad, x.pendingW.front(), 0});
            x.pendingW.pop_front();
            x.clock = bestTime + spec.WeightSec() * slow;
        } else {
            const PipeOp op = x.base[x.next++];
            const double t = op.kind == PipeOpKind::Forward ? spec.forwardSec : spec.BackwardSec() - spec.WeightSec();
            x.clock = bestTime + t * slow;
            endNs[KeyOf(op, bestDevice, D)] = toNs(x.clock);
            if (op.kind == PipeOpKind::Backward) x.pendingW.push_back(op.microBatch);
            x.out.push_back(op);
        }
        refresh(bestDevice);
        if (!bestIsW) { // a finished F or B may unblock a neighbour
            refresh(bestDevice - 1);
            refresh(bestDevice + 1);
        }
    }
    std::vector<std::vector<PipeOp>> out;
    for (Device& x : dev) out.push_back(std::move(x.out));
    return out;
}

} // namespace paralens::core
