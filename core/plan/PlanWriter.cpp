#include "plan/PlanWriter.hpp"

#include <algorithm>
#include <array>

namespace paralens::core {

void PlanWriter::BeginStep(std::string_view phase)
{
    auto& phases = m_plan.phases;
    auto it = std::find(phases.begin(), phases.end(), phase);
    uint16_t index = static_cast<uint16_t>(it - phases.begin());
    if (it == phases.end()) phases.emplace_back(phase);
    PlanStep step;
    step.firstTransfer = static_cast<uint32_t>(m_plan.transfers.size());
    step.phase = index;
    m_plan.steps.push_back(step);
}

void PlanWriter::Send(int src, int dst, TransferOp op, std::span<const Segment> segments, int block)
{
    Transfer t;
    t.src = src;
    t.dst = dst;
    t.op = op;
    t.block = block;
    t.firstSegment = static_cast<uint32_t>(m_plan.segments.size());
    for (const Segment& s : segments) {
        if (s.bytes == 0 && segments.size() > 1) continue;
        m_plan.segments.push_back(s);
        t.bytes += s.bytes;
    }
    t.segmentCount = static_cast<uint32_t>(m_plan.segments.size() - t.firstSegment);
    m_plan.transfers.push_back(t);
    ++m_plan.steps.back().transferCount;
}

void PlanWriter::SendAll(int src, int dst, TransferOp op)
{
    Segment s{0, 0, Bytes()};
    Send(src, dst, op, std::span<const Segment>(&s, 1), -1);
}

void PlanWriter::SendBlocks(int src, int dst, TransferOp op, int firstBlock, int blockCount)
{
    const int p = Ranks();
    const auto& off = m_plan.blockOffsets;
    firstBlock = ((firstBlock % p) + p) % p;
    std::array<Segment, 2> segs{};
    size_t n = 0;
    int endBlock = firstBlock + blockCount;
    if (endBlock <= p) {
        segs[n++] = {off[firstBlock], off[firstBlock], off[endBlock] - off[firstBlock]};
    } else {
        segs[n++] = {off[firstBlock], off[firstBlock], off[p] - off[firstBlock]};
        segs[n++] = {0, 0, off[endBlock - p]};
    }
    Send(src, dst, op, std::span<const Segment>(segs.data(), n), blockCount == 1 ? firstBlock : -1);
}

void PlanWriter::SendAllExceptBlock(int src, int dst, TransferOp op, int skip)
{
    const auto& off = m_plan.blockOffsets;
    std::array<Segment, 2> segs{Segment{0, 0, off[skip]},
                                Segment{off[skip + 1], off[skip + 1], off[Ranks()] - off[skip + 1]}};
    Send(src, dst, op, segs, -1);
}

void PlanWriter::Finish()
{
    auto& steps = m_plan.steps;
    steps.erase(std::remove_if(steps.begin(), steps.end(), [](const PlanStep& s) { return s.transferCount == 0; }),
                steps.end());
}

} // namespace paralens::core
