#include "trace/ExecutionTrace.hpp"

#include "common/Error.hpp"
#include "trace/FileIO.hpp"

#include <simdjson.h>

#include <algorithm>
#include <unordered_map>

namespace paralens::core {

namespace {

namespace dom = simdjson::dom;

bool Int(dom::element e, int64_t& out)
{
    if (e.is_int64()) return !e.get_int64().get(out);
    uint64_t u = 0;
    if (e.is_uint64() && !e.get_uint64().get(u)) {
        out = static_cast<int64_t>(u);
        return true;
    }
    return false;
}

// A tensor is [id, storage id, offset, elements, element size, device].
bool TensorId(dom::array a, int64_t& id)
{
    if (a.size() != 6) return false;
    size_t i = 0;
    for (dom::element v : a) {
        int64_t ignored = 0;
        if (i < 5 && !Int(v, i == 0 ? id : ignored)) return false;
        if (i == 5 && !v.is_string()) return false;
        ++i;
    }
    return true;
}

// The tensors among an op's input or output values (lists of tensors nest one or two deep).
void CollectTensors(dom::element e, std::vector<int64_t>& out, int depth)
{
    dom::array a;
    if (e.get_array().get(a)) return;
    int64_t id = 0;
    if (TensorId(a, id)) {
        out.push_back(id);
        return;
    }
    if (depth < 3)
        for (dom::element v : a) CollectTensors(v, out, depth + 1);
}

// Schema 1.0.1 has "inputs": [values]; 1.0.2-chakra and later {"values": [...], ...}.
void Values(dom::object node, const char* key, std::vector<int64_t>& out)
{
    dom::element v;
    if (node[key].get(v)) return;
    dom::object o;
    if (!v.get_object().get(o)) {
        if (o["values"].get(v)) return;
    }
    CollectTensors(v, out, 0);
}

// A field of the node itself (1.0.1) or of its "attrs" list (1.0.2-chakra and later).
bool Field(dom::object node, std::string_view name, int64_t& out)
{
    dom::element v;
    if (!node[name].get(v)) return Int(v, out);
    dom::array attrs;
    if (node["attrs"].get_array().get(attrs)) return false;
    for (dom::element a : attrs) {
        std::string_view n;
        if (!a["name"].get_string().get(n) && n == name && !a["value"].get(v)) return Int(v, out);
    }
    return false;
}

ExecutionTraceOp ReadOp(dom::object node, size_t index, const std::string& origin)
{
    ExecutionTraceOp op;
    std::string_view name;
    if (!Field(node, "id", op.id) || node["name"].get_string().get(name))
        throw Error(origin + ": nodes[" + std::to_string(index) + "] has no integer \"id\" or no \"name\"");
    op.name = std::string(name);
    if (!Field(node, "rf_id", op.rfId)) op.rfId = -1;
    if (!Field(node, "parent", op.parent)) Field(node, "ctrl_deps", op.parent);
    Field(node, "tid", op.thread);
    Values(node, "inputs", op.inputs);
    Values(node, "outputs", op.outputs);
    return op;
}

} // namespace

bool LooksLikeExecutionTrace(std::string_view prefix)
{
    auto has = [&](std::string_view s) { return prefix.find(s) != std::string_view::npos; };
    return has("\"schema\"") && has("\"nodes\"") && (has("\"rf_id\"") || has("execution_trace|"));
}

ExecutionTrace ParseExecutionTrace(std::string_view json, const std::string& origin)
{
    dom::parser parser;
    dom::element root;
    const simdjson::padded_string padded(json);
    if (auto err = parser.parse(padded).get(root))
        throw Error(origin + ": not valid JSON (" + simdjson::error_message(err) +
                    "); PyTorch 2.2 and earlier could write execution traces with missing or extra commas "
                    "(pytorch/pytorch#126703): re-record it with a newer PyTorch");
    dom::object top;
    dom::array nodes;
    if (root.get_object().get(top) || top["nodes"].get_array().get(nodes))
        throw Error(origin + ": an execution trace needs a top-level object with a \"nodes\" array");
    ExecutionTrace et;
    et.origin = origin;
    std::string_view schema;
    if (!top["schema"].get_string().get(schema)) et.schema = std::string(schema);
    dom::element pid;
    if (!top["pid"].get(pid)) Int(pid, et.pid);
    size_t index = 0;
    for (dom::element n : nodes) {
        dom::object node;
        if (n.get_object().get(node)) throw Error(origin + ": nodes[" + std::to_string(index) + "] is not an object");
        et.ops.push_back(ReadOp(node, index++, origin));
    }
    std::sort(et.ops.begin(), et.ops.end(), [](const ExecutionTraceOp& a, const ExecutionTraceOp& b) { return a.id < b.id; });
    return et;
}

ExecutionTrace ReadExecutionTrace(const std::string& path) { return ParseExecutionTrace(ReadFileDecompressed(path), path); }

std::vector<std::pair<int64_t, int64_t>> CrossThreadDataDependencies(const ExecutionTrace& et)
{
    struct Writer {
        int64_t rfId;
        int64_t thread;
    };
    std::unordered_map<int64_t, Writer> lastWriter; // tensor id -> the op that last output it
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const ExecutionTraceOp& op : et.ops) { // by id: the order ops began, parents before children
        if (op.rfId >= 0)
            for (int64_t t : op.inputs)
                if (auto it = lastWriter.find(t); it != lastWriter.end() && it->second.thread != op.thread)
                    out.push_back({it->second.rfId, op.rfId});
        if (op.rfId >= 0)
            for (int64_t t : op.outputs) lastWriter[t] = {op.rfId, op.thread};
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

} // namespace paralens::core
