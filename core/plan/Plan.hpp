// A Plan is data: the steps of a collective algorithm, each step a set of point-to-point
// transfers. The simulator, the GPU step executor, the flow animation and the CPU reference all
// read the same Plan; nothing re-derives it.
//
// Buffers: every rank has one working buffer of `bufferBytes` bytes. For all collectives except
// all-to-all and send/recv it holds the full vector of n = spec.bytes bytes, split into p blocks
// (block i belongs to rank i; sizes differ by at most alignBytes when n does not divide by p).
// All-to-all and send/recv use 2n bytes: the input in [0, n) and the output in [n, 2n).
//
// Semantics: steps run in order; the transfers of one step read the buffers as they were before
// the step and apply their writes after it (copy overwrites, reduce adds). A transfer whose src
// equals its dst is a local copy that costs nothing in the model.
#pragma once

#include "model/Collective.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace paralens::core {


enum class TransferOp : uint8_t { Copy, Reduce };

// One contiguous piece of a message: bytes [srcOffset, +bytes) of the sender's buffer land at
// [dstOffset, +bytes) of the receiver's.
struct Segment {
    uint64_t srcOffset = 0;
    uint64_t dstOffset = 0;
    uint64_t bytes = 0;
};

// One message (one alpha): one or more segments sent together.
struct Transfer {
    int32_t src = 0;
    int32_t dst = 0;
    uint32_t firstSegment = 0;
    uint32_t segmentCount = 0;
    uint64_t bytes = 0;   // sum of the segments
    int32_t block = -1;   // the block it carries when it carries exactly one, else -1
    TransferOp op = TransferOp::Copy;
};

struct PlanStep {
    uint32_t firstTransfer = 0;
    uint32_t transferCount = 0;
    uint16_t phase = 0; // index into Plan::phases
};

struct Plan {
    CollectiveSpec spec;
    uint64_t bufferBytes = 0;
    std::vector<uint64_t> blockOffsets;  // p + 1 entries; block i = [blockOffsets[i], blockOffsets[i+1])
    std::vector<std::string> phases;     // "reduce-scatter", "allgather", "fold-in", ...
    std::vector<PlanStep> steps;
    std::vector<Transfer> transfers;
    std::vector<Segment> segments;

    int Ranks() const { return spec.ranks; }
    uint64_t BlockBytes(int block) const { return blockOffsets[block + 1] - blockOffsets[block]; }
    std::span<const Transfer> TransfersOf(const PlanStep& s) const
    {
        return std::span<const Transfer>(transfers).subspan(s.firstTransfer, s.transferCount);
    }
    std::span<const Segment> SegmentsOf(const Transfer& t) const
    {
        return std::span<const Segment>(segments).subspan(t.firstSegment, t.segmentCount);
    }
    // Bytes put on the wire by all ranks together (local copies excluded).
    uint64_t WireBytes() const;
};

// Builds the plan. Throws Error when the collective does not support the algorithm, ranks < 1,
// the root is out of range, or bytes is not a multiple of alignBytes.
Plan BuildPlan(const CollectiveSpec& spec);

// The blocks of n bytes over p ranks on multiples of `align`: the first (n/align) % p blocks get
// one more element. Returns p + 1 offsets.
std::vector<uint64_t> SplitIntoBlocks(uint64_t bytes, int parts, uint64_t align);

} // namespace paralens::core
