// The controls: the backend, the list of experiments (add, remove, select) and every parameter of
// the selected one as a slider, combo or input; the job's progress with a Cancel button; the
// scenario's description. Edits the Experiments in place and reports whether any changed, so the
// app re-simulates on a worker (the panel itself never computes). GUI thread only.
#pragma once

#include "AppState.hpp"
#include "JobRunner.hpp"

#include <imgui.h>
#include <string>
#include <vector>

namespace paralens::app {

// The real run the window holds (at most one at a time), as the controls show it.
struct LiveStatus {
    bool running = false;
    int experiment = -1;     // which experiment runs
    std::string phase;       // "allreduce/ring: iteration 3 of 20"
    double fraction = 0.0;
    double elapsedSeconds = 0.0;
    std::string message;     // the last run's outcome: its numbers, or why it failed
    bool failed = false;
};

struct ControlsContext {
    std::string scenarioTitle;
    std::string scenarioDescription;
    std::string simulationError; // the last job's error, shown in red until the next success
    JobStatus simulateJob;
    JobStatus fileJob;
    bool cancelSimulate = false; // out: the user pressed Cancel
    bool cancelFile = false;
    bool openFile = false;       // out: the user asked for File > Open
    // A real run (processes or GPU) of an experiment.
    const LiveStatus* live = nullptr; // the app's, never null while drawing
    bool startLive = false;      // out: Run pressed for the selected experiment
    bool stopLive = false;       // out: Stop pressed
    ImVec4 runButton{0, 0, 0, 0}; // out: where Run (or Stop) was drawn: x, y, w, h (the window's layout, for tests)
    ImVec4 whatIfButton{0, 0, 0, 0}; // out: where "What-if replay" was drawn, the same way
};

// Run / Stop, warm-up and iterations, progress and the outcome of the selected experiment's real
// run (RunControls.cpp). Returns true when a parameter changed.
bool DrawRunControls(Experiment& e, int index, ControlsContext& ctx);
// The last ImGui item's rectangle: x, y, w, h (RunControls.cpp).
ImVec4 LastItemRect();

class ControlsPanel {
public:
    // Returns true when an experiment changed.
    bool Draw(std::vector<Experiment>& experiments, ViewSettings& settings, ControlsContext& ctx, ImVec2 size);

private:
    bool DrawList(std::vector<Experiment>& experiments, ViewSettings& settings);
    bool DrawCollective(CollectiveParams& c, const ClusterParams& cluster);
    bool DrawPipeline(PipelineParams& p);
    bool DrawTraining(TrainingParams& t);
    bool DrawAutopar(AutoparParams& a);
    bool DrawPlan(PlanParams& p);
    bool DrawWhatIf(WhatIfParams& w); // WhatIfControls.cpp
    bool DrawCluster(ClusterParams& c, bool pipeline, int ranks);
    bool DrawTwoLevel(ClusterParams& c, int ranks);
    void DrawJobs(ControlsContext& ctx);

    bool m_openFile = false;             // the backend combo asked for a file
    ControlsContext* m_ctx = nullptr;    // the frame's context, while Draw runs
    std::vector<Experiment> m_described; // the experiments m_labels describe
    std::vector<std::string> m_labels;
    std::vector<std::string> m_details;
};

} // namespace paralens::app
