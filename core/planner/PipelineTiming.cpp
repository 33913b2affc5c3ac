#include "planner/PipelineTiming.hpp"

#include "common/Error.hpp"
#include "schedule/ScheduleDeps.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__EMSCRIPTEN__)
#include <immintrin.h>
#endif

namespace paralens::core {

namespace {

// Reorders the ops by wavefront: each op after its device's previous op and its producers, ops of
// one wavefront side by side. Any order that keeps each device's order and every dependency gives
// the same times (each op's start is the max of its device's last end and its producers' ends), but
// ExecutionOrder runs a device until it blocks, so neighbouring ops mostly wait on each other; side
// by side, the replay's neighbouring ops are independent and the CPU overlaps them.
void ByWavefront(PipelineStructure& s, int stages)
{
    const size_t n = s.ops.size();
    std::vector<int32_t> level(n), lastOfDevice(static_cast<size_t>(stages), -1);
    int32_t levels = 0;
    for (size_t i = 0; i < n; ++i) {
        const PipelineStructure::Op& op = s.ops[i];
        int32_t l = lastOfDevice[op.device];
        for (int j = 0; j < 2; ++j)
            if (op.Dep(j) >= 0) l = std::max(l, level[static_cast<size_t>(op.Dep(j))]);
        level[i] = lastOfDevice[op.device] = l + 1;
        levels = std::max(levels, l + 2);
    }
    std::vector<int32_t> at(static_cast<size_t>(levels) + 1, 0), place(n); // a counting sort, stable
    for (int32_t l : level) ++at[static_cast<size_t>(l) + 1];
    for (size_t l = 1; l < at.size(); ++l) at[l] += at[l - 1];
    for (size_t i = 0; i < n; ++i) place[i] = at[static_cast<size_t>(level[i])]++;
    auto permute = [&](auto& v) {
        std::remove_reference_t<decltype(v)> out(n);
        for (size_t i = 0; i < n; ++i) out[static_cast<size_t>(place[i])] = v[i];
        v = std::move(out);
    };
    for (PipelineStructure::Op& op : s.ops)
        for (int32_t* from : {&op.from0, &op.from1})
            if (*from > 0) *from = place[static_cast<size_t>(*from - 1)] + 1;
    permute(s.ops);
    permute(s.microBatch);
    permute(s.chunk);
}

// The ring a replay needs: more slots than the farthest an op on another stage reads back.
void RingOf(PipelineStructure& s)
{
    size_t farthest = 1;
    for (size_t i = 0; i < s.ops.size(); ++i)
        for (int j = 0; j < 2; ++j)
            if (s.ops[i].Cross(j)) farthest = std::max(farthest, i - static_cast<size_t>(s.ops[i].Dep(j)));
    size_t ring = 1;
    while (ring <= farthest) ring <<= 1;
    Require(static_cast<uint64_t>(ring) <= (uint64_t{1} << 32), "a pipeline whose ops read back more than 2^32 ops: too large to replay");
    s.ringMask = static_cast<uint32_t>(ring - 1);
}

std::shared_ptr<const PipelineStructure> Build(const PipelineShape& shape)
{
    PipelineSpec spec;
    spec.kind = shape.kind;
    spec.stages = shape.stages;
    spec.microBatches = shape.microBatches;
    spec.chunks = shape.chunks;
    Require(shape.stages <= 65535, "a pipeline of " + std::to_string(shape.stages) + " stages: at most 65535");
    const Schedule schedule = BuildSchedule(spec);
    const std::vector<std::pair<int, int>> order = ExecutionOrder(schedule);
    const int D = spec.stages, V = spec.VirtualStages();
    auto out = std::make_shared<PipelineStructure>();
    out->shape = shape;
    const size_t n = order.size();
    out->ops.reserve(n);
    out->microBatch.reserve(n);
    out->chunk.reserve(n);
    OpTableOf<int32_t> index(spec.TotalMicroBatches(), V);
    std::array<OpKey, 2> deps{};
    for (const auto& [d, i] : order) {
        const PipeOp& op = schedule.stages[static_cast<size_t>(d)][static_cast<size_t>(i)];
        const OpKey key = KeyOf(op, d, D);
        const int count = DependenciesOf(key, V, deps);
        int32_t from[2] = {0, 0};
        uint8_t cross = 0;
        for (int j = 0; j < count; ++j) {
            from[j] = index[deps[static_cast<size_t>(j)]] + 1;
            if (DeviceOf(deps[static_cast<size_t>(j)].virtualStage, D) != d) cross |= static_cast<uint8_t>(1 << j);
        }
        index[key] = static_cast<int32_t>(out->ops.size());
        out->ops.push_back({from[0], from[1], static_cast<uint16_t>(d), static_cast<uint8_t>(op.kind), cross});
        out->microBatch.push_back(op.microBatch);
        out->chunk.push_back(op.chunk);
    }
    ByWavefront(*out, D);
    RingOf(*out);
    // Activations held: F stores one chunk's, B frees it; W when the weight gradient is split off,
    // since the weight gradient needs the layer inputs (zb-h1: D on every stage, 1F1B's D - s F to B).
    const PipeOpKind frees = spec.SplitsWeightGrad() ? PipeOpKind::WeightGrad : PipeOpKind::Backward;
    out->peakInFlight.assign(static_cast<size_t>(D), 0.0);
    for (int d = 0; d < D; ++d) {
        int held = 0, peak = 0;
        for (const PipeOp& op : schedule.stages[static_cast<size_t>(d)]) {
            if (op.kind == PipeOpKind::Forward) peak = std::max(peak, ++held);
            else if (op.kind == frees) --held;
        }
        out->peakInFlight[static_cast<size_t>(d)] = static_cast<double>(peak) / spec.chunks;
    }
    return out;
}

} // namespace

PipelineCacheKey CacheKey(const PipelineShape& shape)
{
    return {static_cast<int>(shape.kind), shape.stages, shape.microBatches, shape.chunks};
}

std::shared_ptr<const PipelineStructure> PipelineStructureOf(const PipelineShape& shape)
{
    static std::mutex mutex;
    static std::map<PipelineCacheKey, std::shared_ptr<const PipelineStructure>> cache;
    const PipelineCacheKey key = CacheKey(shape);
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    std::shared_ptr<const PipelineStructure> built = Build(shape);
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() > 4096) cache.clear(); // bounded: a long session of slider moves
    cache.emplace(key, built);
    return built;
}

double PipelineSeconds(const PipelineStructure& s, const PipelineOpTimes& t)
{
    const double v = s.shape.chunks;
    const bool split = s.shape.kind == ScheduleKind::ZeroBubbleH1;
    const double dur[3] = {t.forward / v, (split ? t.backward - t.weight : t.backward) / v, t.weight / v};
    const double send[4] = {0.0, t.send, 0.0, t.send}; // by a cross flag's bits
    // end[0] is "no producer" (0: every start is at least 0); op i's end is in the ring's slot
    // s.EndSlot(i). Each slot is written before it is read, so the buffer is reused as it is. A
    // dependency on the op's own stage is read as no producer: the stage's last end is as late.
    static thread_local std::vector<double> buffer;
    const size_t n = s.ops.size();
    if (buffer.size() < s.RingSlots()) buffer.resize(s.RingSlots());
    double* const end = buffer.data();
    end[0] = 0.0;
    std::vector<double> free(static_cast<size_t>(s.shape.stages), 0.0);
    const PipelineStructure::Op* op = s.ops.data();
    if (!t.share) {
        for (size_t i = 0; i < n; ++i, ++op) {
            double& stageFree = free[op->device];
            const double start = std::max({stageFree, end[s.ReadSlot(*op, 0)] + send[op->cross & 1], end[s.ReadSlot(*op, 1)] + send[op->cross >> 1]});
            end[s.EndSlot(i)] = stageFree = start + dur[op->kind];
        }
    } else { // each op at its stage's and chunk's share of the whole micro-batch's time
        Require(t.share->size() == static_cast<size_t>(s.shape.stages * s.shape.chunks), "PipelineSeconds: a share for each stage and chunk");
        const double* share = t.share->data();
        const double whole[3] = {t.forward, split ? t.backward - t.weight : t.backward, t.weight};
        const int32_t* chunk = s.chunk.data();
        const int chunks = s.shape.chunks;
        for (size_t i = 0; i < n; ++i, ++op) {
            double& stageFree = free[op->device];
            const double start = std::max({stageFree, end[s.ReadSlot(*op, 0)] + send[op->cross & 1], end[s.ReadSlot(*op, 1)] + send[op->cross >> 1]});
            end[s.EndSlot(i)] = stageFree = start + whole[op->kind] * share[op->device * chunks + chunk[i]];
        }
    }
    // A stage's ops run one after another, so its last op ends last: the makespan is the latest.
    double makespan = 0.0;
    for (double f : free) makespan = std::max(makespan, f);
    return makespan;
}

namespace {

constexpr size_t kLanes = 8; // the most replays of one pass

// Two lanes at a time where the CPU has SSE2 (every x86-64), one otherwise: the same operations
// on each lane as PipelineSeconds's (max(x, m) is x > m ? x : m, as std::max takes it).
#if defined(__SSE2__)
struct Pair {
    __m128d v;
    static Pair Load(const double* p) { return {_mm_loadu_pd(p)}; }
    void Store(double* p) const { _mm_storeu_pd(p, v); }
    Pair operator+(Pair o) const { return {_mm_add_pd(v, o.v)}; }
    Pair AtLeast(Pair x) const { return {_mm_max_pd(x.v, v)}; } // x > this ? x : this
};
#else
struct Pair {
    double a, b;
    static Pair Load(const double* p) { return {p[0], p[1]}; }
    void Store(double* p) const { p[0] = a, p[1] = b; }
    Pair operator+(Pair o) const { return {a + o.a, b + o.b}; }
    Pair AtLeast(Pair x) const { return {a < x.a ? x.a : a, b < x.b ? x.b : b}; }
};
#endif

// One pass's state: each op's duration on each lane ([kind][stage x v + chunk][lane]), each lane's
// send, the ring of op ends and each stage's last end, Width doubles per slot.
struct LanePass {
    const PipelineStructure* s;
    const double* durations;
    size_t places;
    const double* send;
    const double* zero;
    double* end;
    double* free;
};

// Where op i's lanes read and write: its stage's last end, its producers' ends and sends (the zero
// lanes where a producer is on its own stage or none), its duration, and its end's ring slot.
struct OpLanes {
    double* stageFree;
    const double *e0, *s0, *e1, *s1, *d;
    double* e;
};

template <size_t Width>
[[gnu::always_inline]] inline OpLanes LanesOf(const LanePass& p, size_t i)
{
    const PipelineStructure& s = *p.s;
    const PipelineStructure::Op& op = s.ops[i];
    const size_t place = op.device * static_cast<size_t>(s.shape.chunks) + static_cast<size_t>(s.chunk[i]);
    return {p.free + op.device * Width,
            p.end + s.ReadSlot(op, 0) * Width,
            op.cross & 1 ? p.send : p.zero,
            p.end + s.ReadSlot(op, 1) * Width,
            op.cross & 2 ? p.send : p.zero,
            p.durations + (op.kind * p.places + place) * Width,
            p.end + s.EndSlot(i) * Width};
}

// PipelineSeconds's loop with a lane per replay, each lane's arithmetic in PipelineSeconds's order
// (so its result is the same double).
template <size_t Width>
void ReplayLoop(const LanePass& p)
{
    static_assert(Width % 2 == 0);
    for (size_t i = 0, n = p.s->ops.size(); i < n; ++i) {
        const OpLanes o = LanesOf<Width>(p, i);
        for (size_t k = 0; k < Width; k += 2) {
            const Pair start = Pair::Load(o.stageFree + k).AtLeast(Pair::Load(o.e0 + k) + Pair::Load(o.s0 + k)).AtLeast(Pair::Load(o.e1 + k) + Pair::Load(o.s1 + k));
            const Pair finish = start + Pair::Load(o.d + k);
            finish.Store(o.e + k);
            finish.Store(o.stageFree + k);
        }
    }
}

// The same loop four lanes to an instruction, where the CPU has AVX (checked when the process
// runs: the build targets every x86-64). Only intrinsics and inline accessors in it, so nothing
// compiled for AVX is shared with code that runs without it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__EMSCRIPTEN__)
#define PARALENS_REPLAY_AVX 1
template <size_t Width>
__attribute__((target("avx"))) void ReplayLoopAvx(const LanePass& p)
{
    static_assert(Width % 4 == 0);
    for (size_t i = 0, n = p.s->ops.size(); i < n; ++i) {
        const OpLanes o = LanesOf<Width>(p, i);
        for (size_t k = 0; k < Width; k += 4) { // max(x, m) as Pair::AtLeast takes it: x > m ? x : m
            __m256d start = _mm256_loadu_pd(o.stageFree + k);
            start = _mm256_max_pd(_mm256_add_pd(_mm256_loadu_pd(o.e0 + k), _mm256_loadu_pd(o.s0 + k)), start);
            start = _mm256_max_pd(_mm256_add_pd(_mm256_loadu_pd(o.e1 + k), _mm256_loadu_pd(o.s1 + k)), start);
            const __m256d finish = _mm256_add_pd(start, _mm256_loadu_pd(o.d + k));
            _mm256_storeu_pd(o.e + k, finish);
            _mm256_storeu_pd(o.stageFree + k, finish);
        }
    }
}

bool HasAvx()
{
    static const bool has = __builtin_cpu_supports("avx");
    return has;
}
#endif

// Up to Width replays of one structure in one pass (ReplayLoop). Each op's duration on each lane
// is looked up, computed before the pass as PipelineSeconds computes it (whole / v, or whole x its
// stage's and chunk's share), so lanes with and without share tables run side by side and an op
// loads its lanes' durations at once.
template <size_t Width>
void ReplayLanes(const PipelineStructure& s, const PipelineOpTimes* t, size_t lanes, double* out, ReplayPath path)
{
    const double v = s.shape.chunks;
    const bool split = s.shape.kind == ScheduleKind::ZeroBubbleH1;
    const size_t places = static_cast<size_t>(s.shape.stages) * static_cast<size_t>(s.shape.chunks); // stage x v + chunk
    static thread_local std::vector<double> durations; // [kind][place][lane]
    durations.resize(3 * places * Width);
    alignas(64) double send[Width], zero[Width] = {};
    for (size_t k = 0; k < Width; ++k) {
        const PipelineOpTimes& x = t[std::min(k, lanes - 1)]; // spare lanes repeat the last
        const double whole[3] = {x.forward, split ? x.backward - x.weight : x.backward, x.weight};
        for (size_t kind = 0; kind < 3; ++kind)
            for (size_t at = 0; at < places; ++at)
                durations[(kind * places + at) * Width + k] = x.share ? whole[kind] * (*x.share)[at] : whole[kind] / v;
        send[k] = x.send;
    }
    static thread_local std::vector<double> buffer;
    if (buffer.size() < s.RingSlots() * Width) buffer.resize(s.RingSlots() * Width);
    std::fill(buffer.begin(), buffer.begin() + Width, 0.0);
    std::vector<double> free(static_cast<size_t>(s.shape.stages) * Width, 0.0);
    const LanePass pass{&s, durations.data(), places, send, zero, buffer.data(), free.data()};
    bool done = false;
#if PARALENS_REPLAY_AVX
    if constexpr (Width % 4 == 0) {
        if (path == ReplayPath::Fastest && HasAvx()) {
            ReplayLoopAvx<Width>(pass);
            done = true;
        }
    }
#endif
    if (!done) ReplayLoop<Width>(pass);
    for (size_t k = 0; k < lanes; ++k) {
        double makespan = 0.0;
        for (int d = 0; d < s.shape.stages; ++d) makespan = std::max(makespan, free[static_cast<size_t>(d) * Width + k]);
        out[k] = makespan;
    }
}

} // namespace

void PipelineSecondsBatch(const PipelineStructure& s, const std::vector<PipelineOpTimes>& times, double* out, ReplayPath path)
{
    for (const PipelineOpTimes& t : times)
        if (t.share)
            Require(t.share->size() == static_cast<size_t>(s.shape.stages * s.shape.chunks), "PipelineSeconds: a share for each stage and chunk");
    for (size_t first = 0; first < times.size();) {
        const size_t lanes = std::min(kLanes, times.size() - first);
        const PipelineOpTimes* lane = times.data() + first;
        if (lanes == 1) out[first] = PipelineSeconds(s, *lane); // as fast alone
        else if (lanes == 2) ReplayLanes<2>(s, lane, 2, out + first, path);
        else if (lanes <= 4) ReplayLanes<4>(s, lane, lanes, out + first, path);
        else ReplayLanes<8>(s, lane, lanes, out + first, path);
        first += lanes;
    }
}

} // namespace paralens::core
