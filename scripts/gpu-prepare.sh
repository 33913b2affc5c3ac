#!/usr/bin/env bash
# Prepares, on the Debian 12 development machine, what scripts/gpu-validate.sh needs on a GPU
# machine that cannot install or download anything (CUDA, CMake, ninja and a compiler there; none
# of paralens' Debian libraries): the Debian packages of the libraries the build and the tests
# need, fetched with `apt-get download` and unpacked into .gpu-deps/root (git-ignored, a few MiB).
# gpu-validate.sh finds them there through CMAKE_PREFIX_PATH and LD_LIBRARY_PATH; carry the
# folder to the GPU machine with the tree (the device tool's `carry: [".gpu-deps"]`).
#
#   scripts/gpu-prepare.sh            # fetch and unpack into .gpu-deps (again: starts afresh)
#   scripts/gpu-prepare.sh --check    # then configure, build and test from .gpu-deps alone, in a
#                                     # minimal Debian root with only a compiler, CMake, ninja,
#                                     # Python and the CUDA toolkit (bound from /usr/local/cuda),
#                                     # and pack that build into .gpu-deps/prebuilt.tar.gz: the
#                                     # GPU machine can skip its build (PREBUILT=1 gpu-validate.sh)
#   scripts/gpu-prepare.sh --gui      # pack this machine's own build (build/release: the window,
#                                     # EGL, CUDA for sm_80/sm_90; paralens, the GPU tests and the
#                                     # CUPTI benchmark) with every library they load into
#                                     # .gpu-deps/gui.tar.xz (about 12 MiB): gpu-validate.sh then
#                                     # draws GPU experiments through the window's runner too, and
#                                     # BUNDLE=1 runs everything from it (carry only that file).
#                                     # After --check, which starts .gpu-deps afresh.
#
# Environment:
#   GPU_DEPS     where to unpack (default .gpu-deps in the repository)
#   CHECK_ROOT   the minimal root of --check (default /tmp/paralens-gpu-root; made with debootstrap
#                when missing, which needs root and Debian's mirror)
#   CHECK_JOBS   build parallelism of --check (default: the number of CPUs)
#   GUI_BUILD    the build --gui packs (default build/release)
#
# What --check leaves out: the window (--gui packs it apart, without Xvfb or Mesa: the GPU's own
# driver draws through EGL), Open MPI and OpenBLAS. gpu-validate.sh builds without them where the
# GPU machine lacks them, and says so.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
DEPS=${GPU_DEPS:-$ROOT/.gpu-deps}
MAX_MIB=48 # the device tool carries 64 MiB in all, the tree included

# Libraries the build needs (headers, CMake packages, link-time .so) and their run-time shares.
packages=(
  nlohmann-json3-dev libcli11-dev catch2        # header-only
  libsimdjson-dev libsimdjson14                 # JSON reading
  zlib1g-dev zlib1g                             # .json.gz traces (read)
  libdeflate-dev libdeflate0                    # .json.gz traces (written on all cores)
  libsqlite3-dev libsqlite3-0                   # Nsight Systems exports
  libglpk-dev libglpk40                         # the ILP of auto-parallelization, with what libglpk40 needs:
  libamd2 libcolamd2 libsuitesparseconfig5 libgmp10 libltdl7
)

say() { echo "gpu-prepare: $*"; }
# What a packed build was made from: the commit, then a line per changed tracked file.
built_from() {
  git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown
  git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | sed 's/^/changed: /'
}
fail() { echo "gpu-prepare: $*" >&2; exit 1; }

# Rewrites absolute symbolic links under $1 (such as usr/lib/x86_64-linux-gnu/libz.so ->
# /lib/x86_64-linux-gnu/libz.so.1.2.13) into relative ones inside the unpacked root, where /lib
# has been merged into /usr/lib.
relativize_links() {
  local root=$1 link target
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case $target in
      /lib/*) target=/usr$target ;;
      /*) ;;
      *) continue ;;
    esac
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
  done < <(find "$root" -type l -print0)
}

fetch() {
  if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then fail "needs apt-get and dpkg-deb (a Debian machine)"; fi
  rm -rf "$DEPS.tmp"
  mkdir -p "$DEPS.tmp/debs" "$DEPS.tmp/root"
  say "downloading ${#packages[@]} packages"
  local sandbox=()
  [ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root) # root: no _apt user to hand the files to
  (cd "$DEPS.tmp/debs" && apt-get "${sandbox[@]}" download -q "${packages[@]}" </dev/null) ||
    fail "apt-get download failed (run 'apt-get update' first, or check the mirror)"
  local deb
  for deb in "$DEPS.tmp"/debs/*.deb; do
    dpkg-deb -x "$deb" "$DEPS.tmp/root"
    dpkg-deb -f "$deb" Package Version Architecture | paste -sd' ' >>"$DEPS.tmp/MANIFEST"
  done
  # Debian 12 keeps some libraries under /lib (zlib): one folder for the linker and the loader.
  if [ -d "$DEPS.tmp/root/lib" ]; then
    mkdir -p "$DEPS.tmp/root/usr/lib"
    cp -a "$DEPS.tmp"/root/lib/. "$DEPS.tmp/root/usr/lib/"
    rm -rf "$DEPS.tmp/root/lib"
  fi
  relativize_links "$DEPS.tmp/root"
  # The build links the shared libraries; the static copies and the documentation stay behind.
  rm -rf "$DEPS.tmp/debs" "$DEPS.tmp"/root/usr/share/{doc,man,lintian,info}
  find "$DEPS.tmp/root/usr/lib" -name '*.a' ! -name 'libCatch2*' -delete
  local broken
  broken=$(find "$DEPS.tmp/root" -xtype l)
  [ -z "$broken" ] || fail "links that point nowhere after unpacking: $broken"
  local mib
  mib=$(du -sm "$DEPS.tmp" | cut -f1)
  [ "$mib" -le "$MAX_MIB" ] || fail "the packages take $mib MiB, over the $MAX_MIB MiB kept for them"
  rm -rf "$DEPS"
  mv "$DEPS.tmp" "$DEPS"
  say "unpacked into $DEPS ($mib MiB; packages in $DEPS/MANIFEST)"
}

# A minimal Debian 12 root with a compiler, CMake, ninja, Python and git: the GPU machine's tools,
# without any of paralens' libraries.
make_root() {
  local root=$1
  [ -x "$root/usr/bin/cmake" ] && return 0
  [ "$(id -u)" -eq 0 ] || fail "--check makes a Debian root with debootstrap, which needs root"
  command -v debootstrap >/dev/null || fail "--check needs debootstrap (apt-get install debootstrap)"
  say "making a minimal Debian root in $root (a few minutes)"
  debootstrap --variant=minbase --include=build-essential,cmake,ninja-build,python3,git,ca-certificates \
    bookworm "$root" http://deb.debian.org/debian >"$root.log" 2>&1 || fail "debootstrap failed: see $root.log"
}

# Where --check builds, inside the minimal root and again on the GPU machine for the prebuilt
# build: CMake writes these absolute paths into the build folder.
SRC_AT=/opt/paralens/src
BUILD_AT=/opt/paralens/build
MOUNTS=()

unmount_all() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[$i]}" || true; done
  MOUNTS=()
}

# Configures, builds and runs the tests inside the minimal root, from the prepared folder alone,
# then packs the build (without its object files) into $DEPS/prebuilt.tar.gz.
check() {
  local root=${CHECK_ROOT:-/tmp/paralens-gpu-root}
  case $DEPS in "$ROOT"/*) ;; *) fail "--check needs GPU_DEPS inside the repository (it is $DEPS)" ;; esac
  make_root "$root"
  for lib in nlohmann simdjson.h CLI glpk.h sqlite3.h zlib.h catch2; do
    if [ -e "$root/usr/include/$lib" ]; then fail "$root has $lib of its own: the check would prove nothing"; fi
  done
  MOUNTS=()
  trap unmount_all EXIT
  bind() { mkdir -p "$2" && mount "${@:3}" "$1" "$2" && MOUNTS+=("$2"); }
  bind "$ROOT" "$root$SRC_AT" --bind
  bind /usr/local/cuda "$root/usr/local/cuda" --bind
  bind proc "$root/proc" -t proc
  bind /dev "$root/dev" --bind
  rm -rf "$root/tmp/gpu-check" # the build folder stays: a second check builds only what changed
  local rc=0
  chroot "$root" /usr/bin/env -i PATH=/usr/local/cuda/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    OUT=/tmp/gpu-check BUILD_DIR="$BUILD_AT" GPU_DEPS="$SRC_AT/${DEPS#"$ROOT"/}" JOBS="${CHECK_JOBS:-$(nproc)}" \
    STOP_AFTER=tests /bin/bash "$SRC_AT/scripts/gpu-validate.sh" || rc=$?
  say "check: gpu-validate.sh in $root exited $rc; its logs: $root/tmp/gpu-check"
  cat "$root/tmp/gpu-check/summary.txt" 2>/dev/null || true
  [ "$rc" -eq 0 ] || return "$rc"
  # The prebuilt build: what ctest and the steps after it read (binaries, CTest files, test data).
  tar -C "$root$(dirname "$BUILD_AT")" -czf "$DEPS/prebuilt.tar.gz" --exclude='*.o' --exclude='*.a' \
    --exclude='CMakeFiles/*.dir' --exclude='.ninja_*' "$(basename "$BUILD_AT")"
  built_from >"$DEPS/PREBUILT_FROM"
  local mib
  mib=$(du -sm "$DEPS" | cut -f1)
  say "packed the checked build into $DEPS/prebuilt.tar.gz ($DEPS: $mib MiB); on the GPU machine: PREBUILT=1 scripts/gpu-validate.sh"
  [ "$mib" -le "$MAX_MIB" ] || fail "$DEPS takes $mib MiB, over the $MAX_MIB MiB kept for it"
}

# The window for the GPU machine, which has a GPU driver's EGL but none of Debian's libraries: the
# binary, every library it loads except the C and C++ runtimes and CUDA's (the machine's own), and
# glvnd's loaders apart (glvnd/: used there only where the machine has no libEGL.so.1).
gui() {
  local bin=${GUI_BUILD:-$ROOT/build/release}/bin/paralens
  [ -x "$bin" ] || fail "--gui packs $bin: build it first (cmake --preset release && cmake --build --preset release)"
  # (grep -c reads everything: grep -q's early exit would fail the pipe under pipefail)
  "$bin" --version --json | grep -c '"gui": *true' >/dev/null || fail "$bin has no window (libglfw3-dev, libimgui-dev: scripts/install-deps.sh)"
  nm -D "$bin" | grep -c ' U eglInitialize' >/dev/null || fail "$bin has no EGL (libegl-dev): it could not draw without a display"
  local tmp=$DEPS/gui.tmp lib name exe exes=("$bin")
  # The GPU tests and the CUPTI benchmark of the same build, so that one carried file validates all.
  for exe in paralens_gpu_tests paralens_bench_cupti; do
    [ -x "$(dirname "$bin")/$exe" ] && exes+=("$(dirname "$bin")/$exe")
  done
  rm -rf "$tmp" && mkdir -p "$tmp/paralens-gui/bin" "$tmp/paralens-gui/lib" "$tmp/paralens-gui/glvnd"
  for exe in "${exes[@]}"; do strip -o "$tmp/paralens-gui/bin/$(basename "$exe")" "$exe"; done
  while IFS= read -r lib; do
    name=$(basename "$lib")
    case $name in
      libc.so* | libm.so* | libstdc++.so* | libgcc_s.so* | ld-linux* | libdl.so* | libpthread.so* | librt.so* | libutil.so* | libresolv.so*) ;;
      libcuda.so* | libnccl.so* | libcupti.so* | libcudart.so* | libcublas*.so* | libnvidia*) ;;
      libEGL.so* | libGL.so* | libGLX.so* | libGLdispatch.so* | libOpenGL.so*) cp -L "$lib" "$tmp/paralens-gui/glvnd/$name" ;;
      *) cp -L "$lib" "$tmp/paralens-gui/lib/$name" ;;
    esac
  done < <(for exe in "${exes[@]}"; do ldd "$exe"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
  # Dear ImGui's loader opens libGL.so.1 (glvnd: libGLX and libGLdispatch) for its function pointers.
  for name in libGL.so.1 libGLX.so.0 libGLdispatch.so.0 libEGL.so.1; do
    cp -L "/usr/lib/x86_64-linux-gnu/$name" "$tmp/paralens-gui/glvnd/$name" || fail "no $name here (libgl1, libegl1)"
  done
  built_from >"$tmp/paralens-gui/BUILT_FROM"
  tar -C "$tmp" -cJf "$DEPS/gui.tar.xz" paralens-gui
  rm -rf "$tmp"
  local mib
  mib=$(du -sm "$DEPS/gui.tar.xz" | cut -f1)
  say "packed the window (${exes[*]} and $(tar -tJf "$DEPS/gui.tar.xz" | grep -c '\.so') libraries) into $DEPS/gui.tar.xz ($mib MiB)"
  [ "$mib" -le 32 ] || fail "$DEPS/gui.tar.xz takes $mib MiB: with the tree it would not travel (64 MiB in all)"
}

case ${1:-} in
  "") fetch ;;
  --check) fetch && check ;;
  --gui) gui ;;
  -h | --help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) fail "unknown option '$1' (--check, --gui or nothing; --help)" ;;
esac
