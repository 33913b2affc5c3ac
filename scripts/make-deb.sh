#!/usr/bin/env bash
# Builds paralens' Debian package and, with --check, installs it with apt into a minimal Debian 12
# root and runs it there: `paralens --version`, a plan and a headless render under Xvfb.
#
#   scripts/make-deb.sh            # build/package/paralens_<version>_amd64.deb
#   scripts/make-deb.sh --check    # then the check (root; debootstrap; a few minutes the first time)
#   sudo apt install ./build/package/paralens_*_amd64.deb
#
# The package is the `package` preset's build: no CUDA, NCCL or CUPTI (the CUDA toolkit is not a
# Debian package, so a .deb cannot depend on it); the window, every command, MPI and the
# scenarios are in. Its dependencies are the Debian packages of the libraries the binary links
# (dpkg-shlibdeps) and fonts-dejavu-core.
#
# Environment: CHECK_ROOT, the minimal root (default /tmp/paralens-deb-root; made once with
# debootstrap --variant=minbase and kept: a second check only reinstalls the package);
# DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "make-deb: $*"; }
fail() {
  echo "make-deb: $*" >&2
  exit 1
}

build() {
  cd "$ROOT"
  command -v dpkg-shlibdeps >/dev/null || fail "needs dpkg-shlibdeps to name the dependencies (apt-get install dpkg-dev)"
  cmake --preset package >/dev/null || fail "cmake --preset package failed"
  cmake --build --preset package || fail "the package build failed"
  (cd build/package && cpack -G DEB >/dev/null) || fail "cpack -G DEB failed (build/package/_CPack_Packages has its log)"
  DEB=$(ls -t build/package/paralens_*_amd64.deb | head -n 1)
  say "made $DEB ($(du -h "$DEB" | cut -f1))"
  dpkg-deb --field "$DEB" Depends | sed 's/^/make-deb: depends: /'
}

make_root() {
  local root=$1
  [ -x "$root/usr/bin/apt-get" ] && [ -e "$root/.paralens-root" ] && return 0
  [ "$(id -u)" -eq 0 ] || fail "--check makes a Debian root with debootstrap, which needs root"
  command -v debootstrap >/dev/null || fail "--check needs debootstrap (apt-get install debootstrap)"
  say "making a minimal Debian 12 root in $root (a few minutes)"
  rm -rf "$root"
  debootstrap --variant=minbase bookworm "$root" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$root.log" 2>&1 ||
    fail "debootstrap failed: see $root.log"
  touch "$root/.paralens-root"
}

MOUNTS=()
unmount_all() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[$i]}" 2>/dev/null || true; done
  MOUNTS=()
}

check() {
  local root=${CHECK_ROOT:-/tmp/paralens-deb-root}
  make_root "$root"
  trap unmount_all EXIT
  for d in proc sys dev; do
    mount --bind "/$d" "$root/$d"
    MOUNTS+=("$root/$d")
  done
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  cp "$DEB" "$root/tmp/paralens.deb"
  local in="chroot $root env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive"
  $in dpkg -r paralens >/dev/null 2>&1 || true
  if $in sh -c 'command -v paralens' >/dev/null 2>&1; then fail "$root already has a paralens outside the package"; fi
  say "apt-get install ./paralens.deb (and xvfb, for the headless render) in $root"
  $in apt-get update -qq >"$root/tmp/apt.log" 2>&1 || fail "apt-get update failed in $root: see $root/tmp/apt.log"
  $in apt-get install -y -qq --no-install-recommends /tmp/paralens.deb xvfb xauth >>"$root/tmp/apt.log" 2>&1 ||
    fail "apt-get install of the package failed in $root: see $root/tmp/apt.log"
  local failed=0
  step() {
    if $in sh -c "cd /tmp && $1" >"$root/tmp/step.log" 2>&1; then
      say "ok: $1"
    else
      say "FAILED: $1"
      sed 's/^/    /' "$root/tmp/step.log"
      failed=1
    fi
  }
  step "paralens --version"
  step "paralens --version | grep -q 'GUI: built'"
  step "paralens plan --model llama3-8b --gpus 8 --global-batch 32 --top 1"
  step "rm -f /tmp/ring.png && xvfb-run -a paralens render --scenario ring-vs-tree --out /tmp/ring.png && test \$(stat -c %s /tmp/ring.png) -gt 20000"
  step "test -f /usr/share/applications/paralens.desktop && test -f /usr/share/icons/hicolor/scalable/apps/paralens.svg"
  step "zcat /usr/share/man/man1/paralens.1.gz | grep -q '^.SS plan'"
  step "test -f /usr/share/paralens/scenarios/ring-vs-tree.json"
  cp "$root/tmp/ring.png" "$ROOT/build/package/check-render.png" 2>/dev/null || true
  [ $failed -eq 0 ] || fail "the package does not work in the minimal root (above)"
  say "the package installs with apt and runs in a minimal Debian 12 root ($root); its render: build/package/check-render.png"
}

case ${1:-} in
  "") build ;;
  --check) build && check ;;
  -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) fail "unknown option '$1' (--check, or nothing; --help)" ;;
esac
