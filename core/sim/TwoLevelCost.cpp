#include "sim/TwoLevelCost.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace paralens::core {

LinkCost LinkBetween(const ClusterModel& c, const CollectiveSpec& spec, int src, int dst)
{
    LinkCost l{c.alphaSec, c.betaSecPerByte, false};
    if (c.BetweenNodes(src, dst, spec.ranksPerNode)) l = {c.netAlphaSec, c.netBetaSecPerByte, true};
    for (const LinkOverride& o : c.links)
        if (o.src == src && o.dst == dst) l = {o.alphaSec, o.betaSecPerByte, l.network};
    return l;
}

PlanPrice PricePlan(const Plan& plan, const ClusterModel& cluster)
{
    PlanPrice out;
    const size_t p = static_cast<size_t>(plan.spec.ranks);
    std::vector<double> send(p), recv(p);
    std::vector<char> sendNet(p), recvNet(p);
    for (const PlanStep& step : plan.steps) {
        std::fill(send.begin(), send.end(), 0.0);
        std::fill(recv.begin(), recv.end(), 0.0);
        std::fill(sendNet.begin(), sendNet.end(), 0);
        std::fill(recvNet.begin(), recvNet.end(), 0);
        for (const Transfer& t : plan.TransfersOf(step)) {
            if (t.src == t.dst) continue; // a local copy costs nothing
            const LinkCost l = LinkBetween(cluster, plan.spec, t.src, t.dst);
            const double m = static_cast<double>(t.bytes);
            const double cost = l.alphaSec + m * l.betaSecPerByte + (t.op == TransferOp::Reduce ? m * cluster.gammaSecPerByte : 0.0);
            send[static_cast<size_t>(t.src)] += cost;
            recv[static_cast<size_t>(t.dst)] += cost;
            sendNet[static_cast<size_t>(t.src)] |= l.network;
            recvNet[static_cast<size_t>(t.dst)] |= l.network;
        }
        double longest = 0;
        bool net = false;
        for (size_t r = 0; r < p; ++r) {
            if (send[r] > longest) longest = send[r], net = sendNet[r];
            if (recv[r] > longest) longest = recv[r], net = recvNet[r];
        }
        out.seconds += longest;
        (net ? out.netSeconds : out.intraSeconds) += longest;
        out.netSteps += net ? 1 : 0;
    }
    return out;
}

TwoLevelModel ModelOnTwoLevels(const CollectiveSpec& spec, const ClusterModel& cluster, const Plan* plan)
{
    TwoLevelModel m;
    const CostParams intra{cluster.alphaSec, cluster.betaSecPerByte, cluster.gammaSecPerByte};
    if (!cluster.TwoLevel() || spec.ranksPerNode <= 0) {
        const Prediction p = PredictSeconds(spec, intra);
        m.formula = true;
        m.exact = p.exact;
        m.seconds = m.intraSeconds = p.seconds;
        return m;
    }
    m.twoLevel = true;
    const TwoLevelPrediction f = PredictTwoLevel(spec, intra, {cluster.netAlphaSec, cluster.netBetaSecPerByte, 0});
    if (f.seconds > 0) {
        m.formula = true;
        m.exact = f.exact;
        m.seconds = f.seconds;
        m.intraSeconds = f.intraSeconds;
        m.netSeconds = f.netSeconds;
        return m;
    }
    const PlanPrice price = plan ? PricePlan(*plan, cluster) : PricePlan(BuildPlan(spec), cluster);
    m.seconds = price.seconds;
    m.intraSeconds = price.intraSeconds;
    m.netSeconds = price.netSeconds;
    return m;
}

} // namespace paralens::core
