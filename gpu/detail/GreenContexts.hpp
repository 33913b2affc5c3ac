// Green contexts (CUDA 12.4+ driver API): a GPU's SMs split into disjoint partitions, one per
// virtual pipeline stage, so that stages sharing one GPU do not take each other's SMs. Reached
// through cudaGetDriverEntryPointByVersion, so paralens never links libcuda itself.
// Not thread-safe; RAII (destroys its green contexts).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

namespace paralens::gpu::detail {

class GreenContexts {
public:
    // `groups` partitions of `device`'s SMs. nullptr, with the reason in *whyNot, when the driver,
    // the toolkit or the GPU cannot make them.
    static std::unique_ptr<GreenContexts> Create(int device, int groups, std::string* whyNot);
    ~GreenContexts();
    GreenContexts(const GreenContexts&) = delete;
    GreenContexts& operator=(const GreenContexts&) = delete;

    // A new non-blocking stream whose kernels run on partition `group` (the caller owns it).
    cudaStream_t NewStream(int group);

    // Makes partition `group` the current context for a scope. CUDA requires an event and the
    // stream it is recorded on to share a context, so a green context's events, its cuBLAS
    // handle and every op issued on its streams are made inside this scope.
    class Scope {
    public:
        Scope(GreenContexts* green, int group);
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        GreenContexts* m_green;
    };
    int SmsPerGroup() const { return m_smsPerGroup; }
    int Groups() const { return static_cast<int>(m_contexts.size()); }

private:
    GreenContexts() = default;
    struct Driver;
    std::shared_ptr<Driver> m_driver;
    std::vector<void*> m_contexts; // CUgreenCtx
    int m_smsPerGroup = 0;
};

} // namespace paralens::gpu::detail
