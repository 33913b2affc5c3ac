#include "trace/NcclTestsLog.hpp"

#include "common/CharConv.hpp"
#include "common/Error.hpp"
#include "model/Collective.hpp"
#include "model/CostModel.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/FileIO.hpp"
#include "trace/NcclKernelName.hpp"
#include "trace/TraceBuilder.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

namespace paralens::core {

namespace {

std::vector<std::string_view> Tokens(std::string_view line)
{
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
        if (i > start) out.push_back(line.substr(start, i - start));
    }
    return out;
}

bool IsUnsigned(std::string_view t)
{
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <class T> bool ParseNumber(std::string_view t, T& out)
{
    auto r = paralens::FromChars(t.data(), t.data() + t.size(), out);
    return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

// What a launcher puts before each line of a rank's output: Open MPI's --tag-output
// ("[1,0]<stdout>:"), Slurm's srun --label ("0: "), MPICH and Intel MPI's -prepend-rank ("[0] "),
// pdsh and clush ("node17: "). A host-like prefix is only taken off when a table line follows.
std::string_view StripLauncherPrefix(std::string_view line)
{
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos) return line;
    std::string_view rest = line.substr(i);
    auto digitsThen = [&](size_t from, char c) {
        size_t j = from;
        while (j < rest.size() && rest[j] >= '0' && rest[j] <= '9') ++j;
        return j > from && j < rest.size() && rest[j] == c ? j : std::string_view::npos;
    };
    if (rest.front() == '[') {
        if (size_t close = rest.find(']'); close != std::string_view::npos && close < 40) {
            std::string_view after = rest.substr(close + 1);
            if (after.rfind("<stdout>:", 0) == 0 || after.rfind("<stderr>:", 0) == 0) return after.substr(9); // Open MPI
            if (digitsThen(1, ']') == close && !after.empty() && after.front() == ' ') return after.substr(1);  // -prepend-rank
        }
        return line;
    }
    if (size_t colon = digitsThen(0, ':'); colon != std::string_view::npos && colon + 1 < rest.size() && rest[colon + 1] == ' ')
        return rest.substr(colon + 2); // srun --label
    size_t j = 0;
    while (j < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[j])) || rest[j] == '-' || rest[j] == '_' || rest[j] == '.')) ++j;
    if (j > 0 && j + 1 < rest.size() && rest[j] == ':' && rest[j + 1] == ' ') { // pdsh: only before a table line
        std::string_view after = rest.substr(j + 2);
        size_t k = after.find_first_not_of(' ');
        if (k != std::string_view::npos && (after[k] == '#' || (after[k] >= '0' && after[k] <= '9'))) return after;
    }
    return line;
}

std::string_view Body(std::string_view line) // a '#' line without its '#' and leading blanks
{
    line.remove_prefix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    return line;
}

// "#  Rank  0 Group  0 Pid 1583223 on host device  0 [0000:29:00] NVIDIA H100 80GB HBM3"
// "#   Rank  0 Pid 112528 on localhost device  0 [0x00] A100-SXM4-40GB"
bool ParseDeviceLine(std::string_view body, NcclTestsDevice& d)
{
    auto t = Tokens(body);
    if (t.size() < 8 || t[0] != "Rank" || !ParseNumber(t[1], d.rank)) return false;
    size_t i = 2;
    if (t[i] == "Group" && i + 1 < t.size()) {
        ParseNumber(t[i + 1], d.group);
        i += 2;
    }
    if (i + 1 < t.size() && t[i] == "Pid") {
        ParseNumber(t[i + 1], d.pid);
        i += 2;
    }
    if (i + 1 < t.size() && t[i] == "on") {
        d.host = t[i + 1];
        i += 2;
    }
    if (i + 1 < t.size() && t[i] == "device") {
        ParseNumber(t[i + 1], d.device);
        i += 2;
    }
    if (i < t.size() && t[i].size() >= 2 && t[i].front() == '[') {
        d.busId = t[i].substr(1, t[i].size() - 2);
        ++i;
    }
    for (; i < t.size(); ++i) d.gpu += (d.gpu.empty() ? "" : " ") + std::string(t[i]);
    return true;
}

// "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ..."
void ParseSettings(std::string_view body, std::map<std::string, std::string>& settings)
{
    auto t = Tokens(body);
    std::string key;
    for (std::string_view tok : t) {
        bool value = IsUnsigned(tok.substr(0, 1)) || tok.find('(') != std::string_view::npos;
        if (value && !key.empty()) {
            if (key.back() == ':') key.pop_back();
            settings[key] = tok;
            key.clear();
        } else {
            key += (key.empty() ? "" : " ") + std::string(tok);
        }
    }
}

std::string TestNameIn(std::string_view text) // "all_reduce_perf" in a command or header line
{
    size_t at = text.find("_perf");
    if (at == std::string_view::npos) return "";
    size_t start = at;
    while (start > 0 && (std::isalnum(static_cast<unsigned char>(text[start - 1])) || text[start - 1] == '_')) --start;
    std::string name(text.substr(start, at + 5 - start));
    return CollectiveFromName(name) ? name : "";
}

struct Layout {
    int size = -1, count = -1, type = -1, redop = -1, root = -1;
    int half[2] = {-1, -1}; // the "time" column of each half
};

Layout LayoutOf(const std::vector<std::string>& columns)
{
    Layout l;
    int halves = 0;
    for (int i = 0; i < static_cast<int>(columns.size()); ++i) {
        const std::string& c = columns[static_cast<size_t>(i)];
        if (c == "size") l.size = i;
        else if (c == "count") l.count = i;
        else if (c == "type") l.type = i;
        else if (c == "redop") l.redop = i;
        else if (c == "root") l.root = i;
        else if (c == "time" && halves < 2) l.half[halves++] = i;
    }
    return l;
}

class LogParser {
public:
    LogParser(std::string_view text, const std::string& origin) : m_text(text) { m_log.origin = origin; }

    NcclTestsLog Parse();

private:
    [[noreturn]] void Fail(const std::string& what) const
    {
        throw Error(m_log.origin + ":" + std::to_string(m_line) + ": " + what);
    }
    void OnHashLine(std::string_view line);
    void OnTextLine(std::string_view line);
    void StartTable(std::string_view body);
    void ReadRow(const std::vector<std::string_view>& t);
    bool FillEmptyColumns(std::vector<std::string_view>& t);
    void ReadHalf(const std::vector<std::string_view>& t, int at, NcclTestsResult& r);
    void FinishBlock(NcclTestsBlock& b) const;

    std::string_view m_text;
    NcclTestsLog m_log;
    size_t m_line = 0;
    bool m_inTable = false;
    Layout m_layout;
    std::string m_pendingTest;
    std::vector<NcclTestsDevice> m_devices;
    std::map<std::string, std::string> m_settings;
};

void LogParser::StartTable(std::string_view body)
{
    NcclTestsBlock b;
    for (std::string_view tok : Tokens(body)) b.columns.emplace_back(tok);
    b.headerLine = m_line;
    b.testName = m_pendingTest;
    b.devices = m_devices;
    b.settings = m_settings;
    m_layout = LayoutOf(b.columns);
    m_log.blocks.push_back(std::move(b));
    m_inTable = true;
}

void LogParser::OnHashLine(std::string_view line)
{
    std::string_view body = Body(line);
    auto t = Tokens(body);
    if (!t.empty() && t[0] == "size" && std::find(t.begin(), t.end(), "time") != t.end()) {
        StartTable(body);
        return;
    }
    if (m_inTable && !t.empty() && t[0] == "(B)") return; // the units line under the header
    m_inTable = false;
    if (body.rfind("nccl-tests version", 0) == 0) m_log.version = std::string(body.substr(std::min<size_t>(19, body.size())));
    else if (body.rfind("Collective test starting:", 0) == 0) m_pendingTest = TestNameIn(body);
    else if (body.rfind("Using devices", 0) == 0) m_devices.clear();
    else if (body.rfind("nThread", 0) == 0) {
        m_settings.clear();
        ParseSettings(body, m_settings);
    } else if (body.rfind("Avg bus bandwidth", 0) == 0 && !m_log.blocks.empty()) {
        size_t colon = body.find(':');
        if (colon != std::string_view::npos) {
            auto v = Tokens(body.substr(colon + 1));
            if (!v.empty()) ParseNumber(v[0], m_log.blocks.back().avgBusBwGBps);
        }
    } else if (body.rfind("Collective test concluded", 0) == 0) {
        m_pendingTest.clear();
    } else {
        NcclTestsDevice d;
        if (ParseDeviceLine(body, d)) m_devices.push_back(d);
    }
}

void LogParser::ReadHalf(const std::vector<std::string_view>& t, int at, NcclTestsResult& r)
{
    if (at < 0) return;
    const auto& columns = m_log.blocks.back().columns;
    auto number = [&](int i, double& out) {
        if (i >= static_cast<int>(t.size())) return;
        if (!ParseNumber(t[static_cast<size_t>(i)], out) || !std::isfinite(out) || out < 0 || out > 1e12)
            Fail("column '" + columns[static_cast<size_t>(i)] + "' must be a number from 0 to 1e12, found '" +
                 std::string(t[static_cast<size_t>(i)]) + "'");
    };
    if (at < static_cast<int>(t.size()) && (t[static_cast<size_t>(at)] == "N/A" || t[static_cast<size_t>(at)] == "-"))
        return; // a half the test does not run
    r.present = true;
    number(at, r.timeUs);
    number(at + 1, r.algbwGBps);
    number(at + 2, r.busbwGBps);
    if (at + 3 < static_cast<int>(t.size()) && columns[static_cast<size_t>(at + 3)] != "time")
        r.wrong = t[static_cast<size_t>(at + 3)];
}

void LogParser::ReadRow(const std::vector<std::string_view>& t)
{
    NcclTestsRow row;
    row.line = m_line;
    const Layout& l = m_layout;
    if (l.size < 0 || !ParseNumber(t[static_cast<size_t>(l.size)], row.bytes))
        Fail("the size column must be a whole number of bytes, found '" + std::string(t[0]) + "'");
    if (l.count >= 0 && !ParseNumber(t[static_cast<size_t>(l.count)], row.count))
        Fail("the count column must be a whole number, found '" + std::string(t[static_cast<size_t>(l.count)]) + "'");
    if (l.type >= 0) row.type = t[static_cast<size_t>(l.type)];
    if (l.redop >= 0) row.redop = t[static_cast<size_t>(l.redop)];
    if (l.root >= 0 && !t[static_cast<size_t>(l.root)].empty() && !ParseNumber(t[static_cast<size_t>(l.root)], row.root))
        Fail("the root column must be a whole number, found '" + std::string(t[static_cast<size_t>(l.root)]) + "'");
    ReadHalf(t, l.half[0], row.outOfPlace);
    ReadHalf(t, l.half[1], row.inPlace);
    if (row.outOfPlace.present && row.outOfPlace.timeUs <= 0 && row.bytes > 0)
        Fail("the time of a " + std::to_string(row.bytes) + "-byte row must be positive");
    m_log.blocks.back().rows.push_back(std::move(row));
}

// A row shorter than its table's header, because the header names columns (redop, root) that
// this test's rows leave empty (older nccl-tests printed alltoall rows so): empty tokens are put
// where those columns are, when that makes every remaining token fit its column.
bool LogParser::FillEmptyColumns(std::vector<std::string_view>& t)
{
    NcclTestsBlock& block = m_log.blocks.back();
    const auto& columns = block.columns;
    const Layout& l = m_layout;
    const int optional[2] = {l.redop, l.root};
    for (int mask = 1; mask <= 3; ++mask) {
        std::vector<int> dropped;
        for (int k = 0; k < 2; ++k)
            if ((mask >> k) & 1) dropped.push_back(optional[k]);
        if (std::find(dropped.begin(), dropped.end(), -1) != dropped.end() || t.size() + dropped.size() != columns.size()) continue;
        std::vector<std::string_view> filled;
        for (size_t i = 0, j = 0; i < columns.size(); ++i)
            filled.push_back(std::find(dropped.begin(), dropped.end(), static_cast<int>(i)) != dropped.end() ? std::string_view() : t[j++]);
        double x = 0;
        const bool fits = l.type >= 0 && !ParseNumber(filled[static_cast<size_t>(l.type)], x) && l.half[0] >= 0 &&
                          (ParseNumber(filled[static_cast<size_t>(l.half[0])], x) || filled[static_cast<size_t>(l.half[0])] == "N/A");
        if (!fits) continue;
        for (int c : dropped)
            if (std::find(block.emptyColumns.begin(), block.emptyColumns.end(), columns[static_cast<size_t>(c)]) == block.emptyColumns.end())
                block.emptyColumns.push_back(columns[static_cast<size_t>(c)]);
        t = std::move(filled);
        return true;
    }
    return false;
}

void LogParser::OnTextLine(std::string_view line)
{
    auto t = Tokens(line);
    if (t.empty()) return;
    if (!m_inTable) {
        if (std::string name = TestNameIn(line); !name.empty()) m_pendingTest = name;
        return;
    }
    size_t want = m_log.blocks.back().columns.size();
    if (IsUnsigned(t[0]) && t.size() == want) {
        ReadRow(t);
        return;
    }
    if (IsUnsigned(t[0]) && t.size() < want && FillEmptyColumns(t)) { // older logs: alltoall rows leave redop empty
        ReadRow(t);
        return;
    }
    SkippedLine s;
    s.line = m_line;
    s.text = std::string(line.substr(0, 120));
    s.reason = IsUnsigned(t[0]) ? std::to_string(t.size()) + " columns where the table has " + std::to_string(want)
                                : "not a row of the table";
    m_log.skipped.push_back(std::move(s));
}

// A collective the file's name spells ("nccl_alltoall.log", "all-reduce-2nodes.out"), for logs
// that do not name their test.
std::optional<Collective> CollectiveInFileName(const std::string& origin)
{
    std::string stem;
    for (char c : std::filesystem::path(origin).stem().string())
        if (std::isalnum(static_cast<unsigned char>(c))) stem += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    static constexpr std::pair<std::string_view, Collective> kNames[] = { // longer names first: "allreduce" holds "reduce"
        {"reducescatter", Collective::ReduceScatter}, {"allreduce", Collective::AllReduce}, {"allgather", Collective::AllGather},
        {"alltoall", Collective::AllToAll},          {"broadcast", Collective::Broadcast}, {"sendrecv", Collective::SendRecv},
        {"reduce", Collective::Reduce},              {"gather", Collective::Gather},       {"scatter", Collective::Scatter},
    };
    for (const auto& [name, c] : kNames)
        if (stem.find(name) != std::string::npos) return c;
    return std::nullopt;
}

// The collective of a block whose log does not name its test: from the columns (root and redop)
// and busbw/algbw, which is nccl-tests' factor for the collective.
std::string InferCollective(const NcclTestsBlock& b)
{
    auto has = [&](const char* c) {
        return std::count(b.columns.begin(), b.columns.end(), c) > 0 && std::count(b.emptyColumns.begin(), b.emptyColumns.end(), c) == 0;
    };
    bool hasRedop = has("redop"), hasRoot = has("root"); // a column the rows leave empty says nothing
    std::vector<double> ratios;
    bool rooted = false, reduces = false;
    for (const NcclTestsRow& r : b.rows) {
        if (r.outOfPlace.algbwGBps >= 1.0) ratios.push_back(r.outOfPlace.busbwGBps / r.outOfPlace.algbwGBps);
        rooted = rooted || r.root >= 0;
        reduces = reduces || (!r.redop.empty() && r.redop != "none");
    }
    bool modern = hasRedop && hasRoot && !b.rows.empty() && (b.rows.front().root == -1 || b.rows.front().redop == "none");
    if (!modern) {
        rooted = hasRoot;
        reduces = hasRedop;
    }
    if (rooted) return reduces ? "reduce" : "broadcast";
    double ratio = 1.0;
    if (!ratios.empty()) {
        std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
        ratio = ratios[ratios.size() / 2];
    }
    int p = std::max(b.ranks, 2);
    double allreduce = 2.0 * (p - 1) / p, shared = (p - 1.0) / p;
    auto near = [](double a, double x) { return std::fabs(a - x) < 0.03 * x; };
    if (reduces) return near(ratio, allreduce) || !near(ratio, shared) ? "allreduce" : "reduce-scatter";
    if (near(ratio, shared)) return "allgather";
    return "sendrecv";
}

void LogParser::FinishBlock(NcclTestsBlock& b) const
{
    std::set<int32_t> ranks;
    for (const NcclTestsDevice& d : b.devices) ranks.insert(d.rank);
    b.ranks = static_cast<int32_t>(ranks.size());
    if (b.ranks == 0) {
        int64_t threads = 1, gpus = 1;
        if (auto it = b.settings.find("nThread"); it != b.settings.end()) ParseNumber(std::string_view(it->second), threads);
        if (auto it = b.settings.find("nGpus"); it != b.settings.end()) ParseNumber(std::string_view(it->second), gpus);
        b.ranks = static_cast<int32_t>(std::clamp<int64_t>(threads * gpus, 1, 1 << 20));
    }
    if (auto c = CollectiveFromName(b.testName)) {
        b.collective = Name(*c);
        b.collectiveFrom = "header";
    } else if (auto f = CollectiveInFileName(m_log.origin)) {
        b.collective = Name(*f);
        b.collectiveFrom = "file name";
    } else {
        b.collective = InferCollective(b);
        b.collectiveFrom = "columns";
    }
}

NcclTestsLog LogParser::Parse()
{
    size_t pos = 0;
    while (pos < m_text.size()) {
        size_t end = m_text.find('\n', pos);
        if (end == std::string_view::npos) end = m_text.size();
        std::string_view line = m_text.substr(pos, end - pos);
        pos = end + 1;
        ++m_line;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        line = StripLauncherPrefix(line);
        size_t first = line.find_first_not_of(" \t");
        if (first != std::string_view::npos && line[first] == '#') OnHashLine(line.substr(first));
        else OnTextLine(line);
    }
    std::vector<NcclTestsBlock> kept;
    for (NcclTestsBlock& b : m_log.blocks) {
        if (b.rows.empty()) continue; // a header whose run failed before printing rows
        FinishBlock(b);
        kept.push_back(std::move(b));
    }
    m_log.blocks = std::move(kept);
    if (m_log.blocks.empty()) {
        std::string why = m_log.skipped.empty() ? "" : " (line " + std::to_string(m_log.skipped.front().line) + ": " +
                                                           m_log.skipped.front().reason + ")";
        throw Error(m_log.origin + ": no nccl-tests result rows: expected a table header such as '#  size  count  type  "
                                   "redop  root  time  algbw  busbw ...' followed by rows of numbers" + why);
    }
    return std::move(m_log);
}

} // namespace

bool LooksLikeNcclTestsLog(std::string_view text)
{
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || text[first] == '{') return false;
    if (text[first] == '[') { // JSON's array of events, or a launcher's line such as "[1622510437.75] [g0314:110100:0] UCX WARN ..."
        const size_t next = text.find_first_not_of(" \t\r\n", first + 1);
        if (next == std::string_view::npos || text[next] == '{' || text[next] == ']' || text[next] == '[') return false;
    }
    bool header = text.find("algbw") != std::string_view::npos && text.find("busbw") != std::string_view::npos;
    bool settings = text.find("nThread") != std::string_view::npos && text.find("minBytes") != std::string_view::npos;
    return header || settings;
}

NcclTestsLog ReadNcclTestsLog(std::string_view text, const std::string& origin)
{
    return LogParser(text, origin).Parse();
}

NcclTestsLog ReadNcclTestsLogFile(const std::string& path)
{
    std::string text = ReadFileDecompressed(path);
    return ReadNcclTestsLog(text, path);
}

namespace {

void AddLogDevices(const NcclTestsLog& log, TraceBuilder& b, std::vector<uint32_t>& tracks)
{
    const NcclTestsBlock& first = log.blocks.front();
    std::vector<NcclTestsDevice> devices = first.devices;
    if (devices.empty())
        for (int32_t r = 0; r < first.ranks; ++r) devices.push_back({r, 0, 0, "", r, "", ""});
    std::sort(devices.begin(), devices.end(), [](const NcclTestsDevice& x, const NcclTestsDevice& y) {
        return x.host != y.host ? x.host < y.host : x.rank < y.rank;
    });
    for (const NcclTestsDevice& d : devices) {
        std::string name = "rank " + std::to_string(d.rank) + " GPU " + std::to_string(d.device);
        if (!d.gpu.empty()) name += " (" + d.gpu + ")";
        uint32_t id = b.AddDevice(name, DeviceKind::Gpu, d.rank, d.host, d.device);
        tracks.push_back(b.AddTrack(id, "out-of-place"));
        tracks.push_back(b.AddTrack(id, "in-place"));
    }
}

void FillLogMetadata(const NcclTestsLog& log, TraceBuilder& b)
{
    Metadata& m = b.Meta();
    const NcclTestsBlock& first = log.blocks.front();
    m.source = TraceSource::NcclTests;
    std::string collectives;
    for (const NcclTestsBlock& blk : log.blocks)
        if (collectives.find(blk.collective) == std::string::npos) collectives += (collectives.empty() ? "" : ", ") + blk.collective;
    m.title = std::filesystem::path(log.origin).filename().string() + ": nccl-tests " + collectives;
    m.workload.Set("collective", first.collective);
    m.workload.Set("collectiveFrom", first.collectiveFrom);
    m.workload.Set("ranks", int64_t{first.ranks});
    m.workload.Set("dtype", first.rows.front().type);
    if (!first.rows.front().redop.empty()) m.workload.Set("redop", first.rows.front().redop);
    m.workload.Set("blocks", static_cast<int64_t>(log.blocks.size()));
    size_t rows = 0;
    for (const NcclTestsBlock& blk : log.blocks) rows += blk.rows.size();
    m.workload.Set("rows", static_cast<int64_t>(rows));
    std::set<std::string> gpus, hosts;
    for (const NcclTestsDevice& d : first.devices) {
        if (!d.gpu.empty()) gpus.insert(d.gpu);
        if (!d.host.empty()) hosts.insert(d.host);
    }
    auto join = [](const std::set<std::string>& s) {
        std::string out;
        for (const std::string& x : s) out += (out.empty() ? "" : ", ") + x;
        return out;
    };
    if (!gpus.empty()) m.hardware.Set("gpu", join(gpus));
    if (!hosts.empty()) m.hardware.Set("hosts", join(hosts));
    if (!log.version.empty()) m.hardware.Set("ncclTests", log.version);
    if (first.avgBusBwGBps > 0) m.results.Set("avgBusBwGBps", first.avgBusBwGBps);
    m.extra.Set("timeline", std::string("synthetic: the rows laid end to end from 0, each span one average iteration "
                                        "(out-of-place, then in-place)"));
    if (!log.skipped.empty()) m.extra.Set("skippedLines", static_cast<int64_t>(log.skipped.size()));
}

} // namespace

Trace NcclTestsTrace(const NcclTestsLog& log)
{
    Require(!log.blocks.empty(), log.origin + ": no nccl-tests result rows");
    TraceBuilder b;
    std::vector<uint32_t> tracks; // per device: out-of-place, in-place
    AddLogDevices(log, b, tracks);
    FillLogMetadata(log, b);
    int64_t t = 0;
    for (size_t bi = 0; bi < log.blocks.size(); ++bi) {
        const NcclTestsBlock& blk = log.blocks[bi];
        StringId name = b.Intern(blk.collective);
        for (size_t ri = 0; ri < blk.rows.size(); ++ri) {
            const NcclTestsRow& row = blk.rows[ri];
            for (int half = 0; half < 2; ++half) {
                const NcclTestsResult& r = half == 0 ? row.outOfPlace : row.inPlace;
                if (!r.present) continue;
                CollectiveTag tag;
                tag.collective = blk.collective;
                tag.dtype = CanonicalDtype(row.type).empty() ? row.type : CanonicalDtype(row.type);
                tag.redop = row.redop == "none" ? "" : row.redop;
                tag.ranks = blk.ranks;
                tag.half = half == 0 ? "out-of-place" : "in-place";
                tag.group = std::to_string(bi) + "/" + tag.half;
                tag.seq = static_cast<int64_t>(ri);
                tag.bytesFrom = "log";
                Span s;
                s.startNs = t;
                s.endNs = t + std::max<int64_t>(static_cast<int64_t>(std::llround(r.timeUs * 1000.0)), 1); // <= 1e15 per row
                Require(s.endNs < (int64_t{1} << 62), log.origin + ": the rows' times add up to more than 146 years");
                s.bytes = row.bytes;
                s.name = name;
                s.detail = b.Intern(FormatCollectiveTag(tag));
                s.category = SpanCategory::Collective;
                s.step = static_cast<int32_t>(ri);
                for (size_t d = half; d < tracks.size(); d += 2) b.AddSpan(tracks[d], s);
                t = s.endNs;
            }
        }
    }
    return std::move(b).Finish();
}

} // namespace paralens::core
