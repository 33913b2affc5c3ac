#include "autopar/Autopar.hpp"

#include "autopar/OpGraphJson.hpp"
#include "common/Error.hpp"
#include "model/Hardware.hpp"

namespace paralens::core {

DeviceMesh BuildMesh(const MeshOptions& o)
{
    DeviceMesh m;
    Require(o.rows >= 1 && o.cols >= 1 && o.rows * o.cols <= 4096,
            "--mesh must have 1 to 4096 devices; got " + std::to_string(o.rows) + "x" + std::to_string(o.cols));
    m.rows = o.rows;
    m.cols = o.cols;
    Require(o.fastGBps > 0 && o.slowGBps > 0, "--fast-GBps and --slow-GBps must be positive");
    Require(o.fastAlphaUs >= 0 && o.slowAlphaUs >= 0, "--fast-alpha-us and --slow-alpha-us must be >= 0");
    m.fast = CostParams{o.fastAlphaUs * 1e-6, 1.0 / (o.fastGBps * 1e9), 0.0};
    m.slow = CostParams{o.slowAlphaUs * 1e-6, 1.0 / (o.slowGBps * 1e9), 0.0};
    const GpuSpec* gpu = FindGpu(o.gpu);
    Require(gpu != nullptr, "--gpu: unknown GPU '" + o.gpu + "' (known: " + GpuIdsList() + ")");
    m.peakFlops = gpu->PeakFlops(o.dtype);
    Require(m.peakFlops > 0, "--dtype: " + gpu->id + " has no dense " + o.dtype + " throughput in the spec table");
    Require(o.efficiency > 0 && o.efficiency <= 1, "--efficiency must be in (0, 1]");
    m.efficiency = o.efficiency;
    return m;
}

std::vector<std::string> ParseSolverList(const std::string& text)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : text + ",") {
        if (c == ',') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else if (c != ' ') {
            cur.push_back(c);
        }
    }
    Require(!out.empty(), "--solvers: name at least one of " + SolverNamesList());
    for (const std::string& s : out)
        Require(s == "ilp" || s == "dp" || s == "brute-force" || s == "greedy" || s == "random" || s == "data-parallel" || s == "megatron",
                "--solvers: unknown solver '" + s + "' (known: " + SolverNamesList() + ")");
    return out;
}

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
