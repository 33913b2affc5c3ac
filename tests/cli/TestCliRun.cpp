// End-to-end: `paralens run` and `paralens --version --json` as scripts see them. The argument
// checks are the same with and without the GPU backend; a valid request then runs (on a GPU
// machine), or ends with exit code 3 and one line saying why it cannot run here.
#include "CliRunner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using Json = nlohmann::json;

namespace {

int Lines(const std::string& s)
{
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

void CheckRejected(const char* args, const char* mention)
{
    CliResult r = RunParalens(args);
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.exitCode == 2);
    CHECK(Lines(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains(mention));
    CHECK(r.out.empty());
}

} // namespace

TEST_CASE("run rejects bad arguments with one line naming the option", "[cli]")
{
    CheckRejected("run", "--workload");
    CheckRejected("run --workload nccl", "--workload");
    CheckRejected("run --workload collective --profile nsys", "--profile");
    CheckRejected("run --workload collective --gpus 0,x", "--gpus");
    CheckRejected("run --workload collective --bytes 12 parsecs", "");
    CheckRejected("run --workload collective --bytes lots", "--bytes");
    CheckRejected("run --workload collective --bytes 1MiB --max-bytes 2MiB", "--bytes");
    CheckRejected("run --workload collective --min-bytes 1GiB --max-bytes 8", "--min-bytes");
    CheckRejected("run --workload collective --collective allreduse", "--collective");
    CheckRejected("run --workload collective --dtype fp8", "--dtype");
    CheckRejected("run --workload collective --nccl-algo Rings", "--nccl-algo");
    CheckRejected("run --workload collective --nccl-proto LL64", "--nccl-proto");
    CheckRejected("run --workload collective --schedule gpipe", "--schedule applies to --workload pipeline");
    CheckRejected("run --workload gemm --bytes 1MiB", "--bytes applies to --workload collective or plan");
    CheckRejected("run --workload plan --algorithm pairwise", "--algorithm");
    CheckRejected("run --workload plan --ranks 100", "--ranks");
    CheckRejected("run --workload plan --dtype half", "--dtype");
    CheckRejected("run --workload plan --transport pigeon", "--transport");
    CheckRejected("run --workload pipeline --schedule interleaved --chunks 2 --microbatches 6", "");
    CheckRejected("run --workload pipeline --layers 3 --chunks 2 --schedule interleaved", "--layers");
    CheckRejected("run --workload pipeline --sm-partition half", "--sm-partition");
    CheckRejected("run --workload pipeline --copy-on both", "--copy-on");
    CheckRejected("run --workload gemm --copy-on receiver", "--copy-on applies to --workload pipeline");
    CheckRejected("run --workload gemm --graph", "--graph applies to --workload plan");
    CheckRejected("run --workload plan --graph --transport nccl", "--graph");
    CheckRejected("run --backend mpi --graph", "--graph");
    CheckRejected("run --workload pipeline --dtype int32", "--dtype");
    CheckRejected("run --workload gemm --shapes 8x8", "--shapes");
    CheckRejected("run --workload gemm --dtype double", "--dtype");
    CheckRejected("run --workload gemm --iters 0", "--iters");
    CheckRejected("run --workload gemm --out /nonexistent-folder/t.json", "--out");
    CheckRejected("run --backend carrier-pigeon --workload gemm", "--backend");
}

TEST_CASE("a valid run either runs on a GPU or says plainly why it cannot, exit 3", "[cli]")
{
    for (const char* args : {"run --workload collective --bytes 4KiB --iters 1 --warmup 0 --json",
                             "run --workload plan --ranks 4 --bytes 4KiB --iters 1 --warmup 0 --json",
                             "run --workload gemm --shapes 256 --iters 1 --warmup 0 --json"}) {
        CliResult r = RunParalens(args);
        INFO(args << "\nstderr: " << r.err);
        if (r.exitCode == 0) { // a GPU machine: the run happened
            const Json j = Json::parse(r.out);
            CHECK(j["backend"] == "gpu");
            CHECK(j["checksPassed"] == true);
            CHECK_FALSE(j["rows"].empty());
            continue;
        }
        CHECK(r.exitCode == 3);
        CHECK(Lines(r.err) == 1);
#if PARALENS_EXPECT_GPU_BACKEND
        CHECK_THAT(r.err, Catch::Contains("no CUDA device") || Catch::Contains("driver"));
#else
        CHECK_THAT(r.err, Catch::Contains("GPU backend is not built"));
#endif
        CHECK(r.out.empty());
    }
}

TEST_CASE("paralens --version --json says what this build includes", "[cli]")
{
    CliResult r = RunParalens("--version --json");
    REQUIRE(r.exitCode == 0);
    const Json j = Json::parse(r.out);
    CHECK(j["version"].is_string());
    CHECK(j["gpuBackend"] == bool(PARALENS_EXPECT_GPU_BACKEND));
    CHECK(j["cuda"]["built"] == bool(PARALENS_EXPECT_GPU_BACKEND));
    CHECK(j["nccl"]["built"] == bool(PARALENS_EXPECT_GPU_BACKEND));
    CHECK(j["cupti"]["built"] == bool(PARALENS_EXPECT_CUPTI));
    CHECK(j["mpi"] == bool(PARALENS_EXPECT_MPI));
    if (PARALENS_EXPECT_GPU_BACKEND) {
        CHECK_FALSE(j["cuda"]["version"].get<std::string>().empty());
        CHECK(j["nccl"]["version"].get<std::string>().find('.') != std::string::npos);
    }
    CliResult text = RunParalens("--version");
    CHECK(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::StartsWith("paralens "));
    CHECK_THAT(text.out, Catch::Contains(PARALENS_EXPECT_GPU_BACKEND ? "GPU backend: built" : "GPU backend: not built"));
    CliResult lone = RunParalens("--json");
    CHECK(lone.exitCode == 2);
    CHECK_THAT(lone.err, Catch::Contains("--version"));
}
