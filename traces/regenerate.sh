#!/usr/bin/env bash
# Regenerates the simulated sample traces in this folder with the paralens CLI.
# Usage: traces/regenerate.sh [path/to/paralens]   (default: build/release/bin/paralens)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../build/release/bin/paralens}"
[ -x "$bin" ] || { echo "regenerate: no paralens binary at $bin (build it first)" >&2; exit 1; }

model=(--alpha-us 5 --bandwidth-GBps 100 --gamma-GBps 200)
for algo in ring tree halving-doubling; do
  "$bin" simulate --collective allreduce --algorithm "$algo" --ranks 8 --bytes 64MiB "${model[@]}" \
    --out "$here/sim-allreduce-$algo-8ranks.json"
done
"$bin" simulate --collective broadcast --algorithm tree --ranks 8 --bytes 16MiB "${model[@]}" \
  --out "$here/sim-broadcast-tree-8ranks.json"
"$bin" simulate --collective alltoall --algorithm pairwise --ranks 8 --bytes 64MiB "${model[@]}" \
  --out "$here/sim-alltoall-pairwise-8ranks.json"
"$bin" simulate --collective allreduce --algorithm ring --ranks 8 --bytes 64MiB "${model[@]}" --straggler 3:2 \
  --out "$here/sim-allreduce-ring-8ranks-straggler.json"
# Steps whose critical path and what-if replays the README shows (`paralens whatif`).
"$bin" pipeline --schedule gpipe --stages 4 --microbatches 8 --activation-bytes 16MiB --alpha-us 5 --bandwidth-GBps 100 \
  --out "$here/sim-gpipe-4stages-8mb.json"
"$bin" workload --kind dp --workers 4 --layers 4 --iterations 2 --grad-bytes 64MiB --straggler 2:1.5 \
  --out "$here/sim-dp-4workers-straggler.json"
echo "regenerate: wrote $(ls "$here"/sim-*.json | wc -l) traces into $here"
