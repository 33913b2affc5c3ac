#include "autopar/OpGraphJson.hpp"

#include "common/Error.hpp"
#include "trace/FileIO.hpp"

#include <nlohmann/json.hpp>

namespace paralens::core {

namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key, const std::string& where, bool required = true)
{
    if (!j.contains(key)) {
        Require(!required, where + ": missing \"" + key + "\"");
        return {};
    }
    Require(j[key].is_string(), where + ": \"" + key + "\" must be a string");
    return j[key].get<std::string>();
}

void AddTensor(GraphBuilder& gb, const json& t, const std::string& source, size_t index)
{
    const std::string where0 = source + ": tensors[" + std::to_string(index) + "]";
    Require(t.is_object(), where0 + " must be an object");
    const std::string name = Str(t, "name", where0);
    const std::string where = source + ": tensor '" + name + "'";
    Require(t.contains("shape") && t["shape"].is_array() && !t["shape"].empty(), where + ": \"shape\" must be a non-empty array of sizes");
    std::vector<int64_t> shape;
    for (const json& d : t["shape"]) {
        Require(d.is_number_integer() && d.get<int64_t>() >= 1, where + ": every size in \"shape\" must be an integer of at least 1");
        shape.push_back(d.get<int64_t>());
    }
    const int bytes = t.value("elementBytes", 2);
    Require(bytes >= 1 && bytes <= 16, where + ": \"elementBytes\" must be 1 to 16");
    const std::string kind = Str(t, "kind", where);
    if (kind == "input") {
        gb.Input(name, std::move(shape), bytes);
    } else if (kind == "layer-input") {
        gb.LayerInput(name, std::move(shape), bytes);
    } else if (kind == "weight") {
        gb.Weight(name, std::move(shape), bytes);
    } else {
        throw Error(where + ": \"kind\" must be \"input\", \"layer-input\" or \"weight\" (op outputs are not listed as tensors), not \"" + kind + "\"");
    }
}

int TensorId(const std::vector<std::string>& names, const std::string& name, const std::string& where)
{
    for (size_t i = names.size(); i-- > 0;)
        if (names[i] == name) return static_cast<int>(i);
    throw Error(where + ": no tensor or earlier op named '" + name + "'");
}

void AddOp(GraphBuilder& gb, const json& o, std::vector<std::string>& names, const std::string& source, size_t index)
{
    const std::string where0 = source + ": ops[" + std::to_string(index) + "]";
    Require(o.is_object(), where0 + " must be an object");
    GraphBuilder::OpArgs a;
    a.name = Str(o, "name", where0);
    const std::string where = source + ": op '" + a.name + "'";
    a.kind = Str(o, "kind", where);
    a.einsum = Str(o, "einsum", where);
    a.unsplittable = Str(o, "unsplittable", where, false);
    a.megatronLoop = Str(o, "megatron", where, false);
    a.batchLoop = Str(o, "batch", where, false);
    a.elementBytes = o.value("elementBytes", 2);
    if (o.contains("flopsPerPoint")) {
        Require(o["flopsPerPoint"].is_number() && o["flopsPerPoint"].get<double>() >= 0, where + ": \"flopsPerPoint\" must be a number >= 0");
        a.flopsPerPoint = o["flopsPerPoint"].get<double>();
    } else {
        a.flopsPerPoint = FlopsPerPointOf(a.kind);
        Require(a.flopsPerPoint >= 0, where + ": unknown kind \"" + a.kind + "\" (known: " + OpKindsList() + "; or give \"flopsPerPoint\")");
    }
    Require(o.contains("inputs") && o["inputs"].is_array() && !o["inputs"].empty(), where + ": \"inputs\" must be a non-empty array of tensor names");
    for (const json& in : o["inputs"]) {
        Require(in.is_string(), where + ": \"inputs\" must hold tensor names");
        a.inputs.push_back(TensorId(names, in.get<std::string>(), where));
    }
    if (o.contains("layer")) {
        Require(o["layer"].is_number_integer() && o["layer"].get<int>() >= 0, where + ": \"layer\" must be an integer >= 0");
        gb.SetLayer(o["layer"].get<int>());
    } else {
        gb.SetLayer(-1);
    }
    try {
        gb.Op(a);
    } catch (const Error& e) {
        throw Error(source + ": " + e.what());
    }
    names.push_back(a.name);
}

} // namespace

OpGraph ParseOpGraphJson(const std::string& text, const std::string& source)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        throw Error(source + ": not valid JSON at byte " + std::to_string(e.byte) + " (" + e.what() + ")");
    }
    Require(j.is_object(), source + ": an operator graph must be a JSON object with \"tensors\", \"ops\" and \"outputs\"");
    GraphBuilder gb(j.value("name", std::string("graph")));
    std::vector<std::string> names;
    Require(j.contains("tensors") && j["tensors"].is_array(), source + ": missing the \"tensors\" array (inputs and weights)");
    for (size_t i = 0; i < j["tensors"].size(); ++i) {
        AddTensor(gb, j["tensors"][i], source, i);
        names.push_back(j["tensors"][i]["name"].get<std::string>());
    }
    Require(j.contains("ops") && j["ops"].is_array() && !j["ops"].empty(), source + ": missing the \"ops\" array");
    for (size_t i = 0; i < j["ops"].size(); ++i) AddOp(gb, j["ops"][i], names, source, i);
    Require(j.contains("outputs") && j["outputs"].is_array() && !j["outputs"].empty(), source + ": missing the \"outputs\" array (op names)");
    std::vector<int> outputs;
    for (const json& o : j["outputs"]) {
        Require(o.is_string(), source + ": \"outputs\" must hold op names");
        outputs.push_back(TensorId(names, o.get<std::string>(), source + ": outputs"));
    }
    int layers = 0;
    try {
        OpGraph probe = gb.Finish(std::move(outputs));
        for (const GraphOp& op : probe.ops) layers = std::max(layers, op.layer + 1);
        probe.layers = layers;
        if (j.contains("outputReplicated")) {
            Require(j["outputReplicated"].is_boolean(), source + ": \"outputReplicated\" must be true or false");
            probe.outputReplicated = j["outputReplicated"].get<bool>();
        }
        return probe;
    } catch (const Error& e) {
        throw Error(source + ": " + e.what());
    }
}

OpGraph LoadOpGraphFile(const std::string& path) { return ParseOpGraphJson(ReadFileDecompressed(path), path); }

} // namespace paralens::core
