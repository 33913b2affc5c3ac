// A seeded mutation test of every reader: mangled Chrome/Kineto JSON, paralens traces and
// nccl-tests logs must either read or fail with paralens::Error; never another exception, a
// crash or a hang. Runs for a bounded time (about 3 s; the sequence of inputs is fixed by the
// seed). Under the asan preset this also checks memory safety. For a longer hunt:
//   PARALENS_FUZZ_SECONDS=600 PARALENS_FUZZ_SEED=7 paralens_core_tests "[fuzz]"
#include "analysis/Fitting.hpp"
#include "analysis/TraceReport.hpp"
#include "common/Error.hpp"
#include "plan/Plan.hpp"
#include "sim/Simulator.hpp"
#include "trace/NcclTestsLog.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>

using namespace paralens;
using namespace paralens::core;

namespace {

const char* kKineto = R"J({"schemaVersion":1,"distributedInfo":{"rank":0,"world_size":2,"pg_count":1},
"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[
{"ph":"M","name":"process_labels","pid":0,"tid":0,"args":{"labels":"GPU 0"}},
{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7 "}},
{"ph":"X","cat":"cpu_op","name":"c10d::allreduce_","pid":9,"tid":9,"ts":99.5,"dur":30,"args":{"Input Dims":[[1024]],"Input type":["float"]}},
{"ph":"X","cat":"user_annotation","name":"nccl:all_reduce","pid":9,"tid":9,"ts":100,"dur":20,"args":{"Input Dims":[[1024]],"Input type":["float"]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":101,"dur":3,"args":{"correlation":5}},
{"ph":"s","cat":"ac2g","name":"ac2g","id":5,"pid":9,"tid":9,"ts":101},
{"ph":"f","cat":"ac2g","name":"ac2g","id":5,"pid":0,"tid":7,"ts":110.25,"bp":"e"},
{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)","pid":0,"tid":7,"ts":110.25,"dur":40.5,"args":{"correlation":5,"Collective name":"allreduce","In msg nelems":1024,"Out msg nelems":1024,"Group size":2,"dtype":"Float","Process Group Name":"0"}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":160,"dur":10},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":171,"dur":1,"args":{"bytes":4096}},
{"ph":"i","name":"Iteration Start: PyTorch Profiler","s":"g","pid":"Traces","tid":"Trace PyTorch Profiler","ts":99}
],"traceName":"t.json","baseTimeNanoseconds":1711964646000000000})J";

const char* kChrome = R"([{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},
{"ph":"B","name":"outer","pid":1,"tid":2,"ts":10},{"ph":"E","pid":1,"tid":2,"ts":20},
{"ph":"X","name":"k","cat":"collective","pid":"host","tid":"t","ts":"11.5","dur":3,"args":{"bytes":64,"detail":"collective=allreduce ranks=2 seq=0"}},
{"ph":"b","name":"req","cat":"net","id":"0x1","pid":1,"ts":10},{"ph":"e","name":"req","cat":"net","id":"0x1","pid":1,"ts":30},
{"ph":"s","name":"m","cat":"f","id":5,"pid":1,"tid":2,"ts":30},{"ph":"t","name":"m","cat":"f","id":5,"pid":1,"tid":2,"ts":31},
{"ph":"f","name":"m","cat":"f","id":5,"pid":3,"tid":1,"ts":40},{"ph":"C","name":"mem","pid":1,"ts":10,"args":{"a":5,"b":6}},
{"ph":"i","name":"mark","pid":1,"tid":2,"ts":15,"s":"t"}])";

const char* kLog = R"(# nccl-tests version 2.17.9 nccl-headers=22602 nccl-library=22602
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 2 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid 1 on host device  0 [0000:29:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid 1 on host device  1 [0000:2f:00] NVIDIA H100 80GB HBM3
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    14.98    0.00    0.00       0    14.52    0.00    0.00       0
          64            16     float     sum      -1    15.08    0.00    0.00       0    15.17    0.00    0.00       0
        1024           256     float     sum      -1    16.10    0.06    0.06       0    15.90    0.06    0.06       0
host:1:1 [0] NCCL INFO stray
# Avg bus bandwidth    : 0.02
)";

const char* kTokens[] = {"{", "}", "[", "]", "\"", ",", ":", "\\", "\\u0000", "1e308", "-", "99999999999999999999999",
                         "null", "true", "\"ts\":", "\"ph\":\"X\"", "\"ph\":\"B\"", "\"ph\":\"E\"", "\"ph\":\"b\"",
                         "\"ph\":\"f\"", "\"dur\":-5", "\"dur\":1e19", "\xff\xfe", "\n", "#  size count type", "\0"};

std::string Mutate(const std::string& seed, std::mt19937& rng)
{
    std::string s = seed;
    std::uniform_int_distribution<int> ops(0, 5);
    int count = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < count && !s.empty(); ++k) {
        size_t at = rng() % s.size();
        size_t len = 1 + rng() % std::min<size_t>(32, s.size() - at);
        switch (ops(rng)) {
        case 0: s[at] = static_cast<char>(rng() % 256); break;
        case 1: s.erase(at, len); break;
        case 2: s.insert(at, kTokens[rng() % std::size(kTokens)]); break;
        case 3: s.insert(at, s.substr(at, len)); break;
        case 4: s.resize(at); break;
        default: s.insert(at, std::string(len, static_cast<char>(rng() % 128))); break;
        }
    }
    return s;
}

// Reads `text`; on success also analyses and fits it. Returns the non-paralens error, if any.
std::string Exercise(const std::string& text, size_t blockBytes)
{
    try {
        ReadOptions o;
        o.blockBytes = blockBytes;
        Trace t = ReadTraceText(text, "fuzz.json", o);
        TraceReport r = AnalyzeTrace(t);
        auto groups = FitGroupsFromTrace(t, "fuzz.json");
        for (const FitGroup& g : groups) (void)FitAlphaBeta(g);
        if (LooksLikeNcclTestsLog(text)) (void)FitGroupsFromLog(ReadNcclTestsLog(text, "fuzz.log"), LogHalf::Both);
    } catch (const Error&) {
        // expected: bad input says so
    } catch (const std::exception& e) {
        return std::string("unexpected exception: ") + e.what();
    }
    return "";
}

} // namespace

TEST_CASE("mangled traces and logs read or fail with a paralens::Error, never worse", "[io][fuzz]")
{
    CollectiveSpec spec{Collective::AllReduce, Algorithm::Ring, 3, 3000, 0, 4};
    const std::vector<std::string> seeds{kKineto, kChrome, kLog, TraceToJsonText(*Simulate(BuildPlan(spec), ClusterModel::FromUnits(5, 100, 0)).trace)};
    for (const std::string& seed : seeds) REQUIRE(Exercise(seed, 0).empty()); // the seeds themselves read
    const char* seedText = std::getenv("PARALENS_FUZZ_SEED");
    const char* secondsText = std::getenv("PARALENS_FUZZ_SECONDS");
    std::mt19937 rng(seedText ? static_cast<unsigned>(std::strtoul(seedText, nullptr, 10)) : 20240601u);
    const int seconds = secondsText ? std::atoi(secondsText) : 3;
    const size_t maxRuns = secondsText ? SIZE_MAX : 200000;
    const size_t blocks[] = {0, 16, 64, 1000};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    size_t runs = 0;
    while (std::chrono::steady_clock::now() < deadline && runs < maxRuns) {
        const std::string& seed = seeds[runs % seeds.size()];
        std::string input = Mutate(seed, rng);
        std::string problem = Exercise(input, blocks[rng() % std::size(blocks)]);
        if (!problem.empty()) {
            INFO("run " << runs << ", input:\n" << input);
            FAIL(problem);
        }
        ++runs;
    }
    CHECK(runs > 100);
}
