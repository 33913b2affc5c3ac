#include "trace/KinetoSupport.hpp"

#include "trace/NcclKernelName.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace paralens::core {

using Json = nlohmann::json;

KinetoGroupInfo::KinetoGroupInfo(const Json& info)
{
    if (!info.is_object()) return;
    if (auto it = info.find("world_size"); it != info.end() && it->is_number_integer()) worldSize = it->get<int32_t>();
    int64_t pgCount = -1;
    if (auto it = info.find("pg_count"); it != info.end() && it->is_number_integer()) pgCount = it->get<int64_t>();
    singleGroup = pgCount == 1; // without pg_count nothing says the collectives span the world
    auto pgs = info.find("pg_config");
    if (pgs == info.end() || !pgs->is_array()) return;
    for (const Json& pg : *pgs) {
        if (!pg.is_object()) continue;
        std::string name = pg.contains("pg_name") && pg["pg_name"].is_string() ? pg["pg_name"].get<std::string>() : "";
        int32_t size = 0;
        if (auto it = pg.find("pg_size"); it != pg.end() && it->is_number_integer()) size = it->get<int32_t>();
        else if (auto r = pg.find("ranks"); r != pg.end() && r->is_array()) size = static_cast<int32_t>(r->size());
        if (!name.empty() && size > 0) sizes[name] = size;
    }
}

int32_t KinetoGroupInfo::SizeOf(const std::string& group) const
{
    auto it = sizes.find(group);
    if (it != sizes.end()) return it->second;
    return singleGroup ? worldSize : 0;
}

namespace {

// The bytes of each tensor of "Input Dims" ([[19618307]], [[1073741824], [16777216], []]) with
// the element sizes of "Input type" (["float"], ["signed char", "signed char", ""]).
std::vector<uint64_t> TensorBytes(std::string_view dimsJson, std::string_view typesJson)
{
    std::vector<uint64_t> out;
    Json dims, types;
    try {
        dims = Json::parse(dimsJson);
        types = Json::parse(typesJson);
    } catch (const Json::exception&) {
        return out;
    }
    if (!dims.is_array() || !types.is_array()) return out;
    for (size_t i = 0; i < dims.size() && i < types.size(); ++i) {
        if (!dims[i].is_array() || dims[i].empty() || !types[i].is_string()) continue;
        uint64_t elem = DtypeSizeBytes(types[i].get<std::string>());
        if (elem == 0) continue;
        uint64_t n = elem;
        bool ok = true;
        for (const Json& d : dims[i]) {
            if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 40)) {
                ok = false;
                break;
            }
            uint64_t v = d.get<uint64_t>();
            if (v != 0 && n > (uint64_t{1} << 62) / v) {
                ok = false;
                break;
            }
            n *= v;
        }
        if (ok) out.push_back(n);
    }
    return out;
}

int32_t CountListItems(std::string_view list) // "[0, 1, 2]" -> 3, "[]" -> 0
{
    bool any = false;
    int32_t commas = 0;
    for (char c : list) {
        if (std::isdigit(static_cast<unsigned char>(c))) any = true;
        if (c == ',') ++commas;
    }
    return any ? commas + 1 : 0;
}

KinetoCollectives::CommArgs ReadCommArgs(const ChromeEvent& e)
{
    KinetoCollectives::CommArgs a;
    uint64_t in = 0, out = 0;
    const ChromeArg* dims = nullptr;
    const ChromeArg* types = nullptr;
    int32_t listed = 0;
    for (const ChromeArg& arg : e.args) {
        if (arg.key == "Collective name") {
            auto c = CollectiveFromName(arg.text);
            a.collective = c ? std::string(Name(*c)) : std::string(arg.text);
        } else if (arg.key == "In msg nelems") arg.AsUint64(in);
        else if (arg.key == "Out msg nelems") arg.AsUint64(out);
        else if (arg.key == "dtype") a.dtype = CanonicalDtype(arg.text);
        else if (arg.key == "Group size") {
            int64_t v = 0;
            if (arg.AsInt64(v) && v > 0 && v < (1 << 24)) a.ranks = static_cast<int32_t>(v);
        } else if (arg.key == "Process Group Name") a.group = arg.text;
        else if (arg.key == "Process Group Ranks") listed = CountListItems(arg.text);
        else if (arg.key == "Seq" || arg.key == "seq") arg.AsInt64(a.seq);
        else if (arg.key == "Input Dims" && arg.kind == JsonKind::Array) dims = &arg;
        else if (arg.key == "Input type" && arg.kind == JsonKind::Array) types = &arg;
    }
    if (a.ranks == 0) a.ranks = listed;
    uint64_t elem = DtypeSizeBytes(a.dtype);
    if (elem > 0 && (in > 0 || out > 0) && std::max(in, out) < (uint64_t{1} << 58) / elem) {
        a.bytes = std::max(in, out) * elem;
        a.smallerBytes = std::min(in, out) * elem;
    } else if (dims && types) {
        std::vector<uint64_t> t = TensorBytes(dims->text, types->text);
        if (!t.empty()) {
            a.bytes = *std::max_element(t.begin(), t.end());
            a.smallerBytes = t.size() >= 2 ? *std::min_element(t.begin(), t.end()) : 0;
        }
    }
    return a;
}

} // namespace

uint32_t KinetoCollectives::ThreadId(std::string_view pid, std::string_view tid)
{
    std::string key(pid);
    key += '\x1f';
    key.append(tid);
    auto [it, inserted] = m_threads.emplace(key, static_cast<uint32_t>(m_threads.size()));
    return it->second;
}

void KinetoCollectives::OnKernel(const ChromeEvent& e, size_t track, size_t span)
{
    auto info = ParseNcclKernelName(e.name);
    if (!info) return;
    Kernel k;
    k.track = track;
    k.span = span;
    k.tag.collective = info->collective;
    k.tag.algorithm = info->algorithm;
    k.tag.protocol = info->protocol;
    k.tag.redop = info->redop;
    k.tag.dtype = info->dtype;
    if (const ChromeArg* c = e.Arg("correlation")) c->AsInt64(k.correlation);
    k.args = ReadCommArgs(e);
    m_kernels.push_back(std::move(k));
}

void KinetoCollectives::OnLaunch(const ChromeEvent& e, const ChromeArg& correlation)
{
    Launch l;
    if (!correlation.AsInt64(l.correlation)) return;
    l.thread = ThreadId(e.pid, e.tid);
    l.tsNs = e.tsNs;
    m_launches.push_back(l);
}

void KinetoCollectives::OnCommOp(const ChromeEvent& e)
{
    CommOp op;
    op.thread = ThreadId(e.pid, e.tid);
    op.startNs = e.tsNs;
    op.endNs = e.tsNs + std::clamp<int64_t>(e.hasDur ? e.durNs : 0, 0, kMaxAbsTraceNs); // ts is in range already
    op.annotation = e.name.substr(0, 5) == "nccl:";
    op.args = ReadCommArgs(e);
    if (op.args.collective.empty() && e.name != "record_param_comms") {
        auto c = CollectiveFromName(e.name);
        if (c) op.args.collective = std::string(Name(*c));
    }
    m_ops.push_back(std::move(op));
}

std::vector<const KinetoCollectives::CommOp*> KinetoCollectives::Enclosing(uint32_t thread, int64_t tsNs) const
{
    std::vector<const CommOp*> out;
    auto it = std::upper_bound(m_ops.begin(), m_ops.end(), std::make_pair(thread, tsNs),
                               [](const std::pair<uint32_t, int64_t>& key, const CommOp& op) {
                                   return key.first != op.thread ? key.first < op.thread : key.second < op.startNs;
                               });
    for (int steps = 0; it != m_ops.begin() && steps < 32; ++steps) {
        --it;
        if (it->thread != thread) break;
        if (it->startNs <= tsNs && tsNs <= it->endNs) out.push_back(&*it);
    }
    return out;
}

bool KinetoCollectives::FindLaunch(int64_t correlation, uint32_t& thread, int64_t& tsNs) const
{
    auto l = std::lower_bound(m_launches.begin(), m_launches.end(), correlation,
                              [](const Launch& x, int64_t c) { return x.correlation < c; });
    if (l == m_launches.end() || l->correlation != correlation) return false;
    thread = l->thread;
    tsNs = l->tsNs;
    return true;
}

void KinetoCollectives::ResolveOne(Kernel& k, const KinetoGroupInfo& groups) const
{
    CommArgs merged = k.args;
    std::string bytesFrom = merged.bytes > 0 ? "args" : "";
    uint32_t thread = 0;
    int64_t launchNs = 0;
    if (merged.bytes == 0 && k.correlation >= 0) {
        if (FindLaunch(k.correlation, thread, launchNs)) {
            std::string annotated;
            for (const CommOp* op : Enclosing(thread, launchNs)) {
                const CommArgs& a = op->args;
                if (a.bytes > merged.bytes) merged.bytes = a.bytes;
                if (a.smallerBytes > 0 && (merged.smallerBytes == 0 || a.smallerBytes < merged.smallerBytes))
                    merged.smallerBytes = a.smallerBytes;
                if (op->annotation && !a.collective.empty()) annotated = a.collective;
                if (merged.collective.empty()) merged.collective = a.collective;
                if (merged.ranks == 0) merged.ranks = a.ranks;
                if (merged.group.empty()) merged.group = a.group;
                if (merged.seq < 0) merged.seq = a.seq;
                if (merged.dtype.empty()) merged.dtype = a.dtype;
            }
            if (!annotated.empty()) merged.collective = annotated;
            if (merged.bytes > 0) bytesFrom = "cpu-op";
        }
    }
    CollectiveTag& t = k.tag;
    if (!merged.collective.empty()) {
        if (!t.collective.empty() && t.collective != merged.collective) t.kernel = t.collective; // e.g. SendRecv kernels of an allreduce
        t.collective = merged.collective;
    }
    if (t.dtype.empty()) t.dtype = merged.dtype;
    t.group = merged.group;
    t.seq = merged.seq;
    t.ranks = merged.ranks;
    bool gathers = t.collective == "allgather" || t.collective == "reduce-scatter";
    if (t.ranks == 0 && gathers && merged.smallerBytes > 0 && merged.bytes % merged.smallerBytes == 0)
        t.ranks = static_cast<int32_t>(std::min<uint64_t>(merged.bytes / merged.smallerBytes, 1 << 24));
    if (t.ranks == 0) t.ranks = groups.SizeOf(t.group);
    t.bytesFrom = bytesFrom;
    k.args.bytes = merged.bytes;
}

void KinetoCollectives::Resolve(std::vector<PendingTrack>& tracks, TraceBuilder& builder, const KinetoGroupInfo& groups)
{
    std::sort(m_launches.begin(), m_launches.end(),
              [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
    std::sort(m_ops.begin(), m_ops.end(), [](const CommOp& a, const CommOp& b) {
        return a.thread != b.thread ? a.thread < b.thread : a.startNs < b.startNs;
    });
    for (Kernel& k : m_kernels) {
        ResolveOne(k, groups);
        Span& s = tracks[k.track].spans[k.span];
        s.category = SpanCategory::Collective;
        s.bytes = k.args.bytes;
        s.detail = builder.Intern(FormatCollectiveTag(k.tag));
    }
}

std::string KinetoGpuModel(int32_t gpu, const Json& deviceProperties)
{
    if (!deviceProperties.is_array()) return "";
    for (const Json& d : deviceProperties)
        if (d.is_object() && d.contains("id") && d["id"].is_number_integer() && d["id"].get<int64_t>() == gpu &&
            d.contains("name") && d["name"].is_string())
            return d["name"].get<std::string>();
    return "";
}

std::string KinetoGpuName(int32_t rank, bool rankKnown, int32_t gpu, const Json& deviceProperties)
{
    std::string name = rankKnown ? "rank " + std::to_string(rank) + " " : "";
    name += gpu == kNone ? "GPU" : "GPU " + std::to_string(gpu);
    std::string model = KinetoGpuModel(gpu, deviceProperties);
    if (!model.empty()) name += " (" + model + ")";
    return name;
}

std::optional<int32_t> RankFromFileName(const std::string& path)
{
    std::string name = std::filesystem::path(path).filename().string();
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::optional<int32_t> found;
    for (size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 4)) {
        size_t i = at + 4;
        if (i < name.size() && (name[i] == '-' || name[i] == '_' || name[i] == '.')) ++i;
        size_t digits = i;
        int64_t v = 0;
        while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits])) && v < (1 << 24))
            v = v * 10 + (name[digits++] - '0');
        if (digits > i) found = static_cast<int32_t>(v);
    }
    return found;
}

} // namespace paralens::core
