// The GPU spec table (assets/hardware.json, compiled into the library): peak dense throughput per
// data type, memory and interconnect bandwidth, with the source of every figure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

struct GpuSpec {
    std::string id;   // "h100-sxm"
    std::string name; // "NVIDIA H100 SXM5 80GB"
    std::string arch;
    std::string computeCapability;
    std::vector<std::string> match; // substrings of device names that identify it
    double memoryGB = 0;      // as quoted ("80GB"), which is GiB (nvidia-smi: 81559 MiB on an H100 SXM5 80GB)
    double hbmGBps = 0;
    double nvlinkGBps = 0;    // bidirectional, as quoted
    double nvlinkUniGBps = 0; // one direction
    double pcieGBps = 0;      // one direction
    double sms = 0;           // streaming multiprocessors
    // Attention's rate against the GEMMs' at the same efficiency, end to end in training (the full
    // square's FLOPs, as Megatron counts them); 0: the same. `attentionSource` says where it comes from.
    double attentionVsGemm = 0;
    std::string attentionSource;
    std::vector<std::string> attentionFittedOn; // the published runs (tests/data/published-runs.csv ids) it was fitted on
    std::map<std::string, double, std::less<>> tflops; // dtype -> dense TFLOPS
    std::string source;
    // The matmul throughput measured at its best shape (Maximum Achievable Matmul FLOPS), dtype ->
    // TFLOPS, where a public measurement exists; `mamfSource` names it.
    std::map<std::string, double, std::less<>> mamfTflops;
    std::string mamfSource;

    // Peak dense FLOP/s for a dtype ("bf16", "fp16", "fp32", "tf32", "fp8", "fp64", "int8");
    // 0 when the GPU does not support it.
    double PeakFlops(std::string_view dtype) const;
    double MemoryBytes() const { return memoryGB * 1073741824.0; }
    double AttentionVsGemm() const { return attentionVsGemm > 0 ? attentionVsGemm : 1.0; }
    // The measured matmul ceiling as a fraction of the dtype's peak (fp16 takes bf16's: the same
    // tensor-core rate); 0 where not measured.
    double MatmulCeiling(std::string_view dtype) const;
};

// Parsed once, on first use; thread-safe.
const std::vector<GpuSpec>& HardwareTable();

// By id ("h100-sxm"), or by a device name as CUDA reports it ("NVIDIA H100 80GB HBM3"):
// the first entry one of whose `match` strings appears in the name (case-insensitive).
// nullptr when none matches.
const GpuSpec* FindGpu(std::string_view idOrName);

// "h100-sxm, h200, ..." for error messages.
std::string GpuIdsList();

} // namespace paralens::core
