// RAII for the CUDA objects of gpu/: device memory, streams, events, and the current device.
// Destructors never throw and never report (a failure there follows an error already reported).
// Move-only. Not thread-safe (one owner).
#pragma once

#include "gpu/detail/Check.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace paralens::gpu::detail {

// Makes `device` current for the scope and restores the previous one.
class DeviceScope {
public:
    explicit DeviceScope(int device)
    {
        PARALENS_CUDA(cudaGetDevice(&m_previous));
        if (device != m_previous) PARALENS_CUDA(cudaSetDevice(device));
    }
    ~DeviceScope() { IgnoreCuda(cudaSetDevice(m_previous)); }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    int m_previous = 0;
};

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(int device, size_t bytes) : m_device(device), m_bytes(bytes)
    {
        if (bytes == 0) return;
        DeviceScope scope(device);
        PARALENS_CUDA(cudaMalloc(&m_ptr, bytes));
    }
    ~DeviceBuffer() { Release(); }
    DeviceBuffer(DeviceBuffer&& o) noexcept { Swap(o); }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept
    {
        if (this != &o) {
            Release();
            Swap(o);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void* Get() const { return m_ptr; }
    uint8_t* Bytes() const { return static_cast<uint8_t*>(m_ptr); }
    size_t Size() const { return m_bytes; }
    int Device() const { return m_device; }

private:
    void Release()
    {
        if (m_ptr) IgnoreCuda(cudaFree(m_ptr));
        m_ptr = nullptr;
    }
    void Swap(DeviceBuffer& o)
    {
        std::swap(m_device, o.m_device);
        std::swap(m_bytes, o.m_bytes);
        std::swap(m_ptr, o.m_ptr);
    }
    int m_device = 0;
    size_t m_bytes = 0;
    void* m_ptr = nullptr;
};

class Stream {
public:
    Stream() = default;
    // A non-blocking stream on `device`.
    explicit Stream(int device) : m_device(device)
    {
        DeviceScope scope(device);
        PARALENS_CUDA(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    }
    // Takes ownership of a stream made elsewhere (a green context's).
    Stream(int device, cudaStream_t adopted) : m_device(device), m_stream(adopted) {}
    ~Stream()
    {
        if (m_stream) IgnoreCuda(cudaStreamDestroy(m_stream));
    }
    Stream(Stream&& o) noexcept : m_device(o.m_device), m_stream(std::exchange(o.m_stream, nullptr)) {}
    Stream& operator=(Stream&& o) noexcept
    {
        if (this != &o) {
            if (m_stream) IgnoreCuda(cudaStreamDestroy(m_stream));
            m_device = o.m_device;
            m_stream = std::exchange(o.m_stream, nullptr);
        }
        return *this;
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    cudaStream_t Get() const { return m_stream; }
    int Device() const { return m_device; }

private:
    int m_device = 0;
    cudaStream_t m_stream = nullptr;
};

class Event {
public:
    Event() = default;
    // Timing events by default; `timing` = false for pure dependencies (cheaper).
    Event(int device, bool timing)
    {
        DeviceScope scope(device);
        PARALENS_CUDA(cudaEventCreateWithFlags(&m_event, timing ? cudaEventDefault : cudaEventDisableTiming));
    }
    ~Event()
    {
        if (m_event) IgnoreCuda(cudaEventDestroy(m_event));
    }
    Event(Event&& o) noexcept : m_event(std::exchange(o.m_event, nullptr)) {}
    Event& operator=(Event&& o) noexcept
    {
        if (this != &o) {
            if (m_event) IgnoreCuda(cudaEventDestroy(m_event));
            m_event = std::exchange(o.m_event, nullptr);
        }
        return *this;
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

    cudaEvent_t Get() const { return m_event; }

private:
    cudaEvent_t m_event = nullptr;
};

} // namespace paralens::gpu::detail
