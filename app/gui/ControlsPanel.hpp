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

struct ControlsContext {
    std::string scenarioTitle;
    std::string scenarioDescription;
    std::string simulationError; // the last job's error, shown in red until the next success
    JobStatus simulateJob;
    JobStatus fileJob;
    bool cancelSimulate = false; // out: the user pressed Cancel
    bool cancelFile = false;
    bool openFile = false;       // out: the user asked for File > Open
};

class ControlsPanel {
public:
    // Returns true when an experiment changed.
    bool Draw(std::vector<Experiment>& experiments, ViewSettings& settings, ControlsContext& ctx, ImVec2 size);

private:
    bool DrawList(std::vector<Experiment>& experiments, ViewSettings& settings);
    bool DrawCollective(CollectiveParams& c);
    bool DrawPipeline(PipelineParams& p);
    bool DrawTraining(TrainingParams& t);
    bool DrawCluster(ClusterParams& c, bool pipeline, int ranks);
    void DrawJobs(ControlsContext& ctx);

    bool m_openFile = false;             // the backend combo asked for a file
    std::vector<Experiment> m_described; // the experiments m_labels describe
    std::vector<std::string> m_labels;
    std::vector<std::string> m_details;
};

} // namespace paralens::app
