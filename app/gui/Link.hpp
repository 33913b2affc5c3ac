// Links: a lecture scenario and every parameter changed from it, as a URL fragment such as
//   scenario=ring-vs-tree&ranks=16&bytes=4MiB&view=model
// The web page keeps it in its address bar as the user tweaks (so a link in a slide opens that
// exact state), and the desktop app opens the same text (`paralens --link`, `render --link`).
//
// Keys (values percent-encoded as encodeURIComponent writes them):
//   scenario=NAME        a built-in scenario (default: "default")
//   view=TAB             the tab: flow, model, mfu, stats, autopar, planner
//   theme=dark|light, presentation=1|0
//   experiments=N        how many experiments (added ones start as a default collective)
//   eI.kind=KIND         experiment I (from 0) started afresh as collective, pipeline, training,
//                        autopar or plan
//   KEY=VALUE            a view setting of the scenario format (colorBy, showPredicted, flowStep,
//                        selected, ...), else an experiment key of the scenario format (ranks,
//                        bytes, algorithm, alphaUs, schedule, microBatches, ...) set in every
//                        experiment that has it; nested keys with a dot: straggler.rank=3
//   eI.KEY=VALUE         that key in experiment I only
// A parameter the app does not know, or a value its experiment refuses, is skipped and named in
// LinkState::problems; every other parameter still applies. No ImGui: tests use it headless.
#pragma once

#include "AppState.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace paralens::app {

struct LinkState {
    std::string scenario = "default";
    std::vector<Experiment> experiments;
    ViewSettings view;
    bool dark = false;
    bool presentation = false;
    std::vector<std::string> problems; // one line per parameter skipped, naming it and why
};

// The state a link describes. Accepts a whole URL (the part after '#' is read), or the fragment
// with or without its '#'. Never throws: what cannot be used is in `problems`.
LinkState ParseLink(std::string_view link);

// The fragment (without '#') that ParseLink turns back into `state`: the scenario and every
// parameter that differs from it. Experiments read from files have no place in a link (the
// files stay on the machine that opened them): they are left out, and counted in `*omitted`.
std::string MakeLink(const LinkState& state, int* omitted = nullptr);

// encodeURIComponent's escaping, and its inverse (malformed escapes are kept as written).
std::string PercentEncode(std::string_view text);
std::string PercentDecode(std::string_view text);

} // namespace paralens::app
