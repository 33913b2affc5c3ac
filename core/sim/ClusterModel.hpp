// The modelled cluster of the lectures: single-port, full-duplex ranks; a message of m bytes
// costs alpha + m * beta, and the receiver of a reducing message adds m * gamma. Optionally two
// levels: nodes of GPUs whose messages between nodes cost the network's alpha and beta.
// Units: seconds and seconds per byte (beta = 1 / bandwidth).
#pragma once

#include <string>
#include <vector>

namespace paralens::core {

struct LinkOverride {
    int src = 0;
    int dst = 0;                 // directional: src -> dst
    double alphaSec = 0.0;
    double betaSecPerByte = 0.0;
};

struct Straggler {
    int rank = 0;
    double slowdown = 1.0;       // every operation of the rank takes this many times longer
};

struct ClusterModel {
    double alphaSec = 5e-6;
    double betaSecPerByte = 1e-11; // 100 GB/s
    double gammaSecPerByte = 0.0;  // no reduction cost unless asked
    std::vector<Straggler> stragglers;
    std::vector<LinkOverride> links;
    // A two-level cluster: a message between ranks on different nodes (CollectiveSpec::ranksPerNode
    // places them) costs these instead; 0: one level, every link alike. Link overrides still win.
    double netAlphaSec = 0.0;
    double netBetaSecPerByte = 0.0;

    bool TwoLevel() const { return netBetaSecPerByte > 0; }
    // Whether a message from src to dst takes the network: two levels, and the ranks on different
    // nodes of ranksPerNode consecutive ranks (0: one node). Link overrides are the caller's.
    bool BetweenNodes(int src, int dst, int ranksPerNode) const
    {
        return TwoLevel() && ranksPerNode > 0 && src / ranksPerNode != dst / ranksPerNode;
    }

    // From the CLI's units: alpha in microseconds, bandwidths in GB/s (1e9 bytes/s); a gamma
    // bandwidth of 0 means reductions are free.
    static ClusterModel FromUnits(double alphaUs, double bandwidthGBps, double gammaGBps);
    double BandwidthGBps() const { return betaSecPerByte > 0 ? 1e-9 / betaSecPerByte : 0.0; }
    double GammaGBps() const { return gammaSecPerByte > 0 ? 1e-9 / gammaSecPerByte : 0.0; }
    // "rank 3 x2, rank 5 x1.5" for metadata and tables; empty when there are none.
    std::string StragglersText() const;
};

} // namespace paralens::core
