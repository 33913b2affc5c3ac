// A core Plan turned into GPU work, decided on the host so that it can be tested without a GPU:
// every transfer becomes one copy (a peer copy, a copy within one GPU between virtual ranks, or
// an ncclSend/ncclRecv pair), every reduce transfer a copy into the receiver's staging area plus
// one reduction kernel, and every op lists the earlier ops it must wait for.
//
// The Plan's semantics (core/plan/Plan.hpp): a step's transfers read the buffers as they were
// before the step and apply their writes after it. On a GPU the transfers of a step run at once,
// so a copy writes straight into the receiver's buffer only when no transfer of the same step
// reads those bytes; otherwise it lands in the receiver's staging area and an "apply" copy puts
// it in place once the step's reads are done. Dependencies are tracked per byte range of every
// buffer (read-after-write, write-after-read, write-after-write), so independent transfers of a
// ring step run concurrently and nothing waits on a whole-buffer barrier.
//
// Streams: each rank has a send stream (its outgoing copies) and a receive stream (its staged
// applies and reductions, and in NCCL mode its ncclRecv). Pure data; thread-safe to read.
#pragma once

#include "plan/Plan.hpp"
#include "trace/Trace.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace paralens::gpu {

inline constexpr uint64_t kDeviceAlign = 256; // cudaMalloc's alignment, kept inside shared allocations

struct BufferRef {
    int32_t rank = 0;
    bool staging = false; // the rank's staging area instead of its working buffer
    uint64_t offset = 0;
};

// One contiguous piece an op moves or reduces.
struct Piece {
    BufferRef src;
    BufferRef dst;
    uint64_t bytes = 0;
};

enum class GpuOpKind : uint8_t {
    Transfer, // src rank's buffer -> dst rank's buffer or staging (peer copy / ncclSend+ncclRecv)
    Apply,    // dst rank's staging -> its buffer (a copy within one GPU)
    Reduce,   // dst rank's buffer += its staging, bytewise with wrap-around (the reference's arithmetic)
};

struct GpuOp {
    GpuOpKind kind = GpuOpKind::Transfer;
    int32_t step = 0;
    uint32_t transfer = 0; // index into Plan::transfers
    int32_t src = 0;       // sending rank (Apply/Reduce: the receiver)
    int32_t dst = 0;
    int32_t stream = 0;    // StreamIndex(rank, kind)
    int32_t block = -1;
    uint64_t bytes = 0;
    uint32_t firstPiece = 0, pieceCount = 0;
    uint32_t firstDep = 0, depCount = 0; // ops (indices, all earlier) on other streams to wait for
};

struct PlanProgram {
    int ranks = 0;
    uint64_t bufferBytes = 0;  // the Plan's working buffer per rank
    uint64_t stagingBytes = 0; // the largest staging area any rank needs
    std::vector<GpuOp> ops;    // in issue order: per step, transfers then applies and reductions
    std::vector<Piece> pieces;
    std::vector<uint32_t> deps;
    size_t stagedTransfers = 0;

    std::span<const Piece> PiecesOf(const GpuOp& op) const { return std::span<const Piece>(pieces).subspan(op.firstPiece, op.pieceCount); }
    std::span<const uint32_t> DepsOf(const GpuOp& op) const { return std::span<const uint32_t>(deps).subspan(op.firstDep, op.depCount); }
    // Device bytes one rank needs: its buffer and staging area, each padded to kDeviceAlign.
    uint64_t BytesPerRank() const;
};

// Stream 2r is rank r's send stream, 2r+1 its receive stream.
constexpr int32_t SendStream(int32_t rank) { return 2 * rank; }
constexpr int32_t RecvStream(int32_t rank) { return 2 * rank + 1; }

PlanProgram BuildPlanProgram(const core::Plan& plan);

// The op's label for NVTX and the Trace: name, category, step, ranks, bytes, block, and the
// alpha-beta prediction for transfers (predictedNs = alpha + bytes x beta when alphaSec or
// betaSecPerByte is positive).
struct OpLabelParts {
    std::string name;
    core::SpanCategory category = core::SpanCategory::Send;
    int64_t predictedNs = core::kNoPrediction;
};
OpLabelParts DescribeOp(const GpuOp& op, double alphaSec, double betaSecPerByte);

} // namespace paralens::gpu
