// ParallelFor: f(0) .. f(n - 1) on UsableThreads() threads, each index once, a thread
// taking `run` neighbouring indices at a time; the calling thread works too. The first exception
// a call throws is rethrown once every thread has stopped (the others finish what they took).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__EMSCRIPTEN__)
#include <emscripten/threading.h>
#endif

namespace paralens::core {

// The threads a parallel loop may use here: every core, at most 8; one on a web page's main
// thread, which must not block waiting on workers (it is what starts them).
inline unsigned UsableThreads()
{
#if defined(__EMSCRIPTEN__)
    if (emscripten_is_main_browser_thread()) return 1;
#endif
    return std::max(1u, std::min(std::thread::hardware_concurrency(), 8u));
}

template <class F>
void ParallelFor(size_t n, size_t run, F f)
{
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::mutex failureMutex;
    auto work = [&] {
        try {
            for (size_t start = next.fetch_add(run); start < n; start = next.fetch_add(run))
                for (size_t i = start; i < std::min(n, start + run); ++i) f(i);
        } catch (...) {
            std::lock_guard<std::mutex> lock(failureMutex);
            if (!failure) failure = std::current_exception();
            next = n; // the others stop at their next run
        }
    };
    const unsigned threads = UsableThreads();
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads && t * run < n; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

} // namespace paralens::core
