#include "analysis/CollectiveMatch.hpp"

#include "trace/NcclKernelName.hpp"
#include "trace/TraceMerge.hpp"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace paralens::core {

std::vector<CollectiveSpan> CollectiveSpans(const Trace& trace)
{
    std::vector<CollectiveSpan> out;
    for (uint32_t d = 0; d < trace.Devices().size(); ++d) {
        const Device& dev = trace.Devices()[d];
        if (dev.kind == DeviceKind::Cpu) continue;
        size_t first = out.size();
        for (uint32_t t : dev.tracks) {
            for (const Span& s : trace.Tracks()[t].spans) {
                if (s.category != SpanCategory::Collective) continue;
                CollectiveSpan c{d, t, &s, {}};
                if (auto tag = ParseCollectiveTag(trace.Str(s.detail))) {
                    c.tag = std::move(*tag);
                } else {
                    auto known = CollectiveFromName(trace.Str(s.name));
                    c.tag.collective = known ? std::string(Name(*known)) : std::string(trace.Str(s.name));
                }
                out.push_back(std::move(c));
            }
        }
        std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                         [](const CollectiveSpan& a, const CollectiveSpan& b) { return a.span->startNs < b.span->startNs; });
    }
    return out;
}

namespace {

using Sequence = std::vector<const CollectiveSpan*>;

// What the matching compares of a span, with its collective as a number (comparing names in
// the LCS's inner loop cost more than the rest of it).
struct OpKey {
    uint32_t op = 0;
    bool sizesDiffer = false; // alltoall and send/recv move different sizes per rank
    uint64_t bytes = 0;
    int64_t endNs = 0, durationNs = 0;
};

std::vector<OpKey> Keys(const Sequence& seq, std::unordered_map<std::string_view, uint32_t>& ids)
{
    std::vector<OpKey> out;
    out.reserve(seq.size());
    for (const CollectiveSpan* c : seq) {
        const std::string_view name = c->tag.collective;
        const uint32_t op = ids.emplace(name, static_cast<uint32_t>(ids.size())).first->second;
        out.push_back({op, name == "alltoall" || name == "sendrecv", c->span->bytes, c->span->endNs, c->span->DurationNs()});
    }
    return out;
}

bool SameOperation(const OpKey& a, const OpKey& b)
{
    if (a.op != b.op) return false;
    return a.sizesDiffer || a.bytes == 0 || b.bytes == 0 || a.bytes == b.bytes;
}

// Which pairs may match: the same operation and, once a clock offset between the two devices is
// known, ends that agree after it (ranks leave a collective together) within 10 % of the
// shorter span or 100 us.
struct PairRule {
    bool useTime = false;
    int64_t offsetNs = 0; // other's end - ref's end, typically

    bool Allows(const OpKey& r, const OpKey& o) const
    {
        if (!SameOperation(r, o)) return false;
        if (!useTime) return true;
        int64_t tolerance = std::max<int64_t>(100'000, std::min(r.durationNs, o.durationNs) / 10);
        int64_t diff = (o.endNs - r.endNs) - offsetNs;
        return diff <= tolerance && diff >= -tolerance;
    }
};

// Index pairs (i in ref, j in other) of a longest common subsequence under `rule`; in-order
// matching when the table would be too large.
std::vector<std::pair<size_t, size_t>> Align(const std::vector<OpKey>& ref, const std::vector<OpKey>& other, const PairRule& rule)
{
    std::vector<std::pair<size_t, size_t>> pairs;
    const size_t n = ref.size(), m = other.size();
    if (n * m > (size_t{1} << 24)) {
        size_t j = 0;
        for (size_t i = 0; i < n && j < m; ++i) {
            size_t k = j;
            while (k < m && k < j + 64 && !rule.Allows(ref[i], other[k])) ++k;
            if (k < m && rule.Allows(ref[i], other[k])) {
                pairs.emplace_back(i, k);
                j = k + 1;
            }
        }
        return pairs;
    }
    std::vector<uint32_t> len((n + 1) * (m + 1), 0); // len[i][j]: LCS of ref[i..], other[j..]
    auto at = [&](size_t i, size_t j) -> uint32_t& { return len[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            at(i, j) = rule.Allows(ref[i], other[j]) ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    for (size_t i = 0, j = 0; i < n && j < m;) {
        if (rule.Allows(ref[i], other[j]) && at(i, j) == at(i + 1, j + 1) + 1) {
            pairs.emplace_back(i, j);
            ++i;
            ++j;
        } else if (at(i + 1, j) >= at(i, j + 1)) {
            ++i;
        } else {
            ++j;
        }
    }
    return pairs;
}

int64_t Median(std::vector<int64_t> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

// Two passes: the operations in order (LCS) give the median end offset between the devices; a
// second LCS then keeps only pairs whose ends agree after it, which drops the wrong pairs an
// in-order match makes when one side misses collectives (sampled traces).
std::vector<std::pair<size_t, size_t>> AlignTwoPass(const std::vector<OpKey>& ref, const std::vector<OpKey>& other)
{
    auto first = Align(ref, other, {});
    if (first.empty()) return first;
    std::vector<int64_t> diffs;
    for (auto [i, j] : first) diffs.push_back(other[j].endNs - ref[i].endNs);
    return Align(ref, other, {true, Median(diffs)});
}

CollectiveInstance MakeInstance(const std::vector<const CollectiveSpan*>& members, int64_t seq)
{
    CollectiveInstance inst;
    const CollectiveSpan& first = *members.front();
    inst.collective = first.tag.collective;
    inst.group = first.tag.group;
    inst.seq = seq;
    inst.firstStartNs = inst.firstEndNs = std::numeric_limits<int64_t>::max();
    inst.lastStartNs = inst.lastEndNs = std::numeric_limits<int64_t>::min();
    for (const CollectiveSpan* m : members) {
        inst.participants.push_back({m->device, m->span->startNs, m->span->endNs});
        inst.bytes = std::max(inst.bytes, m->span->bytes);
        inst.ranks = std::max(inst.ranks, m->tag.ranks);
        inst.firstStartNs = std::min(inst.firstStartNs, m->span->startNs);
        inst.firstEndNs = std::min(inst.firstEndNs, m->span->endNs);
        inst.lastEndNs = std::max(inst.lastEndNs, m->span->endNs);
        if (m->span->startNs > inst.lastStartNs) {
            inst.lastStartNs = m->span->startNs;
            inst.slowestDevice = m->device;
        }
    }
    std::sort(inst.participants.begin(), inst.participants.end(),
              [](const auto& a, const auto& b) { return a.device < b.device; });
    return inst;
}

void MatchBySeq(const std::vector<CollectiveSpan>& spans, std::vector<CollectiveInstance>& out)
{
    std::map<std::tuple<std::string, std::string, int64_t>, std::vector<const CollectiveSpan*>> byKey;
    for (const CollectiveSpan& s : spans) byKey[{s.tag.group, s.tag.collective, s.tag.seq}].push_back(&s);
    for (auto& [key, members] : byKey) {
        std::map<uint32_t, const CollectiveSpan*> one; // one span per device (the first)
        for (const CollectiveSpan* m : members) one.emplace(m->device, m);
        if (one.size() < 2) continue;
        std::vector<const CollectiveSpan*> unique;
        for (auto& [d, m] : one) unique.push_back(m);
        out.push_back(MakeInstance(unique, std::get<2>(key)));
    }
}

void MatchInOrder(const std::vector<CollectiveSpan>& spans, std::vector<CollectiveInstance>& out)
{
    std::map<std::string, std::map<uint32_t, Sequence>> groups; // group -> device -> sequence
    for (const CollectiveSpan& s : spans) groups[s.tag.group][s.device].push_back(&s);
    for (auto& [group, devices] : groups) {
        if (devices.size() < 2) continue;
        auto ref = devices.begin();
        for (auto it = devices.begin(); it != devices.end(); ++it)
            if (it->second.size() > ref->second.size()) ref = it;
        std::vector<std::vector<const CollectiveSpan*>> members(ref->second.size());
        for (size_t i = 0; i < ref->second.size(); ++i) members[i].push_back(ref->second[i]);
        std::unordered_map<std::string_view, uint32_t> ids;
        const std::vector<OpKey> refKeys = Keys(ref->second, ids);
        for (auto it = devices.begin(); it != devices.end(); ++it) {
            if (it == ref) continue;
            for (auto [i, j] : AlignTwoPass(refKeys, Keys(it->second, ids))) members[i].push_back(it->second[j]);
        }
        for (size_t i = 0; i < members.size(); ++i)
            if (members[i].size() >= 2) out.push_back(MakeInstance(members[i], static_cast<int64_t>(i)));
    }
}

} // namespace

std::vector<CollectiveInstance> MatchCollectives(const Trace& trace)
{
    std::vector<CollectiveSpan> spans = CollectiveSpans(trace);
    std::vector<CollectiveInstance> out;
    if (spans.empty()) return out;
    bool allSeq = std::all_of(spans.begin(), spans.end(), [](const CollectiveSpan& s) { return s.tag.seq >= 0; });
    if (allSeq) MatchBySeq(spans, out);
    else MatchInOrder(spans, out);
    std::sort(out.begin(), out.end(), [](const CollectiveInstance& a, const CollectiveInstance& b) {
        return a.firstStartNs != b.firstStartNs ? a.firstStartNs < b.firstStartNs : a.seq < b.seq;
    });
    return out;
}

ClockAlignment MeasureClockOffsets(const Trace& trace)
{
    ClockAlignment a;
    const auto devices = trace.Devices();
    int32_t ref = std::numeric_limits<int32_t>::max();
    for (const Device& d : devices)
        if (d.kind != DeviceKind::Cpu) ref = std::min(ref, d.rank);
    if (ref == std::numeric_limits<int32_t>::max()) ref = 0;
    a.referenceRank = ref;
    std::map<int32_t, std::vector<int64_t>> diffs;
    for (const CollectiveInstance& inst : MatchCollectives(trace)) {
        const CollectiveInstance::Participant* mine = nullptr;
        for (const auto& p : inst.participants)
            if (devices[p.device].rank == ref && !mine) mine = &p;
        if (!mine) continue;
        for (const auto& p : inst.participants) {
            int32_t r = devices[p.device].rank;
            if (r != ref) diffs[r].push_back(p.endNs - mine->endNs);
        }
    }
    for (const Device& d : devices) a.offsetNs.emplace(d.rank, 0);
    for (auto& [rank, v] : diffs) {
        a.offsetNs[rank] = Median(v);
        a.matches[rank] = v.size();
    }
    for (const Device& d : devices) a.deviceShiftNs.push_back(-a.offsetNs[d.rank]);
    return a;
}

Trace AlignRankClocks(const Trace& trace, ClockAlignment* alignment)
{
    ClockAlignment a = MeasureClockOffsets(trace);
    Metadata meta = trace.Meta();
    for (const auto& [rank, offset] : a.offsetNs)
        if (rank != a.referenceRank) meta.extra.Set("clockOffsetNs.rank" + std::to_string(rank), offset);
    meta.extra.Set("clockReferenceRank", int64_t{a.referenceRank});
    Trace shifted = ShiftDeviceClocks(trace, a.deviceShiftNs, &meta);
    if (alignment) *alignment = std::move(a);
    return shifted;
}

} // namespace paralens::core
