#!/usr/bin/env bash
# Installs what the web page builds and is tested with, from Debian 12 only, then builds the C/C++
# libraries it compiles in from Debian's source packages (scripts/build-web-deps.sh, cached in
# build/web-deps). Idempotent; runs as root, or through sudo otherwise; never asks questions.
#
#   emscripten (3.1.6) and its clang/lld/binaryen/node    the compiler
#   dpkg-dev, tcl, build-essential                         apt-get source; sqlite3's amalgamation
#   fonts-dejavu-core                                      the fonts packed with the page
#   chromium, python3                                      the browser tests (tests/web), headless
#
# Exit codes: 0 ready; 3 a package or a source could not be installed or fetched here (CI then
# skips the web page, saying so); 1 a library failed to build.
#
# It also adds a deb-src entry for Debian's own archive (the suites and components of the deb
# entries already there), so that `apt-get source` works.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
packages=(emscripten dpkg-dev tcl build-essential cmake ninja-build fonts-dejavu-core chromium python3 xz-utils)

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo -n)
else
  sudo=(false)
fi
export DEBIAN_FRONTEND=noninteractive

# deb-src: the same archives and suites as the system's deb entries.
src_list=/etc/apt/sources.list.d/paralens-deb-src.sources
need_update=0
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "install-deps-web: adding deb-src entries for Debian's archive ($src_list)"
  suites=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$suites" "$suites" | "${sudo[@]}" tee "$src_list" >/dev/null ||
    { echo "install-deps-web: need root or sudo to add $src_list" >&2; exit 3; }
  need_update=1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ $need_update -eq 1 ]; then
  "${sudo[@]}" apt-get update -qq </dev/null || { echo "install-deps-web: apt-get update failed (root or sudo, and Debian's archive, are needed)" >&2; exit 3; }
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps-web: installing ${missing[*]}"
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null ||
    { echo "install-deps-web: could not install ${missing[*]}" >&2; exit 3; }
else
  echo "install-deps-web: all ${#packages[@]} packages are already installed"
fi

bash "$root/scripts/build-web-deps.sh"
