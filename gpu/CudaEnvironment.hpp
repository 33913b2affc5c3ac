// What paralens asks of CUDA's environment before CUDA starts in its process. No CUDA header.
//
// CUDA gives a process a few hardware queues (compute channels) per GPU for all its streams there,
// green contexts included: CUDA_DEVICE_MAX_CONNECTIONS of them, 8 by default, at most 32. Streams beyond that
// share a queue, and work on one then waits behind the other's: one GPU's virtual stages, each
// with its own streams in its own green context, need more than 8. Measured on an H200 (1F1B, 4
// virtual stages x 32 micro-batches, copies run by the receiving stage): with 8 queues, 43 ops
// waited over 1 ms (up to 28 ms) with nothing to wait for and the step took 899-907 ms; with 32,
// none did and it took 786-795 ms (traces/h200/queues).
#pragma once

#include <string>

namespace paralens::gpu {

inline constexpr int kCudaDefaultQueues = 8;
inline constexpr int kParalensQueues = 32;

// Call first in main(), before anything initialises CUDA: sets CUDA_DEVICE_MAX_CONNECTIONS to 32
// unless the environment already sets it (a user's choice is kept).
void PrepareCudaEnvironment();

// The hardware queues per GPU the process asks CUDA for: CUDA_DEVICE_MAX_CONNECTIONS if it holds
// a number from 1 to 32, otherwise CUDA's default, 8.
int HardwareQueues();

// A run's note when its `streams` on one GPU outnumber HardwareQueues(), "" otherwise.
std::string QueueSharingNote(int streams);

} // namespace paralens::gpu
