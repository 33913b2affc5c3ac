// Rooted collectives: the minimum-spanning-tree family and the naive root-to-all baseline.
#include "plan/PlanAlgorithms.hpp"

#include <utility>
#include <vector>

namespace paralens::core {

namespace {

struct Edge {
    int lo, mid, hi; // virtual ranks: lo sends to (or receives from) mid; mid leads [mid, hi)
};

// The edges of the recursive-halving tree, level by level from the root.
std::vector<std::vector<Edge>> TreeLevels(int p)
{
    std::vector<std::vector<Edge>> levels;
    std::vector<std::pair<int, int>> ranges{{0, p}};
    for (;;) {
        std::vector<Edge> level;
        std::vector<std::pair<int, int>> next;
        for (auto [lo, hi] : ranges) {
            if (hi - lo < 2) continue;
            int mid = lo + (hi - lo + 1) / 2;
            level.push_back({lo, mid, hi});
            next.emplace_back(lo, mid);
            next.emplace_back(mid, hi);
        }
        if (level.empty()) break;
        levels.push_back(std::move(level));
        ranges = std::move(next);
    }
    return levels;
}

int Abs(int v, int root, int p) { return (v + root) % p; }

} // namespace

void AppendTreeBroadcast(PlanWriter& w, int root, std::string_view phase)
{
    const int p = w.Ranks();
    for (const auto& level : TreeLevels(p)) {
        w.BeginStep(phase);
        for (const Edge& e : level) w.SendAll(Abs(e.lo, root, p), Abs(e.mid, root, p), TransferOp::Copy);
    }
}

void AppendTreeReduce(PlanWriter& w, int root, std::string_view phase)
{
    const int p = w.Ranks();
    auto levels = TreeLevels(p);
    for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
        w.BeginStep(phase);
        for (const Edge& e : *it) w.SendAll(Abs(e.mid, root, p), Abs(e.lo, root, p), TransferOp::Reduce);
    }
}

void AppendTreeScatter(PlanWriter& w, int root, std::string_view phase)
{
    const int p = w.Ranks();
    for (const auto& level : TreeLevels(p)) {
        w.BeginStep(phase);
        for (const Edge& e : level)
            w.SendBlocks(Abs(e.lo, root, p), Abs(e.mid, root, p), TransferOp::Copy, Abs(e.mid, root, p), e.hi - e.mid);
    }
}

void AppendTreeGather(PlanWriter& w, int root, std::string_view phase)
{
    const int p = w.Ranks();
    auto levels = TreeLevels(p);
    for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
        w.BeginStep(phase);
        for (const Edge& e : *it)
            w.SendBlocks(Abs(e.mid, root, p), Abs(e.lo, root, p), TransferOp::Copy, Abs(e.mid, root, p), e.hi - e.mid);
    }
}

void AppendNaiveBroadcast(PlanWriter& w, int root, std::string_view phase)
{
    const int p = w.Ranks();
    w.BeginStep(phase);
    for (int v = 1; v < p; ++v) w.SendAll(root, Abs(v, root, p), TransferOp::Copy);
}

void AppendNaiveReduce(PlanWriter& w, int root, std::string_view phase)
{
    const int p = w.Ranks();
    w.BeginStep(phase);
    for (int v = 1; v < p; ++v) w.SendAll(Abs(v, root, p), root, TransferOp::Reduce);
}

void AppendNaiveScatter(PlanWriter& w, int root, std::string_view phase)
{
    const int p = w.Ranks();
    w.BeginStep(phase);
    for (int v = 1; v < p; ++v) w.SendBlocks(root, Abs(v, root, p), TransferOp::Copy, Abs(v, root, p), 1);
}

void AppendNaiveGather(PlanWriter& w, int root, std::string_view phase)
{
    const int p = w.Ranks();
    w.BeginStep(phase);
    for (int v = 1; v < p; ++v) w.SendBlocks(Abs(v, root, p), root, TransferOp::Copy, Abs(v, root, p), 1);
}

} // namespace paralens::core
