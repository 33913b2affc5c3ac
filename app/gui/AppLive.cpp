// The window's real runs: App::StartLive / StopLive and the polling that turns a backend job's
// snapshots into the experiment's RunResult (ExperimentRunner.hpp), off the GUI thread.
#include "App.hpp"

#include "ExperimentRunner.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"

#include <algorithm>
#include <cstdio>

namespace paralens::app {

namespace {

std::string Num(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

// What the status line says of a finished run: its headline numbers next to the model's.
std::string Outcome(const RunResult& r, const core::RunReport& report)
{
    std::string s;
    if (r.experiment.kind == ExperimentKind::Collective && r.simulatedSeconds > 0)
        s = "measured " + core::FormatSeconds(r.simulatedSeconds) + " (model " + core::FormatSeconds(r.predictedSeconds) + "), busbw " +
            Num(r.busbwGBps) + " GB/s";
    if (r.experiment.kind == ExperimentKind::Training && r.simulatedSeconds > 0) {
        s = "measured " + core::FormatSeconds(r.simulatedSeconds);
        if (r.predictedSeconds > 0) s += " (model " + core::FormatSeconds(r.predictedSeconds) + ")";
        s += " for " + std::to_string(r.experiment.training.iterations) + " iterations";
        if (r.mfu.available) s += "; MFU " + Num(r.mfu.report.mfu * 100) + "% of the probed CPU peak";
    }
    if (r.experiment.kind == ExperimentKind::Pipeline && r.bubbleFraction >= 0) {
        s = "bubble " + Num(r.bubbleFraction * 100) + "% measured";
        if (r.bubbleFormula >= 0) s += " vs " + Num(r.bubbleFormula * 100) + "% by the formula";
        if (r.mfu.available) s += "; MFU " + Num(r.mfu.report.mfu * 100) + "% of the probed CPU peak";
    }
    s += report.checksPassed ? "; results checked: correct" : "; RESULTS WRONG (see the report)";
    for (const std::string& n : report.notes) s += "; " + n;
    return s;
}

} // namespace

void App::StartLive(int index)
{
    if (m_live || index < 0 || static_cast<size_t>(index) >= m_experiments.size()) return;
    const Experiment e = m_experiments[static_cast<size_t>(index)];
    m_liveStatus = LiveStatus{};
    m_liveStatus.experiment = index;
    m_liveShown = 0;
    if (!m_jobs) { // `paralens render`, tests: to the end, errors to the caller
        ReplaceRun(index, RunToEnd(e), true);
        return;
    }
    try {
        auto live = std::make_unique<LiveRun>();
        live->index = index;
        live->experiment = e;
        live->start = std::chrono::steady_clock::now();
        live->job = StartExperiment(e);
        m_live = std::move(live);
        m_liveStatus.running = true;
        m_liveStatus.phase = "starting";
    } catch (const std::exception& err) {
        m_liveStatus.failed = true;
        m_liveStatus.message = err.what();
        ShowError("Cannot start the run", err.what());
    }
}

void App::StopLive()
{
    if (m_live) m_live->job->Cancel();
}

void App::PollLive()
{
    if (!m_live) return;
    LiveRun& live = *m_live;
    const core::JobProgress progress = live.job->Progress();
    m_liveStatus.phase = progress.phase;
    m_liveStatus.fraction = progress.fraction;
    m_liveStatus.elapsedSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - live.start).count();
    // An edit of the running experiment makes its measurement stale: stop it.
    if (static_cast<size_t>(live.index) >= m_experiments.size() || !(m_experiments[static_cast<size_t>(live.index)] == live.experiment))
        live.job->Cancel();
    const bool done = live.job->Done();
    std::shared_ptr<const core::Trace> trace = live.job->Latest(&live.version);
    const int index = live.index;
    const Experiment e = live.experiment;
    if (!done) {
        if (trace)
            m_jobs->Submit("live", "Drawing the run", [this, e, trace, index](JobContext&) -> Apply {
                auto run = MeasuredRun(e, trace);
                return [this, run, index] { ReplaceRun(index, run, false); };
            }, [](const std::string&) -> Apply { return nullptr; });
        return;
    }
    std::unique_ptr<LiveRun> finished = std::move(m_live);
    m_liveStatus.running = false;
    try {
        auto report = std::make_shared<const core::RunReport>(finished->job->Wait());
        m_jobs->Submit("live", "Drawing the run", [this, e, report, index](JobContext&) -> Apply {
            auto run = MeasuredRun(e, report->trace, report.get());
            std::string outcome = Outcome(*run, *report);
            return [this, run, index, outcome, ok = report->checksPassed] {
                ReplaceRun(index, run, true);
                m_liveStatus.message = outcome;
                m_liveStatus.failed = !ok;
            };
        }, [this](const std::string& message) -> Apply { return [this, message] { ShowError("Cannot show the run", message); }; });
    } catch (const core::Cancelled&) {
        m_liveStatus.message = "stopped; what was measured until then is shown";
    } catch (const std::exception& err) {
        m_liveStatus.failed = true;
        m_liveStatus.message = err.what();
        ShowError("The run failed", std::string(err.what()) + "\n\nWhat was measured until then is shown.");
    }
    // The last snapshot of a run that failed or was stopped (taken above, with `done`).
    auto last = trace;
    if (last && (m_liveStatus.failed || !m_liveStatus.message.empty()))
        m_jobs->Submit("live", "Drawing the run", [this, e, last, index](JobContext&) -> Apply {
            auto run = MeasuredRun(e, last);
            return [this, run, index] { ReplaceRun(index, run, true); };
        }, [](const std::string&) -> Apply { return nullptr; });
}

void App::ReplaceRun(int index, std::shared_ptr<const RunResult> run, bool final)
{
    if (!m_snapshot || static_cast<size_t>(index) >= m_snapshot->runs.size()) return;
    if (static_cast<size_t>(index) >= m_experiments.size() || !(m_experiments[static_cast<size_t>(index)] == run->experiment)) return;
    auto snap = std::make_shared<Snapshot>(*m_snapshot);
    snap->runs[static_cast<size_t>(index)] = std::move(run);
    Publish(snap, false);
    m_timeline.FitAll(); // the run grows: keep all of it in view
    if (!final) ++m_liveShown;
}

void App::RunLiveExperiments()
{
    for (size_t i = 0; i < m_experiments.size(); ++i)
        if (m_experiments[i].backend != Backend::Simulated && m_experiments[i].kind != ExperimentKind::File) StartLive(static_cast<int>(i));
}

} // namespace paralens::app
