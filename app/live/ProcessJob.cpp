#include "live/ProcessJob.hpp"

#include "live/LiveCollector.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <random>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace paralens::app::live {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string NewSecret()
{
    std::random_device rd;
    std::string s;
    for (int i = 0; i < 4; ++i) {
        char part[16];
        std::snprintf(part, sizeof part, "%08x", rd());
        s += part;
    }
    return s;
}

// A private folder (0700) holding the socket; removed with everything in it.
class PrivateDir {
public:
    PrivateDir()
    {
        std::string pattern = (std::filesystem::temp_directory_path() / "paralens-live-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw Error("cannot make a folder for the live channel in " + pattern + ": " + std::strerror(errno));
        m_path = pattern;
    }
    ~PrivateDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    const std::string& Path() const { return m_path; }

private:
    std::string m_path;
};

class Fd {
public:
    explicit Fd(int fd = -1) : m_fd(fd) {}
    ~Fd() { Reset(); }
    Fd(Fd&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
    Fd& operator=(Fd&& o) noexcept
    {
        if (this != &o) Reset(), m_fd = o.m_fd, o.m_fd = -1;
        return *this;
    }
    int Get() const { return m_fd; }
    void Reset()
    {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
    }

private:
    int m_fd;
};

Fd Listen(const std::string& path, int backlog)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    Require(path.size() < sizeof addr.sun_path, "the live channel's socket path is too long: " + path + " (set TMPDIR to a shorter folder)");
    std::strcpy(addr.sun_path, path.c_str());
    Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd.Get() < 0 || ::bind(fd.Get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd.Get(), backlog) != 0)
        throw Error("cannot listen on " + path + ": " + std::strerror(errno));
    return fd;
}

// mpirun and its ranks, in their own process group.
class ChildGroup {
public:
    void Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env)
    {
        int out[2], err[2];
        if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw Error(std::string("cannot make pipes: ") + std::strerror(errno));
        m_out = Fd(out[0]);
        m_err = Fd(err[0]);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
        std::vector<char*> a, e;
        for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
        for (const std::string& s : env) e.push_back(const_cast<char*>(s.c_str()));
        a.push_back(nullptr);
        e.push_back(nullptr);
        const int rc = ::posix_spawn(&m_pid, argv[0].c_str(), &fa, &attr, a.data(), e.data());
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        ::close(out[1]);
        ::close(err[1]);
        if (rc != 0) {
            m_pid = -1;
            throw Error("cannot start " + argv[0] + ": " + std::strerror(rc));
        }
    }
    ~ChildGroup() { Stop({}); }

    bool Alive() const { return m_pid > 0 && !m_exited; }
    int OutFd() const { return m_out.Get(); }
    int ErrFd() const { return m_err.Get(); }
    Fd& Out() { return m_out; }
    Fd& Err() { return m_err; }
    int Status() const { return m_status; }

    // True once mpirun has exited (its status kept).
    bool Reap()
    {
        if (m_pid <= 0 || m_exited) return m_exited;
        if (::waitpid(m_pid, &m_status, WNOHANG) == m_pid) m_exited = true;
        return m_exited;
    }

    // SIGTERM to the group and to `ranks`, SIGKILL to whatever is left 2 s later; reaps mpirun and
    // waits (1 s at most) for the killed to be gone.
    void Stop(const std::vector<int64_t>& ranks)
    {
        if (m_pid <= 0) return;
        auto signalAll = [&](int sig) {
            ::kill(-m_pid, sig);
            for (int64_t p : ranks)
                if (p > 0) ::kill(static_cast<pid_t>(p), sig);
        };
        auto anyLeft = [&] {
            if (::kill(-m_pid, 0) == 0) return true;
            for (int64_t p : ranks)
                if (p > 0 && ::kill(static_cast<pid_t>(p), 0) == 0) return true;
            return false;
        };
        signalAll(SIGTERM);
        const auto start = Clock::now();
        while (SecondsSince(start) < 2.0) {
            Reap();
            if (m_exited && !anyLeft()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        signalAll(SIGKILL);
        if (!m_exited && ::waitpid(m_pid, &m_status, 0) == m_pid) m_exited = true;
        // A killed rank (mpirun's child, not ours) takes a moment to go: a loaded machine ran the
        // tests' check before it had. A zombie no one reaps still answers kill(0): 1 s at most.
        for (const auto killed = Clock::now(); anyLeft() && SecondsSince(killed) < 1.0;)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        m_pid = m_exited ? m_pid : -1;
        m_stopped = true;
    }
    bool Stopped() const { return m_stopped; }

private:
    pid_t m_pid = -1;
    bool m_exited = false, m_stopped = false;
    int m_status = 0;
    Fd m_out, m_err;
};

struct Connection {
    Fd fd;
    int id = 0;
    std::string buffer;
    Clock::time_point last = Clock::now();
};

std::string StatusText(int status)
{
    if (WIFEXITED(status)) return "mpirun exited with code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "mpirun was killed by signal " + std::to_string(WTERMSIG(status));
    return "mpirun ended";
}

// The lines of mpirun's stderr worth showing: its own verdict on a dead rank, else the last ones.
std::string StderrGist(const std::string& err)
{
    std::vector<std::string> lines, verdicts;
    size_t at = 0;
    while (at < err.size()) {
        size_t end = err.find('\n', at);
        if (end == std::string::npos) end = err.size();
        std::string line = err.substr(at, end - at);
        at = end + 1;
        if (line.find_first_not_of(" -=\t") == std::string::npos) continue;
        if (line.find("noticed that process rank") != std::string::npos || line.find("paralens:") == 0) verdicts.push_back(line);
        lines.push_back(line);
    }
    const std::vector<std::string>& pick = verdicts.empty() ? lines : verdicts;
    std::string out;
    for (size_t i = pick.size() > 3 ? pick.size() - 3 : 0; i < pick.size(); ++i) out += (out.empty() ? "" : " | ") + pick[i];
    return out;
}

} // namespace

std::string ParalensExecutable(const std::string& requested)
{
    if (!requested.empty()) return requested;
    if (const char* e = std::getenv("PARALENS_EXE"); e && *e) return e;
    std::error_code ec;
    return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

std::string FindMpirun(const std::string& requested)
{
    std::string name = requested;
    if (name.empty()) {
        const char* e = std::getenv("PARALENS_MPIRUN");
        name = e && *e ? e : "mpirun";
    }
    if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    size_t at = 0;
    while (at <= dirs.size()) {
        size_t end = dirs.find(':', at);
        if (end == std::string::npos) end = dirs.size();
        const std::string candidate = dirs.substr(at, end - at) + "/" + name;
        if (end > at && ::access(candidate.c_str(), X_OK) == 0) return candidate;
        at = end + 1;
    }
    return {};
}

namespace {

// One run: the socket, mpirun, the ranks' connections and what they said.
class Session {
public:
    Session(const ProcessRunRequest& r, core::JobContext& ctx) : m_req(r), m_ctx(ctx), m_collector(r.ranks, NewSecret())
    {
        if (r.predict) m_collector.SetModel(r.model);
    }

    core::RunReport Run()
    {
        Launch();
        std::string failure;
        try {
            failure = Loop();
        } catch (const Error& e) {
            failure = e.what(); // a message that does not validate: the run is stopped
        }
        const bool cancelled = failure.empty() && m_ctx.CancelRequested();
        // mpirun may exit before ranks it told to stop have gone (they write their trace first):
        // those are stopped too, so that no process of the job outlives it.
        if (m_group.Alive() || !failure.empty() || cancelled || RanksLeft()) m_group.Stop(RankPids());
        Drain();
        std::shared_ptr<const core::Trace> last = m_collector.Merge(m_req.title);
        if (last) m_ctx.Publish(last);
        if (cancelled) throw core::Cancelled();
        if (failure.empty()) failure = Verdict();
        if (!failure.empty()) throw Error(failure);
        return Report(std::move(last));
    }

private:
    void Launch()
    {
        Require(m_req.ranks >= 1, "a processes run needs at least 1 rank");
        const std::string mpirun = FindMpirun(m_req.mpirun);
        if (mpirun.empty())
            throw Unavailable("the processes backend needs mpirun, which is not on PATH (Debian: apt-get install openmpi-bin; or set PARALENS_MPIRUN)");
        const std::string exe = ParalensExecutable(m_req.paralensExe);
        if (exe.empty() || ::access(exe.c_str(), X_OK) != 0)
            throw Unavailable("the processes backend runs paralens itself, but '" + exe + "' is not an executable (set PARALENS_EXE)");
        m_socketPath = m_dir.Path() + "/live.sock";
        m_listen = Listen(m_socketPath, m_req.ranks + 4);
        std::vector<std::string> argv{mpirun, "-np", std::to_string(m_req.ranks), "--oversubscribe", exe};
        argv.insert(argv.end(), m_req.args.begin(), m_req.args.end());
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        env.push_back(std::string(kSocketEnv) + "=" + m_socketPath);
        env.push_back(std::string(kSecretEnv) + "=" + m_secret);
        env.push_back("OMPI_MCA_rmaps_base_oversubscribe=1");
        env.push_back("OPENBLAS_NUM_THREADS=1");
        if (::geteuid() == 0) env.insert(env.end(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
        m_ctx.SetProgress("starting " + std::to_string(m_req.ranks) + " processes", 0.0);
        m_group.Spawn(argv, env);
        m_start = Clock::now();
    }

    // Until mpirun exits, a fault, or Cancel. Returns the fault ("" for none).
    std::string Loop()
    {
        Clock::time_point lastPublish{};
        uint64_t published = 0;
        double mergeMs = 0; // the last merge's cost: snapshots are spaced MergeSpacing() times that apart
        const double spacing = MergeSpacing();
        while (true) {
            if (m_ctx.CancelRequested()) return {};
            PollOnce(20);
            if (m_group.Reap()) return {};
            if (std::string hung = Hung(); !hung.empty()) return hung;
            if (m_collector.Changes() != published && SecondsSince(lastPublish) * 1000.0 >= std::max<double>(m_req.publishIntervalMs, spacing * mergeMs)) {
                published = m_collector.Changes();
                lastPublish = Clock::now();
                if (auto snap = m_collector.Merge(m_req.title)) m_ctx.Publish(std::move(snap));
                mergeMs = SecondsSince(lastPublish) * 1000.0;
            }
            m_ctx.SetProgress(m_collector.Phase().empty() ? "waiting for the ranks" : m_collector.Phase(), m_collector.Fraction());
        }
    }

    // How far apart snapshots are, in merges: where the ranks fill every core, the launcher takes
    // at most about 1/16 of one from them (the measurement comes first); where a core is left
    // over, it may spend half of that core on snapshots (the picture comes sooner).
    double MergeSpacing() const
    {
        const unsigned cores = std::thread::hardware_concurrency();
        return cores > static_cast<unsigned>(m_req.ranks) ? 2.0 : 16.0;
    }

    void PollOnce(int timeoutMs)
    {
        std::vector<pollfd> fds{{m_listen.Get(), POLLIN, 0}, {m_group.OutFd(), POLLIN, 0}, {m_group.ErrFd(), POLLIN, 0}};
        for (const Connection& c : m_connections) fds.push_back({c.fd.Get(), POLLIN, 0});
        if (::poll(fds.data(), fds.size(), timeoutMs) <= 0) return;
        if (fds[0].revents & POLLIN) Accept();
        if (fds[1].revents) ReadPipe(m_group.Out(), m_stdout);
        if (fds[2].revents) ReadPipe(m_group.Err(), m_stderr);
        for (size_t i = 0; i < m_connections.size(); ++i)
            if (fds[3 + i].revents) ReadConnection(m_connections[i]);
        std::erase_if(m_connections, [](const Connection& c) { return c.fd.Get() < 0; });
    }

    void Accept()
    {
        while (true) {
            const int fd = ::accept4(m_listen.Get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) return;
            if (static_cast<int>(m_connections.size()) >= m_req.ranks + 4) {
                ::close(fd); // more connections than ranks: not ours
                continue;
            }
            m_connections.push_back({Fd(fd), ++m_lastConnection, {}, Clock::now()});
        }
    }

    static void ReadPipe(Fd& fd, std::string& into)
    {
        char buf[4096];
        const ssize_t n = fd.Get() < 0 ? 0 : ::read(fd.Get(), buf, sizeof buf);
        if (n > 0) into.append(buf, static_cast<size_t>(n));
        else if (n == 0 || (errno != EINTR && errno != EAGAIN)) fd.Reset();
        if (into.size() > (1u << 20)) into.erase(0, into.size() - (1u << 19)); // keep the tail
    }

    void ReadConnection(Connection& c)
    {
        char buf[1 << 16];
        const ssize_t n = ::read(c.fd.Get(), buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
            c.fd.Reset();
            return;
        }
        if (n < 0) return;
        c.last = Clock::now();
        c.buffer.append(buf, static_cast<size_t>(n));
        size_t at = 0, end;
        while ((end = c.buffer.find('\n', at)) != std::string::npos) {
            m_collector.Apply(c.id, c.buffer.substr(at, end - at));
            at = end + 1;
        }
        c.buffer.erase(0, at);
        if (c.buffer.size() > kMaxLineBytes)
            throw Error("live channel, rank " + std::to_string(m_collector.RankOf(c.id)) + ": a message longer than " +
                        std::to_string(kMaxLineBytes) + " bytes");
    }

    // After mpirun ended (or was stopped): what the ranks still had in flight.
    void Drain()
    {
        const auto start = Clock::now();
        while (!m_connections.empty() && SecondsSince(start) < 0.5) {
            try {
                PollOnce(10);
            } catch (const Error&) {
                break;
            }
        }
        for (int i = 0; i < 20 && (m_group.OutFd() >= 0 || m_group.ErrFd() >= 0); ++i) PollOnce(5);
    }

    // A rank (or the whole job, before anyone connected) silent past the timeout. All ranks wait
    // on each other, so the one named is a rank the kernel reports stopped (SIGSTOP, a debugger),
    // else the one silent the longest.
    std::string Hung() const
    {
        const double limit = m_req.timeoutSec;
        if (m_connections.empty() && SecondsSince(m_start) > limit && m_collector.Rank(0).messages == 0)
            return "no rank connected within " + FormatLimit(limit) + " s of starting mpirun" +
                   (m_stderr.empty() ? std::string() : " (mpirun said: " + StderrGist(m_stderr) + ")");
        const Connection* silent = nullptr;
        for (const Connection& c : m_connections) {
            const int r = m_collector.RankOf(c.id);
            if (r < 0 || m_collector.Rank(r).done || SecondsSince(c.last) <= limit) continue;
            if (!silent || c.last < silent->last) silent = &c;
        }
        if (!silent) return {};
        for (int r = 0; r < m_collector.Ranks(); ++r) {
            const int64_t pid = m_collector.Rank(r).pid;
            const char state = ProcessState(pid);
            if (state == 'T' || state == 't')
                return "rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ") is stopped (SIGSTOP or a debugger) and the run made no "
                       "progress for " + FormatLimit(limit) + " s; the run was stopped";
        }
        const int r = m_collector.RankOf(silent->id);
        return "rank " + std::to_string(r) + " (pid " + std::to_string(m_collector.Rank(r).pid) + ") sent nothing for " + FormatLimit(limit) +
               " s: hung? The run was stopped";
    }

    // The kernel's one-letter state of a process ('R', 'S', 'T' stopped, 'Z'), or 0 when unknown.
    static char ProcessState(int64_t pid)
    {
        if (pid <= 0) return 0;
        FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
        if (!f) return 0;
        char buf[512] = {};
        const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        std::fclose(f);
        const char* close = std::strrchr(buf, ')');
        return close && close + 2 < buf + n ? close[2] : 0;
    }

    static std::string FormatLimit(double s)
    {
        char b[32];
        std::snprintf(b, sizeof b, "%g", s);
        return b;
    }

    // Whether a rank that said hello is still running (a zombie has ended).
    bool RanksLeft() const
    {
        for (int64_t p : RankPids()) {
            const char state = ProcessState(p);
            if (state != 0 && state != 'Z' && state != 'X') return true;
        }
        return false;
    }

    std::vector<int64_t> RankPids() const
    {
        std::vector<int64_t> pids;
        for (int r = 0; r < m_collector.Ranks(); ++r) pids.push_back(m_collector.Rank(r).pid);
        return pids;
    }

    // Why a job that ended by itself failed ("" when it did not): the cause first (mpirun's word
    // on a rank that died, else a rank's own error, else a rank that stopped without finishing),
    // then what followed from it.
    std::string Verdict() const
    {
        const bool exitedOk = WIFEXITED(m_group.Status()) && WEXITSTATUS(m_group.Status()) == 0;
        std::vector<std::string> causes, echoes;
        if (std::string dead = DeadRank(); !dead.empty()) causes.push_back(dead);
        for (int r = 0; r < m_collector.Ranks(); ++r) {
            const RankState& s = m_collector.Rank(r);
            const std::string who = "rank " + std::to_string(r);
            if (!s.error.empty()) {
                // The ranks mpirun stopped after another failed say so; they are not the cause.
                (s.error.find("stopped by signal") != std::string::npos ? echoes : causes).push_back(s.error);
            } else if (!s.connected) {
                causes.push_back(who + " never connected");
            } else if (!s.done && (causes.empty() || causes.front().find(who + " ") != 0)) {
                echoes.push_back(who + " (pid " + std::to_string(s.pid) + ") ended without finishing");
            }
        }
        if (causes.empty() && echoes.empty() && exitedOk && m_collector.Result()) return {};
        if (causes.empty() && echoes.empty()) causes.push_back("the job ended without its result");
        std::string msg;
        for (const std::string& c : causes) msg += (msg.empty() ? "" : "; ") + c;
        if (!echoes.empty()) msg += (msg.empty() ? "" : "; then: ") + echoes.front() + (echoes.size() > 1 ? " (and " + std::to_string(echoes.size() - 1) + " more)" : "");
        msg += " (" + StatusText(m_group.Status()) + ")";
        return msg;
    }

    // mpirun's line "mpirun noticed that process rank 2 with PID 0 on node x exited on signal 9
    // (Killed)." as "rank 2 (pid 1234) died: exited on signal 9 (Killed)"; "" when it has none.
    std::string DeadRank() const
    {
        const std::string key = "noticed that process rank ";
        const size_t at = m_stderr.find(key);
        if (at == std::string::npos) return {};
        const int rank = std::atoi(m_stderr.c_str() + at + key.size());
        const size_t how = m_stderr.find(" exited ", at), end = m_stderr.find('\n', at);
        std::string what = how != std::string::npos && how < end ? m_stderr.substr(how + 1, end - how - 1) : "died";
        if (!what.empty() && what.back() == '.') what.pop_back();
        const int64_t pid = rank >= 0 && rank < m_collector.Ranks() ? m_collector.Rank(rank).pid : 0;
        return "rank " + std::to_string(rank) + (pid > 0 ? " (pid " + std::to_string(pid) + ")" : "") + " died: " + what;
    }

    core::RunReport Report(std::shared_ptr<const core::Trace> trace) const
    {
        core::RunReport rep;
        rep.trace = std::move(trace);
        const LiveMessage* result = m_collector.Result();
        rep.rows = result->rows;
        rep.checksPassed = result->checksPassed;
        rep.summary.Set("backend", std::string("processes"));
        rep.summary.Set("ranks", int64_t{m_collector.Ranks()});
        rep.summary.Set("spans", static_cast<int64_t>(m_collector.SpanCount()));
        rep.summary.Set("wallSeconds", SecondsSince(m_start));
        if (!result->checksPassed) rep.notes.push_back("a result differed from its definition: see the rows' 'correct' column");
        return rep;
    }

    const ProcessRunRequest& m_req;
    core::JobContext& m_ctx;
    LiveCollector m_collector;
    std::string m_secret = m_collector.Secret();
    PrivateDir m_dir;
    std::string m_socketPath;
    Fd m_listen;
    ChildGroup m_group;
    std::vector<Connection> m_connections;
    int m_lastConnection = 0;
    std::string m_stdout, m_stderr;
    Clock::time_point m_start = Clock::now();
};

} // namespace

std::unique_ptr<core::Job> StartProcessJob(const ProcessRunRequest& request)
{
    return std::make_unique<core::Job>([request](core::JobContext& ctx) {
        Session session(request, ctx);
        return session.Run();
    });
}

} // namespace paralens::app::live
