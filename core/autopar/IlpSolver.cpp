// The exact intra-op search as an integer linear program, solved by GLPK (Debian's libglpk-dev).
//   min  sum_v sum_i node[v][i] s[v][i]  +  sum_(u,v) sum_ij edge[u,v][i][j] e[u,v][i][j]
//   s.t. sum_i s[v][i] = 1                      for every op v        (s binary)
//        sum_j e[u,v][i][j] = s[u][i]           for every edge, i     (0 <= e <= 1)
//        sum_i e[u,v][i][j] = s[v][j]           for every edge, j
// With s integral the marginal constraints force e to the one pair chosen, so e need not be
// integer; the marginals also make the LP relaxation much tighter than e >= s_u + s_v - 1.
//
// Before GLPK sees it the problem is made smaller without changing its optimum (as Alpa merges an
// op's elementwise followers into it): an op with one neighbour is folded into that neighbour's
// costs (for each of its strategies, the op's best answer), an op between two neighbours into one
// edge between them (min over its strategies of the path through it), parallel edges are summed.
// What remains (often nothing: a chain of transformer layers is series-parallel) is the ILP; the
// folded ops' choices are read back from the recorded best answers, last folded first.
#include "autopar/IntraOpSolvers.hpp"

#include "common/Error.hpp"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <string>
#include <memory>

namespace paralens::core {

namespace {

struct ProbDeleter {
    void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// Costs in microseconds keep GLPK's tolerances meaningful for times of microseconds to seconds.
constexpr double kScale = 1e6;

struct IlpModel {
    std::unique_ptr<glp_prob, ProbDeleter> lp{glp_create_prob()};
    std::vector<int> firstStrategyCol; // per op: its s[v][0] column
    std::vector<int> ia{0}, ja{0};
    std::vector<double> ar{0.0};

    void Coef(int row, int col, double v)
    {
        ia.push_back(row);
        ja.push_back(col);
        ar.push_back(v);
    }
};

// The costs of a problem in a form that ops can be folded out of: node costs, and an edge matrix
// per pair of ops (a < b, [i_a * |S_b| + i_b]).
struct Reduced {
    std::vector<size_t> size;                           // strategies per op
    std::vector<std::vector<double>> node;              // per op
    std::map<std::pair<int, int>, std::vector<double>> edge;
    std::vector<std::vector<int>> neighbours;           // per op, live ones
    std::vector<bool> folded;
    double constant = 0.0;
    struct Fold {
        int op, a, b;          // a, b: the neighbours it was folded into (-1: none)
        std::vector<int> best; // its strategy per strategy of a (and of b: [i_a * |S_b| + i_b])
    };
    std::vector<Fold> folds;

    // E(x, y)[i_x][i_y] whatever the stored orientation.
    double Edge(const std::vector<double>& m, int x, int y, size_t ix, size_t iy) const
    {
        return x < y ? m[ix * size[static_cast<size_t>(y)] + iy] : m[iy * size[static_cast<size_t>(x)] + ix];
    }
    void AddEdge(int x, int y, const std::vector<double>& xy) // xy[i_x * |S_y| + i_y]
    {
        auto [it, added] = edge.try_emplace({std::min(x, y), std::max(x, y)}, size[static_cast<size_t>(x)] * size[static_cast<size_t>(y)], 0.0);
        for (size_t i = 0; i < size[static_cast<size_t>(x)]; ++i)
            for (size_t j = 0; j < size[static_cast<size_t>(y)]; ++j)
                it->second[x < y ? i * size[static_cast<size_t>(y)] + j : j * size[static_cast<size_t>(x)] + i] += xy[i * size[static_cast<size_t>(y)] + j];
        if (added) {
            neighbours[static_cast<size_t>(x)].push_back(y);
            neighbours[static_cast<size_t>(y)].push_back(x);
        }
    }
    const std::vector<double>& EdgeOf(int x, int y) const { return edge.at({std::min(x, y), std::max(x, y)}); }
    void Unlink(int v)
    {
        for (int u : neighbours[static_cast<size_t>(v)]) {
            auto& n = neighbours[static_cast<size_t>(u)];
            n.erase(std::find(n.begin(), n.end(), v));
            edge.erase({std::min(u, v), std::max(u, v)});
        }
        neighbours[static_cast<size_t>(v)].clear();
        folded[static_cast<size_t>(v)] = true;
    }
};

Reduced ReduceOf(const IntraOpProblem& p)
{
    Reduced r;
    const size_t n = p.Ops();
    r.node = p.nodeCost;
    r.neighbours.resize(n);
    r.folded.assign(n, false);
    for (size_t v = 0; v < n; ++v) r.size.push_back(p.strategies[v].size());
    for (const EdgeCosts& e : p.edges)
        if (e.producer != e.consumer) r.AddEdge(e.producer, e.consumer, e.cost);
    return r;
}

// Folds op v (one or two live neighbours, or none) into its neighbours.
void Fold(Reduced& r, int v)
{
    const auto& nb = r.neighbours[static_cast<size_t>(v)];
    const std::vector<double>& own = r.node[static_cast<size_t>(v)];
    const size_t sv = r.size[static_cast<size_t>(v)];
    Reduced::Fold f{v, nb.size() > 0 ? nb[0] : -1, nb.size() > 1 ? nb[1] : -1, {}};
    const size_t sa = f.a < 0 ? 1 : r.size[static_cast<size_t>(f.a)], sb = f.b < 0 ? 1 : r.size[static_cast<size_t>(f.b)];
    const std::vector<double>* ea = f.a < 0 ? nullptr : &r.EdgeOf(v, f.a);
    const std::vector<double>* eb = f.b < 0 ? nullptr : &r.EdgeOf(v, f.b);
    std::vector<double> joined(sa * sb);
    f.best.resize(sa * sb);
    for (size_t i = 0; i < sa; ++i)
        for (size_t j = 0; j < sb; ++j) {
            double best = std::numeric_limits<double>::infinity();
            for (size_t k = 0; k < sv; ++k) {
                double c = own[k];
                if (ea) c += r.Edge(*ea, v, f.a, k, i);
                if (eb) c += r.Edge(*eb, v, f.b, k, j);
                if (c < best) best = c, f.best[i * sb + j] = static_cast<int>(k);
            }
            joined[i * sb + j] = best;
        }
    r.Unlink(v);
    if (f.a < 0) r.constant += joined[0];
    else if (f.b < 0)
        for (size_t i = 0; i < sa; ++i) r.node[static_cast<size_t>(f.a)][i] += joined[i];
    else r.AddEdge(f.a, f.b, joined);
    r.folds.push_back(std::move(f));
}

void FoldAll(Reduced& r)
{
    bool again = true;
    while (again) {
        again = false;
        for (size_t v = 0; v < r.size.size(); ++v)
            if (!r.folded[v] && r.neighbours[v].size() <= 2) {
                Fold(r, static_cast<int>(v));
                again = true;
            }
    }
}

// The folded ops' strategies from those of the ops they were folded into, last folded first.
void Unfold(const Reduced& r, std::vector<int>& choice)
{
    for (auto f = r.folds.rbegin(); f != r.folds.rend(); ++f) {
        const size_t sb = f->b < 0 ? 1 : r.size[static_cast<size_t>(f->b)];
        const size_t i = f->a < 0 ? 0 : static_cast<size_t>(choice[static_cast<size_t>(f->a)]);
        const size_t j = f->b < 0 ? 0 : static_cast<size_t>(choice[static_cast<size_t>(f->b)]);
        choice[static_cast<size_t>(f->op)] = f->best[i * sb + j];
    }
}

void AddStrategyColumns(IlpModel& m, const Reduced& r)
{
    glp_prob* lp = m.lp.get();
    m.firstStrategyCol.assign(r.size.size(), 0);
    for (size_t v = 0; v < r.size.size(); ++v) {
        if (r.folded[v]) continue;
        const int n = static_cast<int>(r.size[v]);
        const int row = glp_add_rows(lp, 1);
        const int col = glp_add_cols(lp, n);
        m.firstStrategyCol[v] = col;
        glp_set_row_bnds(lp, row, GLP_FX, 1.0, 1.0);
        for (int i = 0; i < n; ++i) {
            glp_set_col_kind(lp, col + i, GLP_BV);
            glp_set_obj_coef(lp, col + i, r.node[v][static_cast<size_t>(i)] * kScale);
            m.Coef(row, col + i, 1.0);
        }
    }
}

void AddEdgeColumns(IlpModel& m, const Reduced& r)
{
    glp_prob* lp = m.lp.get();
    for (const auto& [ends, cost] : r.edge) {
        const auto [u, v] = ends;
        const int np = static_cast<int>(r.size[static_cast<size_t>(u)]);
        const int nc = static_cast<int>(r.size[static_cast<size_t>(v)]);
        const int col = glp_add_cols(lp, np * nc);
        const int row = glp_add_rows(lp, np + nc);
        for (int i = 0; i < np; ++i) {
            glp_set_row_bnds(lp, row + i, GLP_FX, 0.0, 0.0);
            m.Coef(row + i, m.firstStrategyCol[static_cast<size_t>(u)] + i, -1.0);
        }
        for (int j = 0; j < nc; ++j) {
            glp_set_row_bnds(lp, row + np + j, GLP_FX, 0.0, 0.0);
            m.Coef(row + np + j, m.firstStrategyCol[static_cast<size_t>(v)] + j, -1.0);
        }
        for (int i = 0; i < np; ++i) {
            for (int j = 0; j < nc; ++j) {
                const int c = col + i * nc + j;
                glp_set_col_bnds(lp, c, GLP_DB, 0.0, 1.0);
                glp_set_obj_coef(lp, c, cost[static_cast<size_t>(i * nc + j)] * kScale);
                m.Coef(row + i, c, 1.0);
                m.Coef(row + np + j, c, 1.0);
            }
        }
    }
}

// GLPK on what folding left: the strategies of the ops not folded (all 0 when none is left).
// Returns GLPK's status, GLP_OPT when there was nothing to solve.
int SolveRemainder(const Reduced& r, double timeLimitSeconds, const std::string& graphName, std::vector<int>& choice)
{
    if (std::all_of(r.folded.begin(), r.folded.end(), [](bool f) { return f; })) return GLP_OPT;
    glp_term_out(GLP_OFF);
    IlpModel m;
    glp_set_obj_dir(m.lp.get(), GLP_MIN);
    AddStrategyColumns(m, r);
    AddEdgeColumns(m, r);
    glp_load_matrix(m.lp.get(), static_cast<int>(m.ia.size()) - 1, m.ia.data(), m.ja.data(), m.ar.data());
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    parm.tm_lim = static_cast<int>(timeLimitSeconds * 1000.0);
    const int rc = glp_intopt(m.lp.get(), &parm);
    const int status = glp_mip_status(m.lp.get());
    Require(rc == 0 || rc == GLP_ETMLIM, "GLPK could not solve the ILP of graph '" + graphName + "' (glp_intopt returned " + std::to_string(rc) + ")");
    Require(status == GLP_OPT || status == GLP_FEAS, "GLPK found no solution for graph '" + graphName + "' within " +
                                                         std::to_string(timeLimitSeconds) + " s");
    for (size_t v = 0; v < r.size.size(); ++v) {
        if (r.folded[v]) continue;
        for (size_t i = 0; i < r.size[v]; ++i)
            if (glp_mip_col_val(m.lp.get(), m.firstStrategyCol[v] + static_cast<int>(i)) > 0.5) {
                choice[v] = static_cast<int>(i);
                break;
            }
    }
    return status;
}

} // namespace

IntraOpSolution SolveIlp(const IntraOpProblem& p, double timeLimitSeconds)
{
    const auto t0 = std::chrono::steady_clock::now();
    Reduced r = ReduceOf(p);
    FoldAll(r);
    const size_t left = static_cast<size_t>(std::count(r.folded.begin(), r.folded.end(), false));
    std::vector<int> choice(p.Ops(), 0);
    const int status = SolveRemainder(r, timeLimitSeconds, p.graph->name, choice);
    Unfold(r, choice);
    IntraOpSolution s;
    s.name = "ilp";
    s.costSeconds = p.Cost(choice);
    s.choice = std::move(choice);
    s.solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.optimal = status == GLP_OPT;
    const std::string folded = std::to_string(p.Ops() - left) + " of " + std::to_string(p.Ops()) + " ops folded exactly, " +
                               std::to_string(left) + " left to GLPK " + std::string(glp_version());
    s.note = s.optimal ? folded + ", proven optimal" : folded + ": time limit reached; best assignment found";
    return s;
}

} // namespace paralens::core
