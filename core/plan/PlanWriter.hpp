// Internal helper for the plan builders: appends steps and transfers to a Plan.
#pragma once

#include "plan/Plan.hpp"

#include <string_view>

namespace paralens::core {

class PlanWriter {
public:
    explicit PlanWriter(Plan& plan) : m_plan(plan) {}

    Plan& Target() { return m_plan; }
    int Ranks() const { return m_plan.spec.ranks; }
    uint64_t Bytes() const { return m_plan.spec.bytes; }

    // Starts a new step in the named phase. Empty steps are dropped by Finish().
    void BeginStep(std::string_view phase);

    // The whole vector [0, n) from src to dst.
    void SendAll(int src, int dst, TransferOp op);
    // Blocks first, first+1, ..., first+count-1 (indices taken modulo p), same offsets on both
    // sides; a run that wraps past block p-1 becomes two segments of one message.
    void SendBlocks(int src, int dst, TransferOp op, int firstBlock, int blockCount);
    // Everything except block `skip` (at most two segments).
    void SendAllExceptBlock(int src, int dst, TransferOp op, int skip);
    // A message made of explicit segments.
    void Send(int src, int dst, TransferOp op, std::span<const Segment> segments, int block);

    void Finish();

private:
    Plan& m_plan;
};

} // namespace paralens::core
