#include "NcclProfileData.hpp"

#include "common/Error.hpp"

#include <array>
#include <nlohmann/json.hpp>

namespace paralens::prof {

using Json = nlohmann::json;

std::string_view Name(NcclEventType t)
{
    static constexpr std::array<std::string_view, 12> kNames{"group",    "coll",       "p2p",       "proxyOp",
                                                             "proxyStep", "proxyCtrl", "kernelCh",  "netPlugin",
                                                             "groupApi", "collApi",    "p2pApi",    "kernelLaunch"};
    const auto i = static_cast<size_t>(t);
    return i < kNames.size() ? kNames[i] : std::string_view("unknown");
}

namespace {

NcclEventType ParseType(const std::string& name, const std::string& origin)
{
    for (uint8_t i = 0; i < 12; ++i)
        if (Name(static_cast<NcclEventType>(i)) == name) return static_cast<NcclEventType>(i);
    throw Error(origin + ": unknown NCCL event type '" + name + "'");
}

Json EventToJson(const NcclEventRecord& e)
{
    Json j{{"type", Name(e.type)}, {"id", e.id}, {"start", e.startNs}, {"stop", e.stopNs}};
    if (e.parentId) j["parent"] = e.parentId;
    if (e.rank >= 0) j["rank"] = e.rank;
    auto str = [&](const char* key, const std::string& v) {
        if (!v.empty()) j[key] = v;
    };
    auto num = [&](const char* key, int64_t v, int64_t absent) {
        if (v != absent) j[key] = v;
    };
    str("func", e.func);
    str("algo", e.algo);
    str("proto", e.proto);
    str("datatype", e.datatype);
    num("count", static_cast<int64_t>(e.count), 0);
    num("seq", static_cast<int64_t>(e.seqNumber), 0);
    num("root", e.root, -1);
    num("peer", e.peer, -1);
    num("channel", e.channel, -1);
    num("step", e.step, -1);
    num("nSteps", e.nSteps, 0);
    num("chunkSize", e.chunkSize, 0);
    num("isSend", e.isSend, -1);
    num("nChannels", e.nChannels, 0);
    num("nWarps", e.nWarps, 0);
    num("transSize", static_cast<int64_t>(e.transSize), 0);
    if (e.gpuStartNs) j["gpuStart"] = e.gpuStartNs;
    if (e.gpuStopNs) j["gpuStop"] = e.gpuStopNs;
    if (!e.states.empty()) {
        Json s = Json::array();
        for (const NcclStateChange& c : e.states) s.push_back(Json::array({c.state, c.timeNs, c.transSize}));
        j["states"] = std::move(s);
    }
    return j;
}

template <class T>
T Get(const Json& j, const char* key, T absent)
{
    auto it = j.find(key);
    return it == j.end() ? absent : it->get<T>();
}

NcclEventRecord EventFromJson(const Json& j, const std::string& origin)
{
    NcclEventRecord e;
    e.type = ParseType(j.at("type").get<std::string>(), origin);
    e.id = j.at("id").get<uint64_t>();
    e.startNs = j.at("start").get<int64_t>();
    e.stopNs = j.at("stop").get<int64_t>();
    e.parentId = Get<uint64_t>(j, "parent", 0);
    e.rank = Get<int32_t>(j, "rank", -1);
    e.func = Get<std::string>(j, "func", "");
    e.algo = Get<std::string>(j, "algo", "");
    e.proto = Get<std::string>(j, "proto", "");
    e.datatype = Get<std::string>(j, "datatype", "");
    e.count = Get<uint64_t>(j, "count", 0);
    e.seqNumber = Get<uint64_t>(j, "seq", 0);
    e.root = Get<int32_t>(j, "root", -1);
    e.peer = Get<int32_t>(j, "peer", -1);
    e.channel = Get<int32_t>(j, "channel", -1);
    e.step = Get<int32_t>(j, "step", -1);
    e.nSteps = Get<int32_t>(j, "nSteps", 0);
    e.chunkSize = Get<int32_t>(j, "chunkSize", 0);
    e.isSend = Get<int32_t>(j, "isSend", -1);
    e.nChannels = Get<int32_t>(j, "nChannels", 0);
    e.nWarps = Get<int32_t>(j, "nWarps", 0);
    e.transSize = Get<uint64_t>(j, "transSize", 0);
    e.gpuStartNs = Get<uint64_t>(j, "gpuStart", 0);
    e.gpuStopNs = Get<uint64_t>(j, "gpuStop", 0);
    if (auto it = j.find("states"); it != j.end())
        for (const Json& s : *it)
            e.states.push_back({s.at(0).get<int32_t>(), s.at(1).get<int64_t>(), s.at(2).get<uint64_t>()});
    return e;
}

} // namespace

std::string NcclProfileToJson(const NcclProfile& p)
{
    Json j{{"paralensNcclProfile", 1},
           {"apiVersion", p.apiVersion},
           {"pid", p.pid},
           {"commHash", p.commHash},
           {"commName", p.commName},
           {"rank", p.rank},
           {"nranks", p.nranks},
           {"nNodes", p.nNodes},
           {"realtimeMinusMonotonicNs", p.realtimeMinusMonotonicNs},
           {"droppedEvents", p.droppedEvents}};
    Json events = Json::array();
    for (const NcclEventRecord& e : p.events) events.push_back(EventToJson(e));
    j["events"] = std::move(events);
    return j.dump();
}

NcclProfile ParseNcclProfileJson(std::string_view json, const std::string& origin)
{
    Json j;
    try {
        j = Json::parse(json);
    } catch (const Json::parse_error& e) {
        throw Error(origin + ": not JSON at byte " + std::to_string(e.byte) + " (expected a paralens NCCL profile)");
    }
    if (!j.is_object() || !j.contains("paralensNcclProfile"))
        throw Error(origin + ": not a paralens NCCL profile (no \"paralensNcclProfile\" key)");
    NcclProfile p;
    try {
        p.apiVersion = j.at("apiVersion").get<int32_t>();
        p.pid = j.at("pid").get<int64_t>();
        p.commHash = j.at("commHash").get<uint64_t>();
        p.commName = j.at("commName").get<std::string>();
        p.rank = j.at("rank").get<int32_t>();
        p.nranks = j.at("nranks").get<int32_t>();
        p.nNodes = j.at("nNodes").get<int32_t>();
        p.realtimeMinusMonotonicNs = j.at("realtimeMinusMonotonicNs").get<int64_t>();
        p.droppedEvents = j.at("droppedEvents").get<uint64_t>();
        const Json& events = j.at("events");
        p.events.reserve(events.size());
        for (size_t i = 0; i < events.size(); ++i) {
            try {
                p.events.push_back(EventFromJson(events[i], origin));
            } catch (const Json::exception& e) {
                throw Error(origin + ": event " + std::to_string(i) + ": " + e.what());
            }
        }
    } catch (const Json::exception& e) {
        throw Error(origin + ": " + e.what());
    }
    return p;
}

uint64_t NcclDatatypeBytes(std::string_view name)
{
    if (name.substr(0, 4) == "nccl") name.remove_prefix(4);
    if (name == "Int8" || name == "Char" || name == "Uint8" || name == "Float8e4m3" || name == "Float8e5m2") return 1;
    if (name == "Float16" || name == "Half" || name == "Bfloat16") return 2;
    if (name == "Int32" || name == "Int" || name == "Uint32" || name == "Float32" || name == "Float") return 4;
    if (name == "Int64" || name == "Uint64" || name == "Float64" || name == "Double") return 8;
    return 0;
}

} // namespace paralens::prof
