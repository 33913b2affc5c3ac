// PARALENS_NCCL: the check for NCCL calls (see detail/Check.hpp). NCCL's last error message
// (ncclGetLastError) is added to NCCL's error string.
#pragma once

#include "gpu/detail/Check.hpp"

#include <nccl.h>

namespace paralens::gpu::detail {

inline void CheckNccl(ncclResult_t r, const char* expr, const char* file, int line)
{
    if (r != ncclSuccess && r != ncclInProgress) FailNccl(static_cast<int>(r), expr, file, line, ncclGetLastError(nullptr));
}

const char* NcclResultName(int r);

} // namespace paralens::gpu::detail

#define PARALENS_NCCL(expr) ::paralens::gpu::detail::CheckNccl((expr), #expr, __FILE__, __LINE__)
