// Helpers shared by the benchmarks: the machine's name and a best-of-N timer.
#pragma once

#include <chrono>
#include <functional>
#include <string>

std::string MachineDescription(); // "Intel(R) Xeon(R) ... , 2 cores, Linux 6.1"

// One figure beside its target, for scripts/bench.sh's one table of every benchmark: a line
// "@target|FIGURE|TARGET|MEASURED|met" (or MISSED) on stdout, after the benchmark's own row.
void ReportTarget(const std::string& figure, const std::string& target, const std::string& measured, bool met);
std::string Fixed(double value, int decimals, const char* unit); // "12.3 ms"

// Runs `fn` `repeats` times and returns the fastest wall time in seconds.
double BestSeconds(int repeats, const std::function<void()>& fn);
