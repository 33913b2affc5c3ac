// Pipeline measures taken from a Trace (any source: simulated or captured): the bubble fraction,
// the activations each stage holds at its peak, and MFU/HFU. Pure functions; thread-safe.
#pragma once

#include "analysis/DeviceUsage.hpp"
#include "trace/Trace.hpp"

#include <vector>

namespace paralens::core {

// 1 - (union of compute spans over every non-CPU device) / (devices x window): the lectures'
// bubble_area / total_area. Communication does not count as busy here.
double ComputeBubbleFraction(const Trace& trace, UsageWindow window);

// The extent of one iteration's micro-batch ops (spans whose step is `step`): the window a
// measured pipeline's bubble is taken over. Empty (begin > end) when the step has none.
UsageWindow StepWindow(const Trace& trace, int step);

// The window a pipeline Trace's bubble is taken over when it has no iterations: the whole Trace,
// or a simulated schedule's F/B/W ops (results "pipelineSeconds": its optimizer step left out).
UsageWindow PipelineWindow(const Trace& trace);

// The windows of a measured run's iterations, in order: StepWindow of each step with micro-batch
// ops, when the Trace holds several, or warm-up ops beside them (micro-batch ops of no step). Empty
// for one step alone (a simulated schedule): its whole window is the iteration. The bubble and MFU
// of such a run are taken over these, as `paralens run` reports them: the set-up, the warm-up and
// the host's gaps between iterations are not the schedule's bubble.
std::vector<UsageWindow> IterationWindows(const Trace& trace);

// Per device, the most micro-batch-chunks whose activations are held at once: one is taken when
// its forward starts and released when its backward (input gradient) ends. A deferred weight-
// gradient pass (W) keeps only the layer inputs and output gradients, which are not counted.
// Recomputation spans (detail "recompute") do not count.
std::vector<int> PeakActivations(const Trace& trace);

struct MfuReport {
    double modelFlops = 0.0;    // FLOPs the model needs (forward 1x, backward 2x)
    double hardwareFlops = 0.0; // FLOPs executed, recomputation included
    double seconds = 0.0;       // the window
    int devices = 0;            // devices with compute spans
    double peakFlopsPerDevice = 0.0;
    double mfu = 0.0;           // modelFlops / seconds / (devices x peak); 0 when unknown
    double hfu = 0.0;           // hardwareFlops / seconds / (devices x peak)
};

// The bubble fraction over `windows` (each window's, averaged), or over `whole` when empty.
double ComputeBubbleFraction(const Trace& trace, const std::vector<UsageWindow>& windows, UsageWindow whole);

// How long each stage-to-stage send started after the op that produced its data: a send (a Send
// span with a micro-batch) follows the latest forward or backward of its device with the same
// micro-batch, chunk and step that ended before it started. A send that waits is a receiver that
// waits: on one GPU's virtual stages a copy is a kernel, queued behind the sender's running GEMM.
struct SendDelays {
    size_t sends = 0;                           // sends matched to a producer
    int64_t medianNs = 0, p90Ns = 0, maxNs = 0; // of the delays
    int64_t totalNs = 0;
};
SendDelays ComputeSendDelays(const Trace& trace);

// Forwards and backwards that started later than both the previous op of their track (same step)
// and the last data to arrive at their device (a flow's end) before they started: a wait with
// nothing in the Trace to wait for. A lower bound (the last arrival may not be the op's input):
// work queued behind other work the Trace does not show as a dependency, e.g. streams that share
// one hardware queue (analysis/HardwareChannels.hpp). Ops whose track has no flows in are skipped.
struct OpStartWaits {
    size_t ops = 0;       // ops looked at
    size_t overOneMs = 0; // of those, ops that waited over 1 ms
    int64_t maxNs = 0, totalNs = 0;
};
OpStartWaits ComputeOpStartWaits(const Trace& trace);

// MFU and HFU of the compute spans inside the window. `peakFlopsPerDevice` from the hardware
// table (or a measured GEMM peak); 0 gives only the FLOP totals.
MfuReport ComputeMfu(const Trace& trace, double peakFlopsPerDevice, UsageWindow window);
// The same over several windows (IterationWindows): their FLOPs over their summed time; over
// `whole` when `windows` is empty.
MfuReport ComputeMfu(const Trace& trace, double peakFlopsPerDevice, const std::vector<UsageWindow>& windows, UsageWindow whole);

// MFU of one device over `bins` equal slices of the window (a span's FLOPs are spread evenly over
// its duration): the time series of the MFU view. Sample times are the slices' starts.
// `hardware` = true counts recomputation too: the HFU series.
std::vector<CounterSample> MfuSeries(const Trace& trace, uint32_t device, double peakFlopsPerDevice,
                                     UsageWindow window, int bins, bool hardware = false);

} // namespace paralens::core
