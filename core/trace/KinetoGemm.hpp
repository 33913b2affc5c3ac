// GEMM kernels of a Kineto trace given their FLOPs: the matmul op that launched each one (aten::mm,
// addmm, bmm, baddbmm, _scaled_mm, with "Input Dims" as record_shapes=True writes them) read as
// M x K x N, found through the launch's correlation id and the innermost such op enclosing the
// launch on its thread, as KinetoCollectives finds an NCCL kernel's op. The kernel's Span::flops
// become 2 M N K (x batch), split evenly over the GEMM kernels one op launches, and its detail
// "gemm MxNxK DTYPE" (DTYPE the spec table's key: bf16, fp16, fp32, tf32 when the kernel says so,
// fp8). Internal to the Kineto reader; not thread-safe (one per read).
#pragma once

#include "trace/ChromeAssembly.hpp"
#include "trace/KinetoSupport.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::core {

// A cuBLAS / CUTLASS / cuBLASLt GEMM kernel by its name ("sm90_xmma_gemm_...", "nvjet_tst_...",
// "cutlass_80_tensorop_s1688gemm_...", "ampere_sgemm_..."); attention kernels are not.
bool IsGemmKernelName(std::string_view name);

// The matmul ops whose shapes give FLOPs.
bool IsMatmulOpName(std::string_view name);

class KinetoGemms {
public:
    // `threads`: the collectives' thread ids, so that launches are found on the same threads.
    explicit KinetoGemms(KinetoCollectives& threads) : m_threads(threads) {}
    void OnKernel(const ChromeEvent& e, size_t track, size_t span);
    void OnMatmulOp(const ChromeEvent& e);
    // After KinetoCollectives::Resolve (its launches sorted): sets flops and detail of each GEMM
    // kernel whose op is found. Returns how many got FLOPs.
    size_t Resolve(std::vector<PendingTrack>& tracks, TraceBuilder& builder);
    size_t KernelCount() const { return m_kernels.size(); }

private:
    struct Kernel {
        size_t track = 0, span = 0;
        int64_t correlation = -1;
        bool tf32 = false; // the kernel's name says TF32 tensor cores
    };
    struct Op {
        uint32_t thread = 0;
        int64_t startNs = 0, endNs = 0;
        double flops = 0;
        std::string shape, dtype; // "8192x4096x4096", "bf16"
        int kernels = 0;          // GEMM kernels it launched (filled while resolving)
    };
    Op* Innermost(uint32_t thread, int64_t tsNs);

    KinetoCollectives& m_threads;
    std::vector<Kernel> m_kernels;
    std::vector<Op> m_ops;
};

} // namespace paralens::core
