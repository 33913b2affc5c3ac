// Fits of real nccl-tests logs (issue "Predict real NCCL"): per log, the naive single alpha-beta
// line beside the regimes (RegimeFit.hpp), their error on sizes held out of the fit, and the log's
// own noise (its out-of-place and in-place halves' disagreement); then the protocol envelope
// (ProtocolFit.hpp): its lines, errors, and, with the regimes', the error on every other size when
// the others are fitted ("alt"). Targets: the regimes' median MAPE at most 4 %; the worst log at
// most 15 %, or 1.5 times its noise where that is larger; the held-out error within 2 times the
// fit's; the protocols' median error on every other size at most 3 %. Prints the table and the
// targets beside the results; never asserts.
//
//   paralens_bench_fit [FILE_OR_FOLDER ...]
//
// Without arguments: tests/data/nccl-tests/ (scripts/fetch-nccl-logs.sh fills it),
// ../shared/reference-data/nccl-tests/ and the one-node logs of tests/data/nccl-clusters/ where
// they exist.
#include "BenchMachine.hpp"

#include "analysis/Fitting.hpp"
#include "common/Error.hpp"
#include "model/Fit.hpp"
#include "model/ProtocolFit.hpp"
#include "model/RegimeFit.hpp"
#include "trace/NcclTestsLog.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using namespace paralens::core;
namespace fs = std::filesystem;

namespace {

struct Row {
    std::string name;
    FitResult fit;
    ProtocolFit protocols;
    double altRegimesPct = 0, altProtocolsPct = 0; // fitted on every other size, the others predicted
    double seconds = 0;
    bool cluster = false; // a cluster's one-node log: in the protocols' target only (the others' set is the first session's)
};

// Every other size fitted (the first, third, ...), the others predicted: the regimes' and the
// protocol envelope's mean error on them.
void AlternateSizes(const FitGroup& g, Row& r)
{
    const std::vector<FitSample> rows = OneRowPerSize(g.samples);
    std::vector<FitSample> train, test;
    for (size_t i = 0; i < rows.size(); ++i) (i % 2 == 0 || i + 1 == rows.size() ? train : test).push_back(rows[i]);
    if (test.empty()) return;
    const RegimeFit regimes = FitRegimes(train, g.collective, g.ranks, g.algorithm);
    const ProtocolFit protocols = FitProtocols(train);
    for (const FitSample& t : test) {
        r.altRegimesPct += std::fabs(PredictSegmented(regimes.segments, t.bytes) - t.seconds) / t.seconds;
        r.altProtocolsPct += std::fabs(PredictProtocols(protocols.lines, t.bytes) - t.seconds) / t.seconds;
    }
    r.altRegimesPct *= 100.0 / static_cast<double>(test.size());
    r.altProtocolsPct *= 100.0 / static_cast<double>(test.size());
}

std::vector<std::string> LogFiles(int argc, char** argv)
{
    std::vector<std::string> roots;
    for (int i = 1; i < argc; ++i) roots.push_back(argv[i]);
    if (roots.empty()) {
        roots.push_back(std::string(PARALENS_SOURCE_DIR) + "/tests/data/nccl-tests");
        roots.push_back(std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/nccl-tests");
        for (const char* one : {"alps-gh200/N1.log", "h100-10node/N1_G8.log", "abci-a100/N1_G8.log", "abci-v100/N1_G4.log"}) // the clusters' one-node logs
            roots.push_back(std::string(PARALENS_SOURCE_DIR) + "/tests/data/nccl-clusters/" + one);
    }
    std::vector<std::string> files;
    for (const std::string& root : roots) {
        if (fs::is_regular_file(root)) files.push_back(root);
        if (!fs::is_directory(root)) continue;
        std::vector<std::string> here;
        for (const auto& e : fs::directory_iterator(root))
            if (e.is_regular_file() && e.path().extension() == ".log") here.push_back(e.path().string());
        std::sort(here.begin(), here.end());
        files.insert(files.end(), here.begin(), here.end());
    }
    return files;
}

double Median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

void PrintSummary(const std::vector<Row>& rows)
{
    std::vector<double> naive, regimes, altRegimes, altProtocols;
    for (const Row& r : rows)
        if (r.altProtocolsPct > 0) {
            altRegimes.push_back(r.altRegimesPct);
            altProtocols.push_back(r.altProtocolsPct);
        }
    double worstRatio = 0;
    std::string worst;
    size_t heldOutOk = 0, heldOutChecked = 0;
    for (const Row& r : rows) {
        if (r.cluster) continue;
        naive.push_back(r.fit.mapePct);
        regimes.push_back(r.fit.segmentedMapePct);
        const double allowed = std::max(15.0, 1.5 * r.fit.noisePct);
        if (r.fit.segmentedMapePct / allowed > worstRatio) {
            worstRatio = r.fit.segmentedMapePct / allowed;
            worst = r.name;
        }
        if (r.fit.heldOutMapePct > 0) {
            ++heldOutChecked;
            heldOutOk += r.fit.heldOutMapePct <= 2 * r.fit.segmentedMapePct;
        }
    }
    std::printf("\n%-44s %12s %12s %8s\n", "target", "naive line", "regimes", "met");
    std::printf("%-44s %11.2f%% %11.2f%% %8s\n", "median MAPE <= 4 %", Median(naive), Median(regimes), Median(regimes) <= 4 ? "yes" : "NO");
    std::printf("%-44s %12s %11.2fx %8s   (%s)\n", "worst MAPE <= max(15 %, 1.5 x noise)", "", worstRatio, worstRatio <= 1 ? "yes" : "NO",
                worst.c_str());
    std::printf("%-44s %12s %7zu of %zu %8s\n", "held-out error <= 2 x fit error", "", heldOutOk, heldOutChecked,
                heldOutOk == heldOutChecked ? "yes" : "NO");
    std::printf("\n%-44s %12s %12s %8s\n", "every other size held out", "regimes", "protocols", "met");
    std::printf("%-44s %11.2f%% %11.2f%% %8s\n", "median error on the sizes held out <= 3 %", Median(altRegimes), Median(altProtocols),
                Median(altProtocols) <= 3 ? "yes" : "NO");
    ReportTarget("fit: protocols' median error on every other size held out (" + std::to_string(altProtocols.size()) + " logs)", "<= 3 %",
                 Fixed(Median(altProtocols), 2, "%"), Median(altProtocols) <= 3);
    ReportTarget("fit: median MAPE of the regimes over " + std::to_string(naive.size()) + " real logs", "<= 4 %", Fixed(Median(regimes), 2, "%"),
                 Median(regimes) <= 4);
    ReportTarget("fit: worst log's MAPE over its allowance", "<= 1x", Fixed(worstRatio, 2, "x"), worstRatio <= 1);
    ReportTarget("fit: logs whose held-out error is within 2x the fit's", "all", std::to_string(heldOutOk) + " of " + std::to_string(heldOutChecked),
                 heldOutOk == heldOutChecked);
}

} // namespace

int main(int argc, char** argv)
{
    std::printf("paralens_bench_fit on %s\n", MachineDescription().c_str());
    const std::vector<std::string> files = LogFiles(argc, argv);
    if (files.empty()) {
        std::printf("no nccl-tests logs found: run `bash scripts/fetch-nccl-logs.sh` first (needs github.com), or name logs\n");
        return 0;
    }
    std::vector<Row> rows;
    for (const std::string& path : files) {
        try {
            for (const FitGroup& g : FitGroupsFromLog(ReadNcclTestsLogFile(path), LogHalf::OutOfPlace)) {
                Row r;
                r.name = fs::path(path).filename().string();
                r.cluster = path.find("nccl-clusters") != std::string::npos;
                if (r.cluster) r.name = fs::path(path).parent_path().filename().string() + "/" + r.name;
                r.seconds = BestSeconds(3, [&] { r.fit = FitAlphaBeta(g); });
                r.protocols = FitProtocols(g.samples);
                AlternateSizes(g, r);
                rows.push_back(std::move(r));
            }
        } catch (const paralens::Error& e) {
            std::printf("%s: %s\n", path.c_str(), e.what());
        }
    }
    std::printf("\n%-40s %-17s %5s %9s %8s %9s %9s %8s %8s %7s %6s %9s %9s %9s %9s\n", "log", "collective", "rows", "one line", "regimes", "MAPE",
                "held out", "noise", "allowed", "fit ms", "lines", "MAPE", "held out", "alt: reg.", "protocols");
    for (const Row& r : rows)
        std::printf("%-40s %-17s %5zu %8.1f%% %8zu %8.1f%% %8.1f%% %7.1f%% %7.1f%% %7.1f %6zu %8.1f%% %8.1f%% %8.1f%% %8.1f%%\n", r.name.c_str(),
                    (std::string(Name(r.fit.collective)) + " x" + std::to_string(r.fit.ranks)).c_str(), r.fit.rows.size(), r.fit.mapePct,
                    r.fit.segments.size(), r.fit.segmentedMapePct, r.fit.heldOutMapePct, r.fit.noisePct,
                    std::max(15.0, 1.5 * r.fit.noisePct), r.seconds * 1e3, r.protocols.lines.size(), r.protocols.fitMapePct,
                    r.protocols.heldOutMapePct, r.altRegimesPct, r.altProtocolsPct);
    PrintSummary(rows);
    return 0;
}
