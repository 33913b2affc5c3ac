// The lectures' dynamic programming, generalised from chains to any graph: min-sum variable
// elimination. Node costs are factors over one op, edge costs over two; eliminating an op
// replaces the factors that mention it by one over its neighbours, holding the best strategy of
// the eliminated op for each of their assignments. On a chain this is exactly the chain DP; on a
// transformer layer (residuals, q/k/v) the factors stay over two or three ops.
#include "autopar/IntraOpSolvers.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

namespace paralens::core {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The largest factor the DP builds (entries); past it the graph is too entangled for elimination.
constexpr size_t kMaxFactorEntries = 16u << 20;

struct Factor {
    std::vector<int> vars;     // op indices, ascending
    std::vector<double> table; // row-major, the last var fastest
};

// One elimination: the eliminated op's best strategy for each assignment of `vars`.
struct Eliminated {
    int op = -1;
    std::vector<int> vars;
    std::vector<int> argmin;
};

class Eliminator {
public:
    explicit Eliminator(const IntraOpProblem& p) : m_p(p), m_alive(p.Ops(), true)
    {
        for (size_t v = 0; v < p.Ops(); ++v) m_factors.push_back(Factor{{static_cast<int>(v)}, p.nodeCost[v]});
        for (const EdgeCosts& e : p.edges) {
            Factor f;
            const int a = std::min(e.producer, e.consumer), b = std::max(e.producer, e.consumer);
            Require(a != b, "op '" + p.graph->ops[static_cast<size_t>(a)].name + "' reads its own output");
            f.vars = {a, b};
            const size_t na = Size(a), nb = Size(b), nc = Size(e.consumer);
            f.table.resize(na * nb);
            for (size_t i = 0; i < na; ++i)
                for (size_t j = 0; j < nb; ++j) {
                    const size_t sp = e.producer == a ? i : j, sc = e.producer == a ? j : i;
                    f.table[i * nb + j] = e.cost[sp * nc + sc];
                }
            m_factors.push_back(std::move(f));
        }
    }

    // Eliminates every op but `keep` (-1: all), choosing each time the op whose new factor is smallest.
    void Run(int keep)
    {
        for (size_t left = m_p.Ops() - (keep >= 0 ? 1 : 0); left > 0; --left) {
            int best = -1;
            double bestSize = kInf;
            for (size_t v = 0; v < m_p.Ops(); ++v) {
                if (!m_alive[v] || static_cast<int>(v) == keep) continue;
                const double size = NeighbourhoodSize(static_cast<int>(v));
                if (size < bestSize) {
                    bestSize = size;
                    best = static_cast<int>(v);
                }
            }
            Require(bestSize <= static_cast<double>(kMaxFactorEntries),
                    "graph '" + m_p.graph->name + "' is too entangled for the dynamic program (eliminating op '" +
                        m_p.graph->ops[static_cast<size_t>(best)].name + "' needs a table of " + std::to_string(static_cast<uint64_t>(bestSize)) +
                        " entries); use the ILP");
            Eliminate(best);
        }
    }

    // The sum of the factors left, over `keep`'s strategies (or one constant when all were eliminated).
    std::vector<double> Remaining(int keep) const
    {
        std::vector<double> out(keep >= 0 ? Size(keep) : 1, 0.0);
        for (const Factor& f : m_factors)
            for (size_t i = 0; i < out.size(); ++i) out[i] += f.vars.empty() ? f.table[0] : f.table[i];
        return out;
    }

    // Reads the eliminated ops' choices back, last eliminated first, given `choice[keep]`.
    void Backtrack(std::vector<int>& choice) const
    {
        for (auto it = m_eliminated.rbegin(); it != m_eliminated.rend(); ++it) {
            size_t index = 0;
            for (int v : it->vars) index = index * Size(v) + static_cast<size_t>(choice[static_cast<size_t>(v)]);
            choice[static_cast<size_t>(it->op)] = it->argmin[index];
        }
    }

private:
    size_t Size(int v) const { return m_p.strategies[static_cast<size_t>(v)].size(); }

    std::vector<int> Neighbours(int v) const
    {
        std::vector<int> out;
        for (const Factor& f : m_factors)
            if (std::binary_search(f.vars.begin(), f.vars.end(), v))
                for (int u : f.vars)
                    if (u != v) out.push_back(u);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    double NeighbourhoodSize(int v) const
    {
        double size = static_cast<double>(Size(v));
        for (int u : Neighbours(v)) size *= static_cast<double>(Size(u));
        return size;
    }

    void Eliminate(int v)
    {
        Eliminated e{v, Neighbours(v), {}};
        std::vector<Factor> involved, kept;
        for (Factor& f : m_factors)
            (std::binary_search(f.vars.begin(), f.vars.end(), v) ? involved : kept).push_back(std::move(f));
        // Each involved factor's stride per var of `e.vars` and of v.
        std::vector<std::vector<size_t>> strides(involved.size(), std::vector<size_t>(e.vars.size(), 0));
        std::vector<size_t> vStride(involved.size(), 0);
        for (size_t k = 0; k < involved.size(); ++k) {
            size_t s = 1;
            for (size_t d = involved[k].vars.size(); d-- > 0;) {
                const int u = involved[k].vars[d];
                if (u == v) {
                    vStride[k] = s;
                } else {
                    strides[k][static_cast<size_t>(std::lower_bound(e.vars.begin(), e.vars.end(), u) - e.vars.begin())] = s;
                }
                s *= Size(u);
            }
        }
        size_t entries = 1;
        for (int u : e.vars) entries *= Size(u);
        Factor out{e.vars, std::vector<double>(entries, kInf)};
        e.argmin.assign(entries, 0);
        std::vector<size_t> digit(e.vars.size(), 0), base(involved.size(), 0);
        for (size_t index = 0; index < entries; ++index) {
            for (size_t s = 0; s < Size(v); ++s) {
                double c = 0.0;
                for (size_t k = 0; k < involved.size(); ++k) c += involved[k].table[base[k] + s * vStride[k]];
                if (c < out.table[index]) {
                    out.table[index] = c;
                    e.argmin[index] = static_cast<int>(s);
                }
            }
            for (size_t d = e.vars.size(); d-- > 0;) { // odometer, the last var fastest
                for (size_t k = 0; k < involved.size(); ++k) base[k] += strides[k][d];
                if (++digit[d] < Size(e.vars[d])) break;
                for (size_t k = 0; k < involved.size(); ++k) base[k] -= strides[k][d] * digit[d];
                digit[d] = 0;
            }
        }
        kept.push_back(std::move(out));
        m_factors = std::move(kept);
        m_alive[static_cast<size_t>(v)] = false;
        m_eliminated.push_back(std::move(e));
    }

    const IntraOpProblem& m_p;
    std::vector<bool> m_alive;
    std::vector<Factor> m_factors;
    std::vector<Eliminated> m_eliminated;
};

IntraOpSolution Solution(const IntraOpProblem& p, std::vector<int> choice, std::chrono::steady_clock::time_point t0)
{
    IntraOpSolution s;
    s.name = "dp";
    s.costSeconds = p.Cost(choice);
    s.choice = std::move(choice);
    s.solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.optimal = true;
    s.note = "variable elimination, exact";
    return s;
}

} // namespace

IntraOpSolution SolveDp(const IntraOpProblem& p)
{
    const auto t0 = std::chrono::steady_clock::now();
    Eliminator elim(p);
    elim.Run(-1);
    std::vector<int> choice(p.Ops(), 0);
    elim.Backtrack(choice);
    return Solution(p, std::move(choice), t0);
}

std::vector<IntraOpSolution> SolveDpForEachStrategy(const IntraOpProblem& p, int op)
{
    Require(op >= 0 && static_cast<size_t>(op) < p.Ops(), "SolveDpForEachStrategy: no op " + std::to_string(op));
    const auto t0 = std::chrono::steady_clock::now();
    Eliminator elim(p);
    elim.Run(op);
    const std::vector<double> cost = elim.Remaining(op);
    std::vector<IntraOpSolution> out;
    for (size_t s = 0; s < cost.size(); ++s) {
        std::vector<int> choice(p.Ops(), 0);
        choice[static_cast<size_t>(op)] = static_cast<int>(s);
        elim.Backtrack(choice);
        out.push_back(Solution(p, std::move(choice), t0));
    }
    return out;
}

} // namespace paralens::core
