// cuBLAS, loaded at run time (dlopen of libcublas.so.<major> of the toolkit paralens was built
// with): linking it would add some 600 MB of libraries to every start of paralens, GUI and CLI
// alike, for the two workloads that use it. The functions are those of cublas_v2.h.
// Thread-safety: Api() loads once (thread-safe); a handle belongs to one thread at a time.
#pragma once

#include "gpu/detail/Check.hpp"

#include <cublas_v2.h>

#include <string>

namespace paralens::gpu::detail {

struct CublasApi {
    cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
    cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
    cublasStatus_t (*setStream)(cublasHandle_t, cudaStream_t) = nullptr;
    cublasStatus_t (*setMathMode)(cublasHandle_t, cublasMath_t) = nullptr;
    cublasStatus_t (*setWorkspace)(cublasHandle_t, void*, size_t) = nullptr;
    cublasStatus_t (*getVersion)(cublasHandle_t, int*) = nullptr;
    const char* (*statusString)(cublasStatus_t) = nullptr;
    cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
                             cudaDataType_t, int, const void*, cudaDataType_t, int, const void*, void*, cudaDataType_t, int,
                             cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
    std::string library; // the file that was loaded
};

// The loaded API. Throws paralens::Unavailable naming the library when it cannot be loaded.
const CublasApi& Cublas();

const char* CublasStatusName(int status);
std::string CublasStatusText(int status);

// One cuBLAS handle bound to a device (RAII).
class CublasHandle {
public:
    explicit CublasHandle(int device);
    ~CublasHandle();
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    cublasHandle_t Get() const { return m_handle; }

private:
    cublasHandle_t m_handle = nullptr;
};

} // namespace paralens::gpu::detail

#define PARALENS_CUBLAS(expr)                                                                                          \
    do {                                                                                                               \
        const cublasStatus_t paralensStatus_ = (expr);                                                                 \
        if (paralensStatus_ != CUBLAS_STATUS_SUCCESS)                                                                  \
            ::paralens::gpu::detail::FailCublas(static_cast<int>(paralensStatus_), #expr, __FILE__, __LINE__);         \
    } while (0)
