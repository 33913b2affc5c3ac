// The one place that knows which CUDA runtime, NCCL and CUPTI versions paralens builds against and
// what differs between them. Included only by the .cpp/.cu files of gpu/ and profiler/ that talk to
// those libraries (never by core/ or app/ headers). Each section is active when its library's
// headers are on the include path of the file that includes this one.
#pragma once

#include <cstdint>

// ---- CUDA runtime ----
#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
// Green contexts (SM partitions for virtual pipeline stages): driver API since CUDA 12.4, stream
// creation in a green context since 12.5. Reached through cudaGetDriverEntryPointByVersion so
// that paralens never links libcuda (a machine without a driver must still start paralens).
#define PARALENS_HAS_GREEN_CONTEXTS (CUDART_VERSION >= 12050)
#define PARALENS_HAS_ENTRY_POINT_BY_VERSION (CUDART_VERSION >= 12050)
#endif

// ---- NCCL ----
#if __has_include(<nccl.h>)
#include <nccl.h>
#ifndef NCCL_VERSION
#define NCCL_VERSION(X, Y, Z) ((X) <= 2 && (Y) <= 8 ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
#endif
// ncclAlltoAll, ncclGather and ncclScatter are NCCL API calls since 2.28; before, they are
// grouped ncclSend/ncclRecv as nccl-tests writes them.
#define PARALENS_NCCL_HAS_ALLTOALL (NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0))
// ncclCommInitRankConfig with a non-blocking config and ncclCommGetAsyncError polling: 2.14+.
#define PARALENS_NCCL_HAS_NONBLOCKING (NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0))
// ncclBfloat16: 2.10+.
#define PARALENS_NCCL_HAS_BF16 (NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0))
#endif

// ---- CUPTI ----
#if __has_include(<cupti.h>)
#include <cupti.h>
namespace paralens::prof::compat {
// Activity records arrive in the newest layout of the CUPTI in use; paralens reads the layout of
// the CUPTI it was compiled against (the same library it links: libcupti.so.<major>).
#if CUPTI_API_VERSION >= 130000 // CUDA 13
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using SyncRecord = CUpti_ActivitySynchronization2;
#else // CUDA 12.x (not compiled here: paralens was developed against CUDA 13)
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using SyncRecord = CUpti_ActivitySynchronization;
#endif
using PeerCopyRecord = CUpti_ActivityMemcpyPtoP4;
using MemsetRecord = CUpti_ActivityMemset4;
using MarkerRecord = CUpti_ActivityMarker2;
using ApiRecord = CUpti_ActivityAPI;
} // namespace paralens::prof::compat
#endif
