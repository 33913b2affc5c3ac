#!/usr/bin/env bash
# Validates paralens's GPU backend and CUPTI profiler on a machine with NVIDIA GPUs, in one go:
# configures a Release build for CUDA architecture 90 (H100/H200; GUI off when GLFW is missing),
# finds NCCL and CUPTI in pip wheels when the toolkit lacks them, builds, runs the GPU tests and
# the real workloads with CUPTI capture, and writes logs and traces under $OUT.
#
#   scripts/gpu-validate.sh                 # everything, into ./gpu-out
#   OUT=/tmp/x SKIP_BUILD=1 scripts/gpu-validate.sh
#
# Environment:
#   OUT            where logs and traces go (default ./gpu-out)
#   BUILD_DIR      build folder (default build/gpu-validate); SKIP_BUILD=1 uses it as it is
#   CUDA_ARCH      CMAKE_CUDA_ARCHITECTURES (default 90)
#   MAX_BYTES      the largest size of the sweeps (default 1GiB)
#   PACK=1         at the end, pack logs and traces into two .tar.gz files under $OUT (for tools
#                  that bring back only a few files) and remove the folders
#   JOBS           build parallelism (default: the number of CPUs)
#   GPU_DEPS       paralens' Debian libraries unpacked by scripts/gpu-prepare.sh on the development
#                  machine (default .gpu-deps; used when present): a GPU machine that cannot install
#                  anything builds and tests from them (carry the folder there with the tree)
#   PREBUILT=1     skip the build: unpack $GPU_DEPS/prebuilt.tar.gz, the build that
#                  `scripts/gpu-prepare.sh --check` made and tested on the development machine, at
#                  /opt/paralens/build (with this tree linked at /opt/paralens/src, the paths CMake
#                  wrote into it; needs root, as on the device machine)
#   SKIP_CTEST=1   skip the whole suite (gpu-prepare.sh --check ran it on the prebuilt build); the GPU
#                  tests still run
#   STEP_TIMEOUT   stop any one step after this many seconds (default 0: no limit)
#   DEADLINE_S     skip the steps that would start this many seconds after the script did (default
#                  0: none), so that a lease of a few minutes still brings back logs; the steps
#                  come in the order of what matters first
#   STOP_AFTER     build or tests: stop after that step (the checks of gpu-prepare.sh --check, on
#                  a machine without a GPU)
#   BUNDLE=1       skip the build: run the development machine's own build, with the window, from
#                  $GPU_DEPS/gui.tar.xz (`scripts/gpu-prepare.sh --gui`: paralens, the GPU tests and
#                  the CUPTI benchmark, with every library they load); carry only that file
#   $GPU_DEPS/gui.tar.xz  when present (BUNDLE=1 or not), `render` draws a scenario whose experiments
#                  run on this GPU through the window's own runner, last (EGL: no display needed)
#   ONLY           an extended regular expression: run only the steps whose whole name matches it
#                  (e.g. 'gpu-tests|pipeline-.*'), for a second, shorter call
#   SKIP           an extended regular expression: leave out the steps whose whole name matches it
#                  (e.g. '.*-copy-on-sender.*|.*-8-queues', comparisons an earlier lease brought back)
#
# Every step runs even when an earlier one failed; $OUT/summary.txt lists each step's result and
# the script exits non-zero when any step failed. Nothing here needs the network.
set -uo pipefail

# Options are environment variables (above); --help prints them, anything else is refused before
# a step runs.
case "${1:-}" in
  "") ;;
  -h | --help)
    sed -n '2,/^set -uo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "gpu-validate: unknown argument '$1': options are environment variables (--help lists them)" >&2
    exit 2
    ;;
esac

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
BUILD_DIR=${BUILD_DIR:-$ROOT/build/gpu-validate}
CUDA_ARCH=${CUDA_ARCH:-90}
MAX_BYTES=${MAX_BYTES:-1GiB}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
mkdir -p "$OUT/logs" "$OUT/traces" || exit 2
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
failures=0
skipped=0
unselected=0
STEP_TIMEOUT=${STEP_TIMEOUT:-0}
DEADLINE_S=${DEADLINE_S:-0}

note() { echo "gpu-validate: $*" | tee -a "$SUMMARY"; }

# step NAME COMMAND...: runs the command with its output in $OUT/logs/NAME.log and records the result.
# With STEP_TIMEOUT, a command is stopped after that many seconds; past DEADLINE_S (seconds since
# the script started) the steps left are skipped, so that a short lease brings back what ran.
step() {
  local name=$1
  shift
  local log=$OUT/logs/$name.log
  if [ -n "${ONLY:-}" ] && ! [[ $name =~ ^(${ONLY})$ ]]; then
    unselected=$((unselected + 1))
    return 0
  fi
  if [ -n "${SKIP:-}" ] && [[ $name =~ ^(${SKIP})$ ]]; then
    unselected=$((unselected + 1))
    return 0
  fi
  if [ "$DEADLINE_S" -gt 0 ] && [ "$SECONDS" -ge "$DEADLINE_S" ]; then
    note "SKIP  $name (past DEADLINE_S=$DEADLINE_S s)"
    skipped=$((skipped + 1))
    return 125
  fi
  local limit=$STEP_TIMEOUT
  if [ "$DEADLINE_S" -gt 0 ]; then
    local left=$((DEADLINE_S - SECONDS + 15))
    if [ "$limit" -eq 0 ] || [ "$left" -lt "$limit" ]; then limit=$left; fi
  fi
  local start=$SECONDS
  echo "== $name: $*" | tee "$log"
  if [ "$limit" -gt 0 ]; then
    timeout -k 10 "$limit" "$@" >>"$log" 2>&1
  else
    "$@" >>"$log" 2>&1
  fi
  local rc=$?
  local took=$((SECONDS - start))
  if [ "$rc" -eq 0 ]; then
    note "PASS  $name (${took} s)"
  elif [ "$limit" -gt 0 ] && { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; }; then
    note "FAIL  $name (stopped after its ${limit} s): see logs/$name.log"
    failures=$((failures + 1))
  else
    note "FAIL  $name (exit $rc, ${took} s): see logs/$name.log"
    failures=$((failures + 1))
  fi
  tail -n 25 "$log"
  return "$rc"
}

# ---- NCCL and CUPTI from pip wheels (nvidia-nccl-cu*, nvidia-cuda-cupti-cu*) when present ----
wheel_dir() { # prints the folder of a Python package of the nvidia namespace, if installed
  python3 - "$1" 2>/dev/null <<'PY'
import importlib.util, os, sys
spec = importlib.util.find_spec("nvidia." + sys.argv[1])
if spec and spec.submodule_search_locations:
    print(list(spec.submodule_search_locations)[0])
PY
}
CMAKE_EXTRA=()

# ---- paralens' own libraries from the prepared folder (scripts/gpu-prepare.sh), when present ----
GPU_DEPS=${GPU_DEPS:-$ROOT/.gpu-deps}
if [ -d "$GPU_DEPS/root/usr" ]; then
  prefix=$(cd "$GPU_DEPS/root/usr" && pwd)
  export CMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # Debian's layout (lib/x86_64-linux-gnu) is searched on any distribution.
  CMAKE_EXTRA+=("-DCMAKE_LIBRARY_ARCHITECTURE=x86_64-linux-gnu")
  note "paralens' libraries from $GPU_DEPS ($(wc -l <"$GPU_DEPS/MANIFEST" 2>/dev/null || echo '?') Debian packages)"
else
  note "no $GPU_DEPS: paralens' libraries must be installed (scripts/gpu-prepare.sh makes the folder)"
fi

# The toolkit's own copy of a header, if any (CUPTI may sit under extras/CUPTI).
toolkit_has() { [ -e "/usr/local/cuda/include/$1" ] || [ -e "/usr/local/cuda/extras/CUPTI/include/$1" ]; }
# NCCL's wheel keeps nvidia/nccl; CUDA 13's wheels (cupti, runtime, cuBLAS) share nvidia/cu13,
# CUDA 12's have a folder each (nvidia/cuda_cupti).
cupti_hinted=0
for pkg in nccl cuda_cupti cu13; do
  dir=$(wheel_dir "$pkg")
  if [ -z "$dir" ] || [ ! -d "$dir/lib" ]; then continue; fi
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  note "found $pkg in a pip wheel: $dir"
  if [ "$pkg" = nccl ] && ! toolkit_has nccl.h; then
    libs=("$dir"/lib/libnccl.so*)
    CMAKE_EXTRA+=("-DNCCL_INCLUDE_DIR=$dir/include" "-DNCCL_LIBRARY=${libs[0]}")
  fi
  if [ "$pkg" != nccl ] && [ "$cupti_hinted" = 0 ] && [ -e "$dir/include/cupti.h" ] && ! toolkit_has cupti.h; then
    libs=("$dir"/lib/libcupti.so*)
    CMAKE_EXTRA+=("-DCUPTI_INCLUDE_DIR=$dir/include" "-DCUPTI_LIBRARY=${libs[0]}")
    cupti_hinted=1
  fi
done
if [ -d /usr/local/cuda/lib64 ]; then
  export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export PATH="/usr/local/cuda/bin:$PATH"

# ---- the prebuilt build, when asked for ----
CTEST_EXCLUDE=()
if [ "${PREBUILT:-0}" = 1 ]; then
  tarball=$GPU_DEPS/prebuilt.tar.gz
  if [ ! -f "$tarball" ]; then
    note "PREBUILT=1 but there is no $tarball (scripts/gpu-prepare.sh --check makes it)"
    exit 1
  fi
  mkdir -p /opt/paralens || exit 1
  if [ "$(cd /opt/paralens/src 2>/dev/null && pwd -P)" != "$(pwd -P)" ]; then
    if [ -e /opt/paralens/src ] && [ ! -L /opt/paralens/src ]; then
      note "/opt/paralens/src exists and is not this tree: cannot use the prebuilt build"
      exit 1
    fi
    ln -sfn "$ROOT" /opt/paralens/src || exit 1
  fi
  rm -rf /opt/paralens/build && tar -C /opt/paralens -xzf "$tarball" || exit 1
  BUILD_DIR=/opt/paralens/build
  SKIP_BUILD=1
  # That test configures the tree again with the development machine's cmake path and generator.
  CTEST_EXCLUDE=(-E "configures without CUDA")
  note "prebuilt build from $tarball at $BUILD_DIR, built from commit $(head -n 1 "$GPU_DEPS/PREBUILT_FROM" 2>/dev/null || echo '?')"
  if [ "$(head -n 1 "$GPU_DEPS/PREBUILT_FROM" 2>/dev/null)" != "$(git rev-parse HEAD 2>/dev/null)" ] || [ "$(wc -l <"$GPU_DEPS/PREBUILT_FROM" 2>/dev/null)" != 1 ]; then
    note "warning: the prebuilt build is not of this tree's commit, or was built with changes (see $GPU_DEPS/PREBUILT_FROM)"
  fi
fi

# ---- the window's GPU backend, headless: `paralens render` of a scenario whose experiments run on
# this GPU (the runner behind the window's Run button), drawn through EGL without a display, by the
# window's build that `scripts/gpu-prepare.sh --gui` packed ($GPU_DEPS/gui.tar.xz) ----
GUI_DIR=/tmp/paralens-gui
GUI_LIBS=""
EGL_VENDOR=""
# Unpacks $GPU_DEPS/gui.tar.xz at $GUI_DIR once; sets GUI_LIBS (its libraries, Debian's glvnd
# loaders only where the machine has none, the driver's folders) and EGL_VENDOR (NVIDIA's EGL).
unpack_gui() {
  [ -n "$GUI_LIBS" ] && return 0
  local tarball=$GPU_DEPS/gui.tar.xz f
  [ -f "$tarball" ] || return 1
  rm -rf "$GUI_DIR" && mkdir -p "$GUI_DIR" && tar -C "$GUI_DIR" -xJf "$tarball" --strip-components=1 || return 1
  GUI_LIBS=$GUI_DIR/lib
  if [ "$(ldconfig -p 2>/dev/null | grep -c 'libEGL\.so\.1 ')" = 0 ]; then GUI_LIBS=$GUI_LIBS:$GUI_DIR/glvnd; fi
  for f in /usr/share/glvnd/egl_vendor.d/10_nvidia.json /etc/glvnd/egl_vendor.d/10_nvidia.json \
    /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; do
    if [ -f "$f" ]; then EGL_VENDOR=$f; break; fi
  done
  for f in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do if [ -d "$f" ]; then GUI_LIBS=$GUI_LIBS:$f; fi; done
  note "the window's build from $tarball ($(head -n 1 "$GUI_DIR/BUILT_FROM" 2>/dev/null)) at $GUI_DIR; EGL vendor ${EGL_VENDOR:-not found (glvnd searches its own folders)}; libraries $GUI_LIBS"
}

window_steps() {
  if ! unpack_gui; then
    note "skipped: the window's GPU backend (no $GPU_DEPS/gui.tar.xz: scripts/gpu-prepare.sh --gui makes it)"
    return 0
  fi
  local view
  for view in window timeline mfu flow; do
    step "window-gpu-$view" env -u DISPLAY LD_LIBRARY_PATH="$GUI_LIBS:$LD_LIBRARY_PATH" ${EGL_VENDOR:+__EGL_VENDOR_LIBRARY_FILENAMES=$EGL_VENDOR} \
      "$GUI_DIR/bin/paralens" render --scenario "$ROOT/scripts/gpu-window-scenario.json" --view "$view" --size 1600x900 \
      --out "$OUT/traces/window-gpu-$view.png" --json
  done
}

# ---- the development machine's own build, when asked for ----
if [ "${BUNDLE:-0}" = 1 ]; then
  if ! unpack_gui; then
    note "BUNDLE=1 but $GPU_DEPS/gui.tar.xz cannot be unpacked (scripts/gpu-prepare.sh --gui makes it)"
    exit 1
  fi
  export LD_LIBRARY_PATH="$GUI_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  BUILD_DIR=$GUI_DIR
  SKIP_BUILD=1
  SKIP_CTEST=1
fi

# ---- the machine ----
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  grep -E '^(PRETTY_NAME|VERSION_ID)=' /etc/os-release 2>/dev/null
  ldd --version 2>&1 | head -n 1
  c++ --version 2>&1 | head -n 1
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  nvidia-smi topo -m 2>&1 || true
  nvcc --version 2>&1 || echo "nvcc: not available"
  cmake --version 2>&1 | head -n 1
  echo "mpirun: $(command -v mpirun || echo none) $(mpirun --version 2>&1 | head -n 1)"
  echo "OpenGL here (for render without a display): EGL vendors in /usr/share/glvnd/egl_vendor.d:"
  ls /usr/share/glvnd/egl_vendor.d /etc/glvnd/egl_vendor.d 2>&1
  ldconfig -p 2>/dev/null | grep -E 'lib(EGL|GL|GLX|GLdispatch|OpenGL|gbm)[._]|nvidia-(egl|glcore|glsi)' || echo "no EGL/GL libraries in ldconfig's cache"
} >"$OUT/logs/environment.log"
note "environment: logs/environment.log"

# ---- configure and build ----
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  GUI=AUTO
  if ! pkg-config --exists glfw3 2>/dev/null; then GUI=OFF; fi
  step configure cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" -DPARALENS_WITH_CUDA=ON -DPARALENS_WITH_GUI="$GUI" "${CMAKE_EXTRA[@]}"
  step build cmake --build "$BUILD_DIR" -j "$JOBS"
fi
if [ "${STOP_AFTER:-}" = build ]; then
  note "stopped after the build (STOP_AFTER=build); $failures step(s) failed"
  [ "$failures" -eq 0 ]
  exit
fi
PARALENS=$BUILD_DIR/bin/paralens
if [ ! -x "$PARALENS" ]; then
  note "no paralens binary at $PARALENS: nothing more can run"
  exit 1
fi
step version "$PARALENS" --version --json

# ---- tests: the whole suite (GPU tests included; SKIP_CTEST=1 leaves it to gpu-prepare.sh --check,
# which ran it on the same prebuilt build), then the GPU tests verbosely ----
if [ "${SKIP_CTEST:-0}" != 1 ]; then
  step ctest ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 1200 "${CTEST_EXCLUDE[@]}"
fi
if [ "${STOP_AFTER:-}" = tests ]; then
  note "stopped after the tests (STOP_AFTER=tests); $failures step(s) failed"
  [ "$failures" -eq 0 ]
  exit
fi
step devices "$PARALENS" run --workload gemm --shapes 256 --iters 1 --warmup 0 --profile events --json

NGPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
NGPUS=${NGPUS:-0}
note "GPUs: $NGPUS"
step gpu-tests "$BUILD_DIR/bin/paralens_gpu_tests" --durations yes

T=$OUT/traces
run() { # run NAME ARGS...: paralens run with CUPTI capture; JSON report in the log, trace under traces/
  local name=$1
  shift
  step "$name" "$PARALENS" run "$@" --profile cupti --json --out "$T/$name.json.gz"
}
# The steps come in the order of what a short lease should bring back first (see DEADLINE_S).

# ---- GEMM probe: the measured peak beside the spec sheet's ----
run gemm-probe --workload gemm --dtype bf16,fp16,fp32 --shapes 8192x8192x8192,4096x4096x4096,16384x8192x1024,2048x2048x2048

# ---- pipelines, 4 stages, 8 micro-batches (virtual stages in green contexts): the measured bubble
# beside (D-1)/(D-1+N) (v chunks: (D-1)/(v*N+D-1)), MFU beside the spec sheet's peak ----
for schedule in 1f1b gpipe; do
  run "pipeline-$schedule-4x8-virtual" --workload pipeline --schedule "$schedule" --stages 4 --microbatches 8 --virtual
done
run pipeline-interleaved-4x8x2-virtual --workload pipeline --schedule interleaved --chunks 2 --stages 4 --microbatches 8 --virtual
run pipeline-1f1b-4x8-virtual-shared-sms --workload pipeline --schedule 1f1b --stages 4 --microbatches 8 --virtual \
  --sm-partition none
# The bubble as N grows, beside (D-1)/(D-1+N): 1F1B with 4 to 32 micro-batches of 2048 tokens
# (32 of 4096 need more than 80 GB).
for mb in 4 8 16 32; do
  run "pipeline-1f1b-4x$mb-virtual-2048tokens" --workload pipeline --schedule 1f1b --stages 4 --microbatches "$mb" \
    --tokens 2048 --virtual --iters 2
done
# The same with each copy between stages run by the sending stage (--copy-on sender, the default
# until the H200 runs): a copy within a GPU is a kernel, and on the sender's SMs it waits for the
# sender's next GEMM to drain (a tenth of the copies 1.6 ms and more after their producer, against
# 0.02-0.05 ms to copy) while the receiver waits for it. N = 32 first, where the copies cost most.
for mb in 32 8 16 4; do
  run "pipeline-1f1b-4x$mb-virtual-2048tokens-copy-on-sender" --workload pipeline --schedule 1f1b --stages 4 \
    --microbatches "$mb" --tokens 2048 --virtual --iters 2 --copy-on sender
done
run pipeline-interleaved-4x8x2-virtual-copy-on-sender --workload pipeline --schedule interleaved --chunks 2 --stages 4 \
  --microbatches 8 --virtual --copy-on sender
# Both with CUDA's default 8 hardware queues instead of the 32 paralens asks for: the receiver's
# two more streams per stage then share queues with other stages' streams, and ops wait up to
# 28 ms with nothing to wait for (`paralens analyze` counts them and lists the shared channels).
for copy in receiver sender; do
  step "pipeline-1f1b-4x32-virtual-2048tokens-copy-on-$copy-8-queues" env CUDA_DEVICE_MAX_CONNECTIONS=8 "$PARALENS" run \
    --workload pipeline --schedule 1f1b --stages 4 --microbatches 32 --tokens 2048 --virtual --iters 2 --copy-on "$copy" \
    --profile cupti --json --out "$T/pipeline-1f1b-4x32-virtual-2048tokens-copy-on-$copy-8-queues.json.gz"
done
# The other schedules on real GEMMs (first run in the twenty-fourth session). zb-h1 splits each B
# into B (dX: two GEMMs) and W (dW: two GEMMs), so F = B = W here and its bubble is about
# (D-1)(F+B-min(F,B,W)) / ((D-1)(F+B-min(F,B,W)) + N(F+B+W)) = (D-1)/(D-1+3N), a third of 1F1B's
# (ZB-H1's fixed pattern since the twenty-fifth session; the twenty-fourth ran a greedy order); the
# run's own order simulated at its measured op times is the model (the report's bubbleModel).
for mb in 4 8 16 32; do
  run "pipeline-zb-h1-4x$mb-virtual-2048tokens" --workload pipeline --schedule zb-h1 --stages 4 --microbatches "$mb" \
    --tokens 2048 --virtual --iters 2
done
run pipeline-zb-h1-4x8-virtual --workload pipeline --schedule zb-h1 --stages 4 --microbatches 8 --virtual
for schedule in naive pipedream; do
  run "pipeline-$schedule-4x8-virtual-2048tokens" --workload pipeline --schedule "$schedule" --stages 4 --microbatches 8 \
    --tokens 2048 --virtual --iters 2
done
# Full recomputation (each B re-runs its F first, a span of its own): HFU 4/3 of MFU, and the
# bubble beside the model, which re-runs each F too.
for schedule in 1f1b zb-h1; do
  run "pipeline-$schedule-4x8-virtual-2048tokens-recompute" --workload pipeline --schedule "$schedule" --stages 4 \
    --microbatches 8 --tokens 2048 --virtual --iters 2 --recompute
done
# Eight virtual stages of 16 SMs: 1F1B (D-1)/(D-1+N) = 7/23, interleaved 7/39, zb-h1 about 7/55.
for schedule in 1f1b zb-h1; do
  run "pipeline-$schedule-8x16-virtual-2048tokens" --workload pipeline --schedule "$schedule" --stages 8 --microbatches 16 \
    --tokens 2048 --virtual --iters 2
done
run pipeline-interleaved-8x16x2-virtual-2048tokens --workload pipeline --schedule interleaved --chunks 2 --stages 8 \
  --microbatches 16 --tokens 2048 --virtual --iters 2
# What CUPTI costs a real workload: the same 1F1B timed by CUDA events.
step pipeline-1f1b-4x8-virtual-events "$PARALENS" run --workload pipeline --schedule 1f1b --stages 4 --microbatches 8 \
  --virtual --profile events --json --out "$T/pipeline-1f1b-4x8-virtual-events.json.gz"
if [ "$NGPUS" -ge 4 ]; then
  for schedule in gpipe 1f1b; do
    run "pipeline-$schedule-4x8-gpus" --workload pipeline --schedule "$schedule" --stages 4 --microbatches 8
  done
fi

# ---- CUPTI overhead ----
step bench-cupti "$BUILD_DIR/bin/paralens_bench_cupti"

# ---- NCCL on the available GPUs (one GPU: a 1-rank communicator), with NCCL's own events ----
run nccl-allreduce --workload collective --collective allreduce --min-bytes 8 --max-bytes "$MAX_BYTES" --nccl-profiler
# NCCL's own log of loading paralens' profiler plugin (and what it reports on one GPU).
step nccl-profiler-plugin env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,PROFILE "$PARALENS" run --workload collective \
  --collective allreduce --bytes 64MiB --iters 5 --nccl-profiler --profile cupti --json --out "$T/nccl-profiler-plugin.json.gz"
for c in broadcast reduce allgather reduce-scatter alltoall sendrecv scatter gather; do
  run "nccl-$c" --workload collective --collective "$c" --min-bytes 1KiB --max-bytes 64MiB --step-factor 8 --iters 5 --warmup 2
done
if [ "$NGPUS" -ge 2 ]; then
  for algo in Ring Tree; do
    run "nccl-allreduce-$algo" --workload collective --collective allreduce --bytes 256MiB --nccl-algo "$algo"
  done
fi

# ---- Plan executor: allreduce over 8 virtual ranks, three algorithms, 8 B .. MAX_BYTES; each size
# also as one CUDA graph (--graph: graphTimeUs, the GPU's time without the host issuing every
# transfer, beside the model's alpha) ----
for algo in ring tree halving-doubling; do
  run "plan-allreduce-$algo-8vranks" --workload plan --collective allreduce --algorithm "$algo" --ranks 8 --virtual \
    --min-bytes 8 --max-bytes "$MAX_BYTES" --iters 5 --warmup 1 --graph
done
# One size (the window builds the Plan again for its flow view).
run plan-allreduce-ring-8vranks-64MiB --workload plan --collective allreduce --algorithm ring --ranks 8 --virtual \
  --bytes 64MiB --iters 5 --warmup 1
# The same with CUDA events (the fallback), to compare the two timelines and what CUPTI adds to
# the small sizes, where the host's issuing of 112 transfers bounds the step.
step plan-allreduce-ring-events "$PARALENS" run --workload plan --collective allreduce --algorithm ring --ranks 8 --virtual \
  --min-bytes 8 --max-bytes 64MiB --step-factor 8 --iters 5 --warmup 1 --profile events --json \
  --out "$T/plan-allreduce-ring-8vranks-events.json.gz"

# ---- Plan executor: every collective and algorithm of core on 8 virtual ranks, checked element by
# element against the CPU reference (the algorithms as core lists them, through `paralens sweep`;
# allreduce's ring, tree and halving-doubling ran above) ----
for c in broadcast reduce scatter gather allgather reduce-scatter allreduce alltoall sendrecv; do
  algos=$("$PARALENS" sweep --collective "$c" --algorithm all --ranks 8 --min-bytes 8 --max-bytes 8 --json |
    python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["algorithms"]))')
  for algo in $algos; do
    case "$c:$algo" in allreduce:ring | allreduce:tree | allreduce:halving-doubling) continue ;; esac
    run "plan-$c-$algo-8vranks" --workload plan --collective "$c" --algorithm "$algo" --ranks 8 --virtual \
      --min-bytes 1KiB --max-bytes 64MiB --step-factor 8 --iters 3 --warmup 1
  done
done
if [ "$NGPUS" -ge 2 ]; then
  run plan-allreduce-ring-gpus --workload plan --collective allreduce --algorithm ring --min-bytes 1KiB --max-bytes "$MAX_BYTES" --iters 5
  run plan-allreduce-ring-gpus-nccl --workload plan --collective allreduce --algorithm ring --transport nccl --bytes 64MiB --iters 5
fi

# ---- NCCL across processes: one process per GPU, the unique id over MPI (when mpirun is here) ----
if command -v mpirun >/dev/null 2>&1 && [ "$NGPUS" -ge 1 ] && "$PARALENS" --version --json | grep -q '"mpi": true'; then
  step "mpi-nccl-allreduce-${NGPUS}procs" env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe -np "$NGPUS" "$PARALENS" run --backend mpi --workload collective --collective allreduce \
    --min-bytes 8 --max-bytes "$MAX_BYTES" --profile cupti --json --out "$T/mpi-nccl-allreduce-${NGPUS}procs.json.gz"
else
  note "skipped: NCCL across processes (mpirun not found, or paralens built without MPI)"
fi

window_steps

note "$failures step(s) failed, $skipped skipped${ONLY:+, $unselected not selected by ONLY} (after ${SECONDS} s)"
if [ "${PACK:-0}" = 1 ]; then
  # A tool that brings back a few files of at most 16 MiB each: the traces in pieces of 15 MiB
  # (cat gpu-validate-traces.tar.part-* | tar -x).
  tar -C "$OUT" -czf "$OUT/gpu-validate-logs.tar.gz" logs && rm -rf "$OUT/logs"
  tar -C "$OUT" -cf - traces | split -b 15m -d - "$OUT/gpu-validate-traces.tar.part-" && rm -rf "$OUT/traces"
  note "packed: gpu-validate-logs.tar.gz, $(cd "$OUT" && ls gpu-validate-traces.tar.part-* | paste -sd' ')"
fi
[ "$failures" -eq 0 ]
