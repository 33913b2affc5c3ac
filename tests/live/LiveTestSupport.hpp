// What the tests of live runs share: the ranks' PIDs a live snapshot names (extra.rankPids), and
// whether a process has ended.
#pragma once

#include "trace/Trace.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/types.h>
#include <vector>

inline std::vector<pid_t> RankPids(const paralens::core::Trace& t)
{
    std::vector<pid_t> pids;
    const std::string text = t.Meta().extra.GetString("rankPids");
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find(',', at);
        if (end == std::string::npos) end = text.size();
        pids.push_back(static_cast<pid_t>(std::atoll(text.substr(at, end - at).c_str())));
        at = end + 1;
    }
    return pids;
}

// The process has exited: no such PID, or a zombie waiting for its new parent (init) to reap it.
inline bool Gone(pid_t pid)
{
    if (pid <= 0) return false;
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}
