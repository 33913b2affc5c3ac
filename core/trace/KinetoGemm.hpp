// GEMM and attention kernels of a Kineto trace given their FLOPs: the op that launched each one,
// found through the launch's correlation id and the innermost such op enclosing the launch on its
// thread (as KinetoCollectives finds an NCCL kernel's op), with "Input Dims" as record_shapes=True
// writes them:
// - matmuls (aten::mm, addmm, bmm, baddbmm, _scaled_mm) read as M x K x N: 2 M N K (x batch),
//   detail "gemm MxNxK DTYPE";
// - attention (aten::_scaled_dot_product_flash/efficient/cudnn_attention, _flash_attention_forward,
//   _efficient_attention_forward) read from Q [b, h, s, d] and K [b, hk, sk, d]: 4 b h s sk d, the
//   full square as Megatron-LM and the planner count it, twice that for their _backward ops,
//   detail "attention BxHxSxSKxD DTYPE".
// An op's FLOPs are split evenly over the kernels of its kind it launches. DTYPE is the spec
// table's key: bf16, fp16, fp32 (tf32 when the kernel says so), fp8.
// The other kernels (elementwise, norms, softmax, copies, reductions) are given the bytes their
// memory-bound op moves (Span::bytes, detail "memory OP"), from its tensors' "Input Dims" and
// "Input type" (MemoryOpBytes), split evenly over the kernels it launches. Internal to the Kineto
// reader; not thread-safe (one per read).
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

// Attention kernels (FlashAttention, cuDNN, CUTLASS fmha, PyTorch's efficient attention).
bool IsAttentionKernelName(std::string_view name);

// The matmul and attention ops whose shapes give FLOPs.
bool IsFlopsOpName(std::string_view name);

// The memory-bound ops whose tensors give the bytes they move: elementwise ops (every tensor
// input read, the output written at the largest input's size in the first one's type), copies
// (aten::copy_: the source read, the destination written; _to_copy, clone: the input read and
// written), fills (written), aten::cat (read and written), norms and softmax (the input read, the
// output written; their backward the gradient and the input read, the gradient written) and
// reductions (the input read).
bool IsMemoryOpName(std::string_view name);
// The bytes such an op moves from its "Input Dims" and "Input type" lists (JSON arrays); 0 when
// they do not say (no tensor, an unknown type).
double MemoryOpBytes(std::string_view name, std::string_view dims, std::string_view types);

class KinetoGemms {
public:
    // `threads`: the collectives' thread ids, so that launches are found on the same threads.
    explicit KinetoGemms(KinetoCollectives& threads) : m_threads(threads) {}
    // `name`: the kernel's name as the trace interned it (a name's kind is found once).
    void OnKernel(const ChromeEvent& e, size_t track, size_t span, StringId name);
    void OnFlopsOp(const ChromeEvent& e);
    void OnMemoryOp(const ChromeEvent& e);
    // After KinetoCollectives::Resolve (its launches sorted): sets flops and detail of each kernel
    // whose op is found.
    void Resolve(std::vector<PendingTrack>& tracks, TraceBuilder& builder);
    enum class Kind : uint8_t { Gemm, Attention, Memory };
    // Kernels of a kind seen, and of those how many got FLOPs (or bytes).
    size_t KernelCount(Kind kind) const;
    size_t Resolved(Kind kind) const;

private:
    struct Kernel {
        size_t track = 0, span = 0;
        int64_t correlation = -1;
        bool tf32 = false;      // the kernel's name says TF32 tensor cores
        Kind kind = Kind::Gemm;
    };
    struct Op {
        uint32_t thread = 0;
        int64_t startNs = 0, endNs = 0;
        double flops = 0, bytes = 0;
        std::string shape, dtype; // "8192x4096x4096", "bf16"; a memory op: its name
        Kind kind = Kind::Gemm;
        int kernels = 0;          // kernels of its kind it launched (filled while resolving)
    };
    Op* Innermost(uint32_t thread, int64_t tsNs);

    KinetoCollectives& m_threads;
    std::vector<Kernel> m_kernels;
    std::vector<uint8_t> m_nameClass; // by StringId: 0 not seen yet, else 1 + Kind, + 8 when tf32
    size_t m_resolved[3] = {0, 0, 0}; // by Kind
    std::vector<Op> m_ops;
};

} // namespace paralens::core
