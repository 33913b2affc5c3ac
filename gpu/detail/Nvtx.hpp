// NVTX ranges around every op of paralens, in the "paralens" domain, named by the op's label
// (profiler/OpLabel.hpp): Nsight Systems shows them, and a CUPTI capture attributes each kernel
// and copy launched inside to its op. Header-only NVTX v3 (no library to link; inert unless a
// tool injects itself). Thread-safety: a range is pushed and popped on one thread.
#pragma once

#include "profiler/OpLabel.hpp"

#include <nvtx3/nvToolsExt.h>

#include <string>

namespace paralens::gpu::detail {

inline nvtxDomainHandle_t NvtxDomain()
{
    static nvtxDomainHandle_t domain = nvtxDomainCreateA(prof::kNvtxDomain);
    return domain;
}

class NvtxRange {
public:
    explicit NvtxRange(const std::string& text)
    {
        nvtxEventAttributes_t a{};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = text.c_str();
        nvtxDomainRangePushEx(NvtxDomain(), &a);
    }
    ~NvtxRange() { nvtxDomainRangePop(NvtxDomain()); }
    NvtxRange(const NvtxRange&) = delete;
    NvtxRange& operator=(const NvtxRange&) = delete;
};

} // namespace paralens::gpu::detail
