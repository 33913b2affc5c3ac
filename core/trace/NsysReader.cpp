#include "trace/NsysReader.hpp"

#include "common/Error.hpp"
#include "common/Parallel.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/KinetoSupport.hpp"
#include "trace/NcclKernelName.hpp"
#include "trace/TraceBuilder.hpp"

#include <sqlite3.h>

#include <cerrno>
#include <cstdlib>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

extern char** environ;

namespace paralens::core {

namespace {

// ---- SQLite, read-only, every failure an Error naming the file ----

class Database {
public:
    Database(const std::string& path, std::string origin) : m_origin(std::move(origin))
    {
        static std::once_flag statsOff; // SQLite's allocation statistics take a global mutex per malloc
        std::call_once(statsOff, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }); // refused once SQLite has started: harmless
        const int rc = sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
        if (rc != SQLITE_OK) Fail("cannot open it as SQLite");
    }
    ~Database() { sqlite3_close(m_db); }
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    [[noreturn]] void Fail(const std::string& what) const
    {
        throw Error(m_origin + ": " + what + " (SQLite: " + (m_db ? sqlite3_errmsg(m_db) : "out of memory") + ")");
    }
    sqlite3* Get() const { return m_db; }
    const std::string& Origin() const { return m_origin; }

private:
    sqlite3* m_db = nullptr;
    std::string m_origin;
};

class Statement {
public:
    Statement(const Database& db, const std::string& sql) : m_db(db)
    {
        if (sqlite3_prepare_v2(db.Get(), sql.c_str(), -1, &m_stmt, nullptr) != SQLITE_OK) db.Fail("cannot run '" + sql + "'");
    }
    ~Statement() { sqlite3_finalize(m_stmt); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    bool Step()
    {
        const int rc = sqlite3_step(m_stmt);
        if (rc == SQLITE_ROW) return true;
        if (rc != SQLITE_DONE) m_db.Fail("cannot read it (a truncated or damaged file?)");
        return false;
    }
    bool Null(int c) const { return sqlite3_column_type(m_stmt, c) == SQLITE_NULL; }
    // NULL reads as `fallback` (SQLite itself reads it as 0: no type check needed then).
    int64_t Int(int c, int64_t fallback = 0) const
    {
        return fallback != 0 && Null(c) ? fallback : sqlite3_column_int64(m_stmt, c);
    }
    std::string_view Text(int c) const
    {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, c));
        return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, c))) : std::string_view();
    }

private:
    const Database& m_db;
    sqlite3_stmt* m_stmt = nullptr;
};

// The columns a table has (empty when the table is absent).
std::vector<std::string> Columns(const Database& db, const std::string& table)
{
    std::vector<std::string> out;
    Statement s(db, "PRAGMA table_info(\"" + table + "\")");
    while (s.Step()) out.emplace_back(s.Text(1));
    return out;
}

// SELECT of `wanted` from `table`: a missing optional column reads as NULL; a missing required
// one (named before the '|' in `wanted`, e.g. "start|") is an error naming table and column.
std::string Select(const Database& db, const std::string& table, const std::vector<std::string>& wanted)
{
    const std::vector<std::string> have = Columns(db, table);
    std::string sql = "SELECT ";
    for (size_t i = 0; i < wanted.size(); ++i) {
        std::string name = wanted[i];
        const bool required = !name.empty() && name.back() == '|';
        if (required) name.pop_back();
        const bool present = std::find(have.begin(), have.end(), name) != have.end();
        if (!present && required)
            throw Error(db.Origin() + ": table " + table + " has no column '" + name + "' (not an Nsight Systems export this reader knows)");
        sql += (i ? ", " : "") + (present ? "\"" + name + "\"" : std::string("NULL"));
    }
    return sql + " FROM \"" + table + "\"";
}

// nsys's global ids: (VM << 56) | (pid << 24) | tid.
int64_t PidOf(int64_t globalId) { return (globalId >> 24) & 0xFFFFFF; }
int64_t TidOf(int64_t globalId) { return globalId & 0xFFFFFF; }

std::string_view CopyKindName(int64_t kind)
{
    switch (kind) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
    default: return "copy";
    }
}

// nsys NVTX event types: push/pop and start/end ranges, the thread and domain names.
constexpr int64_t kNvtxMark = 34, kNvtxPushPop = 59, kNvtxStartEnd = 60, kNvtxThreadName = 39, kNvtxDomainCreate = 75;

// A runtime call's key: its process and correlation id (ids are per process).
uint64_t CallKey(int64_t pid, int64_t correlation) { return (static_cast<uint64_t>(pid) << 40) ^ static_cast<uint64_t>(correlation); }

// An NVTX range on a host thread, for finding the one around a launch.
struct OpenRange {
    int64_t start, end;
    StringId name;
    int64_t parent; // index of the enclosing range, -1 for none
};

struct HostCall {
    int64_t startNs = 0, endNs = 0, globalTid = 0;
    uint32_t track = kNoTrack; // where it was kept (apiSpans)
};

// One row of a GPU activity table, copied out of SQLite: `name` is a kernel's name id (its
// demangled name, else its short one) or a copy's bytes, `kind` a copy's kind.
struct GpuRow {
    int64_t start, end, device, stream, globalPid, correlation, name, kind;
};

std::vector<GpuRow> FetchGpuRows(const Database& db, const std::string& table, bool kernel, const std::atomic<bool>& stop)
{
    Statement s(db, Select(db, table, {"start|", "end|", "deviceId|", "streamId|", "globalPid", "correlationId",
                                       kernel ? "demangledName" : "bytes", kernel ? "shortName" : "copyKind"}));
    std::vector<GpuRow> rows;
    while (!stop.load(std::memory_order_relaxed) && s.Step())
        rows.push_back({s.Int(0), s.Int(1), s.Int(2), s.Int(3, -1), s.Int(4), s.Int(5, -1),
                        kernel && s.Null(6) ? s.Int(7, -1) : s.Int(6), kernel ? 0 : s.Int(7)});
    return rows;
}

// The kernels' rows (an export's largest table beside the runtime calls) fetched on a second
// connection and core while the reader reads the rest: SQLite's own work is most of a read.
// Take() waits for them and rethrows what the fetch threw; a reader that stops early stops it.
// With one core (or no kernel table) Take() fetches them itself.
class KernelFetch {
public:
    KernelFetch(const Database& db, const std::string& path, bool present) : m_db(db), m_present(present)
    {
        if (!present || UsableThreads() < 2) return;
        m_thread = std::thread([this, path] {
            try {
                Database own(path, m_db.Origin());
                m_rows = FetchGpuRows(own, kTable, true, m_stop);
            } catch (...) {
                m_failure = std::current_exception();
            }
        });
    }
    ~KernelFetch()
    {
        m_stop = true;
        if (m_thread.joinable()) m_thread.join();
    }
    KernelFetch(const KernelFetch&) = delete;
    KernelFetch& operator=(const KernelFetch&) = delete;

    std::vector<GpuRow> Take()
    {
        if (!m_thread.joinable()) return m_present ? FetchGpuRows(m_db, kTable, true, m_stop) : std::vector<GpuRow>{};
        m_thread.join();
        if (m_failure) std::rethrow_exception(m_failure);
        return std::move(m_rows);
    }

    static constexpr const char* kTable = "CUPTI_ACTIVITY_KIND_KERNEL";

private:
    const Database& m_db;
    bool m_present;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
    std::vector<GpuRow> m_rows;
    std::exception_ptr m_failure;
};

class NsysReader {
public:
    NsysReader(const std::string& path, const std::string& origin, const ReadOptions& options)
        : m_db(path, origin), m_options(options), m_origin(origin), m_path(path)
    {
        std::error_code ec;
        m_fileBytes = std::filesystem::file_size(path, ec);
    }

    Trace Read()
    {
        CheckExport();
        ReadStrings();
        ReadSession();
        ReadGpuNames();
        ReadThreadNames();
        ReadProcessesAndStreams();
        CountRows();
        {
            KernelFetch kernels(m_db, m_path, !Columns(m_db, KernelFetch::kTable).empty());
            ReadNvtx();
            ReadRuntime();
            AddGpuRows(kernels.Take(), SpanCategory::Compute);
        }
        ReadGpuActivity("CUPTI_ACTIVITY_KIND_MEMCPY", SpanCategory::Memcpy);
        ReadGpuActivity("CUPTI_ACTIVITY_KIND_MEMSET", SpanCategory::Memset);
        ReadGpuActivity("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", SpanCategory::Sync);
        if (m_gpuSpans == 0 && m_nvtxRanges == 0)
            throw Error(m_origin + ": an Nsight Systems export with no kernel, copy, set, synchronisation or NVTX range to show");
        Metadata& m = m_b.Meta();
        m.source = TraceSource::Nsys;
        m.title = std::filesystem::path(m_origin).filename().string();
        if (!m_gpuNames.empty()) m.hardware.Set("gpu", m_gpuNames.begin()->second);
        m.extra.Set("sessionStartNs", m_sessionStartNs);
        return std::move(m_b).Finish();
    }

private:
    void CheckExport()
    {
        for (const char* t : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME"})
            if (!Columns(m_db, t).empty()) return;
        throw Error(m_origin + ": an SQLite database without the tables of an Nsight Systems export (CUPTI_ACTIVITY_KIND_KERNEL, "
                               "CUPTI_ACTIVITY_KIND_MEMCPY, NVTX_EVENTS, CUPTI_ACTIVITY_KIND_RUNTIME)");
    }

    void ReadStrings()
    {
        Statement s(m_db, Select(m_db, "StringIds", {"id|", "value|"}));
        while (s.Step()) m_strings[s.Int(0)] = std::string(s.Text(1));
    }
    std::string_view Str(int64_t id) const
    {
        auto it = m_strings.find(id);
        return it == m_strings.end() ? std::string_view() : std::string_view(it->second);
    }

    void ReadSession()
    {
        if (Columns(m_db, "TARGET_INFO_SESSION_START_TIME").empty()) return;
        Statement s(m_db, Select(m_db, "TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"}));
        if (s.Step()) m_sessionStartNs = s.Int(0);
    }

    void ReadGpuNames()
    {
        if (Columns(m_db, "TARGET_INFO_GPU").empty()) return;
        Statement s(m_db, Select(m_db, "TARGET_INFO_GPU", {"id", "name"}));
        while (s.Step()) m_gpuNames[s.Int(0)] = std::string(s.Text(1));
    }

    void ReadThreadNames()
    {
        if (Columns(m_db, "ThreadNames").empty()) return;
        Statement s(m_db, Select(m_db, "ThreadNames", {"nameId|", "globalTid|"}));
        while (s.Step()) m_threadNames[s.Int(1)] = std::string(Str(s.Int(0)));
    }

    // Process names (PROCESSES) for host threads without a name of their own, and which stream is
    // a process's default one (TARGET_INFO_CUDA_NULL_STREAM).
    void ReadProcessesAndStreams()
    {
        if (!Columns(m_db, "PROCESSES").empty()) {
            Statement s(m_db, Select(m_db, "PROCESSES", {"pid|", "name"}));
            while (s.Step()) m_processNames[s.Int(0)] = std::string(s.Text(1));
        }
        if (!Columns(m_db, "TARGET_INFO_CUDA_NULL_STREAM").empty()) {
            Statement s(m_db, Select(m_db, "TARGET_INFO_CUDA_NULL_STREAM", {"streamId|", "processId", "deviceId"}));
            while (s.Step()) m_nullStreams.insert({s.Int(1, -1), s.Int(2, -1), s.Int(0)});
        }
    }

    // Rows to read, for progress (max(rowid) is found without a scan).
    void CountRows()
    {
        for (const char* t : {"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                              "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"}) {
            if (Columns(m_db, t).empty()) continue;
            Statement s(m_db, std::string("SELECT max(rowid) FROM \"") + t + "\"");
            const uint64_t rows = s.Step() ? static_cast<uint64_t>(std::max<int64_t>(s.Int(0), 0)) : 0;
            m_rowsTotal += rows;
            if (std::string_view(t) == "CUPTI_ACTIVITY_KIND_RUNTIME") m_calls.reserve(rows); // no rehash of a million calls
        }
    }
    // Called for every row read: progress every 64 Ki rows (a cancelled load throws from it).
    void Row()
    {
        if ((++m_rowsRead & 0xFFFF) != 0 || !m_options.progress) return;
        const double fraction = static_cast<double>(m_rowsRead) / static_cast<double>(std::max(m_rowsTotal, m_rowsRead));
        m_options.progress(static_cast<uint64_t>(fraction * static_cast<double>(m_fileBytes)), m_fileBytes); // as bytes of the file
    }

    std::string ThreadName(int64_t globalTid) const
    {
        auto it = m_threadNames.find(globalTid);
        return it != m_threadNames.end() ? it->second : std::string();
    }

    // The rank of a process: the file name's, else an NVTX thread name "MPI Rank N", else its order.
    int32_t RankOf(int64_t pid)
    {
        if (auto r = RankFromFileName(m_path)) return *r;
        if (auto it = m_mpiRank.find(pid); it != m_mpiRank.end()) return it->second;
        auto [it, fresh] = m_pidOrder.try_emplace(pid, static_cast<int32_t>(m_pidOrder.size()));
        return it->second;
    }

    uint32_t HostTrack(int64_t globalTid, const char* track)
    {
        auto key = std::make_pair(globalTid, std::string(track));
        if (auto it = m_hostTracks.find(key); it != m_hostTracks.end()) return it->second;
        auto [dit, fresh] = m_hostDevices.try_emplace(globalTid, 0u);
        if (fresh) {
            const int64_t pid = PidOf(globalTid), tid = TidOf(globalTid);
            std::string name = ThreadName(globalTid);
            if (auto p = m_processNames.find(pid); name.empty() && p != m_processNames.end()) name = p->second;
            dit->second = m_b.AddDevice("rank " + std::to_string(RankOf(pid)) + " thread " + std::to_string(tid) + (name.empty() ? "" : " (" + name + ")"),
                                        DeviceKind::Cpu, RankOf(pid));
        }
        const uint32_t t = m_b.AddTrack(dit->second, track);
        m_hostTracks.emplace(key, t);
        return t;
    }

    uint32_t StreamTrack(int64_t pid, int64_t device, int64_t stream)
    {
        const auto key = std::make_tuple(pid, device, stream);
        if (m_lastStream && m_lastStream->first == key) return m_lastStream->second; // rows come in runs of one stream
        auto it = m_streams.find(key);
        if (it == m_streams.end()) {
            auto [dit, fresh] = m_gpuDevices.try_emplace(std::make_pair(pid, device), 0u);
            if (fresh) {
                auto gpu = m_gpuNames.find(device);
                const int32_t rank = RankOf(pid);
                dit->second = m_b.AddDevice("rank " + std::to_string(rank) + " GPU " + std::to_string(device) +
                                                (gpu == m_gpuNames.end() ? "" : " (" + gpu->second + ")"),
                                            DeviceKind::Gpu, rank, {}, static_cast<int32_t>(device));
            }
            const bool null = m_nullStreams.count({pid, device, stream}) > 0;
            it = m_streams.emplace(key, m_b.AddTrack(dit->second, "stream " + std::to_string(stream) + (null ? " (default)" : ""))).first;
        }
        m_lastStream = &*it;
        return it->second;
    }

    void ReadNvtx()
    {
        if (Columns(m_db, "NVTX_EVENTS").empty()) return;
        Statement s(m_db, Select(m_db, "NVTX_EVENTS", {"start|", "end", "eventType|", "text", "textId", "globalTid", "domainId"}));
        struct Range {
            int64_t start, end, tid, domain;
            std::string text;
            bool mark; // an instant: a span of no length
        };
        std::vector<Range> ranges;
        std::map<int64_t, std::string> domains;
        while (s.Step()) {
            Row();
            const int64_t type = s.Int(2);
            std::string text = s.Null(3) ? std::string(Str(s.Int(4, -1))) : std::string(s.Text(3));
            if (type == kNvtxDomainCreate) domains[s.Int(6)] = text;
            else if (type == kNvtxThreadName) NameThread(s.Int(5), text);
            else if ((type == kNvtxPushPop || type == kNvtxStartEnd) && !s.Null(1))
                ranges.push_back({s.Int(0), s.Int(1), s.Int(5), s.Int(6), std::move(text), false});
            else if (type == kNvtxMark) ranges.push_back({s.Int(0), s.Int(0), s.Int(5), s.Int(6), std::move(text), true});
        }
        if (!m_options.keepCpu) return;
        for (Range& r : ranges) {
            Span sp;
            sp.startNs = r.start + m_sessionStartNs;
            sp.endNs = std::max(r.end, r.start) + m_sessionStartNs;
            sp.category = SpanCategory::Annotation;
            sp.name = m_b.Intern(r.text);
            if (auto d = domains.find(r.domain); d != domains.end() && !d->second.empty()) sp.detail = m_b.Intern("NVTX domain " + d->second);
            const uint32_t track = HostTrack(r.tid, "NVTX");
            m_b.AddSpan(track, sp);
            ++m_nvtxRanges;
            if (!r.mark) m_ranges[r.tid].push_back({sp.startNs, sp.endNs, sp.name, -1});
        }
        for (auto& [tid, list] : m_ranges) {
            std::stable_sort(list.begin(), list.end(), [](const OpenRange& a, const OpenRange& b) { return a.start < b.start; });
            LinkParents(list);
        }
    }

    void NameThread(int64_t globalTid, const std::string& text)
    {
        m_threadNames[globalTid] = text;
        constexpr std::string_view kMpi = "MPI Rank ";
        if (text.rfind(kMpi, 0) == 0) {
            try {
                m_mpiRank[PidOf(globalTid)] = std::stoi(text.substr(kMpi.size()));
            } catch (const std::exception&) {
            }
        }
    }

    void ReadRuntime()
    {
        if (Columns(m_db, "CUPTI_ACTIVITY_KIND_RUNTIME").empty()) return;
        Statement s(m_db, Select(m_db, "CUPTI_ACTIVITY_KIND_RUNTIME", {"start|", "end|", "globalTid|", "correlationId|", "nameId"}));
        while (s.Step()) {
            Row();
            HostCall c{s.Int(0) + m_sessionStartNs, s.Int(1) + m_sessionStartNs, s.Int(2)};
            if (m_options.apiSpans && m_options.keepCpu) {
                Span sp;
                sp.startNs = c.startNs;
                sp.endNs = std::max(c.endNs, c.startNs);
                sp.category = SpanCategory::Other;
                sp.name = ApiName(s.Int(4, -1));
                c.track = HostTrack(c.globalTid, "CUDA API");
                m_b.AddSpan(c.track, sp);
            }
            // Correlation ids are per process: key them with the process.
            m_calls[CallKey(PidOf(c.globalTid), s.Int(3))] = c;
        }
    }

    // A runtime call's name, interned once per name id (a million calls name a handful of functions).
    StringId ApiName(int64_t nameId)
    {
        auto [it, fresh] = m_apiNames.try_emplace(nameId, 0);
        if (fresh) it->second = m_b.Intern(Str(nameId));
        return it->second;
    }

    // The innermost NVTX range open on `tid` at `timeNs`, or 0: the last range starting at or
    // before it, else the nearest enclosing range that still contains it (ranges sorted by
    // start, each knowing the range it nests in).
    StringId RangeAround(int64_t tid, int64_t timeNs) const
    {
        auto it = m_ranges.find(tid);
        if (it == m_ranges.end()) return 0;
        const std::vector<OpenRange>& list = it->second;
        auto after = std::upper_bound(list.begin(), list.end(), timeNs, [](int64_t t, const OpenRange& r) { return t < r.start; });
        int64_t i = static_cast<int64_t>(after - list.begin()) - 1;
        while (i >= 0 && list[static_cast<size_t>(i)].end < timeNs) i = list[static_cast<size_t>(i)].parent;
        return i >= 0 ? list[static_cast<size_t>(i)].name : 0;
    }

    // Each range's enclosing range (push/pop ranges nest; start/end ranges are taken as if they did).
    static void LinkParents(std::vector<OpenRange>& list)
    {
        std::vector<int64_t> open;
        for (size_t i = 0; i < list.size(); ++i) {
            while (!open.empty() && list[static_cast<size_t>(open.back())].end < list[i].start) open.pop_back();
            list[i].parent = open.empty() ? -1 : open.back();
            open.push_back(static_cast<int64_t>(i));
        }
    }

    void ReadGpuActivity(const std::string& table, SpanCategory category)
    {
        if (Columns(m_db, table).empty()) return;
        const std::atomic<bool> never{false};
        AddGpuRows(FetchGpuRows(m_db, table, category == SpanCategory::Compute, never), category);
    }

    void AddGpuRows(const std::vector<GpuRow>& rows, SpanCategory category)
    {
        const bool kernel = category == SpanCategory::Compute;
        for (const GpuRow& r : rows) {
            Row();
            const int64_t pid = PidOf(r.globalPid);
            Span sp;
            sp.startNs = r.start + m_sessionStartNs;
            sp.endNs = std::max(r.end, r.start) + m_sessionStartNs;
            sp.category = category;
            if (kernel) NameKernel(sp, r.name);
            else {
                sp.bytes = static_cast<uint64_t>(std::max<int64_t>(r.name, 0));
                sp.name = category == SpanCategory::Memcpy ? CopyName(r.kind)
                          : m_b.Intern(category == SpanCategory::Memset ? "memset" : "synchronize");
            }
            const uint32_t track = StreamTrack(pid, r.device, r.stream);
            LinkLaunch(sp, track, pid, r.correlation);
            m_b.AddSpan(track, sp);
            ++m_gpuSpans;
        }
    }

    StringId CopyName(int64_t kind)
    {
        auto [it, fresh] = m_copyNames.try_emplace(kind, 0);
        if (fresh) it->second = m_b.Intern("memcpy " + std::string(CopyKindName(kind)));
        return it->second;
    }

    // A kernel's name and, for NCCL's, its collective: worked out once per distinct name.
    void NameKernel(Span& sp, int64_t nameId)
    {
        auto [it, fresh] = m_kernelNames.try_emplace(nameId);
        if (fresh) {
            const std::string_view name = Str(nameId);
            it->second.name = m_b.Intern(name);
            if (auto nccl = ParseNcclKernelName(name)) {
                CollectiveTag tag;
                tag.collective = nccl->collective;
                tag.algorithm = nccl->algorithm;
                tag.protocol = nccl->protocol;
                tag.redop = nccl->redop;
                tag.dtype = nccl->dtype;
                it->second.detail = m_b.Intern(FormatCollectiveTag(tag));
                it->second.nccl = true;
            }
        }
        sp.name = it->second.name;
        sp.detail = it->second.detail;
        if (it->second.nccl) sp.category = SpanCategory::Collective;
    }

    // The runtime call that launched a span (same process and correlation id): an arrow from it
    // when it was kept, and the NVTX range around it in the detail of a kernel that has none.
    void LinkLaunch(Span& sp, uint32_t track, int64_t pid, int64_t correlation)
    {
        auto it = m_calls.find(CallKey(pid, correlation));
        if (correlation < 0 || it == m_calls.end()) return;
        const HostCall& c = it->second;
        if (sp.detail == 0)
            if (StringId range = RangeAround(c.globalTid, c.startNs); range != 0)
                sp.detail = m_b.Intern("launched in NVTX range '" + std::string(m_b.Str(range)) + "'");
        if (c.track == kNoTrack) return;
        Flow f;
        f.srcDevice = m_b.TrackAt(c.track).device;
        f.dstDevice = m_b.TrackAt(track).device;
        f.srcTrack = c.track;
        f.dstTrack = track;
        f.srcNs = c.startNs;
        f.dstNs = sp.startNs;
        if (m_launchName == 0) m_launchName = m_b.Intern("launch");
        f.name = m_launchName;
        m_b.AddFlow(f);
    }

    Database m_db;
    ReadOptions m_options;
    std::string m_origin, m_path;
    TraceBuilder m_b;
    std::unordered_map<int64_t, std::string> m_strings;
    std::map<int64_t, std::string> m_gpuNames;
    std::map<int64_t, std::string> m_threadNames, m_processNames;
    std::set<std::tuple<int64_t, int64_t, int64_t>> m_nullStreams; // (pid, device, stream)
    std::map<int64_t, int32_t> m_mpiRank, m_pidOrder;
    std::map<std::pair<int64_t, std::string>, uint32_t> m_hostTracks;
    std::map<int64_t, uint32_t> m_hostDevices;
    std::map<std::pair<int64_t, int64_t>, uint32_t> m_gpuDevices;
    std::map<std::tuple<int64_t, int64_t, int64_t>, uint32_t> m_streams;
    const std::pair<const std::tuple<int64_t, int64_t, int64_t>, uint32_t>* m_lastStream = nullptr;
    std::unordered_map<uint64_t, HostCall> m_calls; // by CallKey
    struct KernelName {
        StringId name = 0, detail = 0;
        bool nccl = false;
    };
    std::unordered_map<int64_t, KernelName> m_kernelNames;
    std::unordered_map<int64_t, StringId> m_apiNames, m_copyNames;
    StringId m_launchName = 0; // "launch", once interned
    std::map<int64_t, std::vector<OpenRange>> m_ranges;
    int64_t m_sessionStartNs = 0;
    size_t m_gpuSpans = 0, m_nvtxRanges = 0;
    uint64_t m_rowsRead = 0, m_rowsTotal = 0, m_fileBytes = 0;
};

// The nsys to export reports with: $PARALENS_NSYS, else `nsys` on PATH ("" when none).
std::string FindNsys()
{
    if (const char* e = std::getenv("PARALENS_NSYS"); e && *e) return e;
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "";
    for (size_t at = 0; at <= dirs.size();) {
        const size_t end = std::min(dirs.find(':', at), dirs.size());
        const std::filesystem::path candidate = std::filesystem::path(dirs.substr(at, end - at)) / "nsys";
        if (end > at && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        at = end + 1;
    }
    return {};
}

} // namespace

bool LooksLikeSqlite(std::string_view prefix) { return prefix.substr(0, 16) == std::string_view("SQLite format 3\0", 16); }

Trace ReadNsysSqlite(const std::string& path, const std::string& origin, const ReadOptions& options)
{
    return NsysReader(path, origin, options).Read();
}

Trace ReadNsysReport(const std::string& path, const ReadOptions& options)
{
    const std::string nsys = FindNsys();
    if (nsys.empty())
        throw Error(path + ": an Nsight Systems report; paralens reads its SQLite export, and no nsys is on PATH to make it "
                           "(or set PARALENS_NSYS). Export it where Nsight Systems is installed: nsys export --type sqlite --output " +
                    std::filesystem::path(path).stem().string() + ".sqlite " + path);
    char dir[] = "/tmp/paralens-nsys-XXXXXX";
    Require(::mkdtemp(dir) != nullptr, path + ": cannot make a temporary folder for its SQLite export");
    const std::string out = std::string(dir) + "/report.sqlite";
    struct Cleanup {
        std::string dir;
        ~Cleanup() { std::error_code ec; std::filesystem::remove_all(dir, ec); }
    } cleanup{dir};
    const std::vector<std::string> args{nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", out, path};
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (::posix_spawn(&pid, nsys.c_str(), nullptr, nullptr, argv.data(), environ) != 0) throw Error(path + ": cannot run " + nsys);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !std::filesystem::exists(out))
        throw Error(path + ": '" + nsys + " export --type sqlite' failed (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                    "); export it by hand and open the .sqlite file");
    return ReadNsysSqlite(out, path, options);
}

} // namespace paralens::core
