#include "analysis/Fitting.hpp"

#include "model/RegimeFit.hpp"

#include "analysis/CollectiveMatch.hpp"
#include "common/Error.hpp"
#include "trace/FileIO.hpp"
#include "trace/NcclKernelName.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

namespace paralens::core {

namespace {

// The requested algorithm, else NCCL's, else ring (NCCL's default, and the traffic nccl-tests'
// busbw assumes), else the collective's first (pairwise, direct).
Algorithm ModelAlgorithm(Collective c, std::optional<Algorithm> wanted, std::string_view ncclAlgorithm)
{
    if (wanted && Supports(c, *wanted)) return *wanted;
    if (auto a = AlgorithmFromNcclName(ncclAlgorithm); a && Supports(c, *a)) return *a;
    if (Supports(c, Algorithm::Ring)) return Algorithm::Ring;
    return AlgorithmsFor(c).front();
}

std::string FileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The measurements' own disagreement: over the sizes measured more than once, twice the mean
// absolute deviation of their times from their mean, over that mean (for two measurements
// |a - b| / ((a + b) / 2), RelativeNoise's).
double SizeNoise(const std::vector<FitSample>& samples)
{
    std::map<uint64_t, std::vector<double>> bySize;
    for (const FitSample& s : samples) bySize[s.bytes].push_back(s.seconds);
    double total = 0;
    int sizes = 0;
    for (const auto& [bytes, times] : bySize) {
        if (times.size() < 2) continue;
        double mean = 0, deviation = 0;
        for (double t : times) mean += t / static_cast<double>(times.size());
        for (double t : times) deviation += std::fabs(t - mean) / static_cast<double>(times.size());
        if (!(mean > 0)) continue;
        total += 2 * deviation / mean;
        ++sizes;
    }
    return sizes ? total / sizes : 0;
}

} // namespace

std::vector<FitGroup> FitGroupsFromLog(const NcclTestsLog& log, LogHalf half, std::optional<Algorithm> algorithm)
{
    std::vector<FitGroup> groups;
    for (const NcclTestsBlock& b : log.blocks) {
        auto c = ParseCollective(b.collective);
        if (!c) continue;
        FitGroup g;
        g.collective = *c;
        g.ranks = std::max(b.ranks, 1);
        g.algorithm = ModelAlgorithm(*c, algorithm, "");
        g.dtype = b.rows.front().type;
        g.label = half == LogHalf::OutOfPlace ? "out-of-place" : half == LogHalf::InPlace ? "in-place" : "both halves";
        g.source = FileName(log.origin);
        std::vector<std::pair<double, double>> halves; // the log's own noise: its two halves' disagreement
        for (const NcclTestsRow& r : b.rows) {
            if (half != LogHalf::InPlace && r.outOfPlace.present)
                g.samples.push_back({r.bytes, r.outOfPlace.timeUs * 1e-6, r.line});
            if (half != LogHalf::OutOfPlace && r.inPlace.present)
                g.samples.push_back({r.bytes, r.inPlace.timeUs * 1e-6, r.line});
            if (r.outOfPlace.present && r.inPlace.present) halves.push_back({r.outOfPlace.timeUs, r.inPlace.timeUs});
        }
        g.noise = RelativeNoise(halves);
        std::set<std::string> hosts;
        for (const NcclTestsDevice& d : b.devices)
            if (!d.host.empty()) hosts.insert(d.host);
        g.nodes = static_cast<int>(hosts.size());
        if (!g.samples.empty()) groups.push_back(std::move(g));
    }
    return groups;
}

std::vector<FitGroup> FitGroupsFromTrace(const Trace& trace, const std::string& source, std::optional<Algorithm> algorithm)
{
    using Key = std::tuple<Collective, int, Algorithm>;
    std::map<Key, FitGroup> byKey;
    auto add = [&](const std::string& name, int ranks, std::string_view ncclAlgo, const std::string& dtype,
                   uint64_t bytes, int64_t ns, const char* label) {
        auto c = ParseCollective(name);
        if (!c || bytes == 0 || ns <= 0) return;
        Algorithm a = ModelAlgorithm(*c, algorithm, ncclAlgo);
        FitGroup& g = byKey[{*c, std::max(ranks, 1), a}];
        g.collective = *c;
        g.ranks = std::max(ranks, 1);
        g.algorithm = a;
        g.dtype = dtype;
        g.label = label;
        g.source = FileName(source);
        g.samples.push_back({bytes, static_cast<double>(ns) * 1e-9, 0});
    };
    std::vector<CollectiveSpan> spans = CollectiveSpans(trace);
    std::vector<CollectiveInstance> matched = MatchCollectives(trace);
    const int fallbackRanks = std::max(1, static_cast<int>(trace.Meta().workload.GetNumber("worldSize", 0)));
    if (!matched.empty()) {
        std::map<std::string, std::pair<std::string, std::string>> algoOf; // collective -> NCCL algorithm, dtype
        for (const CollectiveSpan& s : spans) algoOf.emplace(s.tag.collective, std::make_pair(s.tag.algorithm, s.tag.dtype));
        for (const CollectiveInstance& m : matched) {
            const auto& [ncclAlgo, dtype] = algoOf[m.collective];
            add(m.collective, m.ranks > 0 ? m.ranks : fallbackRanks, ncclAlgo, dtype, m.bytes, m.TransferNs(),
                "matched collectives (last arrival to end)");
        }
    } else {
        for (const CollectiveSpan& s : spans)
            add(s.tag.collective, s.tag.ranks > 0 ? s.tag.ranks : fallbackRanks, s.tag.algorithm, s.tag.dtype,
                s.span->bytes, s.span->DurationNs(), "collective spans");
    }
    std::vector<FitGroup> groups;
    for (auto& [key, g] : byKey) {
        g.noise = SizeNoise(g.samples);
        groups.push_back(std::move(g));
    }
    return groups;
}

void SaveFitFile(const FitFile& file, const std::string& path) { WriteFileAtomic(path, FitFileToJson(file)); }

FitFile FitFileOfGroups(const std::vector<FitGroup>& groups, const std::string& origin)
{
    if (groups.empty()) throw Error(origin + ": no collective with a known name, a size and a time to fit");
    FitFile file;
    file.sources.push_back(origin);
    for (const FitGroup& g : groups) file.fits.push_back(FitAlphaBeta(g));
    file.joint = FitJoint(groups);
    return file;
}

FitFile LoadFitFile(const std::string& path)
{
    std::string text = ReadFileDecompressed(path);
    if (LooksLikeNcclTestsLog(text)) return FitFileOfGroups(FitGroupsFromLog(ReadNcclTestsLog(text, path), LogHalf::OutOfPlace), path);
    return ParseFitFile(text, path);
}

} // namespace paralens::core
