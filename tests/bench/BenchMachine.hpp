// Helpers shared by the benchmarks: the machine's name and a best-of-N timer.
#pragma once

#include <chrono>
#include <functional>
#include <string>

std::string MachineDescription(); // "Intel(R) Xeon(R) ... , 2 cores, Linux 6.1"

// Runs `fn` `repeats` times and returns the fastest wall time in seconds.
double BestSeconds(int repeats, const std::function<void()>& fn);
