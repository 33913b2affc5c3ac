// PipelineMemo (PlannerInternal.hpp): the pipeline makespans one search timed, by structure and
// op times, and the share tables of its splits.
#include "common/Parallel.hpp"
#include "planner/PlannerInternal.hpp"

#include <algorithm>

namespace paralens::core {

namespace {

using Request = PipelineMemo::Request;

PipelineMemo::Key KeyOf(const Request& q)
{
    return {q.structure, q.times.forward, q.times.backward, q.times.weight, q.times.send, q.times.share};
}

} // namespace

double PipelineMemo::Seconds(const PipelineStructure& s, const PipelineOpTimes& t)
{
    const Key key = KeyOf({&s, t});
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (auto it = m_seconds.find(key); it != m_seconds.end()) return it->second;
    }
    const double seconds = PipelineSeconds(s, t);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_seconds.emplace(key, seconds);
    return seconds;
}

void PipelineMemo::Prefill(std::vector<Request> wanted)
{
    std::sort(wanted.begin(), wanted.end(), [](const Request& a, const Request& b) { return KeyOf(a) < KeyOf(b); });
    wanted.erase(std::unique(wanted.begin(), wanted.end(), [](const Request& a, const Request& b) { return KeyOf(a) == KeyOf(b); }),
                 wanted.end());
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        std::erase_if(wanted, [&](const Request& q) { return m_seconds.count(KeyOf(q)) > 0; });
    }
    // One pass per structure (the sort put each structure's requests together), structures on
    // every core.
    std::vector<size_t> firsts;
    for (size_t i = 0; i < wanted.size(); ++i)
        if (i == 0 || wanted[i].structure != wanted[i - 1].structure) firsts.push_back(i);
    firsts.push_back(wanted.size());
    std::vector<double> seconds(wanted.size());
    ParallelFor(firsts.size() - 1, 1, [&](size_t g) {
        std::vector<PipelineOpTimes> times;
        for (size_t i = firsts[g]; i < firsts[g + 1]; ++i) times.push_back(wanted[i].times);
        PipelineSecondsBatch(*wanted[firsts[g]].structure, times, seconds.data() + firsts[g]);
    });
    std::lock_guard<std::mutex> lock(m_mutex);
    for (size_t i = 0; i < wanted.size(); ++i) m_seconds.emplace(KeyOf(wanted[i]), seconds[i]);
}

const std::vector<double>* PipelineMemo::Shares(const PlanRequest& r, const TrainingConfig& c)
{
    const SplitKey key{c.pp, c.chunks, c.firstStageLayers, c.lastStageLayers, c.layout.get()};
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (auto it = m_shares.find(key); it != m_shares.end()) return &it->second;
    }
    std::vector<double> shares = OpShares(r, c);
    std::lock_guard<std::mutex> lock(m_mutex);
    return &m_shares.emplace(key, std::move(shares)).first->second; // a twin computed meanwhile: that one
}

} // namespace paralens::core
