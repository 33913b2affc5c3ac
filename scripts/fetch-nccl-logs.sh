#!/usr/bin/env bash
# Downloads the real nccl-tests logs that `paralens fit`'s regimes and `paralens extrapolate` were
# measured on (see tests/data/README.md for what each is) into tests/data/nccl-tests/ and
# tests/data/nccl-clusters/, which git ignores: they are other people's files, so the repository
# holds where they are, not the files. Needs curl and github.com; checks each file against the
# checksum it was measured with and says when one differs.
#
#   bash scripts/fetch-nccl-logs.sh && ./build/release/bin/paralens_bench_fit && ./build/release/bin/paralens_bench_extrapolate
set -euo pipefail

dest="$(cd "$(dirname "$0")/.." && pwd)/tests/data"
raw=${NCCL_LOGS_BASE:-https://raw.githubusercontent.com} # or a file:// copy of the same tree

# name (under tests/data)  repository  commit  path  [first-line last-line (a log inside a page, indented 4 spaces)]  sha256
logs=(
  "nccl-tests/superbench-a100x8-allreduce.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_allreduce.log - - 48de5adac8f00c7d98fc456cfec08c4d7c8aac8bf04b4642e5ae8829272edd80"
  "nccl-tests/superbench-a100x8-allgather.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_allgather.log - - dd1992affbf3447cae9c5e0e3cdccb8da3c48d79c298fe9086e35c80db22f289"
  "nccl-tests/superbench-a100x8-alltoall.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_alltoall.log - - bf3089f3c49682553c05b07d7d90366fd14b910952fe7710cfdab0d015f7b67a"
  "nccl-tests/superbench-a100x8-reduce.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_reduce.log - - 779800664e04aee93dd4340923da321dacb8ffa40926412648130d5bff008392"
  "nccl-tests/superbench-a100x8-reducescatter.log microsoft/superbenchmark 700d6501f110ed17a7016f1b9f2e453926f7b7a1 tests/data/nccl_reducescatter.log - - 51bc37afa33e9cf939495dfd32976ab90835d1d97d68b4817644faa9331e0267"
  "nccl-tests/alps-gh200-2x4-slingshot-allreduce.log eth-cscs/cscs-docs 80abed138e7cc52ebf6703b82ed02520ab9bf92f docs/software/communication/nccl.md 162 206 ae67538844877262292cb8aee704a9772863a58b1cfdde5e2694dfcee113dea2"
  "nccl-tests/alps-gh200-2x4-nocxi-allreduce.log eth-cscs/cscs-docs 80abed138e7cc52ebf6703b82ed02520ab9bf92f docs/software/communication/nccl.md 212 256 36ce3eb0e1f2775cb2a48321adf97d1c1814a59dedb3e2613b4ce64fd13f29b7"
  "nccl-tests/gcp-a3mega-h100-2x8-allreduce.log lessizzmore/create-a3mega-ztan-fork 02dd8f455c43ced1cf442ef29334bda97149264b ztan-NCCL-test-result - - 55f8abbc9f9d6d47c6645f6a5b58f9231c495795eaaa311eb917d2b2dcaad314"
  "nccl-tests/together-h100x8-allreduce-ring.log togethercomputer/together-nccl-tests 6698e53c1dc519f8ab54f72193630849f5abf178 benchmarks/H100/results/20260305_220944/all_reduce_ring.out - - cf3ea43659c28ab8a86d86b2774fea3e3ce7eeba1ff0b69324266e1674f12ad3"
  "nccl-tests/together-h100x8-allgather-ring.log togethercomputer/together-nccl-tests 6698e53c1dc519f8ab54f72193630849f5abf178 benchmarks/H100/results/20260305_220944/all_gather_ring.out - - 7947cd1dc328abc19ba5fa29f292d1d268e02843c2764d9a3326e00876731d3e"

  # One cluster at several scales each (paralens_bench_extrapolate). CSCS Alps: 4 GH200 per node on
  # HPE Slingshot, all_reduce_perf on 1 to 512 nodes (the run without extra settings, aws-ofi-nccl 1.13.0).
  "nccl-clusters/alps-gh200/N1.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00004-N-0001-142995.out - - a5b62d8c3e419cd9b8352e806413dc924e599d8d10293f40ffdfe0d1288e3901"
  "nccl-clusters/alps-gh200/N2.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00008-N-0002-142996.out - - 20a8e2ef4a53bf35ba40a4cc0a52a9a6c5ccde97def565b0d48b2ef75494cf10"
  "nccl-clusters/alps-gh200/N4.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00016-N-0004-142997.out - - 3e4950d634708f43654089e30f0fa073ee8745e58ba6fdd726c22e2a0700617d"
  "nccl-clusters/alps-gh200/N8.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00032-N-0008-142998.out - - 2f14ccf89fa4ec8f21f5b1b598ceadbfad35fdb64cd57f19cc23574ac7252ced"
  "nccl-clusters/alps-gh200/N16.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00064-N-0016-142999.out - - 4ecec51008df7b011765c4fcb4b1c8ba6385f2d599a26eb4e4f3adf23887604d"
  "nccl-clusters/alps-gh200/N32.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00128-N-0032-143000.out - - 828896cea8834993daa7d9e4ca8f5eff6090f50e8162fe18a941261683bce628"
  "nccl-clusters/alps-gh200/N64.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00256-N-0064-143004.out - - 1b06f77257995ca8a58e02fd2887cd01251e1fa864fb952182cd94ff85e50ce9"
  "nccl-clusters/alps-gh200/N128.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00512-N-0128-143005.out - - f78128e976fe23c7cce9781e7c8790a065209f184421b41ccbb9825ba5987ad7"
  "nccl-clusters/alps-gh200/N256.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-01024-N-0256-143006.out - - 089c558cf6a8db27b5921a31ac5ab11861a2fb6f85b3525904a70e83c99da95a"
  "nccl-clusters/alps-gh200/N512.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-02048-N-0512-143007.out - - 2908fde07e54a665c87bd6100f3c8caf374fd1045802be6428b2c4f90c07ff38"
  # The same scales run again days later by the same script with NCCL_IGNORE_CPU_AFFINITY=1 (which
  # only changes how NCCL binds its threads to CPUs): how far two runs of one scale disagree.
  "nccl-clusters/alps-gh200/rerun/N4.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/NCCL_IGNORE_CPU_AFFINITY_1_nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00016-N-0004-146865.out - - ac37276046a827c2655f8bf4f1270226cf4038ada6473fc61cf71b63a80f722f"
  "nccl-clusters/alps-gh200/rerun/N8.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/NCCL_IGNORE_CPU_AFFINITY_1_nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00032-N-0008-146866.out - - 49a60ebb4b0a366a84787f29773992430d8f55ab7b38506a064cdfef12a40490"
  "nccl-clusters/alps-gh200/rerun/N16.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/NCCL_IGNORE_CPU_AFFINITY_1_nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00064-N-0016-146867.out - - 04be58f43fa6164e4a99e902abf645b6f9f86e9ffdc08c85ad0d14d298c5d423"
  "nccl-clusters/alps-gh200/rerun/N32.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/NCCL_IGNORE_CPU_AFFINITY_1_nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00128-N-0032-146868.out - - 497019669b6db630048132dc5d52d87060424935fefbbb3db43c9b007a818077"
  "nccl-clusters/alps-gh200/rerun/N64.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/NCCL_IGNORE_CPU_AFFINITY_1_nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00256-N-0064-146869.out - - 9c7a896cb55a7af79f05a5dd2aa824440df91e9fd8f957e4800abea869ff7d83"
  "nccl-clusters/alps-gh200/rerun/N128.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/NCCL_IGNORE_CPU_AFFINITY_1_nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-00512-N-0128-146870.out - - 2ea1204b7076d7934a53dac5ed8232ceea85a629a62c972d6f60ffa4baa15475"
  "nccl-clusters/alps-gh200/rerun/N256.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/NCCL_IGNORE_CPU_AFFINITY_1_nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-01024-N-0256-146871.out - - 3f0ab9aba1ea9565701facb61ac1028da72393575b2d3dc65d41bdd62cb2c45d"
  "nccl-clusters/alps-gh200/rerun/N512.log boeschf/nccl-benchmark-on-alps-2025 897cff446b5e814a0a991f94dd52559df8cdf9e0 results/NCCL_IGNORE_CPU_AFFINITY_1_nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/job-n-02048-N-0512-146872.out - - 5d9c9c7d0c17e4d309679faa05a275990ca56abfb9af32a2edb2d8531bd712fc"
  # xxrjun/nccl-tests-cluster's example-cluster01 (Apache-2.0): 10 nodes of 8 H100 80GB, one node
  # alone, then all 10 with 1, 2, 4 and 8 GPUs each (32 MiB to 16 GiB).
  "nccl-clusters/h100-10node/N1_G8.log xxrjun/nccl-tests-cluster 455de4f8dee2fa94cd4044a7109fd8c576f9e6c1 benchmarks/example-cluster01/nccl-benchmark-results/single-node/runs/20260128-145017/without-debug/logs/nccl_N1_G8_cnode3-002.log - - c5aa27f06e5225e562c3f8d5f3cf3d87bd8b6e01cb02207794aa68ec4b3305cb"
  "nccl-clusters/h100-10node/N10_G1.log xxrjun/nccl-tests-cluster 455de4f8dee2fa94cd4044a7109fd8c576f9e6c1 benchmarks/example-cluster01/nccl-benchmark-results/multi-node/runs/20260129-180219/without-debug/logs/nccl_N10_G1.log - - 6f9dc8888bb8ab4dd7ed7ee5d94c5528187b7052b247851dfe3c4565e95bcc50"
  "nccl-clusters/h100-10node/N10_G2.log xxrjun/nccl-tests-cluster 455de4f8dee2fa94cd4044a7109fd8c576f9e6c1 benchmarks/example-cluster01/nccl-benchmark-results/multi-node/runs/20260129-180219/without-debug/logs/nccl_N10_G2.log - - 781ad106678931cf77cfb752275cfc15d6bd3d43e9efe9f1567b1def03ebfc62"
  "nccl-clusters/h100-10node/N10_G4.log xxrjun/nccl-tests-cluster 455de4f8dee2fa94cd4044a7109fd8c576f9e6c1 benchmarks/example-cluster01/nccl-benchmark-results/multi-node/runs/20260129-180219/without-debug/logs/nccl_N10_G4.log - - 8aeca7e2e0588ec26cd303abcc80263fe73d5a990e3829584c233cb247504629"
  "nccl-clusters/h100-10node/N10_G8.log xxrjun/nccl-tests-cluster 455de4f8dee2fa94cd4044a7109fd8c576f9e6c1 benchmarks/example-cluster01/nccl-benchmark-results/multi-node/runs/20260129-180219/without-debug/logs/nccl_N10_G8.log - - 2b028dec35135bd165be6383752a8490bc85b7447736a882567f603070251ff9"
  # ABCI 2.0 (AIST; aistabci/abci2.0benchmark, MIT): its A nodes (8 A100-SXM4-40GB) and V nodes
  # (4 V100-SXM2-16GB) on InfiniBand, NCCL 2.8.4: all_reduce_perf on one node and on 2 to 16 and
  # 2 to 32 nodes, 4 B to 32 MiB (2021).
  "nccl-clusters/abci-a100/N1_G8.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/intra_anode/job08.sh.7280517.nccl - - 4c23608ab7cd00d4ae61c3624ecb3d64fc85caaf1d943f3c84957e4d538232b6"
  "nccl-clusters/abci-a100/N2_G8.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_anode/job02.sh.7194279.nccl - - 16542d17b07ed50953614792a6a64878903a1b95d40aa13ba37f9f20a4aba3d6"
  "nccl-clusters/abci-a100/N4_G8.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_anode/job04.sh.7194285.nccl - - 588525448e41b01bd4d7d7358049cc0ddc35f71afb42b712f604f88f6d144e01"
  "nccl-clusters/abci-a100/N8_G8.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_anode/job08.sh.7194286.nccl - - 96284237a0a7e75754aa7f19f29962448af161c20df01808ae2d1cd9de04fbe5"
  "nccl-clusters/abci-a100/N16_G8.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_anode/job16.sh.7194312.nccl - - 862be1f123710ed193c719bf72139e32b4fe652b876eb36b02db38cccb30d2c1"
  "nccl-clusters/abci-v100/N1_G4.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/intra_vnode/job04.sh.7280532.nccl - - d4eba837de0500063ee70d837cf627ef8b303919c65e294149328701371d4b71"
  "nccl-clusters/abci-v100/N2_G4.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_vnode/job02.sh.7194532.nccl - - 30d3e0ca72eb3905dae20e02967baca0b19ed6144340008f56d73332395b2dbe"
  "nccl-clusters/abci-v100/N4_G4.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_vnode/job04.sh.7194533.nccl - - 9726643c59a3c32163e054eac59a09f8eddae51345625f42899b3d253b4c4aff"
  "nccl-clusters/abci-v100/N8_G4.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_vnode/job08.sh.7194534.nccl - - 68ff9dcfc6d35ba1b505ca921501a67e347ea4a523cbcc8516864dbc6a210182"
  "nccl-clusters/abci-v100/N16_G4.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_vnode/job16.sh.7194535.nccl - - f7e8406a9f31342222e7e6b225ad9d68ca42c0be5d187b481201be841c7fbf4a"
  "nccl-clusters/abci-v100/N32_G4.log aistabci/abci2.0benchmark f0aa27f2fbbbc09b71d1765c83693f0beef8b43f allreduce/inter_vnode/job32.sh.7194536.nccl - - 0369bf7022cb700288213fcc7b53bed287b23e46144f645ec40d86b113042467"
)

failed=0
for entry in "${logs[@]}"; do
  read -r name repo commit path first last sum <<<"$entry"
  mkdir -p "$(dirname "$dest/$name")"
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
