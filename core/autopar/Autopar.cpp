#include "autopar/Autopar.hpp"

#include "autopar/OpGraphJson.hpp"
#include "common/Error.hpp"

namespace paralens::core {

const IntraOpSolution* AutoparResult::Best() const
{
    const IntraOpSolution* best = nullptr;
    for (const IntraOpSolution& s : solutions)
        if (!best || s.costSeconds < best->costSeconds) best = &s;
    return best;
}

const IntraOpSolution* AutoparResult::Find(const std::string& name) const
{
    for (const IntraOpSolution& s : solutions)
        if (s.name == name) return &s;
    return nullptr;
}

OpGraph BuildRequestGraph(const AutoparRequest& r, int64_t batch)
{
    TransformerDims d = r.dims;
    d.batch = batch;
    if (r.graph == "mlp") return BuildMlpGraph(d);
    if (r.graph == "transformer") return BuildTransformerGraph(d, r.layers);
    if (r.graph == "convnet") return BuildConvNetGraph(batch);
    Require(r.graph.find('.') != std::string::npos || r.graph.find('/') != std::string::npos,
            "--graph: expected mlp, transformer, convnet or a .json file, got '" + r.graph + "'");
    return LoadOpGraphFile(r.graph);
}

AutoparResult RunAutopar(const AutoparRequest& r)
{
    Require(r.dims.batch >= 1, "--batch must be at least 1");
    AutoparResult out;
    out.graph = std::make_shared<const OpGraph>(BuildRequestGraph(r, r.dims.batch));
    out.problem = BuildIntraOpProblem(*out.graph, r.mesh);
    for (const std::string& name : r.solvers) {
        try {
            out.solutions.push_back(name == "ilp" ? SolveIlp(out.problem, r.ilpTimeLimitSeconds) : SolveByName(out.problem, name));
        } catch (const Error& e) { // one solver out of its depth (the ILP's time limit, brute force's size) leaves the others
            out.notes.push_back(name + ": " + e.what());
        }
    }
    if (out.solutions.empty()) {
        std::string why;
        for (const std::string& n : out.notes) why += "; " + n;
        throw Error("no intra-op solver answered" + why);
    }
    if (r.microBatches > 0) {
        Require(r.dims.batch % r.microBatches == 0, "--micro-batches " + std::to_string(r.microBatches) + " does not divide --batch " +
                                                        std::to_string(r.dims.batch));
        out.microBatchGraph = std::make_shared<const OpGraph>(BuildRequestGraph(r, r.dims.batch / r.microBatches));
        const StageCosts costs(*out.microBatchGraph, r.mesh);
        out.stageCostSeconds = costs.SolveSeconds();
        out.stageSolves = costs.Solves();
        out.interOp = SolveInterOp(costs, r.mesh.Devices(), r.microBatches);
    }
    return out;
}

} // namespace paralens::core
