// gpu/PlanProgram: every Plan of core/ as GPU copies, staging and reductions. Two properties are
// proved on the host for many plans: (1) no two ops that may run at once touch the same bytes
// with one of them writing (so any GPU interleaving gives one result), and (2) running the ops
// gives every rank the collective's expected result (core::ExpectedRegions), byte for byte,
// which is also what the GPU check kernel computes (check::ExpectedPlanByte).
#include "gpu/CheckPattern.hpp"
#include "gpu/PlanProgram.hpp"

#include "plan/Reference.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <sstream>

using namespace paralens;
using namespace paralens::gpu;

namespace {

struct Access {
    int32_t rank;
    bool staging;
    uint64_t begin, end;
    bool write;
};

std::vector<Access> AccessesOf(const PlanProgram& p, const GpuOp& op)
{
    std::vector<Access> out;
    for (const Piece& piece : p.PiecesOf(op)) {
        out.push_back({piece.src.rank, piece.src.staging, piece.src.offset, piece.src.offset + piece.bytes, false});
        out.push_back({piece.dst.rank, piece.dst.staging, piece.dst.offset, piece.dst.offset + piece.bytes, true});
    }
    return out;
}

bool Conflict(const std::vector<Access>& a, const std::vector<Access>& b)
{
    for (const Access& x : a)
        for (const Access& y : b)
            if ((x.write || y.write) && x.rank == y.rank && x.staging == y.staging && x.begin < y.end && y.begin < x.end)
                return true;
    return false;
}

// happens[i][j]: op i finishes before op j starts (stream order and dependencies, transitively).
std::vector<std::vector<bool>> HappensBefore(const PlanProgram& p)
{
    const size_t n = p.ops.size();
    std::vector<std::vector<bool>> hb(n, std::vector<bool>(n, false));
    std::map<int32_t, int64_t> lastOnStream;
    for (size_t j = 0; j < n; ++j) {
        std::vector<size_t> preds;
        auto it = lastOnStream.find(p.ops[j].stream);
        if (it != lastOnStream.end()) preds.push_back(static_cast<size_t>(it->second));
        for (uint32_t d : p.DepsOf(p.ops[j])) preds.push_back(d);
        for (size_t i : preds) {
            hb[i][j] = true;
            for (size_t k = 0; k < n; ++k)
                if (hb[k][i]) hb[k][j] = true;
        }
        lastOnStream[p.ops[j].stream] = static_cast<int64_t>(j);
    }
    return hb;
}

std::string RaceIn(const PlanProgram& p)
{
    const auto hb = HappensBefore(p);
    std::vector<std::vector<Access>> acc;
    for (const GpuOp& op : p.ops) acc.push_back(AccessesOf(p, op));
    for (size_t i = 0; i < p.ops.size(); ++i)
        for (size_t j = i + 1; j < p.ops.size(); ++j)
            if (!hb[i][j] && Conflict(acc[i], acc[j]))
                return "ops " + std::to_string(i) + " and " + std::to_string(j) + " may run at once and touch the same bytes";
    return {};
}

// Runs the ops in issue order on byte arrays; returns the first wrong byte, or "".
std::string RunAndCheck(const core::Plan& plan, const PlanProgram& p, uint64_t seed)
{
    const int ranks = plan.Ranks();
    std::vector<std::vector<uint8_t>> buf(static_cast<size_t>(ranks), std::vector<uint8_t>(p.bufferBytes));
    std::vector<std::vector<uint8_t>> stage(static_cast<size_t>(ranks), std::vector<uint8_t>(p.stagingBytes, 0xAA));
    for (int r = 0; r < ranks; ++r)
        for (uint64_t o = 0; o < p.bufferBytes; ++o) buf[static_cast<size_t>(r)][o] = check::PlanByte(seed, r, o);
    auto at = [&](const BufferRef& b) -> uint8_t* {
        return (b.staging ? stage : buf)[static_cast<size_t>(b.rank)].data() + b.offset;
    };
    for (const GpuOp& op : p.ops)
        for (const Piece& piece : p.PiecesOf(op)) {
            uint8_t* d = at(piece.dst);
            const uint8_t* s = at(piece.src);
            for (uint64_t i = 0; i < piece.bytes; ++i) d[i] = op.kind == GpuOpKind::Reduce ? static_cast<uint8_t>(d[i] + s[i]) : s[i];
        }
    for (int r = 0; r < ranks; ++r)
        for (const core::ExpectedRegion& region : core::ExpectedRegions(plan, r)) {
            const check::PlanRegion dev{region.offset, region.bytes, region.kind == core::ExpectedRegion::Kind::SumOfAll ? 1 : 0,
                                        region.sourceRank, region.sourceOffset};
            for (uint64_t i = 0; i < region.bytes; ++i) {
                const uint8_t want = static_cast<uint8_t>(core::ExpectedValue(region, i, ranks, seed));
                if (check::ExpectedPlanByte(dev, i, ranks, seed) != want) return "check::ExpectedPlanByte differs from core";
                const uint8_t got = buf[static_cast<size_t>(r)][region.offset + i];
                if (got != want) {
                    std::ostringstream os;
                    os << "rank " << r << " byte " << region.offset + i << " (" << region.what << "): expected "
                       << int(want) << ", found " << int(got);
                    return os.str();
                }
            }
        }
    return {};
}

} // namespace

TEST_CASE("the GPU's reference values are core's, bit for bit", "[gpu]")
{
    for (uint64_t seed : {1ull, 7ull, 123456789ull})
        for (int rank : {0, 1, 5, 63})
            for (uint64_t off : {0ull, 1ull, 255ull, 1ull << 33})
                CHECK(check::ReferenceValue(seed, rank, off) == core::ReferenceValue(seed, rank, off));
}

TEST_CASE("every plan runs race-free on GPU streams and gives the collective's result", "[gpu]")
{
    int plans = 0;
    for (core::Collective c : core::AllCollectives())
        for (core::Algorithm a : core::AlgorithmsFor(c))
            for (int p : {1, 2, 3, 4, 5, 8})
                for (uint64_t n : {1ull, 7ull, 64ull, 1000ull}) {
                    core::CollectiveSpec spec;
                    spec.collective = c;
                    spec.algorithm = a;
                    spec.ranks = p;
                    spec.bytes = n;
                    spec.root = p > 2 ? 2 : 0;
                    const core::Plan plan = core::BuildPlan(spec);
                    const PlanProgram prog = BuildPlanProgram(plan);
                    INFO(core::Name(c) << " / " << core::Name(a) << " p=" << p << " n=" << n);
                    REQUIRE(RaceIn(prog).empty());
                    REQUIRE(RunAndCheck(plan, prog, 3).empty());
                    for (size_t i = 0; i < prog.ops.size(); ++i)
                        for (uint32_t d : prog.DepsOf(prog.ops[i])) REQUIRE(d < i);
                    ++plans;
                }
    CHECK(plans > 300);
}

TEST_CASE("a ring allreduce reduces through staging and gathers straight into place", "[gpu]")
{
    core::CollectiveSpec spec;
    spec.collective = core::Collective::AllReduce;
    spec.algorithm = core::Algorithm::Ring;
    spec.ranks = 4;
    spec.bytes = 4096;
    const core::Plan plan = core::BuildPlan(spec);
    const PlanProgram prog = BuildPlanProgram(plan);
    size_t transfers = 0, reduces = 0, applies = 0;
    for (const GpuOp& op : prog.ops) {
        transfers += op.kind == GpuOpKind::Transfer;
        reduces += op.kind == GpuOpKind::Reduce;
        applies += op.kind == GpuOpKind::Apply;
        if (op.kind == GpuOpKind::Transfer) CHECK(op.stream == SendStream(op.src));
        else CHECK(op.stream == RecvStream(op.dst));
    }
    CHECK(transfers == plan.transfers.size());
    CHECK(transfers == 2 * 3 * 4);
    CHECK(reduces == 3 * 4);  // the reduce-scatter half
    CHECK(applies == 0);      // allgather copies write blocks nobody reads in that step
    CHECK(prog.stagedTransfers == 12);
    CHECK(prog.stagingBytes == 1024); // one block of 1 KiB per step
    CHECK(prog.BytesPerRank() == 4096 + 1024);
    // Ring steps are not serialised: the first step's four transfers wait for nothing.
    for (size_t i = 0; i < 4; ++i) CHECK(prog.ops[i].depCount == 0);
}

TEST_CASE("a full-vector exchange stages its copies and applies them after the step's reads", "[gpu]")
{
    core::CollectiveSpec spec;
    spec.collective = core::Collective::AllReduce;
    spec.algorithm = core::Algorithm::RecursiveDoubling;
    spec.ranks = 4;
    spec.bytes = 256;
    const PlanProgram prog = BuildPlanProgram(core::BuildPlan(spec));
    CHECK(prog.stagedTransfers == prog.ops.size() / 2); // every transfer staged, each with its reduction
    CHECK(prog.stagingBytes == 256);
    // The first reduction waits for its rank's own send of that step (write after read).
    const GpuOp& reduce = prog.ops[4];
    REQUIRE(reduce.kind == GpuOpKind::Reduce);
    bool waitsForOwnSend = false;
    for (uint32_t d : prog.DepsOf(reduce)) waitsForOwnSend |= prog.ops[d].src == reduce.dst;
    CHECK(waitsForOwnSend);
}

TEST_CASE("plan ops are labelled for NVTX and carry the alpha-beta prediction", "[gpu]")
{
    GpuOp op;
    op.kind = GpuOpKind::Transfer;
    op.src = 2;
    op.dst = 3;
    op.bytes = 1000000;
    const OpLabelParts x = DescribeOp(op, 5e-6, 1e-11);
    CHECK(x.name == "2>3");
    CHECK(x.category == core::SpanCategory::Send);
    CHECK(x.predictedNs == 5000 + 10000);
    CHECK(DescribeOp(op, 0, 0).predictedNs == core::kNoPrediction);
    op.kind = GpuOpKind::Reduce;
    CHECK(DescribeOp(op, 5e-6, 1e-11).category == core::SpanCategory::Compute);
    op.kind = GpuOpKind::Apply;
    CHECK(DescribeOp(op, 5e-6, 1e-11).category == core::SpanCategory::Memcpy);
}

TEST_CASE("a swap within one step stages its copies, so both ranks read the old bytes", "[gpu]")
{
    // No collective of core/ swaps overlapping bytes by plain copies in one step, so build one.
    core::Plan plan;
    plan.spec.ranks = 2;
    plan.spec.bytes = 16;
    plan.bufferBytes = 16;
    plan.blockOffsets = {0, 8, 16};
    plan.phases = {"swap"};
    plan.steps = {core::PlanStep{0, 2, 0}};
    plan.segments = {core::Segment{0, 0, 8}, core::Segment{0, 0, 8}};
    plan.transfers = {core::Transfer{0, 1, 0, 1, 8, -1, core::TransferOp::Copy},
                      core::Transfer{1, 0, 1, 1, 8, -1, core::TransferOp::Copy}};
    const PlanProgram prog = BuildPlanProgram(plan);
    CHECK(prog.stagedTransfers == 2);
    REQUIRE(prog.ops.size() == 4);
    CHECK(prog.ops[2].kind == GpuOpKind::Apply);
    CHECK(RaceIn(prog).empty());
    // Run it: rank 0 must end with rank 1's old bytes and the other way round.
    std::vector<std::vector<uint8_t>> buf(2, std::vector<uint8_t>(16)), stage(2, std::vector<uint8_t>(prog.stagingBytes));
    for (int r = 0; r < 2; ++r)
        for (uint64_t o = 0; o < 16; ++o) buf[static_cast<size_t>(r)][o] = check::PlanByte(9, r, o);
    const auto initial = buf;
    for (const GpuOp& op : prog.ops)
        for (const Piece& p : prog.PiecesOf(op)) {
            auto& d = (p.dst.staging ? stage : buf)[static_cast<size_t>(p.dst.rank)];
            const auto& s = (p.src.staging ? stage : buf)[static_cast<size_t>(p.src.rank)];
            for (uint64_t i = 0; i < p.bytes; ++i) d[p.dst.offset + i] = s[p.src.offset + i];
        }
    for (uint64_t o = 0; o < 8; ++o) {
        CHECK(buf[0][o] == initial[1][o]);
        CHECK(buf[1][o] == initial[0][o]);
    }
}
