// The exact intra-op search as an integer linear program, solved by GLPK (Debian's libglpk-dev).
//   min  sum_v sum_i node[v][i] s[v][i]  +  sum_(u,v) sum_ij edge[u,v][i][j] e[u,v][i][j]
//   s.t. sum_i s[v][i] = 1                      for every op v        (s binary)
//        sum_j e[u,v][i][j] = s[u][i]           for every edge, i     (0 <= e <= 1)
//        sum_i e[u,v][i][j] = s[v][j]           for every edge, j
// With s integral the marginal constraints force e to the one pair chosen, so e need not be
// integer; the marginals also make the LP relaxation much tighter than e >= s_u + s_v - 1.
#include "autopar/IntraOpSolvers.hpp"

#include "common/Error.hpp"

#include <glpk.h>

#include <chrono>
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

void AddStrategyColumns(IlpModel& m, const IntraOpProblem& p)
{
    glp_prob* lp = m.lp.get();
    int rows = glp_add_rows(lp, static_cast<int>(p.Ops()));
    for (size_t v = 0; v < p.Ops(); ++v) {
        const int n = static_cast<int>(p.strategies[v].size());
        const int col = glp_add_cols(lp, n);
        m.firstStrategyCol.push_back(col);
        glp_set_row_bnds(lp, rows, GLP_FX, 1.0, 1.0);
        for (int i = 0; i < n; ++i) {
            glp_set_col_kind(lp, col + i, GLP_BV);
            glp_set_obj_coef(lp, col + i, p.nodeCost[v][static_cast<size_t>(i)] * kScale);
            m.Coef(rows, col + i, 1.0);
        }
        ++rows;
    }
}

void AddEdgeColumns(IlpModel& m, const IntraOpProblem& p)
{
    glp_prob* lp = m.lp.get();
    for (const EdgeCosts& e : p.edges) {
        const int np = static_cast<int>(p.strategies[static_cast<size_t>(e.producer)].size());
        const int nc = static_cast<int>(p.strategies[static_cast<size_t>(e.consumer)].size());
        const int col = glp_add_cols(lp, np * nc);
        const int row = glp_add_rows(lp, np + nc);
        for (int i = 0; i < np; ++i) {
            glp_set_row_bnds(lp, row + i, GLP_FX, 0.0, 0.0);
            m.Coef(row + i, m.firstStrategyCol[static_cast<size_t>(e.producer)] + i, -1.0);
        }
        for (int j = 0; j < nc; ++j) {
            glp_set_row_bnds(lp, row + np + j, GLP_FX, 0.0, 0.0);
            m.Coef(row + np + j, m.firstStrategyCol[static_cast<size_t>(e.consumer)] + j, -1.0);
        }
        for (int i = 0; i < np; ++i) {
            for (int j = 0; j < nc; ++j) {
                const int c = col + i * nc + j;
                glp_set_col_bnds(lp, c, GLP_DB, 0.0, 1.0);
                glp_set_obj_coef(lp, c, e.cost[static_cast<size_t>(i * nc + j)] * kScale);
                m.Coef(row + i, c, 1.0);
                m.Coef(row + np + j, c, 1.0);
            }
        }
    }
}

} // namespace

IntraOpSolution SolveIlp(const IntraOpProblem& p, double timeLimitSeconds)
{
    const auto t0 = std::chrono::steady_clock::now();
    glp_term_out(GLP_OFF);
    IlpModel m;
    glp_set_obj_dir(m.lp.get(), GLP_MIN);
    AddStrategyColumns(m, p);
    AddEdgeColumns(m, p);
    glp_load_matrix(m.lp.get(), static_cast<int>(m.ia.size()) - 1, m.ia.data(), m.ja.data(), m.ar.data());

    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    parm.tm_lim = static_cast<int>(timeLimitSeconds * 1000.0);
    const int rc = glp_intopt(m.lp.get(), &parm);
    const int status = glp_mip_status(m.lp.get());
    Require(rc == 0 || rc == GLP_ETMLIM, "GLPK could not solve the ILP of graph '" + p.graph->name + "' (glp_intopt returned " + std::to_string(rc) + ")");
    Require(status == GLP_OPT || status == GLP_FEAS, "GLPK found no solution for graph '" + p.graph->name + "' within " +
                                                         std::to_string(timeLimitSeconds) + " s");
    std::vector<int> choice(p.Ops(), 0);
    for (size_t v = 0; v < p.Ops(); ++v) {
        for (size_t i = 0; i < p.strategies[v].size(); ++i) {
            if (glp_mip_col_val(m.lp.get(), m.firstStrategyCol[v] + static_cast<int>(i)) > 0.5) {
                choice[v] = static_cast<int>(i);
                break;
            }
        }
    }
    IntraOpSolution s;
    s.name = "ilp";
    s.costSeconds = p.Cost(choice);
    s.choice = std::move(choice);
    s.solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.optimal = status == GLP_OPT;
    s.note = s.optimal ? "GLPK " + std::string(glp_version()) + ", proven optimal"
                       : "GLPK " + std::string(glp_version()) + ": time limit reached; best assignment found";
    return s;
}

} // namespace paralens::core
