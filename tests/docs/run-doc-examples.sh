#!/usr/bin/env bash
# Runs the guide's tested examples: every fenced block opened with "```sh tested" in README.md and
# docs/*.md, each command (a line, or lines joined by a trailing backslash) run with bash against
# the build's paralens, from a scratch folder holding the repository's traces/ and assets/, so a
# renamed option or command fails the suite. `paralens render` runs under xvfb-run without a
# display; a build without MPI or the window skips --backend processes and mpi, or render.
#   tests/docs/run-doc-examples.sh BUILD_BIN_DIR [FILE.md ...]
set -uo pipefail
bin=$(cd "$1" && pwd)
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$src/README.md" "$src"/docs/*.md)
[ -x "$bin/paralens" ] || { echo "run-doc-examples: no paralens in $bin" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ln -s "$src/traces" "$scratch/traces"
ln -s "$src/assets" "$scratch/assets"
export PATH="$bin:$PATH"
# A build without MPI or the window (gpu-prepare.sh --check's minimal root) cannot run --backend
# processes/mpi or render.
version=$("$bin/paralens" --version --json 2>/dev/null)
has_mpi=0 has_gui=0
grep -q '"mpi": true' <<<"$version" && has_mpi=1
grep -q '"gui": true' <<<"$version" && has_gui=1

ran=0 failed=0
for f in "${files[@]}"; do
  # The commands of the tested blocks, one a line (continuations joined), with their line numbers.
  while IFS=$'\t' read -r line cmd; do
    [ -n "$cmd" ] || continue
    run=$cmd
    if [[ $has_gui == 0 && $cmd == *"paralens render"* ]]; then
      echo "skip (paralens built without the window): ${f#"$src"/}:$line: $cmd"
      continue
    fi
    if [[ $cmd == *"paralens render"* && $cmd != *xvfb-run* && -z ${DISPLAY:-} ]]; then
      command -v xvfb-run >/dev/null || { echo "skip (no display, no xvfb-run): ${f#"$src"/}:$line: $cmd"; continue; }
      run="xvfb-run -a -s '-screen 0 1920x1080x24' $cmd"
    fi
    if [[ $has_mpi == 0 && $cmd =~ --backend[[:space:]]+(processes|mpi) ]]; then
      echo "skip (paralens built without MPI): ${f#"$src"/}:$line: $cmd"
      continue
    fi
    ran=$((ran + 1))
    if out=$(cd "$scratch" && timeout 300 bash -c "$run" 2>&1 </dev/null); then
      echo "ok: ${f#"$src"/}:$line: $cmd"
    else
      echo "FAILED: ${f#"$src"/}:$line: $cmd"
      printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /'
      failed=$((failed + 1))
    fi
  done < <(awk '
    /^```sh tested/ { on = 1; next }
    /^```/ { on = 0; next }
    on {
      if (cmd == "") start = NR
      line = $0
      if (line ~ /\\$/) { sub(/\\$/, "", line); cmd = cmd line; next }
      cmd = cmd line
      if (cmd ~ /^[[:space:]]*(#|$)/) { cmd = ""; next }
      print start "\t" cmd
      cmd = ""
    }' "$f")
done
echo "run-doc-examples: $ran commands, $failed failed"
[ "$ran" -gt 0 ] || { echo "run-doc-examples: no tested example found" >&2; exit 1; }
[ "$failed" -eq 0 ]
