// A pipeline schedule's step time for the planner, from the real schedule (BuildSchedule): its ops
// in execution order with their dependencies, replayed with each stage's and chunk's op times and
// a fixed time per stage-to-stage send. This is SimulatePipeline's timing without building a Workload or Trace
// (tests hold the two equal while sends are at most a tenth of an op, as in every plan; longer
// ones would queue on the simulator's single-port links, which this does not model), fast enough to time thousands of configurations. Also the peak
// number of micro-batches whose activations each stage holds (F stores them; B frees them, or W
// when the schedule splits the weight gradient off).
// Structures are cached process-wide by their shape; thread-safe.
#pragma once

#include "schedule/Schedule.hpp"

#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

namespace paralens::core {

struct PipelineShape {
    ScheduleKind kind = ScheduleKind::OneFOneB;
    int stages = 1, microBatches = 1, chunks = 1;
};

struct PipelineStructure {
    PipelineShape shape;
    // One op, packed for the replay (12 bytes): the ops it waits for by index + 1 (0: none), and
    // whether each comes from another stage (a send).
    struct Op {
        int32_t from0, from1;
        uint16_t device;
        uint8_t kind;  // PipeOpKind
        uint8_t cross; // bit 0: from0 is on another stage, bit 1: from1
        int32_t Dep(int j) const { return (j == 0 ? from0 : from1) - 1; } // -1: none
        bool Cross(int j) const { return (cross >> j) & 1; }
    };
    // Ops in a valid execution order (by wavefront: each after its stage's previous op and its
    // producers), with each op's micro-batch and chunk beside them.
    std::vector<Op> ops;
    std::vector<int32_t> microBatch, chunk;
    std::vector<double> peakInFlight; // per stage, in micro-batches through the whole stage (chunks / v)
    // The replay keeps op ends in a ring of ringMask + 1 slots (a power of two): an op's end is
    // read only by ops on other stages (its own stage's later ops start after its stage's last
    // end, which is never earlier), and those come at most ringMask ops after it in `ops`, so a
    // replay's memory is the ring's, not the whole schedule's (1F1B on 128 stages x 1024
    // micro-batches: 16K slots for 262K ops).
    uint32_t ringMask = 0;
    // The ring slot op `i`'s end is kept in (1 + i mod ring; slot 0 is "no producer": 0), and the
    // slot an op reads its dependency `j` from (0 where it is on the op's own stage or none).
    size_t EndSlot(size_t i) const { return (i & ringMask) + 1; }
    size_t RingSlots() const { return size_t{ringMask} + 2; } // the ring and slot 0
    size_t ReadSlot(const Op& op, int j) const { return op.Cross(j) ? EndSlot(static_cast<size_t>(op.Dep(j))) : 0; }
};

// What a structure is cached under (every schedule's order is built without the op times): equal
// keys, one structure.
using PipelineCacheKey = std::tuple<int, int, int, int>;
PipelineCacheKey CacheKey(const PipelineShape& shape);

// Throws Error (BuildSchedule's) for a shape the schedule does not allow.
std::shared_ptr<const PipelineStructure> PipelineStructureOf(const PipelineShape& shape);

struct PipelineOpTimes { // one micro-batch through a whole stage (all v chunks); seconds
    double forward = 0;
    double backward = 0; // recomputation included
    double weight = 0;   // the part of backward a split schedule runs as W
    double send = 0;     // one activation or gradient between stages
    // Each op's share of the times above by its stage and chunk (index stage x v + chunk), where
    // stages or chunks hold different work (the output layer's, uneven stages, a layout); the
    // bounding stage's shares sum to 1, a lighter stage's to less. Not owned; null: 1 / v each.
    const std::vector<double>* share = nullptr;
};

// The makespan of the F/B/W ops (no optimizer).
double PipelineSeconds(const PipelineStructure& s, const PipelineOpTimes& t);

// How PipelineSecondsBatch runs its lanes: four to an instruction where the CPU has AVX (x86-64,
// checked at run time), two otherwise (SSE2), or two everywhere (Portable: what tests compare).
enum class ReplayPath { Fastest, Portable };

// PipelineSeconds of each of `times` on one structure, bit for bit, their replays side by side
// (lanes of one pass over the ops, which a search's candidates of one shape share): out[i] for
// times[i]. `out` has times.size() elements.
void PipelineSecondsBatch(const PipelineStructure& s, const std::vector<PipelineOpTimes>& times, double* out,
                          ReplayPath path = ReplayPath::Fastest);

} // namespace paralens::core
