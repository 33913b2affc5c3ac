#!/usr/bin/env bash
# What `cmake --install` (and so the Debian package) puts where: the binary, the desktop entry and
# its icon, a man page with a section per command of this binary's --help, the scenarios as
# examples, the README. Installs the build into a temporary folder; exits non-zero naming what is
# missing.   tests/install/check-install.sh BUILD_DIR
set -euo pipefail
build=$1
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
DESTDIR="$stage" cmake --install "$build" >/dev/null
prefix=$(cmake -L -N "$build" 2>/dev/null | sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p')
at="$stage$prefix"
bad=0
need() {
  if [ -e "$at/$1" ]; then echo "ok: $1"; else echo "MISSING: $1"; bad=1; fi
}
need bin/paralens
need share/applications/paralens.desktop
need share/icons/hicolor/scalable/apps/paralens.svg
need share/man/man1/paralens.1.gz
need share/doc/paralens/README.md
grep -q '^Exec=paralens' "$at/share/applications/paralens.desktop" || { echo "the desktop entry does not run paralens"; bad=1; }
grep -q '^Icon=paralens$' "$at/share/applications/paralens.desktop" || { echo "the desktop entry names no paralens icon"; bad=1; }
src=$(cd "$(dirname "$0")/../.." && pwd)
for s in "$src"/assets/scenarios/*.json; do need "share/paralens/scenarios/$(basename "$s")"; done
# Every command the binary has is a section of the man page.
commands=$("$at/bin/paralens" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$commands" ] || { echo "no commands in paralens --help"; bad=1; }
# Decompressed once: `zcat | grep -q` under pipefail fails at random when grep stops reading early
# and zcat dies of SIGPIPE.
man=$(zcat "$at/share/man/man1/paralens.1.gz")
for c in $commands; do
  if grep -q "^\.SS $c\$" <<<"$man"; then echo "ok: man page section $c"; else echo "MISSING: man page section $c"; bad=1; fi
done
exit $bad
