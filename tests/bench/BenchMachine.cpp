#include "BenchMachine.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sys/utsname.h>
#include <thread>

std::string MachineDescription()
{
    std::string cpu = "unknown CPU";
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("model name", 0) == 0) {
            cpu = line.substr(line.find(':') + 2);
            break;
        }
    }
    utsname u{};
    uname(&u);
    return cpu + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores, " + u.sysname + " " + u.release;
}

void ReportTarget(const std::string& figure, const std::string& target, const std::string& measured, bool met)
{
    std::printf("@target|%s|%s|%s|%s\n", figure.c_str(), target.c_str(), measured.c_str(), met ? "met" : "MISSED");
}

std::string Fixed(double value, int decimals, const char* unit)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, value, unit);
    return buf;
}

double BestSeconds(int repeats, const std::function<void()>& fn)
{
    double best = 1e300;
    for (int i = 0; i < repeats; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        fn();
        auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    }
    return best;
}
