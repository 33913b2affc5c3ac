// Model parallelism as Workloads: the lectures' Y = X.W1.W2 both ways (inter-op: W1 on device 0,
// W2 on device 1, a point-to-point message and idle devices; intra-op: W1 split by columns, W2 by
// rows, one allreduce and busy devices), and Megatron's tensor-parallel MLP (column-split then
// row-split GEMM, allreduce "g" in forward and "f" in backward) over D devices.
// Times come from FLOPs: seconds = FLOPs / (peak x efficiency).
#pragma once

#include "model/Collective.hpp"
#include "schedule/Workload.hpp"

namespace paralens::core {

struct DeviceSpeed {
    double peakFlops = 989e12; // per device (H100 SXM bf16, dense)
    double efficiency = 0.6;   // achieved fraction of peak in GEMMs
    int dtypeBytes = 2;
};

struct TwoMatmulSpec {
    int devices = 2;            // intra-op: any D >= 1; inter-op: 2 (one matrix per device)
    double tokens = 8192;       // rows of X
    double hidden = 8192;       // X is tokens x hidden; W1 and W2 are hidden x hidden
    int inputs = 1;             // inter-op: micro-batches pipelined through the two devices
    Algorithm algorithm = Algorithm::Ring; // intra-op allreduce
    DeviceSpeed speed;
};

Workload BuildInterOp(const TwoMatmulSpec& spec);
Workload BuildIntraOp(const TwoMatmulSpec& spec);

struct MegatronMlpSpec {
    int devices = 4;
    int layers = 2;
    double tokens = 8192;       // batch x sequence
    double hidden = 8192;
    double ffnMultiplier = 4;   // the MLP's inner width is ffnMultiplier x hidden
    bool backward = true;
    Algorithm algorithm = Algorithm::Ring;
    DeviceSpeed speed;
};

Workload BuildMegatronMlp(const MegatronMlpSpec& spec);

} // namespace paralens::core
