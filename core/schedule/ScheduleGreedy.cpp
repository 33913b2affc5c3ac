#include "schedule/ScheduleGreedy.hpp"

#include "schedule/ScheduleDeps.hpp"

#include <algorithm>
#include <bit>
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

// The earliest of n times, the lowest index among equals: a tournament tree (each inner node the
// winner of its two halves), so a new time is one walk towards the root.
class Tournament {
public:
    explicit Tournament(size_t n) : m_leaves(std::bit_ceil(std::max<size_t>(n, 1))), m_at(m_leaves, kNever), m_winner(2 * m_leaves)
    {
        for (size_t i = 0; i < m_leaves; ++i) m_winner[m_leaves + i] = i;
        for (size_t node = m_leaves - 1; node >= 1; --node) Play(node);
    }
    static constexpr double kNever = std::numeric_limits<double>::infinity();
    void Set(size_t i, double time)
    {
        m_at[i] = time;
        for (size_t node = (m_leaves + i) / 2; node >= 1; node /= 2) {
            const size_t before = m_winner[node];
            Play(node);
            if (m_winner[node] == before && before != i) break; // the same winner at the same time: nothing above changes
        }
    }
    size_t Winner() const { return m_winner[1]; }
    double At(size_t i) const { return m_at[i]; }

private:
    void Play(size_t node)
    {
        const size_t a = m_winner[2 * node], b = m_winner[2 * node + 1];
        m_winner[node] = m_at[b] < m_at[a] || (m_at[b] == m_at[a] && b < a) ? b : a;
    }
    size_t m_leaves;
    std::vector<double> m_at;
    std::vector<size_t> m_winner;
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
    // The earliest device first, the lowest index among equals. A device's next op depends only on
    // its own state and its neighbours' F and B, so only those are re-evaluated after a step.
    Tournament earliest(static_cast<size_t>(D));
    std::vector<bool> isW(static_cast<size_t>(D), false);
    auto refresh = [&](int d) {
        if (d < 0 || d >= D) return;
        const auto [time, w] = nextOf(d);
        isW[static_cast<size_t>(d)] = w;
        earliest.Set(static_cast<size_t>(d), time);
    };
    for (int d = 0; d < D; ++d) refresh(d);
    while (earliest.At(earliest.Winner()) < Tournament::kNever) {
        const int bestDevice = static_cast<int>(earliest.Winner());
        const double bestTime = earliest.At(earliest.Winner());
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
