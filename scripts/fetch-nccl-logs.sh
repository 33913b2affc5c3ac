#!/usr/bin/env bash
# Downloads the real nccl-tests logs that `paralens fit`'s regimes were measured on (see
# tests/data/README.md for what each is) into tests/data/nccl-tests/, which git ignores: they are
# other people's files, so the repository holds where they are, not the files. Needs curl and
# github.com; checks each file against the checksum it was measured with and says when one differs.
#
#   bash scripts/fetch-nccl-logs.sh && ./build/release/bin/paralens_bench_fit
set -euo pipefail

dest="$(cd "$(dirname "$0")/.." && pwd)/tests/data/nccl-tests"
mkdir -p "$dest"
raw=${NCCL_LOGS_BASE:-https://raw.githubusercontent.com} # or a file:// copy of the same tree

# name  repository  commit  path  [first-line last-line (a log inside a page, indented 4 spaces)]  sha256
logs=(
  "superbench-a100x8-allreduce.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_allreduce.log - - 48de5adac8f00c7d98fc456cfec08c4d7c8aac8bf04b4642e5ae8829272edd80"
  "superbench-a100x8-allgather.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_allgather.log - - dd1992affbf3447cae9c5e0e3cdccb8da3c48d79c298fe9086e35c80db22f289"
  "superbench-a100x8-alltoall.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_alltoall.log - - bf3089f3c49682553c05b07d7d90366fd14b910952fe7710cfdab0d015f7b67a"
  "superbench-a100x8-reduce.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_reduce.log - - 779800664e04aee93dd4340923da321dacb8ffa40926412648130d5bff008392"
  "superbench-a100x8-reducescatter.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_reducescatter.log - - 51bc37afa33e9cf939495dfd32976ab90835d1d97d68b4817644faa9331e0267"
  "alps-gh200-2x4-slingshot-allreduce.log eth-cscs/cscs-docs 80abed138e7cc52ebf6703b82ed02520ab9bf92f docs/software/communication/nccl.md 162 206 ae67538844877262292cb8aee704a9772863a58b1cfdde5e2694dfcee113dea2"
  "alps-gh200-2x4-nocxi-allreduce.log eth-cscs/cscs-docs 80abed138e7cc52ebf6703b82ed02520ab9bf92f docs/software/communication/nccl.md 212 256 36ce3eb0e1f2775cb2a48321adf97d1c1814a59dedb3e2613b4ce64fd13f29b7"
  "gcp-a3mega-h100-2x8-allreduce.log lessizzmore/create-a3mega-ztan-fork 02dd8f455c43ced1cf442ef29334bda97149264b ztan-NCCL-test-result - - 55f8abbc9f9d6d47c6645f6a5b58f9231c495795eaaa311eb917d2b2dcaad314"
  "together-h100x8-allreduce-ring.log togethercomputer/together-nccl-tests 6698e53c1dc519f8ab54f72193630849f5abf178 benchmarks/H100/results/20260305_220944/all_reduce_ring.out - - cf3ea43659c28ab8a86d86b2774fea3e3ce7eeba1ff0b69324266e1674f12ad3"
  "together-h100x8-allgather-ring.log togethercomputer/together-nccl-tests 6698e53c1dc519f8ab54f72193630849f5abf178 benchmarks/H100/results/20260305_220944/all_gather_ring.out - - 7947cd1dc328abc19ba5fa29f292d1d268e02843c2764d9a3326e00876731d3e"
)

failed=0
for entry in "${logs[@]}"; do
  read -r name repo commit path first last sum <<<"$entry"
  tmp="$dest/$name.tmp-$$"
  if ! curl -fsSL --retry 2 "$raw/$repo/$commit/$path" -o "$tmp"; then
    echo "fetch-nccl-logs: could not download $raw/$repo/$commit/$path" >&2
    rm -f "$tmp"
    failed=1
    continue
  fi
  if [ "$first" != "-" ]; then
    sed -n "${first},${last}p" "$tmp" | sed 's/^    //' >"$tmp.part" && mv "$tmp.part" "$tmp"
  fi
  got=$(sha256sum "$tmp" | cut -d' ' -f1)
  [ "$got" = "$sum" ] || echo "fetch-nccl-logs: $name differs from the file measured (sha256 $got, expected $sum)" >&2
  mv "$tmp" "$dest/$name"
  echo "$dest/$name"
done
exit "$failed"
