// nccl-tests logs (all_reduce_perf and friends): the result tables as data, and as a Trace.
//
// A log is not a timeline; it is a table of (size, time) rows per collective. ReadNcclTestsLog
// keeps it as that table (NcclTestsLog, for fits and the Model view). NcclTestsTrace lays the
// rows out as a Trace (source NcclTests) so that `paralens FILE.log` opens like any trace: one
// device per rank of the header, each row one Collective span per half (out-of-place on one
// track, in-place on another), rows end to end from t = 0, every span as long as the row's
// average iteration, with its bytes and a CollectiveTag (group "<block>/<half>", seq = row).
//
// Read: the current column layout (size count type redop root | time algbw busbw #wrong | ...)
// and the older ones (no redop or root column, "error" instead of "#wrong"), told apart by the
// table's header line; several tables (collectives, or runs) in one log, each with its own
// header; rows that leave a header column empty (redop and root in old alltoall logs); "N/A" for
// a half a test does not run; stray lines inside a table (NCCL INFO lines, a row cut short)
// skipped and listed; launchers' prefixes on every line (Open MPI's --tag-output "[1,0]<stdout>:",
// srun --label "0: ", -prepend-rank "[0] ", pdsh "host: "); the header's ranks, hosts, GPU names
// and settings kept. Pure functions; thread-safe.
#pragma once

#include "trace/Trace.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

struct NcclTestsDevice {
    int32_t rank = 0;
    int32_t group = 0;
    int64_t pid = 0;
    std::string host;
    int32_t device = 0;
    std::string busId; // "0000:29:00"
    std::string gpu;   // "NVIDIA H100 80GB HBM3"
};

// One half (out-of-place or in-place) of a row.
struct NcclTestsResult {
    bool present = false;
    double timeUs = 0;     // average time of one iteration, microseconds
    double algbwGBps = 0;  // as printed
    double busbwGBps = 0;  // as printed
    std::string wrong;     // the #wrong / error column as printed ("0", "N/A", "2e-07")
};

struct NcclTestsRow {
    uint64_t bytes = 0;  // the size column: nccl-tests' n
    uint64_t count = 0;  // elements
    std::string type;    // "float"
    std::string redop;   // "sum", "none", or "" when the layout has no redop column
    int32_t root = -1;   // -1 when not rooted or not printed
    NcclTestsResult outOfPlace, inPlace;
    size_t line = 0;     // 1-based line in the log
};

struct NcclTestsBlock {
    std::string collective;     // canonical name (model/Collective.hpp): "allreduce", "broadcast", ...
    std::string collectiveFrom; // "header" (the log names the test), "file name" ("nccl_alltoall.log") or "columns" (inferred from the columns and busbw/algbw)
    std::string testName;       // "all_reduce_perf" when the log names it
    int32_t ranks = 0;          // device lines of the header, else nThread x nGpus
    std::vector<NcclTestsDevice> devices;
    std::map<std::string, std::string> settings; // nThread, nGpus, minBytes, maxBytes, iters, ... as printed
    std::vector<std::string> columns;            // the table header's column names
    std::vector<std::string> emptyColumns;       // header columns this table's rows leave empty ("redop" of old alltoall logs)
    std::vector<NcclTestsRow> rows;
    double avgBusBwGBps = 0; // "# Avg bus bandwidth" (0 when absent)
    size_t headerLine = 0;
};

struct SkippedLine {
    size_t line = 0;
    std::string text;   // the line (cut to 120 characters)
    std::string reason; // "not a row", "7 columns where the table has 13"
};

struct NcclTestsLog {
    std::string origin;
    std::string version; // "2.17.9 nccl-headers=22602 nccl-library=22602"
    std::vector<NcclTestsBlock> blocks;
    std::vector<SkippedLine> skipped; // lines inside tables that are not rows
};

// True when the text looks like an nccl-tests log (a table header with size, count, time, algbw
// and busbw, or nccl-tests' settings line) and not like JSON: a log may start with a launcher's
// lines in brackets (Open MPI's UCX warnings "[1622510437.752046] [g0314:110100:0] ..."), JSON
// with an object or an array of them.
bool LooksLikeNcclTestsLog(std::string_view text);

// Throws Error naming `origin` and the line when a row has a column that is not a number, and
// when the log has no result row at all (saying what was expected).
NcclTestsLog ReadNcclTestsLog(std::string_view text, const std::string& origin);
// Reads the file (gzip-transparent) with ReadNcclTestsLog.
NcclTestsLog ReadNcclTestsLogFile(const std::string& path);

// The log as a Trace (see the top of this file).
Trace NcclTestsTrace(const NcclTestsLog& log);

} // namespace paralens::core
