#!/usr/bin/env bash
# Installs the Debian 12 packages paralens builds and tests with. Idempotent: installs only what
# is missing. Runs as root, or through sudo otherwise; never asks questions.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libimgui-dev libglfw3-dev libgl-dev libstb-dev          # the window: Dear ImGui 1.86 (GLFW + OpenGL3 backends)
  libegl-dev libegl-mesa0                                 # render without a display (EGL; Mesa's software driver)
  nlohmann-json3-dev libsimdjson-dev libcli11-dev zlib1g-dev libdeflate-dev libsqlite3-dev
  libglpk-dev                                             # the exact ILP of auto-parallelization (paralens autopar)
  catch2                                                  # tests (Catch2 v2)
  openmpi-bin libopenmpi-dev                              # the MPI backend (paralens run --backend mpi)
  libopenblas-dev                                         # real CPU GEMMs of pipeline stage processes
  xvfb xauth libgl1-mesa-dri fonts-dejavu-core           # GUI tests under a virtual display
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo -n)
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq </dev/null
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
echo "install-deps: done"
