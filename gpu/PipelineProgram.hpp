// A pipeline Schedule turned into GPU work, decided on the host so that it can be tested without
// a GPU: D stages of MLP blocks (each block h -> f -> h: two GEMMs, no activation function: the
// model FLOPs are the GEMMs'), every F, B and W op of the core Schedule as a list of GEMMs with
// exact FLOPs, and every activation (forward) and gradient (backward) crossing stages as a send
// op on the sender's send stream, issued right after its producer and awaited by its consumer.
//
// Per op and block (m = tokens, row-major): F: H = X Wup, Y = H Wdown. B: G = dY Wdown^T,
// dX = G Wup^T, plus (unless the schedule splits W out) dWdown += H^T dY and dWup += X^T G.
// W: the two weight-gradient GEMMs. Every GEMM is 2 m h f FLOPs, so F = 4 m h f per block, B and
// W together 8 m h f: training = 3 x forward, as the lectures count. With recomputation a
// separate "recompute" op re-runs F's GEMMs before each B (hardware FLOPs, not model FLOPs).
//
// Buffers: each micro-batch has its own activations on each stage (nothing is reused, so no op
// waits for a buffer to be free); the activations a schedule holds at once are read from the
// Trace. Issue order: core::ExecutionOrder, so every event waited for is recorded before.
// Pure data; thread-safe to read.
#pragma once

#include "RunRequest.hpp"

#include "schedule/Schedule.hpp"
#include "trace/Trace.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace paralens::gpu {

// Buffers of one stage. X, H, G, GX are per block of a (chunk, micro-batch); Yout and dY per
// (chunk, micro-batch); the weights per (chunk, block).
enum class PipeBuf : uint8_t { X, H, G, GX, Yout, dY, Wup, Wdown, dWup, dWdown };

struct PipeOperand {
    PipeBuf buf = PipeBuf::X;
    int32_t block = 0;
};

// C (m x n) = op(A) op(B), row-major, op = transpose when asked; C += when accumulate.
struct GemmCall {
    PipeOperand a, b, c;
    bool transA = false, transB = false;
    int32_t m = 0, n = 0, k = 0;
    bool accumulate = false;
    double Flops() const { return 2.0 * m * n * k; }
};

enum class PipeStepKind : uint8_t { Forward, Recompute, Backward, WeightGrad, SendActivation, SendGradient };

struct PipeStep {
    PipeStepKind kind = PipeStepKind::Forward;
    int32_t device = 0;       // the stage (rank) that runs it; for sends, the sender
    int32_t chunk = 0;
    int32_t microBatch = 0;
    int32_t virtualStage = 0; // chunk * D + device
    int32_t peerDevice = -1;  // sends: the receiver and its chunk
    int32_t peerChunk = -1;
    uint64_t bytes = 0;       // sends: m x h x element size
    double modelFlops = 0.0;  // counted for MFU
    double hardwareFlops = 0.0;
    uint32_t firstGemm = 0, gemmCount = 0;
    int32_t waitFor = -1;     // a step on another stream whose completion this one waits for
    bool onSendStream = false;
};

struct PipelineProgram {
    PipelineRun run;
    core::Schedule schedule;
    int blocksPerChunk = 0;
    std::vector<PipeStep> steps; // in issue order
    std::vector<GemmCall> gemms;

    std::span<const GemmCall> GemmsOf(const PipeStep& s) const { return std::span<const GemmCall>(gemms).subspan(s.firstGemm, s.gemmCount); }
    double ModelFlops() const;    // sum over steps
    double HardwareFlops() const;
    uint64_t ElementBytes() const;
    // Elements of one (chunk, micro-batch) activation set and of one chunk's weights and gradients.
    uint64_t ActivationElementsPerMicroBatch() const;
    uint64_t WeightElementsPerChunk() const;
    // Device bytes one stage needs (all micro-batches' activations, weights, gradients).
    uint64_t BytesPerStage() const;
    // Where an operand lives in its stage's one allocation, in elements: the weights and weight
    // gradients of every (chunk, block) first, then the activations of every (chunk, micro-batch).
    uint64_t OperandOffset(const PipeOperand& o, int32_t chunk, int32_t microBatch) const;
    uint64_t OperandElements(const PipeOperand& o) const;
};

// SMs per virtual stage when one GPU's `smCount` SMs are split into `groups` green contexts:
// the even share, rounded down to `alignment` (SMs co-scheduled together) and at least
// `minPartition`; 0 when the GPU cannot be split that finely.
int GreenGroupSize(int smCount, int groups, int minPartition, int alignment);

PipelineProgram BuildPipelineProgram(const PipelineRun& run);

// The step's label parts: "F3", "B3", "W3", "R3" (recompute), "act 3", "grad 3".
struct PipeLabel {
    std::string name;
    core::SpanCategory category = core::SpanCategory::Forward;
    std::string detail;
};
PipeLabel DescribeStep(const PipeStep& step);

} // namespace paralens::gpu
