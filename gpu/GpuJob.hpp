// A GPU run on a worker thread is a core::Job (core/run/Job.hpp), the interface every backend
// implements; these names keep the GPU code's spelling.
#pragma once

#include "run/Job.hpp"

namespace paralens::gpu {

using RunReport = core::RunReport;
using JobProgress = core::JobProgress;
using Cancelled = core::Cancelled;
using JobContext = core::JobContext;
using GpuJob = core::Job;

} // namespace paralens::gpu
