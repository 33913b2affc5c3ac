#include "sim/ClusterModel.hpp"

#include "common/Error.hpp"

#include <cmath>
#include <cstdio>

namespace paralens::core {

ClusterModel ClusterModel::FromUnits(double alphaUs, double bandwidthGBps, double gammaGBps)
{
    Require(std::isfinite(alphaUs) && alphaUs >= 0, "--alpha-us must be a number >= 0");
    Require(std::isfinite(bandwidthGBps) && bandwidthGBps > 0, "--bandwidth-GBps must be a number > 0");
    Require(std::isfinite(gammaGBps) && gammaGBps >= 0, "--gamma-GBps must be a number >= 0 (0: free reductions)");
    ClusterModel m;
    m.alphaSec = alphaUs * 1e-6;
    m.betaSecPerByte = 1.0 / (bandwidthGBps * 1e9);
    m.gammaSecPerByte = gammaGBps > 0 ? 1.0 / (gammaGBps * 1e9) : 0.0;
    return m;
}

std::string ClusterModel::StragglersText() const
{
    std::string out;
    for (const Straggler& s : stragglers) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%srank %d x%g", out.empty() ? "" : ", ", s.rank, s.slowdown);
        out += buf;
    }
    return out;
}

} // namespace paralens::core
