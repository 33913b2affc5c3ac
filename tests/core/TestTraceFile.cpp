// Trace files: Chrome JSON that Perfetto opens, and exact round trips through paralens.
#include "common/Error.hpp"
#include "plan/Plan.hpp"
#include "sim/Simulator.hpp"
#include "trace/FileIO.hpp"
#include "trace/JsonText.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace paralens;
using namespace paralens::core;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() : path(fs::temp_directory_path() / ("paralens-test-" + std::to_string(::getpid()) + "-" + std::to_string(rand())))
    {
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string File(const std::string& name) const { return (path / name).string(); }
};

// A trace that uses every field, with epoch-scale timestamps.
Trace RichTrace()
{
    TraceBuilder b;
    Metadata& m = b.Meta();
    m.source = TraceSource::Cupti;
    m.title = "rich \"quoted\" trace";
    m.workload.Set("collective", std::string("allreduce"));
    m.workload.Set("ranks", int64_t{2});
    m.model.Set("alphaUs", 5.25);
    m.hardware.Set("gpu", std::string("NVIDIA H100 80GB HBM3"));
    m.results.Set("ok", true);
    m.extra.Set("note", std::string("line\nbreak"));
    const int64_t epoch = 1'700'000'000'123'456'789;
    uint32_t d0 = b.AddDevice("GPU 0", DeviceKind::Gpu, 0, "node-a", 0);
    uint32_t d1 = b.AddDevice("rank 1", DeviceKind::VirtualGpu, 1, "node-b", 0);
    uint32_t t0 = b.AddTrack(d0, "stream 7");
    uint32_t t1 = b.AddTrack(d1, "compute");
    b.AddTrack(d1, "empty lane");
    Span s;
    s.startNs = epoch;
    s.endNs = epoch + 1001;
    s.name = b.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    s.detail = b.Intern("algo=ring proto=LL");
    s.category = SpanCategory::Collective;
    s.bytes = 1ull << 40;
    s.flops = 1.5e15;
    s.predictedNs = 999;
    s.microBatch = 3;
    s.chunk = 1;
    s.step = 42;
    b.AddSpan(t0, s);
    Span nested = s;
    nested.startNs = epoch + 1;
    nested.endNs = epoch + 2;
    nested.category = SpanCategory::Memcpy;
    nested.microBatch = kNone;
    b.AddSpan(t0, nested);
    Span f;
    f.startNs = epoch - 7;
    f.endNs = epoch + 5;
    f.name = b.Intern("F");
    f.category = SpanCategory::Forward;
    b.AddSpan(t1, f);
    Flow fl;
    fl.srcDevice = d0;
    fl.dstDevice = d1;
    fl.srcTrack = t0;
    fl.dstTrack = t1;
    fl.srcNs = epoch;
    fl.dstNs = epoch + 3;
    fl.bytes = 4096;
    fl.step = 1;
    fl.chunk = 2;
    fl.name = b.Intern("activations");
    b.AddFlow(fl);
    uint32_t c = b.AddCounter(d0, "MFU", "%");
    b.AddSample(c, epoch, 41.5);
    b.AddSample(c, epoch + 10, 43.25);
    return std::move(b).Finish();
}

void RequireSameTrace(const Trace& a, const Trace& b)
{
    CHECK(a.Meta().source == b.Meta().source);
    CHECK(a.Meta().title == b.Meta().title);
    CHECK(a.Meta().workload.GetString("collective") == b.Meta().workload.GetString("collective"));
    CHECK(a.Meta().model.GetNumber("alphaUs") == b.Meta().model.GetNumber("alphaUs"));
    CHECK(a.Meta().extra.GetString("note") == b.Meta().extra.GetString("note"));
    REQUIRE(a.Devices().size() == b.Devices().size());
    for (size_t i = 0; i < a.Devices().size(); ++i) {
        CHECK(a.Str(a.Devices()[i].name) == b.Str(b.Devices()[i].name));
        CHECK(a.Str(a.Devices()[i].host) == b.Str(b.Devices()[i].host));
        CHECK(a.Devices()[i].kind == b.Devices()[i].kind);
        CHECK(a.Devices()[i].rank == b.Devices()[i].rank);
        CHECK(a.Devices()[i].gpuIndex == b.Devices()[i].gpuIndex);
    }
    REQUIRE(a.Tracks().size() == b.Tracks().size());
    for (size_t i = 0; i < a.Tracks().size(); ++i) {
        const Track& x = a.Tracks()[i];
        const Track& y = b.Tracks()[i];
        CHECK(a.Str(x.name) == b.Str(y.name));
        CHECK(x.device == y.device);
        REQUIRE(x.spans.size() == y.spans.size());
        for (size_t k = 0; k < x.spans.size(); ++k) {
            const Span& p = x.spans[k];
            const Span& q = y.spans[k];
            CHECK(p.startNs == q.startNs);
            CHECK(p.endNs == q.endNs);
            CHECK(a.Str(p.name) == b.Str(q.name));
            CHECK(a.Str(p.detail) == b.Str(q.detail));
            CHECK(p.category == q.category);
            CHECK(p.bytes == q.bytes);
            CHECK(p.flops == q.flops);
            CHECK(p.predictedNs == q.predictedNs);
            CHECK(p.microBatch == q.microBatch);
            CHECK(p.chunk == q.chunk);
            CHECK(p.step == q.step);
            CHECK(p.depth == q.depth);
        }
    }
    REQUIRE(a.Flows().size() == b.Flows().size());
    for (size_t i = 0; i < a.Flows().size(); ++i) {
        const Flow& f = a.Flows()[i];
        const Flow& g = b.Flows()[i];
        CHECK(f.srcDevice == g.srcDevice);
        CHECK(f.dstDevice == g.dstDevice);
        CHECK(f.srcTrack == g.srcTrack);
        CHECK(f.dstTrack == g.dstTrack);
        CHECK(f.srcNs == g.srcNs);
        CHECK(f.dstNs == g.dstNs);
        CHECK(f.bytes == g.bytes);
        CHECK(f.step == g.step);
        CHECK(f.chunk == g.chunk);
        CHECK(a.Str(f.name) == b.Str(g.name));
    }
    REQUIRE(a.Counters().size() == b.Counters().size());
    for (size_t i = 0; i < a.Counters().size(); ++i) {
        CHECK(a.Str(a.Counters()[i].name) == b.Str(b.Counters()[i].name));
        CHECK(a.Str(a.Counters()[i].unit) == b.Str(b.Counters()[i].unit));
        REQUIRE(a.Counters()[i].samples.size() == b.Counters()[i].samples.size());
        for (size_t k = 0; k < a.Counters()[i].samples.size(); ++k) {
            CHECK(a.Counters()[i].samples[k].timeNs == b.Counters()[i].samples[k].timeNs);
            CHECK(a.Counters()[i].samples[k].value == b.Counters()[i].samples[k].value);
        }
    }
}

} // namespace

TEST_CASE("microseconds text converts to exact nanoseconds", "[io]")
{
    int64_t ns = 0;
    CHECK((ParseMicrosToNs("1700000000123456.789", ns) && ns == 1700000000123456789));
    CHECK((ParseMicrosToNs("12", ns) && ns == 12000));
    CHECK((ParseMicrosToNs("-3.5", ns) && ns == -3500));
    CHECK((ParseMicrosToNs("0.0006", ns) && ns == 1));   // rounds half away from zero
    CHECK((ParseMicrosToNs("0.0004", ns) && ns == 0));
    CHECK((ParseMicrosToNs("1.5e3", ns) && ns == 1500000));
    CHECK((ParseMicrosToNs("2E-3", ns) && ns == 2));
    CHECK_FALSE(ParseMicrosToNs("abc", ns));
    CHECK_FALSE(ParseMicrosToNs("1.2.3", ns));
    CHECK_FALSE(ParseMicrosToNs("99999999999999999999", ns));
    CHECK((ParseDecimalNs("1700000000123456789", ns) && ns == 1700000000123456789));
    std::string out;
    AppendMicrosFromNs(out, 1700000000123456789);
    CHECK(out == "1700000000123456.789");
    out.clear();
    AppendMicrosFromNs(out, -1500);
    CHECK(out == "-1.5");
    out.clear();
    AppendMicrosFromNs(out, 42000);
    CHECK(out == "42");
}

TEST_CASE("strings are written as JSON with every escape, plain runs as they are", "[io]")
{
    std::string out;
    AppendJsonString(out, "say \"hi\"\\ to\nrank\r1\t\x01 and \x1f");
    CHECK(out == R"("say \"hi\"\\ to\nrank\r1\t\u0001 and \u001f")");
    out.clear();
    const std::string kernel = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(Params) \xc3\xa9";
    AppendJsonString(out, kernel);
    CHECK(out == '"' + kernel + '"'); // UTF-8 and every other byte from 0x20 up as it is
    out.clear();
    AppendJsonString(out, "");
    AppendJsonString(out, "\"");
    CHECK(out == R"("""\"")");
}

TEST_CASE("a trace round-trips through JSON without loss", "[io]")
{
    Trace original = RichTrace();
    std::string text = TraceToJsonText(original);
    Trace back = ReadChromeJson(text, "memory");
    RequireSameTrace(original, back);
    // And a second trip gives the same text.
    CHECK(TraceToJsonText(back) == text);
}

TEST_CASE("trace files are Chrome JSON that Perfetto reads", "[io]")
{
    std::string text = TraceToJsonText(RichTrace());
    auto doc = nlohmann::json::parse(text);
    REQUIRE(doc["traceEvents"].is_array());
    CHECK(doc["paralens"]["format"] == "paralens-trace");
    std::map<std::string, int> phases;
    for (const auto& e : doc["traceEvents"]) {
        phases[e["ph"].get<std::string>()]++;
        CHECK(e.contains("pid"));
        if (e["ph"] == "X") {
            CHECK(e["ts"].is_number());
            CHECK(e["dur"].is_number());
            CHECK(e.contains("tid"));
        }
    }
    CHECK(phases["X"] == 3);
    CHECK(phases["s"] == 1);
    CHECK(phases["f"] == 1);
    CHECK(phases["C"] == 2);
    CHECK(phases["M"] >= 4);
}

TEST_CASE("trace files write atomically, gzip by extension, and read back", "[io]")
{
    TempDir dir;
    Trace original = RichTrace();
    for (const char* name : {"t.json", "t.json.gz"}) {
        std::string path = dir.File(name);
        WriteTraceFile(original, path);
        RequireSameTrace(original, ReadTraceFile(path));
    }
    // gzip really compresses: the first two bytes are gzip's magic.
    std::string raw;
    {
        FILE* f = std::fopen(dir.File("t.json.gz").c_str(), "rb");
        REQUIRE(f);
        char m[2];
        REQUIRE(std::fread(m, 1, 2, f) == 2);
        std::fclose(f);
        CHECK(static_cast<unsigned char>(m[0]) == 0x1f);
        CHECK(static_cast<unsigned char>(m[1]) == 0x8b);
    }
    // Nothing but the two files is left in the folder (no temporary names).
    int files = 0;
    for (auto& e : fs::directory_iterator(dir.path)) { (void)e; ++files; }
    CHECK(files == 2);
    CHECK_THROWS_WITH(WriteTraceFile(original, dir.File("missing/sub/t.json")), Catch::Contains("cannot write"));
}

TEST_CASE("a .gz written on several threads is one gzip file of members in order", "[io]")
{
    TempDir dir;
    // 72 MiB of varied text: nine pieces compressed apart, written in order (more than are ever in
    // flight on two cores, so emptied buffers are filled again).
    std::string text;
    for (int64_t i = 0; text.size() < (size_t{72} << 20); ++i) text += "{\"ph\":\"X\",\"ts\":" + std::to_string(i * 7919 % 100003) + "},\n";
    const std::string path = dir.File("big.json.gz");
    {
        OutputFile out(path);
        for (size_t at = 0; at < text.size(); at += 123457) out.Write(std::string_view(text).substr(at, 123457)); // uneven writes
        out.Commit();
    }
    CHECK(ReadFileDecompressed(path) == text);
    std::string streamed(text.size() + 10, '\0'); // through the block reader too
    auto source = OpenFileSource(path);
    size_t got = 0;
    while (size_t n = source->Read(streamed.data() + got, streamed.size() - got)) got += n;
    streamed.resize(got);
    CHECK(streamed == text);
    // Several gzip members: the magic bytes appear again after the first.
    std::ifstream f(path, std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t members = 0;
    for (size_t at = raw.find("\x1f\x8b\x08"); at != std::string::npos; at = raw.find("\x1f\x8b\x08", at + 1)) ++members;
    CHECK(members >= 3);
    CHECK(raw.size() < text.size() / 4);
    // Cut in half: the error, raised while inflating ahead of the reader, names the file.
    const std::string cut = dir.File("cut.json.gz");
    { std::ofstream(cut, std::ios::binary) << raw.substr(0, raw.size() / 2); }
    auto partial = OpenFileSource(cut);
    CHECK_THROWS_WITH([&] { while (partial->Read(streamed.data(), streamed.size()) > 0) {} }(),
                      Catch::Contains(cut) && Catch::Contains("truncated"));
    // An empty .gz is still a gzip file, and reads back empty.
    { OutputFile empty(dir.File("empty.json.gz")); empty.Commit(); }
    CHECK(fs::file_size(dir.File("empty.json.gz")) >= 18);
    CHECK(ReadFileDecompressed(dir.File("empty.json.gz")).empty());
    // A write that fails leaves nothing behind.
    { OutputFile abandoned(dir.File("gone.json.gz")); abandoned.Write(text); }
    CHECK(!fs::exists(dir.File("gone.json.gz")));
}

TEST_CASE("a simulated trace round-trips", "[io][sim]")
{
    Plan plan = BuildPlan({Collective::AllReduce, Algorithm::HalvingDoubling, 6, 6000, 0, 1});
    SimResult r = Simulate(plan, ClusterModel::FromUnits(5, 100, 30));
    std::string text = TraceToJsonText(*r.trace);
    RequireSameTrace(*r.trace, ReadChromeJson(text, "memory"));
}

TEST_CASE("bad trace files get errors that name the file and the place", "[io]")
{
    CHECK_THROWS_WITH(ReadChromeJson("{\"traceEvents\": [ {\"ph\":\"X\",\"ts\":\"zzz\",\"pid\":0} ]}", "bad.json"),
                      Catch::Contains("bad.json") && Catch::Contains("traceEvents[0]") && Catch::Contains("byte") &&
                          Catch::Contains("\"ts\""));
    CHECK_THROWS_WITH(ReadChromeJson("{\"traceEvents\": [ {\"ph\":\"X\",\"pid\":0,\"tid\":1} ]}", "nots.json"),
                      Catch::Contains("needs \"ts\""));
    CHECK_THROWS_WITH(ReadChromeJson("{\"foo\": 1}", "other.json"), Catch::Contains("no \"traceEvents\""));
    CHECK_THROWS_WITH(ReadChromeJson("{\"traceEvents\": [ {\"ph\":\"X\"", "cut.json"), Catch::Contains("cut.json"));
    TempDir dir;
    CHECK_THROWS_WITH(ReadTraceFile(dir.File("nope.json")), Catch::Contains("nope.json"));
    WriteFileAtomic(dir.File("empty.json"), "");
    CHECK_THROWS_WITH(ReadTraceFile(dir.File("empty.json")), Catch::Contains("empty"));
}

TEST_CASE("Chrome traces from other tools open: array form, string ids", "[io]")
{
    const char* text = R"([
      {"name":"process_name","ph":"M","pid":7,"args":{"name":"worker"}},
      {"name":"k1","ph":"X","pid":7,"tid":3,"ts":10.5,"dur":2},
      {"name":"k2","ph":"X","pid":"host","tid":"main","ts":11,"dur":1.25},
      {"name":"load","ph":"C","pid":7,"ts":10,"args":{"cpu":0.5,"gpu":0.25}}
    ])";
    Trace t = ReadChromeJson(text, "array.json");
    CHECK(t.Meta().source == TraceSource::Chrome);
    REQUIRE(t.Devices().size() == 2);
    CHECK(t.Str(t.Devices()[0].name) == "worker");
    CHECK(t.SpanCount() == 2);
    CHECK(t.Tracks()[0].spans[0].startNs == 10500);
    CHECK(t.Tracks()[0].spans[0].endNs == 12500);
    CHECK(t.Counters().size() == 2);
}
