// ValidateSchedule and ExecutionOrder: the schedule executed abstractly (no times).
#include "schedule/Schedule.hpp"
#include "schedule/ScheduleDeps.hpp"

#include <sstream>

namespace paralens::core {

namespace {

std::string Describe(const OpKey& k, int stages)
{
    static const char* kNames[] = {"F", "B", "W"};
    std::ostringstream os;
    os << kNames[static_cast<int>(k.kind)] << "(micro-batch " << k.microBatch << ", chunk " << k.virtualStage / stages
       << ") on stage " << k.virtualStage % stages;
    return os.str();
}

// Runs the devices' programs; `onRun(device, index)` for each op in a valid order. Returns the
// number of ops run.
template <class OnRun>
size_t Execute(const Schedule& s, OnRun&& onRun, std::vector<size_t>& next)
{
    const int D = s.spec.stages, V = s.spec.VirtualStages();
    OpTableOf<int8_t> done(s.spec.TotalMicroBatches(), V);
    next.assign(static_cast<size_t>(D), 0);
    // A ring of devices to look at; each device is in it at most once.
    std::vector<int> ring(static_cast<size_t>(D) + 1);
    size_t head = 0, tail = 0;
    auto push = [&](int d) {
        ring[tail] = d;
        tail = (tail + 1) % ring.size();
    };
    std::vector<bool> queued(static_cast<size_t>(D), true);
    for (int d = 0; d < D; ++d) push(d);
    size_t ran = 0;
    std::array<OpKey, 2> deps{};
    while (head != tail) {
        const int d = ring[head];
        head = (head + 1) % ring.size();
        queued[static_cast<size_t>(d)] = false;
        const auto& ops = s.stages[static_cast<size_t>(d)];
        size_t& i = next[static_cast<size_t>(d)];
        while (i < ops.size()) {
            const OpKey key = KeyOf(ops[i], d, D);
            if (!done.Contains(key)) break;
            int n = DependenciesOf(key, V, deps);
            bool ready = true;
            for (int j = 0; j < n; ++j) ready = ready && done[deps[j]] > 0;
            if (!ready) break;
            done[key] = 1;
            onRun(d, static_cast<int>(i));
            ++i;
            ++ran;
            for (int nb : {d - 1, d + 1, d + 1 - D, d - 1 + D}) { // owners of the ops that wait on this one
                if (nb < 0 || nb >= D || queued[static_cast<size_t>(nb)]) continue;
                queued[static_cast<size_t>(nb)] = true;
                push(nb);
            }
        }
    }
    return ran;
}

} // namespace

std::vector<std::pair<int, int>> ExecutionOrder(const Schedule& s)
{
    std::vector<std::pair<int, int>> order;
    size_t total = 0;
    for (const auto& ops : s.stages) total += ops.size();
    order.reserve(total);
    std::vector<size_t> next;
    size_t ran = Execute(s, [&](int d, int i) { order.emplace_back(d, i); }, next);
    if (ran != total) order.clear();
    return order;
}

ScheduleCheck ValidateSchedule(const Schedule& s, const std::function<void(int device, int index)>& onRun)
{
    const int D = s.spec.stages, V = s.spec.VirtualStages(), M = s.spec.TotalMicroBatches();
    ScheduleCheck out;
    if (static_cast<int>(s.stages.size()) != D) {
        out.message = "the schedule has " + std::to_string(s.stages.size()) + " stages, expected " + std::to_string(D);
        return out;
    }
    OpTableOf<int8_t> seen(M, V);
    for (int d = 0; d < D; ++d) {
        for (const PipeOp& op : s.stages[static_cast<size_t>(d)]) {
            const OpKey k = KeyOf(op, d, D);
            if (!seen.Contains(k) || op.chunk < 0 || op.chunk >= s.spec.chunks) {
                out.message = "stage " + std::to_string(d) + " has an op outside the model: micro-batch " +
                              std::to_string(op.microBatch) + ", chunk " + std::to_string(op.chunk);
                return out;
            }
            if (op.kind == PipeOpKind::WeightGrad && !s.spec.SplitsWeightGrad()) {
                out.message = "stage " + std::to_string(d) + " runs a separate W, but " + std::string(Name(s.spec.kind)) +
                              " does not split the weight gradient";
                return out;
            }
            if (seen[k] >= 0) {
                out.message = Describe(k, D) + " runs twice";
                return out;
            }
            seen[k] = 1;
        }
    }
    for (int m = 0; m < M; ++m)
        for (int vs = 0; vs < V; ++vs)
            for (PipeOpKind kind : {PipeOpKind::Forward, PipeOpKind::Backward, PipeOpKind::WeightGrad}) {
                if (kind == PipeOpKind::WeightGrad && !s.spec.SplitsWeightGrad()) continue;
                if (seen[{kind, m, vs}] < 0) {
                    out.message = Describe({kind, m, vs}, D) + " never runs";
                    return out;
                }
            }
    std::vector<size_t> next;
    size_t total = 0;
    for (const auto& ops : s.stages) total += ops.size();
    if (Execute(s, onRun, next) != total) {
        std::ostringstream os;
        os << "the schedule deadlocks:";
        for (int d = 0; d < D; ++d)
            if (next[static_cast<size_t>(d)] < s.stages[static_cast<size_t>(d)].size())
                os << " stage " << d << " waits at " << Describe(KeyOf(s.stages[static_cast<size_t>(d)][next[static_cast<size_t>(d)]], d, D), D) << ";";
        out.message = os.str();
        return out;
    }
    out.ok = true;
    return out;
}

ScheduleCheck ValidateSchedule(const Schedule& s, std::vector<std::pair<int, int>>* order)
{
    if (!order) return ValidateSchedule(s, [](int, int) {});
    order->clear();
    size_t total = 0;
    for (const auto& ops : s.stages) total += ops.size();
    order->reserve(total);
    ScheduleCheck check = ValidateSchedule(s, [&](int d, int i) { order->emplace_back(d, i); });
    if (!check.ok) order->clear();
    return check;
}

} // namespace paralens::core
