#include "gpu/detail/Cublas.hpp"
#include "gpu/detail/Resources.hpp"

#include "common/Error.hpp"

#include <dlfcn.h>
#include <mutex>

namespace paralens::gpu::detail {

namespace {

template <class Fn>
void Bind(void* lib, const char* name, Fn& out, std::string& missing)
{
    out = reinterpret_cast<Fn>(dlsym(lib, name));
    if (!out) missing += std::string(missing.empty() ? "" : ", ") + name;
}

CublasApi Load()
{
    const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = dlerror();
        throw Unavailable("cuBLAS could not be loaded (" + std::string(why ? why : soname) +
                          "): the pipeline runner and the GEMM probe need " + soname +
                          " from the CUDA toolkit (add its lib64 folder to LD_LIBRARY_PATH)");
    }
    CublasApi api;
    std::string missing;
    Bind(lib, "cublasCreate_v2", api.create, missing);
    Bind(lib, "cublasDestroy_v2", api.destroy, missing);
    Bind(lib, "cublasSetStream_v2", api.setStream, missing);
    Bind(lib, "cublasSetMathMode", api.setMathMode, missing);
    Bind(lib, "cublasSetWorkspace_v2", api.setWorkspace, missing);
    Bind(lib, "cublasGetVersion_v2", api.getVersion, missing);
    Bind(lib, "cublasGetStatusString", api.statusString, missing);
    Bind(lib, "cublasGemmEx", api.gemmEx, missing);
    if (!missing.empty()) throw Unavailable("cuBLAS (" + soname + ") lacks " + missing + "; it is older than paralens expects");
    api.library = soname;
    return api; // the library stays loaded for the life of the process
}

} // namespace

const CublasApi& Cublas()
{
    static std::once_flag once;
    static CublasApi api;
    static std::exception_ptr error;
    std::call_once(once, [] {
        try {
            api = Load();
        } catch (...) {
            error = std::current_exception();
        }
    });
    if (error) std::rethrow_exception(error);
    return api;
}

const char* CublasStatusName(int s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "cublasStatus";
    }
}

std::string CublasStatusText(int s)
{
    try {
        const CublasApi& api = Cublas();
        if (const char* text = api.statusString(static_cast<cublasStatus_t>(s))) return text;
    } catch (...) {
    }
    return {};
}

CublasHandle::CublasHandle(int device)
{
    DeviceScope scope(device);
    PARALENS_CUBLAS(Cublas().create(&m_handle));
}

CublasHandle::~CublasHandle()
{
    if (m_handle) Cublas().destroy(m_handle);
}

} // namespace paralens::gpu::detail
