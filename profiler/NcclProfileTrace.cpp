#include "NcclProfileTrace.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <unordered_map>

namespace paralens::prof {

std::string NcclFuncName(const std::string& func)
{
    if (func == "ReduceScatter") return "reduce-scatter";
    std::string out = func;
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

namespace {

core::SpanCategory CategoryOfFunc(const std::string& func)
{
    if (func == "Send") return core::SpanCategory::Send;
    if (func == "Recv") return core::SpanCategory::Recv;
    return core::SpanCategory::Collective;
}

int64_t FirstState(const NcclEventRecord& e, std::initializer_list<int32_t> states, int64_t fallback)
{
    for (const NcclStateChange& s : e.states)
        if (std::find(states.begin(), states.end(), s.state) != states.end()) return s.timeNs;
    return fallback;
}

// The states of NCCL's profiler API (nccl_plugin/NcclProfilerApi.hpp) that the conversion reads.
constexpr int32_t kSendWait = 9, kRecvFlushWait = 11, kRecvGpuWait = 12;

struct StepKey {
    int32_t from, to, channel, step;
    auto Tie() const { return std::tie(from, to, channel, step); }
    bool operator<(const StepKey& o) const { return Tie() < o.Tie(); }
};

struct StepEnd {
    int64_t timeNs;
    std::string track;
    uint64_t bytes;
};

class Converter {
public:
    explicit Converter(NcclTraceParts& out) : m_out(out) {}

    void Add(const NcclProfile& p)
    {
        m_out.droppedEvents += p.droppedEvents;
        std::unordered_map<uint64_t, const NcclEventRecord*> byId;
        for (const NcclEventRecord& e : p.events) byId[e.id] = &e;
        auto parentOf = [&](const NcclEventRecord& e) -> const NcclEventRecord* {
            auto it = byId.find(e.parentId);
            return it == byId.end() ? nullptr : it->second;
        };
        for (const NcclEventRecord& e : p.events) {
            if (e.stopNs == 0 || e.stopNs < e.startNs) {
                ++m_out.unfinished;
                continue;
            }
            const int32_t rank = e.rank >= 0 ? e.rank : p.rank;
            switch (e.type) {
            case NcclEventType::Coll:
            case NcclEventType::P2p: AddOp(e, rank); break;
            case NcclEventType::KernelCh: AddKernelChannel(e, rank, parentOf(e), p.realtimeMinusMonotonicNs); break;
            case NcclEventType::ProxyOp: AddProxyOp(e, rank); break;
            case NcclEventType::ProxyStep: AddProxyStep(e, rank, parentOf(e)); break;
            default: break; // groups, API events, proxy control: not drawn
            }
        }
    }

    void MatchFlows()
    {
        for (const auto& [key, send] : m_sends) {
            auto it = m_recvs.find(key);
            if (it == m_recvs.end()) continue;
            NcclFlow f;
            f.srcRank = key.from;
            f.dstRank = key.to;
            f.srcTrack = send.track;
            f.dstTrack = it->second.track;
            f.srcNs = send.timeNs;
            f.dstNs = std::max(it->second.timeNs, send.timeNs);
            f.bytes = std::max(send.bytes, it->second.bytes);
            f.step = key.step;
            f.chunk = key.channel;
            m_out.flows.push_back(std::move(f));
        }
    }

private:
    void AddOp(const NcclEventRecord& e, int32_t rank)
    {
        NcclSpan s = Base(e, rank, "NCCL ops");
        s.name = NcclFuncName(e.func);
        s.category = CategoryOfFunc(e.func);
        s.bytes = e.count * NcclDatatypeBytes(e.datatype);
        std::string detail;
        for (const std::string* part : {&e.algo, &e.proto, &e.datatype})
            if (!part->empty()) detail += (detail.empty() ? "" : " ") + *part;
        if (e.peer >= 0) detail += (detail.empty() ? "" : " ") + std::string("peer ") + std::to_string(e.peer);
        detail += (detail.empty() ? "" : " ") + std::string("count ") + std::to_string(e.count);
        if (e.nChannels) detail += ", " + std::to_string(e.nChannels) + " channels";
        s.detail = detail;
        if (e.seqNumber) s.step = static_cast<int32_t>(e.seqNumber);
        m_out.spans.push_back(std::move(s));
    }

    void AddKernelChannel(const NcclEventRecord& e, int32_t rank, const NcclEventRecord* parent, int64_t realtimeOffset)
    {
        NcclSpan s = Base(e, rank, "NCCL ch " + std::to_string(e.channel));
        if (e.gpuStartNs && e.gpuStopNs && e.gpuStopNs >= e.gpuStartNs) {
            s.startNs = static_cast<int64_t>(e.gpuStartNs) - realtimeOffset;
            s.endNs = static_cast<int64_t>(e.gpuStopNs) - realtimeOffset;
            s.detail = "GPU globaltimer";
        } else {
            s.detail = "host time (no GPU timestamps from this NCCL)";
        }
        s.name = parent ? NcclFuncName(parent->func) + " ch " + std::to_string(e.channel) : "kernel ch " + std::to_string(e.channel);
        s.category = parent ? CategoryOfFunc(parent->func) : core::SpanCategory::Collective;
        s.chunk = e.channel;
        m_out.spans.push_back(std::move(s));
    }

    void AddProxyOp(const NcclEventRecord& e, int32_t rank)
    {
        NcclSpan s = Base(e, rank, "NCCL proxy ch " + std::to_string(e.channel));
        const bool send = e.isSend == 1;
        s.name = (send ? "send to " : "recv from ") + std::to_string(e.peer);
        s.category = send ? core::SpanCategory::Send : core::SpanCategory::Recv;
        s.detail = std::to_string(e.nSteps) + " steps of " + std::to_string(e.chunkSize) + " B";
        s.chunk = e.channel;
        m_out.spans.push_back(std::move(s));
    }

    void AddProxyStep(const NcclEventRecord& e, int32_t rank, const NcclEventRecord* op)
    {
        if (!op || op->type != NcclEventType::ProxyOp) return; // a step without its op cannot be placed
        NcclSpan s = Base(e, rank, "NCCL proxy ch " + std::to_string(op->channel));
        const bool send = op->isSend == 1;
        s.name = (send ? "send step " : "recv step ") + std::to_string(e.step);
        s.category = send ? core::SpanCategory::Send : core::SpanCategory::Recv;
        s.bytes = e.transSize;
        s.step = e.step;
        s.chunk = op->channel;
        if (send)
            m_sends[{rank, op->peer, op->channel, e.step}] = {FirstState(e, {kSendWait}, e.startNs), s.track, e.transSize};
        else
            m_recvs[{op->peer, rank, op->channel, e.step}] = {FirstState(e, {kRecvFlushWait, kRecvGpuWait}, e.stopNs), s.track,
                                                              e.transSize};
        m_out.spans.push_back(std::move(s));
    }

    static NcclSpan Base(const NcclEventRecord& e, int32_t rank, std::string track)
    {
        NcclSpan s;
        s.rank = rank;
        s.track = std::move(track);
        s.startNs = e.startNs;
        s.endNs = e.stopNs;
        return s;
    }

    NcclTraceParts& m_out;
    std::map<StepKey, StepEnd> m_sends, m_recvs;
};

} // namespace

NcclTraceParts ConvertNcclProfiles(const std::vector<NcclProfile>& profiles)
{
    NcclTraceParts out;
    Converter c(out);
    for (const NcclProfile& p : profiles) c.Add(p);
    c.MatchFlows();
    return out;
}

} // namespace paralens::prof
