// CUPTI activity records to plain GpuActivity / ApiCall / NvtxRange records: pure functions of the
// record (plus the pairing of NVTX start and end markers), so tests build records by hand and
// check the result without a GPU. Only profiler/ .cpp files and tests include this header.
// Not thread-safe: one decoder per decoding thread (the capture's buffer-completion callback).
#pragma once

#include "GpuActivity.hpp"

#include <cupti.h>

#include <functional>
#include <string>

namespace paralens::prof {

class CuptiDecoder {
public:
    // Names an API call from its callback id (driver = true for the driver API domain).
    using ApiNamer = std::function<std::string(bool driver, uint32_t cbid)>;
    explicit CuptiDecoder(ApiNamer namer = {});

    // Appends what the record says to `out`. Returns false for kinds paralens does not convert
    // (they are counted in Skipped()). An NVTX start marker yields nothing until its end arrives.
    bool Decode(const CUpti_Activity* record, ActivityBatch& out);

    size_t Skipped() const { return m_skipped; }
    size_t OpenRanges() const { return m_markers.Open(); }

private:
    ApiNamer m_namer;
    MarkerPairer m_markers;
    size_t m_skipped = 0;
};

// C++ demangling of a kernel name; the name itself when it is not mangled.
std::string DemangleKernelName(const char* name);
CopyKind ToCopyKind(uint8_t cuptiCopyKind);
SyncKind ToSyncKind(uint32_t cuptiSyncType);

} // namespace paralens::prof
