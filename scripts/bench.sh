#!/usr/bin/env bash
# Every benchmark of paralens, and one table of their figures beside their targets (met or
# MISSED), with the machine they ran on. Builds the release benchmarks first if needed.
#
#   bash scripts/bench.sh              every benchmark (about 2 minutes on 2 cores)
#   bash scripts/bench.sh --quick      the ones that take seconds (no 1 GB loading, no live runs, no page)
#   bash scripts/bench.sh --markdown   the table as Markdown (docs/benchmarks.md)
#
# Each benchmark's own output is kept in build/bench/NAME.log; the table is built from the lines
# "@target|figure|target|measured|met" they print (tests/bench/BenchMachine.hpp). A benchmark
# that cannot run here (no GPU, no real logs, no page or browser) is listed with the reason; one
# that fails or runs past its time is a MISSED row.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quick=0 markdown=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    --markdown) markdown=1 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

bin=build/release/bin
logs=build/bench
mkdir -p "$logs"
if [ ! -f build/release/CMakeCache.txt ]; then
  cmake --preset release >"$logs/configure.log" 2>&1 || { echo "bench.sh: cmake --preset release failed (see $logs/configure.log)" >&2; exit 1; }
fi
echo "bench.sh: building the benchmarks (cmake --build --preset release --target bench paralens)" >&2
cmake --build --preset release --target bench paralens >"$logs/build.log" 2>&1 ||
  { echo "bench.sh: the build failed (see $logs/build.log)" >&2; exit 1; }

rows=()    # figure|target|measured|status
notes=()   # benchmarks that could not run here, and why

# run NAME SECONDS COMMAND...: the benchmark's output to its log, its @target lines to the table.
run() {
  local name=$1 limit=$2; shift 2
  local start=$SECONDS rc=0
  echo "bench.sh: $name ..." >&2
  timeout "$limit" "$@" >"$logs/$name.log" 2>"$logs/$name.err" || rc=$?
  local found=0
  while IFS= read -r line; do
    rows+=("${line#@target|}")
    found=1
  done < <(grep -a '^@target|' "$logs/$name.log")
  if [ $rc -eq 124 ]; then
    rows+=("$name: the whole benchmark|< ${limit} s|did not finish|MISSED")
  elif [ $rc -ne 0 ]; then
    rows+=("$name: the whole benchmark|exit 0|exit $rc (see $logs/$name.err)|MISSED")
  elif [ $found -eq 0 ]; then
    notes+=("$name: $(grep -av '^@' "$logs/$name.log" | grep -aiE 'not run|no |needs' | head -n 1)")
  fi
  echo "bench.sh: $name done in $((SECONDS - start)) s" >&2
}

run sim 120 "$bin/paralens_bench_sim"
run pipeline 120 "$bin/paralens_bench_pipeline"
run planner 180 "$bin/paralens_bench_planner"
run autopar 300 "$bin/paralens_bench_autopar"
run whatif 300 "$bin/paralens_bench_whatif"
run nsys 300 "$bin/paralens_bench_nsys"
[ -x "$bin/paralens_bench_timeline" ] && run timeline 300 "$bin/paralens_bench_timeline"
run fit 120 "$bin/paralens_bench_fit"
run extrapolate 120 "$bin/paralens_bench_extrapolate"
[ -x "$bin/paralens_bench_cupti" ] && run cupti 300 "$bin/paralens_bench_cupti"
if [ $quick -eq 0 ]; then
  [ -x "$bin/paralens_bench_live" ] && run live 900 "$bin/paralens_bench_live"
  run load 1200 "$bin/paralens_bench_load"
  if [ -f build/web/paralens.wasm ] && command -v chromium >/dev/null; then
    run web 900 python3 tests/bench/bench_web.py build/web --generator "$bin/paralens_bench_load"
  else
    notes+=("web: no page in build/web or no chromium (bash scripts/install-deps-web.sh && cmake --preset web && cmake --build --preset web)")
  fi
fi

machine=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
machine="$machine, $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
missed=0
for r in "${rows[@]}"; do [[ $r == *"|MISSED" ]] && missed=$((missed + 1)); done

if [ $markdown -eq 1 ]; then
  echo "Measured $(date -u +%Y-%m-%d) by \`bash scripts/bench.sh\` on $machine:"
  echo
  echo "| figure | target | measured | |"
  echo "|---|---|---|---|"
  for r in "${rows[@]}"; do IFS='|' read -r f t m s <<<"$r"; echo "| $f | $t | $m | $s |"; done
  [ ${#notes[@]} -gt 0 ] && { echo; for n in "${notes[@]}"; do echo "- not run: $n"; done; }
else
  echo "paralens benchmarks on $machine ($(date -u +%Y-%m-%dT%H:%MZ))"
  printf '%-78s %-14s %-26s %s\n' figure target measured ""
  for r in "${rows[@]}"; do IFS='|' read -r f t m s <<<"$r"; printf '%-78s %-14s %-26s %s\n' "$f" "$t" "$m" "$s"; done
  for n in "${notes[@]}"; do echo "not run: $n"; done
  echo "${#rows[@]} figures, $missed MISSED; each benchmark's own table is in $logs/"
fi
