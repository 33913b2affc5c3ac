// The data the GPU workloads start from and the results they must end with, as functions the
// host and the GPU both compile (`__host__ __device__` under nvcc): the check kernels compare
// GPU results with these, and the unit tests hold these to the CPU references of core/ (the Plan
// reference's ReferenceValue/ExpectedValue, and a naive CPU execution of every collective).
// Header-only; no CUDA include; thread-safe (pure functions).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define PARALENS_HD __host__ __device__
#else
#define PARALENS_HD
#endif

namespace paralens::gpu::check {

// ---- Plan executor: bytes, as core/plan/Reference.hpp defines them ----

// core::ReferenceValue, bit for bit (a test holds them equal).
PARALENS_HD inline uint64_t ReferenceValue(uint64_t seed, int rank, uint64_t offset)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + (static_cast<uint64_t>(rank) << 40) + offset;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The initial byte at `offset` of `rank`'s buffer: the low 8 bits of the reference value (a
// reduce adds bytes with wrap-around, so sums keep their low bits exactly).
PARALENS_HD inline uint8_t PlanByte(uint64_t seed, int rank, uint64_t offset)
{
    return static_cast<uint8_t>(ReferenceValue(seed, rank, offset));
}

// core::ExpectedRegion in a form a kernel can take by value.
struct PlanRegion {
    uint64_t offset = 0;
    uint64_t bytes = 0;
    int sumOfAll = 0;     // 0: a copy of sourceRank's bytes, 1: the sum over all ranks
    int sourceRank = 0;
    uint64_t sourceOffset = 0;
};

// The low 8 bits of core::ExpectedValue(region, i, ranks, seed).
PARALENS_HD inline uint8_t ExpectedPlanByte(const PlanRegion& r, uint64_t i, int ranks, uint64_t seed)
{
    if (!r.sumOfAll) return PlanByte(seed, r.sourceRank, r.sourceOffset + i);
    uint8_t sum = 0;
    for (int q = 0; q < ranks; ++q) sum = static_cast<uint8_t>(sum + PlanByte(seed, q, r.sourceOffset + i));
    return sum;
}

// ---- NCCL collectives: elements, as nccl-tests lays out its buffers ----

// The same order as core::Collective (a static_assert in CollectiveMath.cpp holds them equal).
enum class Coll : int { Broadcast, Reduce, Scatter, Gather, AllGather, ReduceScatter, AllReduce, AllToAll, SendRecv };

// One run's buffer shape. `base` is nccl-tests' per-rank count: the whole count for broadcast,
// reduce, allreduce and send/recv; the count of one rank's block for the others.
struct CollShape {
    Coll coll = Coll::AllReduce;
    int ranks = 1;
    int root = 0;
    uint64_t base = 0;
};

PARALENS_HD inline uint64_t SendCount(const CollShape& s)
{
    switch (s.coll) {
    case Coll::Scatter:
    case Coll::ReduceScatter:
    case Coll::AllToAll: return s.base * static_cast<uint64_t>(s.ranks);
    default: return s.base;
    }
}

PARALENS_HD inline uint64_t RecvCount(const CollShape& s)
{
    switch (s.coll) {
    case Coll::Gather:
    case Coll::AllGather:
    case Coll::AllToAll: return s.base * static_cast<uint64_t>(s.ranks);
    default: return s.base;
    }
}

// Element `index` of `rank`'s send buffer: a small integer (0..8), so that sums over up to 32
// ranks are exact even in bf16 (8 significant bits) and results can be compared exactly.
PARALENS_HD inline int PatternValue(uint64_t seed, int rank, uint64_t index)
{
    return static_cast<int>((index * 7u + static_cast<uint64_t>(rank) * 13u + seed * 29u) % 9u);
}

// What element `j` of `rank`'s receive buffer must hold after the collective. Returns false
// where the collective leaves it unspecified (non-root ranks of reduce and gather).
PARALENS_HD inline bool ExpectedCollValue(const CollShape& s, uint64_t seed, int rank, uint64_t j, double* value)
{
    const uint64_t b = s.base;
    switch (s.coll) {
    case Coll::AllReduce:
    case Coll::Reduce: {
        if (s.coll == Coll::Reduce && rank != s.root) return false;
        double sum = 0;
        for (int q = 0; q < s.ranks; ++q) sum += PatternValue(seed, q, j);
        *value = sum;
        return true;
    }
    case Coll::Broadcast: *value = PatternValue(seed, s.root, j); return true;
    case Coll::AllGather:
    case Coll::Gather:
        if (s.coll == Coll::Gather && rank != s.root) return false;
        *value = PatternValue(seed, static_cast<int>(j / b), j % b);
        return true;
    case Coll::ReduceScatter: {
        double sum = 0;
        for (int q = 0; q < s.ranks; ++q) sum += PatternValue(seed, q, static_cast<uint64_t>(rank) * b + j);
        *value = sum;
        return true;
    }
    case Coll::AllToAll: *value = PatternValue(seed, static_cast<int>(j / b), static_cast<uint64_t>(rank) * b + j % b); return true;
    case Coll::Scatter: *value = PatternValue(seed, s.root, static_cast<uint64_t>(rank) * b + j); return true;
    case Coll::SendRecv: *value = PatternValue(seed, (rank + s.ranks - 1) % s.ranks, j); return true;
    }
    return false;
}

} // namespace paralens::gpu::check
