// Nsight Systems SQLite exports (core/trace/NsysReader): files the tests write with the schema's
// columns, the real sample in ../shared/reference-data (skipped where absent), schema changes,
// bad files, several ranks, and a .nsys-rep exported by an `nsys` on PATH.
#include "NsysTestDb.hpp"

#include "common/Error.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/NsysReader.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

using namespace paralens::core;
namespace fs = std::filesystem;
using nsystest::GlobalTid;

namespace {

struct Dir {
    fs::path path = fs::temp_directory_path() / ("paralens-nsys-test-" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() { fs::remove_all(path); }
    std::string File(const std::string& name) const { return (path / name).string(); }
};

constexpr int64_t kSession = 1'700'000'000'000'000'000;
constexpr int64_t kPid = 4242;

// One process on two GPUs: GPU 0 runs 3 kernels on stream 7 (one NCCL allreduce) and a copy on
// stream 13; GPU 1 one kernel on stream 7 and a memset. Thread 4242 launches them inside NVTX
// ranges "step" > "forward" (domain "train").
void WriteSample(const std::string& path)
{
    nsystest::Db db(path);
    nsystest::CreateExportTables(db);
    const std::vector<std::string> strings{"gemm_kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "cudaLaunchKernel",
                                           "cudaMemcpyAsync", "main thread", "relu"};
    for (size_t i = 0; i < strings.size(); ++i) db.Row("StringIds", {static_cast<int64_t>(i), strings[i]});
    const int64_t thread = GlobalTid(kPid, kPid);
    db.Row("ThreadNames", {int64_t{4}, int64_t{0}, thread});
    db.Row("TARGET_INFO_GPU", {int64_t{0}, std::string("NVIDIA H100 80GB HBM3"), std::string("0000:01:00.0")});
    db.Row("TARGET_INFO_GPU", {int64_t{1}, std::string("NVIDIA H100 80GB HBM3"), std::string("0000:02:00.0")});
    db.Row("TARGET_INFO_SESSION_START_TIME", {kSession, std::string("2023-11-14T22:13:20")});
    db.Row("NVTX_EVENTS", {int64_t{10}, nullptr, int64_t{75}, nullptr, std::string("train"), thread, nullptr, int64_t{3}});
    db.Row("NVTX_EVENTS", {int64_t{100}, int64_t{5000}, int64_t{59}, nullptr, std::string("step"), thread, nullptr, int64_t{3}});
    db.Row("NVTX_EVENTS", {int64_t{150}, int64_t{2000}, int64_t{59}, nullptr, std::string("forward"), thread, nullptr, int64_t{3}});
    db.Row("NVTX_EVENTS", {int64_t{4000}, nullptr, int64_t{34}, nullptr, std::string("a mark"), thread, nullptr, int64_t{3}});
    const auto kernel = [&](int64_t start, int64_t end, int64_t dev, int64_t stream, int64_t corr, int64_t name) {
        db.Row("CUPTI_ACTIVITY_KIND_KERNEL", {start, end, dev, int64_t{1}, stream, corr, GlobalTid(kPid, 0), name, nullptr, int64_t{8}, nullptr});
        db.Row("CUPTI_ACTIVITY_KIND_RUNTIME", {start - 50, start - 40, int64_t{0}, thread, corr, int64_t{2}});
    };
    kernel(200, 700, 0, 7, 1, 0);   // launched at 150: inside "forward"
    kernel(800, 900, 0, 7, 2, 5);   // launched at 750: inside "forward"
    kernel(2100, 3100, 0, 7, 3, 1); // NCCL, launched at 2050: inside "step" only
    kernel(300, 400, 1, 7, 4, 0);
    db.Row("CUPTI_ACTIVITY_KIND_MEMCPY", {int64_t{3200}, int64_t{3600}, int64_t{0}, int64_t{1}, int64_t{13}, int64_t{5},
                                          GlobalTid(kPid, 0), int64_t{1 << 20}, int64_t{1}});
    db.Row("CUPTI_ACTIVITY_KIND_RUNTIME", {int64_t{3150}, int64_t{3160}, int64_t{0}, thread, int64_t{5}, int64_t{3}});
    db.Row("CUPTI_ACTIVITY_KIND_MEMSET", {int64_t{500}, int64_t{520}, int64_t{1}, int64_t{1}, int64_t{7}, int64_t{6},
                                          GlobalTid(kPid, 0), int64_t{4096}});
    db.Close();
}

std::map<std::string, size_t> SpansByTrack(const Trace& t)
{
    std::map<std::string, size_t> out;
    for (const Device& d : t.Devices())
        for (uint32_t tr : d.tracks) out[std::string(t.Str(d.name)) + " / " + std::string(t.Str(t.Tracks()[tr].name))] += t.Tracks()[tr].spans.size();
    return out;
}

const Span* Find(const Trace& t, std::string_view name)
{
    for (const Track& tr : t.Tracks())
        for (const Span& s : tr.spans)
            if (t.Str(s.name) == name) return &s;
    return nullptr;
}

} // namespace

TEST_CASE("an Nsight Systems export: GPUs and streams, copies, NVTX ranges, exact times", "[core][nsys]")
{
    Dir dir;
    const std::string path = dir.File("run.sqlite");
    WriteSample(path);
    const Trace t = ReadTraceFile(path);
    CHECK(t.Meta().source == TraceSource::Nsys);
    CHECK(t.Meta().hardware.GetString("gpu") == "NVIDIA H100 80GB HBM3");
    const auto counts = SpansByTrack(t);
    CHECK(counts.at("rank 0 GPU 0 (NVIDIA H100 80GB HBM3) / stream 7") == 3);
    CHECK(counts.at("rank 0 GPU 0 (NVIDIA H100 80GB HBM3) / stream 13") == 1);
    CHECK(counts.at("rank 0 GPU 1 (NVIDIA H100 80GB HBM3) / stream 7") == 2);
    CHECK(counts.at("rank 0 thread 4242 (main thread) / NVTX") == 3); // two ranges and a mark (the domain's name is no span)
    CHECK(counts.size() == 4);                                          // no runtime calls unless asked
    const Span* gemm = Find(t, "gemm_kernel");
    REQUIRE(gemm);
    CHECK(gemm->startNs == kSession + 200);
    CHECK(gemm->endNs == kSession + 700);
    CHECK(gemm->category == SpanCategory::Compute);
    CHECK(t.Str(gemm->detail) == "launched in NVTX range 'forward'");
    const Span* nccl = Find(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    REQUIRE(nccl);
    CHECK(nccl->category == SpanCategory::Collective);
    const auto tag = ParseCollectiveTag(t.Str(nccl->detail));
    REQUIRE(tag);
    CHECK(tag->collective == "allreduce");
    CHECK(tag->algorithm == "ring");
    const Span* copy = Find(t, "memcpy HtoD");
    REQUIRE(copy);
    CHECK(copy->bytes == (1u << 20));
    CHECK(copy->category == SpanCategory::Memcpy);
    const Span* forward = Find(t, "forward");
    REQUIRE(forward);
    CHECK(forward->category == SpanCategory::Annotation);
    CHECK(t.Str(forward->detail) == "NVTX domain train");
    const Span* mark = Find(t, "a mark");
    REQUIRE(mark);
    CHECK(mark->startNs == kSession + 4000);
    CHECK(mark->DurationNs() == 0);
    CHECK(t.Flows().empty());

    ReadOptions api;
    api.apiSpans = true;
    const Trace withApi = ReadTraceFile(path, api);
    CHECK(SpansByTrack(withApi).at("rank 0 thread 4242 (main thread) / CUDA API") == 5);
    CHECK(withApi.Flows().size() == 5); // each launch to what it launched
    ReadOptions gpuOnly;
    gpuOnly.keepCpu = false;
    for (const Device& d : ReadTraceFile(path, gpuOnly).Devices()) CHECK(d.kind == DeviceKind::Gpu);
}

TEST_CASE("Nsight Systems schemas: by column name, optional tables absent, a missing required column named", "[core][nsys]")
{
    Dir dir;
    {   // An older kernel table: shortName only, no memcpy table, no session start, no GPU names.
        nsystest::Db db(dir.File("old.sqlite"));
        db.Table("StringIds", {"id", "value:TEXT"});
        db.Table("CUPTI_ACTIVITY_KIND_KERNEL", {"start", "end", "deviceId", "streamId", "shortName"});
        db.Row("StringIds", {int64_t{0}, std::string("k")});
        db.Row("CUPTI_ACTIVITY_KIND_KERNEL", {int64_t{5}, int64_t{9}, int64_t{0}, int64_t{3}, int64_t{0}});
        db.Close();
    }
    const Trace old = ReadTraceFile(dir.File("old.sqlite"));
    REQUIRE(old.SpanCount() == 1);
    CHECK(old.Str(old.Tracks()[0].spans[0].name) == "k");
    CHECK(old.Tracks()[0].spans[0].startNs == 5);
    {
        nsystest::Db db(dir.File("nostream.sqlite"));
        db.Table("StringIds", {"id", "value:TEXT"});
        db.Table("CUPTI_ACTIVITY_KIND_KERNEL", {"start", "end", "deviceId", "shortName"});
        db.Close();
    }
    CHECK_THROWS_WITH(ReadTraceFile(dir.File("nostream.sqlite")),
                      Catch::Contains("nostream.sqlite") && Catch::Contains("CUPTI_ACTIVITY_KIND_KERNEL") && Catch::Contains("'streamId'"));
    {
        nsystest::Db db(dir.File("other.sqlite"));
        db.Table("people", {"name:TEXT"});
        db.Close();
    }
    CHECK_THROWS_WITH(ReadTraceFile(dir.File("other.sqlite")), Catch::Contains("without the tables of an Nsight Systems export"));
}

TEST_CASE("bad Nsight Systems files: truncated, damaged, compressed, a report without nsys", "[core][nsys]")
{
    Dir dir;
    const std::string good = dir.File("good.sqlite");
    WriteSample(good);
    const auto size = fs::file_size(good);
    {   // the first half of the file
        std::ifstream in(good, std::ios::binary);
        std::string bytes(size / 2, '\0');
        in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        std::ofstream(dir.File("half.sqlite"), std::ios::binary) << bytes;
    }
    CHECK_THROWS_AS(ReadTraceFile(dir.File("half.sqlite")), paralens::Error);
    {   // the header and then noise
        std::ifstream in(good, std::ios::binary);
        std::string bytes(size, '\0');
        in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        for (size_t i = 100; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(i * 31);
        std::ofstream(dir.File("noise.sqlite"), std::ios::binary) << bytes;
    }
    CHECK_THROWS_WITH(ReadTraceFile(dir.File("noise.sqlite")), Catch::Contains("noise.sqlite"));
    std::ofstream(dir.File("report.nsys-rep")) << "not really a report";
    const char* path = std::getenv("PATH");
    const std::string saved = path ? path : "";
    ::setenv("PATH", dir.path.c_str(), 1); // no nsys there
    ::unsetenv("PARALENS_NSYS");
    CHECK_THROWS_WITH(ReadTraceFile(dir.File("report.nsys-rep")), Catch::Contains("nsys export --type sqlite"));
    ::setenv("PATH", saved.c_str(), 1);
}

TEST_CASE("a .nsys-rep is exported with the nsys on PATH, then read", "[core][nsys]")
{
    Dir dir;
    WriteSample(dir.File("exported.sqlite"));
    // A stand-in for nsys that "exports" by copying the file the test wrote to its --output.
    const std::string fake = dir.File("nsys");
    std::ofstream(fake) << "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=$2; shift; done\ncp '"
                        << dir.File("exported.sqlite") << "' \"$out\"\n";
    fs::permissions(fake, fs::perms::owner_all);
    std::ofstream(dir.File("run.nsys-rep")) << "binary report";
    ::setenv("PARALENS_NSYS", fake.c_str(), 1);
    const Trace t = ReadTraceFile(dir.File("run.nsys-rep"));
    ::unsetenv("PARALENS_NSYS");
    CHECK(t.Meta().source == TraceSource::Nsys);
    CHECK(SpansByTrack(t).at("rank 0 GPU 0 (NVIDIA H100 80GB HBM3) / stream 7") == 3);
}

TEST_CASE("the Nsight Systems files of several ranks line up on one timeline", "[core][nsys]")
{
    Dir dir;
    WriteSample(dir.File("job-rank-0.sqlite"));
    WriteSample(dir.File("job-rank-1.sqlite"));
    const Trace t = ReadTraceFiles({dir.File("job-rank-0.sqlite"), dir.File("job-rank-1.sqlite")});
    const auto counts = SpansByTrack(t);
    CHECK(counts.at("rank 0 GPU 0 (NVIDIA H100 80GB HBM3) / stream 7") == 3);
    CHECK(counts.at("rank 1 GPU 0 (NVIDIA H100 80GB HBM3) / stream 7") == 3);
    CHECK(t.BeginNs() == kSession + 100);
}

TEST_CASE("the real Nsight Systems sample: every count and time as SQL has them", "[core][nsys]")
{
    const std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/nsys/saxpy-mpi-cuda-a100.sqlite";
    if (!fs::exists(path)) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    const Trace t = ReadTraceFile(path);
    const auto counts = SpansByTrack(t);
    // sqlite3 FILE "select count(*) from CUPTI_ACTIVITY_KIND_KERNEL" -> 5, _MEMCPY -> 15 (all on
    // device 0, stream 7: the process's default stream, TARGET_INFO_CUDA_NULL_STREAM), NVTX_EVENTS with eventType 59 and an end -> 22 ("MPI Rank 0" names the thread).
    CHECK(counts.at("rank 0 GPU 0 (NVIDIA A100-SXM4-40GB) / stream 7 (default)") == 5 + 15);
    CHECK(counts.at("rank 0 thread 1230493 (MPI Rank 0) / NVTX") == 22);
    // select min(start) from CUPTI_ACTIVITY_KIND_KERNEL -> 924922186; utcEpochNs 1687813257637297504.
    int64_t firstKernel = INT64_MAX;
    for (const Track& tr : t.Tracks())
        for (const Span& s : tr.spans)
            if (s.category == SpanCategory::Compute) firstKernel = std::min(firstKernel, s.startNs);
    CHECK(firstKernel == 1687813257637297504 + 924922186);
    CHECK(t.Meta().hardware.GetString("gpu") == "NVIDIA A100-SXM4-40GB");
    const Span* saxpy = nullptr;
    for (const Track& tr : t.Tracks())
        for (const Span& s : tr.spans)
            if (s.category == SpanCategory::Compute) saxpy = &s;
    REQUIRE(saxpy);
    CHECK(t.Str(saxpy->detail) == "launched in NVTX range 'saxpy'");
}

TEST_CASE("reading a large Nsight Systems export reports progress and stops when cancelled", "[core][nsys]")
{
    Dir dir;
    const std::string path = dir.File("big.sqlite");
    {
        nsystest::Db db(path);
        nsystest::CreateExportTables(db);
        db.Row("StringIds", {int64_t{0}, std::string("k")});
        for (int64_t i = 0; i < 200'000; ++i)
            db.Row("CUPTI_ACTIVITY_KIND_KERNEL", {i * 10, i * 10 + 5, int64_t{0}, int64_t{1}, int64_t{7}, i, GlobalTid(1, 0), int64_t{0},
                                                  nullptr, int64_t{1}, nullptr});
        db.Close();
    }
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    ReadOptions options;
    options.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
    CHECK(ReadTraceFile(path, options).SpanCount() == 200'000);
    REQUIRE(calls.size() == 3); // every 64 Ki rows
    CHECK(calls.back().second == fs::file_size(path));
    CHECK(calls.front().first < calls.back().first);
    options.progress = [](uint64_t, uint64_t) { throw paralens::Error("loading cancelled"); };
    CHECK_THROWS_WITH(ReadTraceFile(path, options), Catch::Contains("cancelled"));
}
