// The captures of the first run on a real GPU (an H100, committed under traces/h100 with the
// run's own reports in traces/h100/logs): read back, they must give what the run reported, so a
// reader or analysis that drifts from what the GPU backend wrote is seen without a GPU.
#include "analysis/PipelineMetrics.hpp"
#include "model/CostModel.hpp"
#include "trace/FileIO.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace paralens;
using namespace paralens::core;

namespace {

const std::string kDir = std::string(PARALENS_SOURCE_DIR) + "/traces/h100/";

// The JSON report a step of scripts/gpu-validate.sh printed (its log: a command line, then JSON).
nlohmann::json Report(const std::string& step)
{
    const std::string s = ReadFileDecompressed(kDir + "logs/" + step + ".log");
    const size_t brace = s.find("\n{");
    REQUIRE(brace != std::string::npos);
    return nlohmann::json::parse(s.substr(brace + 1));
}

} // namespace

TEST_CASE("the H100 pipeline captures give back the bubbles and activations the runs reported", "[core][gpu-captures]")
{
    for (const std::string step : {"pipeline-1f1b-4x8-virtual", "pipeline-gpipe-4x8-virtual", "pipeline-interleaved-4x8x2-virtual",
                                   "pipeline-1f1b-4x32-virtual-2048tokens"}) {
        INFO(step);
        const nlohmann::json report = Report(step);
        const Trace t = ReadTraceFile(kDir + step + ".json.gz");
        CHECK(t.Meta().source == TraceSource::Cupti);
        CHECK(t.Meta().hardware.GetString("gpu") == "NVIDIA H100 80GB HBM3");
        CHECK(t.Meta().results.GetNumber("cuptiDroppedRecords", -1) == 0);
        const auto& rows = report.at("rows");
        REQUIRE(rows.size() >= 2);
        for (const auto& row : rows) {
            const UsageWindow w = StepWindow(t, row.at("iteration").get<int>());
            CHECK(ComputeBubbleFraction(t, w) == Approx(row.at("bubble").get<double>()).margin(1e-9));
        }
        std::string held;
        for (int n : PeakActivations(t)) held += (held.empty() ? "" : " ") + std::to_string(n);
        CHECK(held == report.at("summary").at("peakActivations").get<std::string>());
    }
}

TEST_CASE("the H100 Plan captures are checked runs whose busbw follows nccl-tests' factor", "[core][gpu-captures]")
{
    for (const std::string algo : {"ring", "tree", "halving-doubling"}) {
        INFO(algo);
        const nlohmann::json report = Report("plan-allreduce-" + algo + "-8vranks");
        CHECK(report.at("checksPassed").get<bool>());
        REQUIRE(report.at("rows").size() == 28); // 8 B .. 1 GiB
        for (const auto& row : report.at("rows")) {
            CHECK(row.at("wrong").get<int>() == 0);
            CHECK(row.at("busbwGBps").get<double>() ==
                  Approx(row.at("algbwGBps").get<double>() * BusBwFactor(Collective::AllReduce, 8)));
        }
        const Trace t = ReadTraceFile(kDir + "plan-allreduce-" + algo + "-8vranks.json.gz");
        CHECK(t.Meta().workload.GetString("algorithm") == algo);
        CHECK(t.Devices().size() == 8);
        CHECK(!t.Flows().empty());
    }
}
