// The captures of the first run on a real GPU (an H100, committed under traces/h100 with the
// run's own reports in traces/h100/logs): read back, they must give what the run reported, so a
// reader or analysis that drifts from what the GPU backend wrote is seen without a GPU.
#include "analysis/PipelineMetrics.hpp"
#include "model/CostModel.hpp"
#include "trace/TraceBuilder.hpp"
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

TEST_CASE("a pipeline's sends are timed from the op that produced their data", "[core][gpu-captures]")
{
    // By hand: stage 0's F3 ends at 10 us, its send of micro-batch 3 starts at 25 (15 late); a
    // send whose micro-batch has no op ended before it is not counted.
    TraceBuilder b;
    const uint32_t d = b.AddDevice("stage 0", DeviceKind::Gpu, 0);
    const uint32_t compute = b.AddTrack(d, "compute"), send = b.AddTrack(d, "send");
    auto span = [](int64_t from, int64_t to, SpanCategory c, int32_t mb) {
        Span s;
        s.startNs = from, s.endNs = to, s.category = c, s.microBatch = mb, s.chunk = 0, s.step = 0;
        return s;
    };
    b.AddSpan(compute, span(0, 10000, SpanCategory::Forward, 3));
    b.AddSpan(compute, span(10000, 30000, SpanCategory::Forward, 4));
    b.AddSpan(send, span(25000, 26000, SpanCategory::Send, 3));
    b.AddSpan(send, span(26000, 27000, SpanCategory::Send, 4)); // F4 ends at 30 us: before its producer
    const Trace t = std::move(b).Finish();
    const SendDelays one = ComputeSendDelays(t);
    CHECK(one.sends == 1);
    CHECK(one.medianNs == 15000);
    CHECK(one.totalNs == 15000);

    // The H100 captures: copies between virtual stages run on the sender's stream (--copy-on
    // sender, the default), so a copy waits for the sender's next GEMM: with all SMs shared, most
    // copies start 1.6 ms or more after their producer; in green contexts, those made while the
    // sender's next op runs (a tenth and more of them) 1.5 ms and more.
    const SendDelays shared = ComputeSendDelays(ReadTraceFile(kDir + "pipeline-1f1b-4x8-virtual-shared-sms.json.gz"));
    CHECK(shared.sends == 192);
    CHECK(shared.medianNs > 1500000);
    const SendDelays green = ComputeSendDelays(ReadTraceFile(kDir + "pipeline-1f1b-4x32-virtual-2048tokens.json.gz"));
    CHECK(green.sends == 576); // an iteration: 2 x 32 from each inner stage, 32 from each end; the warm-up and 2 timed
    CHECK(green.medianNs < 100000);
    CHECK(green.p90Ns > 1500000);
}
