// nccl-tests logs: both column layouts, several tables, stray lines, metadata, errors, the Trace.
#include "common/Error.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/FileIO.hpp"
#include "trace/NcclTestsLog.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <unistd.h>

using namespace paralens;
using namespace paralens::core;

namespace {

std::string RefFile(const std::string& rel)
{
    std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/" + rel;
    return std::filesystem::exists(path) ? path : "";
}

// Two tests in one log (modern layout), the second with a row cut short at the end.
const char* kTwoTests = R"(# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903
# Collective test starting: all_gather_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  11 on node-a device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  12 on node-b device  0 [0x07] NVIDIA A100-SXM4-80GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           128     float    none      -1    20.00    0.05    0.03      0    19.00    0.05    0.03      0
        2048           256     float    none      -1    21.00    0.10    0.05      0    20.50    0.10    0.05      0
        4096           512     float    none      -1    22.00    0.19    0.09      0    22.00    0.19    0.09      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.0567
#
# Collective test concluded: all_gather_perf
# Collective test starting: reduce_scatter_perf
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        2048           256     float     sum      -1    30.00    0.07    0.03      0    30.00    0.07    0.03      0
        4096           512     float     sum      -1    31.00    0.13    0.07
)";

} // namespace

TEST_CASE("nccl-tests: several tests in one log, header metadata, a row cut short", "[io][nccl-tests]")
{
    CHECK(LooksLikeNcclTestsLog(kTwoTests));
    CHECK(DetectTraceFormat(kTwoTests) == TraceFormat::NcclTests);
    NcclTestsLog log = ReadNcclTestsLog(kTwoTests, "two.log");
    CHECK(log.version == "2.13.8 nccl-headers=21903 nccl-library=21903");
    REQUIRE(log.blocks.size() == 2);
    const NcclTestsBlock& ag = log.blocks[0];
    CHECK(ag.collective == "allgather");
    CHECK(ag.collectiveFrom == "header");
    CHECK(ag.testName == "all_gather_perf");
    CHECK(ag.ranks == 2);
    REQUIRE(ag.devices.size() == 2);
    CHECK(ag.devices[1].host == "node-b");
    CHECK(ag.devices[1].gpu == "NVIDIA A100-SXM4-80GB");
    CHECK(ag.devices[1].busId == "0x07");
    CHECK(ag.settings.at("nThread") == "1");
    CHECK(ag.settings.at("iters") == "20");
    REQUIRE(ag.rows.size() == 3);
    CHECK(ag.rows[1].bytes == 2048);
    CHECK(ag.rows[1].count == 256);
    CHECK(ag.rows[1].redop == "none");
    CHECK(ag.rows[1].root == -1);
    CHECK(ag.rows[1].outOfPlace.timeUs == 21.0);
    CHECK(ag.rows[1].inPlace.timeUs == 20.5);
    CHECK(ag.rows[1].outOfPlace.wrong == "0");
    CHECK(ag.avgBusBwGBps == Approx(0.0567));
    const NcclTestsBlock& rs = log.blocks[1];
    CHECK(rs.collective == "reduce-scatter");
    CHECK(rs.rows.size() == 1);
    CHECK(rs.ranks == 2); // no device lines of its own: those of the run before it
    REQUIRE(log.skipped.size() == 1);
    CHECK(log.skipped[0].line == 22);
    CHECK_THAT(log.skipped[0].reason, Catch::Contains("8 columns where the table has 13"));
}

TEST_CASE("nccl-tests: old layouts without a test name infer the collective from the columns", "[io][nccl-tests]")
{
    auto table = [](const char* columns, const char* row) {
        return std::string("# nThread 1 nGpus 4 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
                           "#  Rank  0 Pid 1 on h device  0 [0x00] V100\n#  Rank  1 Pid 1 on h device  1 [0x00] V100\n"
                           "#  Rank  2 Pid 1 on h device  2 [0x00] V100\n#  Rank  3 Pid 1 on h device  3 [0x00] V100\n#") +
               columns + "\n" + row + "\n";
    };
    // busbw/algbw = 2(p-1)/p = 1.5 for an allreduce on 4 ranks, (p-1)/p = 0.75 for a reduce-scatter
    CHECK(ReadNcclTestsLog(table("  size count type redop time algbw busbw error time algbw busbw error",
                                 "  1048576 262144 float sum 100.0 10.49 15.73 0e+00 100.0 10.49 15.73 0e+00"), "x.log")
              .blocks[0].collective == "allreduce");
    CHECK(ReadNcclTestsLog(table("  size count type redop time algbw busbw error time algbw busbw error",
                                 "  1048576 262144 float sum 100.0 10.49 7.86 0e+00 100.0 10.49 7.86 0e+00"), "x.log")
              .blocks[0].collective == "reduce-scatter");
    CHECK(ReadNcclTestsLog(table("  size count type redop root time algbw busbw error time algbw busbw error",
                                 "  1048576 262144 float sum 0 100.0 10.49 10.49 0e+00 100.0 10.49 10.49 0e+00"), "x.log")
              .blocks[0].collective == "reduce");
    CHECK(ReadNcclTestsLog(table("  size count type time algbw busbw error time algbw busbw error",
                                 "  1048576 262144 float 100.0 10.49 7.86 0e+00 100.0 10.49 7.86 0e+00"), "x.log")
              .blocks[0].collective == "allgather");
    NcclTestsLog one = ReadNcclTestsLog(table("  size count type time algbw busbw error",
                                              "  1048576 262144 float 100.0 10.49 7.86 0e+00"), "x.log");
    CHECK(one.blocks[0].rows[0].outOfPlace.present);
    CHECK_FALSE(one.blocks[0].rows[0].inPlace.present);
    CHECK(one.blocks[0].ranks == 4);
}

TEST_CASE("nccl-tests: an MPI launcher's warnings before the header, and an old layout's ranks on two hosts", "[io][nccl-tests]")
{
    // As ABCI 2.0's logs (NCCL 2.8, Open MPI with UCX) have them: warning lines before nccl-tests'
    // header, rank lines without a Group field, an error column instead of #wrong.
    const std::string text =
        "[1622510346.876958] [g0185:144167:0]    ucp_context.c:1437 UCX  WARN  UCP version is incompatible, required: 1.8, actual: 1.7\n"
        "[1622510347.217820] [g0186:213279:0]    ucp_context.c:1437 UCX  WARN  UCP version is incompatible, required: 1.8, actual: 1.7\n"
        "# nThread 1 nGpus 1 minBytes 4 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 100 validation: 1 \n"
        "#\n# Using devices\n"
        "#   Rank  0 Pid 144167 on      g0185 device  0 [0x3d] Tesla V100-SXM2-16GB\n"
        "#   Rank  1 Pid 144168 on      g0185 device  1 [0x3e] Tesla V100-SXM2-16GB\n"
        "#   Rank  2 Pid 213279 on      g0186 device  0 [0x3d] Tesla V100-SXM2-16GB\n"
        "#   Rank  3 Pid 213280 on      g0186 device  1 [0x3e] Tesla V100-SXM2-16GB\n"
        "#\n"
        "#                                                     out-of-place                       in-place          \n"
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
        "           4             1   float     sum    40.00    0.00    0.00  0e+00    39.00    0.00    0.00  0e+00\n"
        "           8             2   float     sum    41.00    0.00    0.00  0e+00    40.00    0.00    0.00  0e+00\n"
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.00 \n";
    // Recognised as a log, not as the JSON its first '[' could start (what `fit`, `report` and the
    // window's Open go by), and read as one.
    CHECK(LooksLikeNcclTestsLog(text));
    CHECK(DetectTraceFormat(text) == TraceFormat::NcclTests);
    const Trace trace = ReadTraceText(text, "N2_G2.log");
    CHECK(trace.Devices().size() == 4);
    CHECK(trace.SpanCount() > 0);
    const NcclTestsLog log = ReadNcclTestsLog(text, "N2_G2.log");
    REQUIRE(log.blocks.size() == 1);
    const NcclTestsBlock& b = log.blocks[0];
    CHECK(b.ranks == 4);
    REQUIRE(b.devices.size() == 4);
    CHECK(b.devices[0].host == "g0185");
    CHECK(b.devices[3].host == "g0186");
    CHECK(b.devices[3].gpu == "Tesla V100-SXM2-16GB");
    REQUIRE(b.rows.size() == 2);
    CHECK(b.rows[1].bytes == 8);
    CHECK(b.rows[1].outOfPlace.timeUs == 41.0);
    CHECK(b.rows[1].inPlace.wrong == "0e+00");
    CHECK(log.skipped.empty()); // the warnings are outside the table
}

namespace {

// An old alltoall log: the header names a redop column its rows leave empty.
const char* kOldAllToAll = R"(# nThread 1 nGpus 4 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 validation: 0
#
# Using devices
#   Rank  0 Pid 1 on localhost device  0 [0x00] A100-SXM4-40GB
#   Rank  1 Pid 1 on localhost device  1 [0x00] A100-SXM4-40GB
#   Rank  2 Pid 1 on localhost device  2 [0x00] A100-SXM4-40GB
#   Rank  3 Pid 1 on localhost device  3 [0x00] A100-SXM4-40GB
#
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           0             0   float             1.63    0.00    0.00    N/A     1.38    0.00    0.00    N/A
     1048576        262144   float             30.00  34.95   26.21    N/A    31.00   33.83   25.37    N/A
     2097152        524288   float             50.00  41.94   31.46    N/A      N/A     N/A     N/A    N/A
)";

// A few lines of a modern log, for the launchers' prefixes.
const char* kPlain = R"(# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid  11 on node-a device  0 [0x07] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  12 on node-b device  0 [0x07] NVIDIA H100 80GB HBM3
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        1024           256     float     sum      -1    20.00    0.05    0.05      0    19.00    0.05    0.05      0
        2048           512     float     sum      -1    21.00    0.10    0.10      0    20.50    0.10    0.10      0
# Avg bus bandwidth    : 0.075
)";

std::string Prefixed(const std::string& prefix)
{
    std::string out;
    for (std::string_view text = kPlain; !text.empty();) {
        const size_t end = text.find('\n');
        out += prefix + std::string(text.substr(0, end)) + "\n";
        text.remove_prefix(end + 1);
    }
    return out;
}

} // namespace

TEST_CASE("nccl-tests: rows that leave a header column empty, and halves that say N/A", "[io][nccl-tests]")
{
    const NcclTestsLog log = ReadNcclTestsLog(kOldAllToAll, "runs/nccl_alltoall.log");
    REQUIRE(log.blocks.size() == 1);
    const NcclTestsBlock& b = log.blocks[0];
    CHECK(log.skipped.empty());
    CHECK(b.emptyColumns == std::vector<std::string>{"redop"});
    REQUIRE(b.rows.size() == 3);
    CHECK(b.rows[1].bytes == 1048576);
    CHECK(b.rows[1].redop.empty());
    CHECK(b.rows[1].outOfPlace.timeUs == 30.0);
    CHECK(b.rows[1].inPlace.timeUs == 31.0);
    CHECK(b.rows[2].outOfPlace.present);
    CHECK_FALSE(b.rows[2].inPlace.present); // N/A: the in-place half did not run
    CHECK(b.collective == "alltoall");     // the file's name says so; the columns could not
    CHECK(b.collectiveFrom == "file name");
    const NcclTestsLog unnamed = ReadNcclTestsLog(kOldAllToAll, "run.log");
    CHECK(unnamed.blocks[0].collectiveFrom == "columns");
    CHECK(unnamed.blocks[0].collective == "allgather"); // busbw/algbw = (p-1)/p, and the empty redop is no reduction
}

TEST_CASE("nccl-tests: launchers' prefixes on every line are taken off", "[io][nccl-tests]")
{
    const NcclTestsLog plain = ReadNcclTestsLog(kPlain, "plain.log");
    for (const char* prefix : {"[1,0]<stdout>:", "[1,0]<stderr>: ", "0: ", "   3: ", "[0] ", "node-a: "}) {
        INFO("prefix '" << prefix << "'");
        const NcclTestsLog log = ReadNcclTestsLog(Prefixed(prefix), "tagged.log");
        REQUIRE(log.blocks.size() == 1);
        const NcclTestsBlock& b = log.blocks[0];
        CHECK(b.collective == "allreduce");
        CHECK(b.ranks == 2);
        REQUIRE(b.rows.size() == plain.blocks[0].rows.size());
        CHECK(b.rows[1].outOfPlace.timeUs == 21.0);
        CHECK(b.avgBusBwGBps == Approx(0.075));
        CHECK(log.skipped.empty());
    }
    // An NCCL INFO line ("host:pid:tid [0] NCCL INFO ...") is not a prefix: it stays a skipped line.
    const NcclTestsLog info = ReadNcclTestsLog(std::string(kPlain).insert(std::string(kPlain).find("        2048"),
                                                                         "node-a:3442:3442 [0] NCCL INFO Launch mode Parallel\n"),
                                               "info.log");
    REQUIRE(info.skipped.size() == 1);
    CHECK(info.skipped[0].line == 6);
    CHECK(info.blocks[0].rows.size() == 2);
}

TEST_CASE("nccl-tests: a job's preamble longer than the first 64 KiB before the log", "[io][nccl-tests]")
{
    // As CSCS Alps' logs on 256 and 512 nodes have it: the job script's commands echoed, then a
    // CPU binding line per rank (2,048 of them), then nccl-tests' header, every line prefixed.
    std::string text = "+ export NCCL_CROSS_NIC=0\n+ NCCL_CROSS_NIC=0\n";
    for (int r = 0; r < 2048; ++r)
        text += std::to_string(r / 4 * 4) + ": cpu-bind=MASK - nid00" + std::to_string(5000 + r / 4) + ", task " + std::to_string(r) +
                " " + std::to_string(r % 4) + " [28635" + std::to_string(r % 10) + "]: mask 0xffffffffffffffffff000000000000000000 set\n";
    REQUIRE(text.size() > 64 * 1024);
    text += "0: # nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 8 iters: 24 agg iters: 1 validation: 1 graph: 0\n"
            "0: #  Rank  0 Group  0 Pid 286352 on  nid005551 device  0 [0009:01:00] NVIDIA GH200 120GB\n"
            "0: #  Rank  1 Group  0 Pid 214812 on  nid005554 device  0 [0009:01:00] NVIDIA GH200 120GB\n"
            "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
            "0:            8             2     float     sum      -1    20.00    0.00    0.00      0    19.00    0.00    0.00      0\n"
            "0:           16             4     float     sum      -1    21.00    0.00    0.00      0    20.00    0.00    0.00      0\n";
    CHECK(DetectTraceFormat(std::string_view(text).substr(0, 64 * 1024)) == TraceFormat::Unknown); // the first 64 KiB alone
    const Trace fromText = ReadTraceText(text, "N512.log");
    CHECK(fromText.Devices().size() == 2);
    const std::string path = (std::filesystem::temp_directory_path() / ("paralens-preamble-" + std::to_string(::getpid()) + ".log")).string();
    WriteFileAtomic(path, text);
    CHECK(DetectFileFormat(path) == TraceFormat::NcclTests);
    const Trace fromFile = ReadTraceFile(path);
    CHECK(fromFile.SpanCount() == fromText.SpanCount());
    std::filesystem::remove(path);
}

TEST_CASE("nccl-tests: JSON that starts like a launcher's bracketed line is still JSON", "[io][nccl-tests]")
{
    const std::string header = "# nThread 1 nGpus 1 minBytes 4 maxBytes 8\n#  size  count  type  redop  time  algbw  busbw\n";
    CHECK_FALSE(LooksLikeNcclTestsLog("[{\"name\": \"algbw busbw\"}]"));
    CHECK_FALSE(LooksLikeNcclTestsLog(" [\n  {\"ph\": \"X\", \"args\": {\"note\": \"nThread minBytes\"}}]"));
    CHECK_FALSE(LooksLikeNcclTestsLog("[ ]" + header));
    CHECK_FALSE(LooksLikeNcclTestsLog("{\"traceEvents\": []}" + header));
    CHECK(DetectTraceFormat("[{\"ph\": \"X\", \"name\": \"nThread minBytes\"}]") == TraceFormat::Chrome);
    CHECK(LooksLikeNcclTestsLog("[node-1:1234] warning\n" + header));
}

TEST_CASE("nccl-tests: a log without rows or with a broken number gets one clear error", "[io][nccl-tests]")
{
    CHECK_THROWS_WITH(ReadNcclTestsLog("# nThread 1 nGpus 8 minBytes 8 maxBytes 8\n# Using devices\n", "empty.log"),
                      Catch::StartsWith("empty.log: no nccl-tests result rows") && Catch::Contains("size  count"));
    CHECK_THROWS_WITH(ReadNcclTestsLog("#  size count type redop root time algbw busbw #wrong\n"
                                       "  8 2 float sum -1 3..5 0.00 0.00 0\n", "bad.log"),
                      Catch::StartsWith("bad.log:2:") && Catch::Contains("column 'time'") && Catch::Contains("3..5"));
    CHECK_THROWS_WITH(ReadNcclTestsLog("#  size count type redop root time algbw busbw #wrong\n"
                                       "  8 2 float sum -1 nan 0.00 0.00 0\n", "nan.log"),
                      Catch::Contains("must be a number"));
    CHECK_THROWS_WITH(ReadTraceText("just some text\nwithout a table\n", "notes.txt"),
                      Catch::Contains("notes.txt") && Catch::Contains("not a trace paralens can read"));
}

TEST_CASE("reference nccl-tests log, current layout: 8 H100s, 31 rows", "[io][nccl-tests][reference]")
{
    std::string path = RefFile("nccl-tests/h100x8_nvlink_allreduce_ring.log");
    if (path.empty()) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    NcclTestsLog log = ReadNcclTestsLogFile(path);
    REQUIRE(log.blocks.size() == 1);
    const NcclTestsBlock& b = log.blocks[0];
    CHECK(b.collective == "allreduce");
    CHECK(b.collectiveFrom == "header");
    CHECK(b.ranks == 8);
    CHECK(b.columns.size() == 13);
    REQUIRE(b.rows.size() == 31);
    CHECK(b.rows.front().bytes == 8);
    CHECK(b.rows.front().outOfPlace.timeUs == 34.98);
    CHECK(b.rows.front().inPlace.timeUs == 34.52);
    CHECK(b.rows.back().bytes == 8589934592ull);
    CHECK(b.rows.back().outOfPlace.timeUs == 40838.9);
    CHECK(b.rows.back().outOfPlace.busbwGBps == 368.09);
    CHECK(b.devices.size() == 8);
    CHECK(b.devices[3].gpu == "NVIDIA H100 80GB HBM3");
    CHECK(b.devices[3].host == "gpu-dp-2jvzl-pqq7p");
    CHECK(b.avgBusBwGBps == 122.955);
    CHECK(log.skipped.empty());

    Trace t = ReadTraceFile(path);
    CHECK(t.Meta().source == TraceSource::NcclTests);
    CHECK(t.Devices().size() == 8);
    CHECK(t.Tracks().size() == 16);
    CHECK(t.SpanCount() == 31u * 2 * 8);
    CHECK(t.Meta().hardware.GetString("gpu") == "NVIDIA H100 80GB HBM3");
    // Each span is one row: bytes / duration is the row's algbw.
    for (const Span& s : t.Tracks()[0].spans) {
        auto tag = ParseCollectiveTag(t.Str(s.detail));
        REQUIRE(tag);
        CHECK(tag->ranks == 8);
        const NcclTestsRow& row = b.rows.at(static_cast<size_t>(tag->seq));
        CHECK(s.bytes == row.bytes);
        CHECK(std::fabs(static_cast<double>(s.bytes) / static_cast<double>(s.DurationNs()) - row.outOfPlace.algbwGBps) <= 0.011);
    }
}

TEST_CASE("reference nccl-tests log, old layout with a stray line: 8 A100s, broadcast", "[io][nccl-tests][reference]")
{
    std::string path = RefFile("nccl-tests/a100x8_nvlink_broadcast_legacyfmt.log");
    if (path.empty()) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    NcclTestsLog log = ReadNcclTestsLogFile(path);
    REQUIRE(log.blocks.size() == 1);
    const NcclTestsBlock& b = log.blocks[0];
    CHECK(b.collective == "broadcast");
    CHECK(b.collectiveFrom == "file name");
    // Under a name that says nothing, the columns (a root, no reduction) and busbw = algbw say it too.
    const NcclTestsLog unnamed = ReadNcclTestsLog(ReadFileDecompressed(path), "log");
    CHECK(unnamed.blocks[0].collective == "broadcast");
    CHECK(unnamed.blocks[0].collectiveFrom == "columns");
    CHECK(b.ranks == 8);
    REQUIRE(b.rows.size() == 34);
    CHECK(b.rows[2].bytes == 4);
    CHECK(b.rows[2].root == 0);
    CHECK(b.rows[2].redop.empty());
    CHECK(b.rows.back().outOfPlace.timeUs == 36896);
    CHECK(b.rows.back().inPlace.busbwGBps == 234.70);
    CHECK(b.rows.back().outOfPlace.wrong == "N/A");
    CHECK(b.devices[0].gpu == "A100-SXM4-40GB");
    CHECK(b.avgBusBwGBps == 64.8653);
    REQUIRE(log.skipped.size() == 1);
    CHECK(log.skipped[0].line == 16);
    CHECK_THAT(log.skipped[0].text, Catch::Contains("NCCL INFO"));
}
