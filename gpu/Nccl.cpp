#include "gpu/detail/Nccl.hpp"
#include "gpu/detail/Resources.hpp"
#include "gpu/detail/Workloads.hpp"

#include "profiler/CudaCompat.hpp"

#include "gpu/GpuBackend.hpp"

#include "common/Error.hpp"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

namespace paralens::gpu::detail {

namespace {

// Sets an environment variable for a scope (NCCL reads its variables at initialisation).
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : m_name(name)
    {
        if (value.empty()) return;
        if (const char* old = std::getenv(name)) m_old = std::string(old);
        setenv(name, value.c_str(), 1);
        m_set = true;
    }
    ~ScopedEnv()
    {
        if (!m_set) return;
        if (m_old) setenv(m_name, m_old->c_str(), 1);
        else unsetenv(m_name);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* m_name;
    std::optional<std::string> m_old;
    bool m_set = false;
};

[[noreturn]] void NcclFailure(const std::string& what, ncclResult_t r, const std::string& codeName)
{
    GpuFailure f;
    f.library = "NCCL";
    f.expression = what;
    f.code = static_cast<int>(r);
    f.codeName = codeName.empty() ? NcclResultName(static_cast<int>(r)) : codeName;
    f.message = codeName == "ncclTimeout" ? "no progress before the timeout (PARALENS_GPU_TIMEOUT_S)" : ncclGetErrorString(r);
    if (const char* last = ncclGetLastError(nullptr); last && *last) f.message += std::string(" (") + last + ")";
    ThrowGpuFailure(std::move(f));
}

} // namespace

NcclComms::NcclComms(const std::vector<int>& devices, JobContext& job, const std::string& algo, const std::string& proto,
                     const std::string& pluginPath, const std::string& pluginDir, const ProcessGroup& group)
    : m_job(job)
{
    ScopedEnv a("NCCL_ALGO", algo), p("NCCL_PROTO", proto);
    ScopedEnv plugin("NCCL_PROFILER_PLUGIN", pluginPath), dir("PARALENS_NCCL_PROFILE_DIR", pluginDir);
    // One process: every rank is here and the id is ours. Several: this process holds one rank of
    // group.size, and rank 0 made the id (NewNcclUniqueId) that the launcher handed to everyone.
    if (group.Active() && devices.size() != 1) throw Error("a process of a multi-process job drives exactly one GPU");
    const int nranks = group.Active() ? group.size : static_cast<int>(devices.size());
    const int firstRank = group.Active() ? group.rank : 0;
    ncclUniqueId id;
    if (group.Active()) std::memcpy(id.internal, group.ncclId.data(), sizeof id.internal);
    else PARALENS_NCCL(ncclGetUniqueId(&id));
    m_comms.assign(devices.size(), nullptr);
#if PARALENS_NCCL_HAS_NONBLOCKING
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
#endif
    PARALENS_NCCL(ncclGroupStart());
    try {
        for (size_t r = 0; r < devices.size(); ++r) {
            DeviceScope scope(devices[r]);
#if PARALENS_NCCL_HAS_NONBLOCKING
            PARALENS_NCCL(ncclCommInitRankConfig(&m_comms[r], nranks, id, firstRank + static_cast<int>(r), &config));
#else
            PARALENS_NCCL(ncclCommInitRank(&m_comms[r], nranks, id, firstRank + static_cast<int>(r)));
#endif
        }
    } catch (...) {
        (void)ncclGroupEnd();
        Abort();
        throw;
    }
    PARALENS_NCCL(ncclGroupEnd());
    WaitReady("NCCL initialisation (ncclCommInitRankConfig)");
}

NcclComms::~NcclComms()
{
    bool live = false;
    for (ncclComm_t c : m_comms) live |= c != nullptr;
    if (live) Abort(); // not destroyed in order: an error path; aborting never hangs
}

void NcclComms::WaitReady(const char* what)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(static_cast<int64_t>(TimeoutSeconds()));
    for (;;) {
        bool busy = false;
        for (ncclComm_t c : m_comms) {
            if (!c) continue;
            ncclResult_t state = ncclSuccess;
            const ncclResult_t r = ncclCommGetAsyncError(c, &state);
            if (r != ncclSuccess) state = r;
            if (state == ncclInProgress) busy = true;
            else if (state != ncclSuccess) {
                Abort();
                NcclFailure(what, state, "");
            }
        }
        if (!busy) return;
        if (m_job.CancelRequested()) {
            Abort();
            throw Cancelled();
        }
        if (std::chrono::steady_clock::now() > deadline) {
            Abort();
            NcclFailure(what, ncclInternalError, "ncclTimeout");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

void NcclComms::Poll()
{
    for (ncclComm_t c : m_comms) {
        if (!c) continue;
        ncclResult_t state = ncclSuccess;
        if (ncclCommGetAsyncError(c, &state) != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
            Abort();
            NcclFailure("an NCCL operation (asynchronous error)", state == ncclSuccess ? ncclInternalError : state, "");
        }
    }
}

void NcclComms::Abort()
{
    std::lock_guard<std::mutex> lock(m_abortMutex);
    if (m_aborted) return;
    m_aborted = true;
    for (ncclComm_t& c : m_comms) {
        if (c) (void)ncclCommAbort(c);
        c = nullptr;
    }
}

void NcclComms::Destroy()
{
#if PARALENS_NCCL_HAS_NONBLOCKING
    for (ncclComm_t c : m_comms)
        if (c) PARALENS_NCCL(ncclCommFinalize(c));
    WaitReady("NCCL finalisation (ncclCommFinalize)");
#endif
    for (ncclComm_t& c : m_comms) {
        if (c) PARALENS_NCCL(ncclCommDestroy(c));
        c = nullptr;
    }
}

NcclGroup::NcclGroup(NcclComms& comms) : m_comms(comms) { PARALENS_NCCL(ncclGroupStart()); }

void NcclGroup::End(const char* what)
{
    m_open = false;
    PARALENS_NCCL(ncclGroupEnd());
    m_comms.WaitReady(what);
}

NcclGroup::~NcclGroup()
{
    if (m_open) (void)ncclGroupEnd(); // an exception inside the group: close it, the error is already on its way
}

} // namespace paralens::gpu::detail

namespace paralens::gpu {

std::array<uint8_t, ProcessGroup::kNcclIdBytes> NewNcclUniqueId()
{
    static_assert(sizeof(ncclUniqueId::internal) == ProcessGroup::kNcclIdBytes, "NCCL_UNIQUE_ID_BYTES changed");
    ncclUniqueId id;
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) {
        std::string message = std::string("NCCL could not make a unique id (ncclGetUniqueId): ") + ncclGetErrorString(r);
        if (const char* last = ncclGetLastError(nullptr); last && *last) message += std::string(" (") + last + ")";
        throw Error(message);
    }
    std::array<uint8_t, ProcessGroup::kNcclIdBytes> out{};
    std::memcpy(out.data(), id.internal, out.size());
    return out;
}

} // namespace paralens::gpu
