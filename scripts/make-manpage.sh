#!/usr/bin/env bash
# Makes paralens(1) from the binary's own help: `paralens --help` as the description and each
# command's `--help` as its section, so the page says what this build does. The package build runs
# it (cmake/ParalensPackage.cmake); `man ./paralens.1.gz` reads the result.
#
#   scripts/make-manpage.sh BUILD/bin/paralens VERSION OUT.1.gz
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PARALENS_BINARY VERSION OUT.1.gz" >&2; exit 2; }
bin=$1 version=$2 out=$3
[ -x "$bin" ] || { echo "make-manpage: $bin is not an executable" >&2; exit 1; }

# Help text as roff: the binary's path shown as `paralens`, backslashes escaped, a line starting
# with . or ' protected, kept as printed (.nf).
roff() { sed -e "s|$bin|paralens|g" -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

top=$("$bin" --help)
commands=$(printf '%s\n' "$top" | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$commands" ] || { echo "make-manpage: no subcommands in $bin --help" >&2; exit 1; }

tmp="$out.tmp-$$"
trap 'rm -f "$tmp" "$tmp.gz"' EXIT
{
  printf '.TH PARALENS 1 "" "paralens %s" "User Commands"\n' "$version"
  printf '.SH NAME\nparalens \\- collectives, pipelines and their traces, next to the alpha-beta model\n'
  printf '.SH SYNOPSIS\n.B paralens\n[\\fITRACE\\fR ...]\n.br\n.B paralens\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n'
  printf '.SH DESCRIPTION\n.nf\n'
  printf '%s\n' "$top" | roff
  printf '.fi\n.SH COMMANDS\n'
  for c in $commands; do
    printf '.SS %s\n.nf\n' "$c"
    "$bin" "$c" --help | roff
    printf '.fi\n'
  done
  printf '.SH FILES\n.TP\n.I /usr/share/paralens/scenarios/*.json\n'
  printf 'The lecture scenarios (compiled in; these copies are examples for writing your own: \\fBparalens render --scenario FILE.json\\fR).\n'
  printf '.SH SEE ALSO\nThe README, /usr/share/doc/paralens/README.md.\n'
} >"$tmp"
gzip -9n <"$tmp" >"$tmp.gz"
mv "$tmp.gz" "$out"
