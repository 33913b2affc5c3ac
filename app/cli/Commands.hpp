// The headless subcommands. Each Add* registers one subcommand (with its own --help) whose
// callback runs it; errors are paralens::Error, turned into one line and exit code 2 by main.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace paralens::app {

void AddSimulateCommand(CLI::App& root);
void AddSweepCommand(CLI::App& root, int& exitCode);
void AddConvertCommand(CLI::App& root);
void AddPipelineCommand(CLI::App& root);
void AddWorkloadCommand(CLI::App& root);
void AddAnalyzeCommand(CLI::App& root);
void AddFitCommand(CLI::App& root);
void AddMergeCommand(CLI::App& root);
// `exitCode` receives the run's exit code (a run can fail without a usage error).
void AddRunCommand(CLI::App& root, int& exitCode);
void AddRenderCommand(CLI::App& root);
void AddAutoparCommand(CLI::App& root);
void AddPlanCommand(CLI::App& root);
void AddWhatIfCommand(CLI::App& root);
void AddDiffCommand(CLI::App& root);
void AddExtrapolateCommand(CLI::App& root);

// `paralens --version [--json]`: the version and whether CUDA, NCCL and CUPTI support was built.
int PrintVersion(bool json);

// `paralens` with no subcommand and no display (or no GUI built): a useful headless summary.
int RunHeadlessDefault(const std::vector<std::string>& files, const std::string& link, const std::string& reason);

} // namespace paralens::app
